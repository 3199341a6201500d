package store

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on names.
const (
	MaxKeyLen       = 1024 // bytes of a whole key
	MaxComponentLen = 255  // bytes of one path component (XFS MAXNAMELEN)
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

// CheckBucketName applies the S3 bucket naming rules, and refuses the
// reserved name.
func CheckBucketName(name string) error {
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
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || len(p) > 3 {
			return false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return true
}

// keyPath is a checked key split into path components: dirs are the
// directories above the object, leaf its file name. A folder marker
// ("a/b/") has no leaf: it is the directory dirs[len(dirs)-1] itself.
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
	if strings.IndexByte(key, 0) >= 0 {
		return keyPath{}, fmt.Errorf("key %q contains a NUL byte: %w", key, ErrInvalidKey)
	}
	kp := keyPath{key: key}
	body := key
	if strings.HasSuffix(key, "/") {
		kp.folder = true
		body = key[:len(key)-1]
	}
	comps := strings.Split(body, "/")
	for _, c := range comps {
		if err := checkComponent(c); err != nil {
			return keyPath{}, fmt.Errorf("key %q: %w", key, err)
		}
	}
	if kp.folder {
		kp.dirs = comps
	} else {
		kp.dirs, kp.leaf = comps[:len(comps)-1], comps[len(comps)-1]
	}
	return kp, nil
}

// checkComponent tells whether c can be one directory or file name of a
// stored key: a name that only ever resolves inside its directory, never
// to the directory itself, its parent or outside the bucket.
func checkComponent(c string) error {
	switch {
	case c == "":
		return fmt.Errorf("an empty path component: %w", ErrInvalidKey)
	case c == "." || c == "..":
		return fmt.Errorf("a %q component: %w", c, ErrInvalidKey)
	case len(c) > MaxComponentLen:
		return fmt.Errorf("a component of %d bytes (at most %d): %w", len(c), MaxComponentLen, ErrKeyTooLong)
	case strings.IndexByte(c, 0) >= 0:
		return fmt.Errorf("a component with a NUL byte: %w", ErrInvalidKey)
	}
	return nil
}
