package dev

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// fillChunk is how many zeros FillHoles writes at a time.
const fillChunk = 1 << 20

// FillHoles writes zeros over every hole of a volume file within
// [off, off+n), so that later writes there land on blocks the host
// filesystem has already allocated. What the range reads as does not
// change: a hole reads as zeros. It returns the bytes written. A block
// device, or a filesystem that cannot report holes, has none to fill;
// a host that runs out of space leaves the rest as holes (ErrHostFull).
func (d *File) FillHoles(off, n int64) (int64, error) {
	if d.readOnly {
		return 0, ErrReadOnly
	}
	if d.blockDev || n <= 0 {
		return 0, nil
	}
	end := min(off+n, d.size)
	var zeros []byte
	filled := int64(0)
	for pos := off; pos < end; {
		hole, err := d.seek(pos, unix.SEEK_HOLE)
		if err != nil {
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENXIO) {
				return filled, nil // no hole reporting, or pos at the end
			}
			return filled, fmt.Errorf("%s: find holes: %w", d.f.Name(), err)
		}
		if hole >= end {
			break
		}
		data, err := d.seek(hole, unix.SEEK_DATA)
		if err != nil {
			if !errors.Is(err, unix.ENXIO) {
				return filled, fmt.Errorf("%s: find data: %w", d.f.Name(), err)
			}
			data = end // a hole to the end of the file
		}
		data = min(data, end)
		if zeros == nil {
			zeros = make([]byte, fillChunk)
		}
		for at := hole; at < data; {
			w, err := d.f.WriteAt(zeros[:min(int64(len(zeros)), data-at)], at)
			at += int64(w)
			filled += int64(w)
			if err != nil {
				if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
					return filled, fmt.Errorf("%s: %w: %v", d.f.Name(), ErrHostFull, err)
				}
				return filled, fmt.Errorf("%s: fill hole at %d: %w", d.f.Name(), at, err)
			}
		}
		pos = data
	}
	return filled, nil
}

// seek is lseek(2) on the descriptor: the next hole or data from off.
func (d *File) seek(off int64, whence int) (pos int64, err error) {
	err = d.withFd(func(fd int) error {
		pos, err = unix.Seek(fd, off, whence)
		return err
	})
	return pos, err
}
