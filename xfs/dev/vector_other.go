//go:build !linux

package dev

import "bytes"

// WriteVAt writes bufs one after another from off, joined into one write.
func (d *File) WriteVAt(bufs [][]byte, off int64) (int, error) {
	return d.WriteAt(bytes.Join(bufs, nil), off)
}
