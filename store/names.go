package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on names.
const (
	MaxKeyLen  = 1024 // bytes of a whole key
	maxNameLen = 255  // bytes of one directory entry name (XFS MAXNAMELEN)
	// MaxUserMetaLen bounds names plus values of user metadata, as S3 does.
	MaxUserMetaLen = 2048
	// maxMetaNameLen keeps "user.meta.<name>" within Linux's 255-byte
	// xattr name limit.
	maxMetaNameLen = 255 - len(xattrMetaPrefix)
)

// ReservedBucket is the bucket name the server keeps for its own endpoints
// (/minio/health/..., /minio/admin/...), as MinIO does, so that probes and
// admin tools written for MinIO reach the server, never a bucket.
const ReservedBucket = "minio"

// CheckBucketName applies the S3 bucket naming rules to a new bucket,
// and refuses the reserved name.
func CheckBucketName(name string) error {
	if err := checkBucketName(name); err != nil {
		return err
	}
	// Rules S3 added after buckets may have been made here: such buckets
	// stay reachable (checkBucketName), but no new one is made.
	for _, pair := range []string{"-.", ".-"} {
		if strings.Contains(name, pair) {
			return fmt.Errorf("bucket %q: must not contain %q: %w", name, pair, ErrInvalidBucketName)
		}
	}
	return nil
}

// checkBucketName applies the rules every bucket name on a volume has
// met, to names looked up or listed.
func checkBucketName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("bucket %q: %s: %w", name, why, ErrInvalidBucketName)
	}
	if name == ReservedBucket {
		return bad("the name is reserved for the server's own endpoints")
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("must be 3 to 63 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return bad("only lowercase letters, digits, '.' and '-' are allowed")
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return bad("must start and end with a letter or digit")
	}
	if strings.Contains(name, "..") {
		return bad("must not contain two adjacent periods")
	}
	if isIPv4(name) {
		return bad("must not be formatted as an IP address")
	}
	for _, p := range []string{"xn--", "sthree-"} {
		if strings.HasPrefix(name, p) {
			return bad("must not start with " + p)
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3"} {
		if strings.HasSuffix(name, s) {
			return bad("must not end with " + s)
		}
	}
	return nil
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// isIPv4 reports four dot-separated groups of 1 to 3 digits.
func isIPv4(s string) bool {
	parts, digits := 1, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if digits == 0 {
				return false
			}
			parts, digits = parts+1, 0
		case c >= '0' && c <= '9' && digits < 3:
			digits++
		default:
			return false
		}
	}
	return parts == 4 && digits > 0
}

// keyPath is a checked key split at every "/": dirs are the components
// naming the directories above the object, leaf its own component. Any
// component may be empty, ".", "..", long or look like a reserved name:
// entryName and besideName turn it into a name. A folder marker ("a/b/")
// has the empty leaf.
type keyPath struct {
	key    string
	dirs   []string
	leaf   string
	folder bool
}

// parseKey checks a key against the rules in the package doc.
func parseKey(key string) (keyPath, error) {
	if len(key) == 0 {
		return keyPath{}, fmt.Errorf("empty key: %w", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return keyPath{}, fmt.Errorf("key of %d bytes (at most %d): %w", len(key), MaxKeyLen, ErrKeyTooLong)
	}
	if !utf8.ValidString(key) {
		return keyPath{}, fmt.Errorf("key %q is not valid UTF-8: %w", key, ErrInvalidKey)
	}
	comps := strings.Split(key, "/")
	last := len(comps) - 1
	return keyPath{key: key, dirs: comps[:last], leaf: comps[last], folder: comps[last] == ""}, nil
}

// Reserved names: every name in a bucket that starts with reservedPrefix
// is one of the forms below, and no other name does (see the package doc,
// "Keys").
const (
	reservedPrefix = ".xfs3."
	// escapedPrefix + c: component c, which cannot be its own name.
	escapedPrefix = reservedPrefix + "e."
	// besidePrefix + c: the object of key prefix+c when prefix+c+"/" is
	// also a directory, lying beside that directory.
	besidePrefix = reservedPrefix + "o."
	// The hashed forms stand for components too long for the two above:
	// the prefix and the SHA-256 of the component in hex, the component
	// itself in the xattr user.xfs3.name of the inode.
	escapedHashPrefix = reservedPrefix + "eh."
	besideHashPrefix  = reservedPrefix + "oh."
	xattrName         = xattrPrefix + "name"
)

// plainName tells whether component c can be its own name: a name that
// only ever resolves inside its directory and is not reserved.
func plainName(c string) bool {
	return c != "" && c != "." && c != ".." && len(c) <= maxNameLen &&
		!strings.HasPrefix(c, reservedPrefix) && strings.IndexByte(c, 0) < 0
}

// entryName is the name of component c in its directory: of its object,
// or of its directory when the component is a prefix.
func entryName(c string) string {
	if plainName(c) {
		return c
	}
	return reservedForm(escapedPrefix, escapedHashPrefix, c)
}

// besideName is the name of the object of component c while entryName(c)
// is a directory.
func besideName(c string) string {
	return reservedForm(besidePrefix, besideHashPrefix, c)
}

func reservedForm(prefix, hashPrefix, c string) string {
	if len(prefix)+len(c) <= maxNameLen && strings.IndexByte(c, 0) < 0 {
		return prefix + c
	}
	sum := sha256.Sum256([]byte(c))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// hashedName tells whether a name keeps its component in xattrName.
func hashedName(name string) bool {
	return strings.HasPrefix(name, escapedHashPrefix) || strings.HasPrefix(name, besideHashPrefix)
}

// decodeName returns the component a directory entry stands for and
// whether it is an object beside its directory. stored reads the
// component kept in xattrName, for hashed names. ok is false for names
// that are not of the documented forms (made by other tools): those hold
// no keys.
func decodeName(name string, stored func() (string, bool)) (c string, beside, ok bool) {
	if !strings.HasPrefix(name, reservedPrefix) {
		return name, false, plainName(name)
	}
	switch {
	case strings.HasPrefix(name, escapedHashPrefix) || strings.HasPrefix(name, besideHashPrefix):
		if c, ok = stored(); !ok {
			return "", false, false
		}
	case strings.HasPrefix(name, escapedPrefix):
		c = name[len(escapedPrefix):]
	case strings.HasPrefix(name, besidePrefix):
		c = name[len(besidePrefix):]
	default:
		return "", false, false
	}
	// Only the form the encoder gives for c is c: any other spelling
	// could not be found again by its key.
	switch name {
	case entryName(c):
		return c, false, true
	case besideName(c):
		return c, true, true
	}
	return "", false, false
}
