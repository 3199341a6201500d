//go:build !linux

package main

// hostXattr is one attribute of a host file.
type hostXattr struct {
	name  string // with its namespace prefix
	value []byte
}

// hostXattrs reads no attributes where the Linux namespaces do not exist:
// put copies data, modes and symlinks only.
func hostXattrs(path string) ([]hostXattr, error) { return nil, nil }
