package xfs

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs/attr"
	"github.com/xfs3/xfs3/xfs/format"
)

// Xattr is one extended attribute.
type Xattr struct {
	Namespace string // "user", "trusted" or "security"
	Name      string // without the namespace prefix
	Value     []byte
}

// FullName is the attribute name as getfattr prints it ("user.name").
func (x Xattr) FullName() string { return x.Namespace + "." + x.Name }

// SplitXattrName splits "user.name" into namespace flags and name.
// MaxXattrNameLen is Linux's XATTR_NAME_MAX: the longest full name
// ("user.name") the kernel lets anyone read or write.
const MaxXattrNameLen = 255

func SplitXattrName(full string) (flags uint8, name string, err error) {
	if len(full) > MaxXattrNameLen {
		return 0, "", fmt.Errorf("attribute name of %d bytes (at most %d with its prefix): %w", len(full), MaxXattrNameLen, ErrNameTooLong)
	}
	ns, name, ok := strings.Cut(full, ".")
	if !ok || name == "" {
		return 0, "", fmt.Errorf("attribute %q needs a namespace prefix (user., trusted. or security.): %w", full, ErrInvalid)
	}
	switch ns {
	case "user":
		return 0, name, nil
	case "trusted":
		return format.AttrRoot, name, nil
	case "security":
		return format.AttrSecure, name, nil
	}
	return 0, "", fmt.Errorf("attribute namespace %q is not supported: %w", ns, ErrInvalid)
}

// ListXattr returns every attribute with its value, in on-disk order.
// Parent-pointer attributes, which are not user-visible, are left out.
func (v *Volume) ListXattr(ino format.Ino) ([]Xattr, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return nil, err
	}
	var out []Xattr
	err = attr.List(attrReadFork{readFork{v, ip}}, func(ns uint8, name, value []byte) error {
		if ns&format.AttrParent != 0 {
			return nil
		}
		// Names are C strings to Linux: one holding a NUL byte (or none
		// at all) is damage, not a name a caller could ask for.
		if len(name) == 0 || bytes.IndexByte(name, 0) >= 0 {
			return format.Corrupt("attribute", "", "name %q is empty or holds a NUL byte", name)
		}
		out = append(out, Xattr{Namespace: format.NamespaceName(ns), Name: string(name), Value: bytes.Clone(value)})
		return nil
	})
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("inode %d attr fork", ino))
	}
	return out, nil
}

// GetXattr returns the value of the attribute named like "user.color". It
// looks the name up by hash, as the kernel does.
func (v *Volume) GetXattr(ino format.Ino, full string) ([]byte, error) {
	flags, name, err := SplitXattrName(full)
	if err != nil {
		return nil, err
	}
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return nil, err
	}
	val, err := attr.Get(attrReadFork{readFork{v, ip}}, flags, []byte(name))
	if err != nil {
		return nil, format.Located(xattrError(err), fmt.Sprintf("inode %d attr fork", ino))
	}
	return val, nil
}
