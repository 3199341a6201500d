package oracle

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"unsafe"
)

// The syscall package only has the xattr calls that follow symlinks; these
// are the l* variants, which act on a symlink itself.

func lgetxattr(path, name string, dest []byte) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, err
	}
	n, err := syscall.BytePtrFromString(name)
	if err != nil {
		return 0, err
	}
	var d unsafe.Pointer
	if len(dest) > 0 {
		d = unsafe.Pointer(&dest[0])
	}
	r, _, e := syscall.Syscall6(syscall.SYS_LGETXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(n)), uintptr(d), uintptr(len(dest)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func llistxattr(path string, dest []byte) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, err
	}
	var d unsafe.Pointer
	if len(dest) > 0 {
		d = unsafe.Pointer(&dest[0])
	}
	r, _, e := syscall.Syscall(syscall.SYS_LLISTXATTR, uintptr(unsafe.Pointer(p)), uintptr(d), uintptr(len(dest)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func lsetxattr(path, name string, value []byte, flags int) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	n, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	var v unsafe.Pointer
	if len(value) > 0 {
		v = unsafe.Pointer(&value[0])
	}
	_, _, e := syscall.Syscall6(syscall.SYS_LSETXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(n)), uintptr(v), uintptr(len(value)), uintptr(flags), 0)
	if e != 0 {
		return e
	}
	return nil
}

// noXattrSupport reports whether err means the filesystem has no xattrs.
func noXattrSupport(err error) bool {
	return errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP)
}

// readXattrs returns all extended attributes of path (not following a final
// symlink) except the system.* namespace, or nil if there are none or the
// filesystem does not support them.
func readXattrs(path string) (map[string]string, error) {
	var buf []byte
	for {
		size, err := llistxattr(path, nil)
		if err != nil {
			if noXattrSupport(err) {
				return nil, nil
			}
			return nil, err
		}
		if size == 0 {
			return nil, nil
		}
		buf = make([]byte, size)
		n, err := llistxattr(path, buf)
		if errors.Is(err, syscall.ERANGE) {
			continue // the list grew between the two calls
		}
		if err != nil {
			return nil, err
		}
		buf = buf[:n]
		break
	}
	var names []string
	for _, name := range strings.Split(string(buf), "\x00") {
		if name != "" && !strings.HasPrefix(name, "system.") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	sort.Strings(names)
	m := make(map[string]string, len(names))
	for _, name := range names {
		v, err := readXattr(path, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		m[name] = v
	}
	return m, nil
}

func readXattr(path, name string) (string, error) {
	for {
		size, err := lgetxattr(path, name, nil)
		if err != nil {
			return "", err
		}
		if size == 0 {
			return "", nil
		}
		buf := make([]byte, size)
		n, err := lgetxattr(path, name, buf)
		if errors.Is(err, syscall.ERANGE) {
			continue
		}
		if err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
}
