package oracle

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// FragmentInImage mounts the volume image img, gives each of the regular
// files at paths (relative to the root) extents one-block extents, and
// unmounts it: the kernel allocates twice as many blocks (fallocate) and
// punches out every other one, so no two that remain can merge. Their
// extents are unwritten (read as zeros) between holes. It takes seconds
// for 100,000 extents, where writing them one by one would take minutes.
// The image file is flushed afterwards, so the loop device's writes are
// not paid for by the next flush of whoever opens it.
func FragmentInImage(t testing.TB, img string, paths []string, extents int) {
	t.Helper()
	mnt := Mount(t, img, false)
	for _, p := range paths {
		if err := fragment(filepath.Join(mnt, p), extents); err != nil {
			t.Fatal(err)
		}
	}
	Unmount(t, mnt)
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

func fragment(path string, extents int) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	block := st.Blksize
	if err := unix.Fallocate(fd, 0, 0, 2*int64(extents)*block); err != nil {
		return &os.PathError{Op: "fallocate", Path: path, Err: err}
	}
	for i := range int64(extents) {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, (2*i+1)*block, block); err != nil {
			return &os.PathError{Op: "punch", Path: path, Err: err}
		}
	}
	return nil
}
