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
// device, or a filesystem that cannot report holes, has none to fill.
//
// The fill never takes a host's last free space, which the volume's own
// writes into its other holes need more: with less than twice the holes'
// size free it writes nothing, and a host that fills up meanwhile stops
// it part-way; both are ErrHostFull, and the rest stays holes.
func (d *File) FillHoles(off, n int64) (int64, error) {
	if d.readOnly {
		return 0, ErrReadOnly
	}
	if d.blockDev || n <= 0 {
		return 0, nil
	}
	holes, err := d.holes(off, min(off+n, d.size))
	if err != nil || len(holes) == 0 {
		return 0, err
	}
	need := int64(0)
	for _, h := range holes {
		need += h[1] - h[0]
	}
	var st unix.Statfs_t
	if err := d.withFd(func(fd int) error { return unix.Fstatfs(fd, &st) }); err != nil {
		return 0, fmt.Errorf("%s: statfs: %w", d.f.Name(), err)
	}
	if free := int64(st.Bavail) * st.Bsize; free < 2*need {
		return 0, fmt.Errorf("%s: %w: %d bytes free, filling %d bytes of holes needs twice that", d.f.Name(), ErrHostFull, free, need)
	}
	zeros := make([]byte, min(fillChunk, need))
	filled := int64(0)
	for _, h := range holes {
		for at := h[0]; at < h[1]; {
			w, err := d.f.WriteAt(zeros[:min(int64(len(zeros)), h[1]-at)], at)
			at += int64(w)
			filled += int64(w)
			if err != nil {
				if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
					return filled, fmt.Errorf("%s: %w: %v", d.f.Name(), ErrHostFull, err)
				}
				return filled, fmt.Errorf("%s: fill hole at %d: %w", d.f.Name(), at, err)
			}
		}
	}
	return filled, nil
}

// holes lists the holes of [off, end) as [start, end) pairs.
func (d *File) holes(off, end int64) ([][2]int64, error) {
	var holes [][2]int64
	for pos := off; pos < end; {
		hole, err := d.seek(pos, unix.SEEK_HOLE)
		if err != nil {
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENXIO) {
				return holes, nil // no hole reporting, or pos at the end
			}
			return nil, fmt.Errorf("%s: find holes: %w", d.f.Name(), err)
		}
		if hole >= end {
			break
		}
		data, err := d.seek(hole, unix.SEEK_DATA)
		if err != nil {
			if !errors.Is(err, unix.ENXIO) {
				return nil, fmt.Errorf("%s: find data: %w", d.f.Name(), err)
			}
			data = end // a hole to the end of the file
		}
		data = min(data, end)
		holes = append(holes, [2]int64{hole, data})
		pos = data
	}
	return holes, nil
}

// seek is lseek(2) on the descriptor: the next hole or data from off.
func (d *File) seek(off int64, whence int) (pos int64, err error) {
	err = d.withFd(func(fd int) error {
		pos, err = unix.Seek(fd, off, whence)
		return err
	})
	return pos, err
}
