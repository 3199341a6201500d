//go:build !linux

package dev

// FillHoles has no holes to find where the platform cannot report them.
func (d *File) FillHoles(off, n int64) (int64, error) {
	if d.readOnly {
		return 0, ErrReadOnly
	}
	return 0, nil
}
