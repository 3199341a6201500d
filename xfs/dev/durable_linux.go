package dev

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// WriteAtDurable writes p at off and returns once that range is on stable
// storage (pwritev2 with RWF_DSYNC): unlike Sync it does not wait for the
// rest of the file's dirty pages. Where the kernel lacks the flag it falls
// back to a write and a whole-file flush.
func (d *File) WriteAtDurable(p []byte, off int64) (int, error) {
	if d.readOnly {
		return 0, ErrReadOnly
	}
	done := 0
	for done < len(p) {
		var n int
		err := d.withFd(func(fd int) (err error) {
			n, err = unix.Pwritev2(fd, [][]byte{p[done:]}, off+int64(done), unix.RWF_DSYNC)
			return err
		})
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
			return d.writeThenSync(p[done:], off+int64(done), done)
		}
		if err != nil {
			return done, &os.PathError{Op: "pwritev2", Path: d.f.Name(), Err: err}
		}
		done += n
	}
	d.grow(off + int64(done))
	return done, nil
}
