//go:build linux

package dev

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Discard gives [off, off+n) back to the storage: a hole punched in a
// volume file (fallocate PUNCH_HOLE|KEEP_SIZE: the host frees the blocks
// and reads return zeros) or a BLKDISCARD on a block device. It returns
// once the storage has taken the request, so a block may be reused as
// soon as Discard returns.
func (d *File) Discard(off, n int64) error {
	if d.readOnly {
		return ErrReadOnly
	}
	if off < 0 || n <= 0 || off+n > d.size {
		return fmt.Errorf("discard of %d bytes at %d: %w (device has %d bytes)", n, off, io.ErrUnexpectedEOF, d.size)
	}
	for {
		err := d.withFd(func(fd int) error {
			if d.blockDev {
				r := [2]uint64{uint64(off), uint64(n)}
				if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKDISCARD, uintptr(unsafe.Pointer(&r[0]))); e != 0 {
					return e
				}
				return nil
			}
			return unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		})
		if err != unix.EINTR {
			return discardError(d.f.Name(), err)
		}
	}
}

// discardError turns the errors meaning "this storage cannot discard"
// into ErrDiscardUnsupported.
func discardError(name string, err error) error {
	if err == nil {
		return nil
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		switch errno {
		case unix.EOPNOTSUPP, unix.ENOTTY, unix.ENOSYS:
			return fmt.Errorf("%s: %w (%v)", name, ErrDiscardUnsupported, errno)
		}
	}
	return &os.PathError{Op: "discard", Path: name, Err: err}
}

// DiscardGranularity is the host filesystem's block size for a volume
// file, the queue's discard granularity (or else its logical sector size)
// for a block device.
func (d *File) DiscardGranularity() int64 { return d.gran }

// probeDiscard learns whether f is a block device and its discard unit.
func probeDiscard(f *os.File) (blockDev bool, gran int64) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false, 512
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return false, max(int64(st.Blksize), 512)
	}
	gran = 512
	if ss, err := unix.IoctlGetInt(int(f.Fd()), unix.BLKSSZGET); err == nil && ss > 0 {
		gran = int64(ss)
	}
	// A partition has no queue of its own: its disk's is one level up.
	dir := fmt.Sprintf("/sys/dev/block/%d:%d/", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	for _, q := range []string{"queue/", "../queue/"} {
		b, err := os.ReadFile(dir + q + "discard_granularity")
		if err != nil {
			continue
		}
		if g, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && g > 0 {
			gran = max(gran, g)
		}
		break
	}
	return true, gran
}
