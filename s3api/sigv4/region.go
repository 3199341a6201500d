package sigv4

// MaxRegion is the longest region name ValidRegion accepts, in bytes.
const MaxRegion = 64

// ValidRegion reports whether name can name a region: 1 to MaxRegion
// ASCII letters, digits, '-' and '_'. That covers AWS's names
// (eu-west-1, the legacy EU) and other servers' (ceph's zone groups),
// and keeps out what a credential scope cannot carry ('/'). Package
// config holds settings to the same rule.
func ValidRegion(name string) bool {
	if name == "" || len(name) > MaxRegion {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
