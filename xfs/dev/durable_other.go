//go:build !linux

package dev

// WriteAtDurable writes p at off and flushes the file: without
// RWF_DSYNC the whole file is flushed.
func (d *File) WriteAtDurable(p []byte, off int64) (int, error) {
	return d.writeThenSync(p, off, 0)
}
