package main

import (
	"errors"
	"sort"
	"strings"
	"syscall"
	"unsafe"
)

// Extended attributes of host files, read for put without following a
// final symlink (the syscall package only has the variants that follow).

// hostXattr is one attribute of a host file.
type hostXattr struct {
	name  string // with its namespace prefix
	value []byte
}

// hostXattrs returns the attributes of path in the user, trusted and
// security namespaces that the caller may read, sorted by name. system.*
// (ACLs, capabilities of other filesystems) is left out, and so is an
// attribute that vanishes or may not be read while being listed. A
// filesystem without attributes has none.
func hostXattrs(path string) ([]hostXattr, error) {
	list, err := llistxattr(path)
	if err != nil {
		if errors.Is(err, syscall.ENOTSUP) {
			return nil, nil
		}
		return nil, &hostErr{"listxattr", path, err}
	}
	var out []hostXattr
	for _, name := range strings.Split(string(list), "\x00") {
		ns, _, _ := strings.Cut(name, ".")
		if ns != "user" && ns != "trusted" && ns != "security" {
			continue
		}
		val, err := lgetxattr(path, name)
		switch {
		case errors.Is(err, syscall.ENODATA), errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
			continue
		case err != nil:
			return nil, &hostErr{"getxattr " + name, path, err}
		}
		out = append(out, hostXattr{name, val})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// hostErr is a failed call on a host path.
type hostErr struct {
	op, path string
	err      error
}

func (e *hostErr) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *hostErr) Unwrap() error { return e.err }

// llistxattr returns the NUL-separated attribute names of path, growing
// its buffer while the list grows under it.
func llistxattr(path string) ([]byte, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return nil, err
	}
	for {
		n, _, errno := syscall.Syscall(syscall.SYS_LLISTXATTR, uintptr(unsafe.Pointer(p)), 0, 0)
		if errno != 0 {
			return nil, errno
		}
		if n == 0 {
			return nil, nil
		}
		buf := make([]byte, n)
		n, _, errno = syscall.Syscall(syscall.SYS_LLISTXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if errno == syscall.ERANGE {
			continue
		}
		if errno != 0 {
			return nil, errno
		}
		return buf[:n], nil
	}
}

// lgetxattr returns the value of attribute name of path.
func lgetxattr(path, name string) ([]byte, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return nil, err
	}
	np, err := syscall.BytePtrFromString(name)
	if err != nil {
		return nil, err
	}
	for {
		n, _, errno := syscall.Syscall6(syscall.SYS_LGETXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(np)), 0, 0, 0, 0)
		if errno != 0 {
			return nil, errno
		}
		if n == 0 {
			return []byte{}, nil
		}
		buf := make([]byte, n)
		n, _, errno = syscall.Syscall6(syscall.SYS_LGETXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(np)), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
		if errno == syscall.ERANGE {
			continue
		}
		if errno != 0 {
			return nil, errno
		}
		return buf[:n], nil
	}
}
