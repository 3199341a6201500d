package dev

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxIovecs is what one pwritev takes (the kernel's UIO_MAXIOV).
const maxIovecs = 1024

// WriteVAt writes bufs one after another from off, with as few system
// calls as the kernel allows (pwritev): a run of adjacent blocks goes out
// as one write without first being copied into one buffer.
func (d *File) WriteVAt(bufs [][]byte, off int64) (int, error) {
	if d.readOnly {
		return 0, ErrReadOnly
	}
	done := 0
	for len(bufs) > 0 {
		var n int
		err := d.withFd(func(fd int) (err error) {
			n, err = unix.Pwritev(fd, bufs[:min(len(bufs), maxIovecs)], off+int64(done))
			return err
		})
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n > 0 {
			done += n
			d.grow(off + int64(done))
		}
		if err != nil {
			return done, &os.PathError{Op: "pwritev", Path: d.f.Name(), Err: err}
		}
		if n == 0 {
			return done, io.ErrShortWrite
		}
		for len(bufs) > 0 && n >= len(bufs[0]) {
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		if n > 0 {
			// A short write inside a buffer: go on from its rest, in a
			// list of our own (bufs is the caller's).
			bufs = append([][]byte{bufs[0][n:]}, bufs[1:]...)
		}
	}
	return done, nil
}
