package oracle

import (
	"bytes"
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
	fragmentInImage(t, img, paths, extents, false)
}

// FragmentWrittenInImage is FragmentInImage with the blocks written (and
// flushed) before every other one is punched out: the extents that stay
// hold data, and the freed blocks were once written through to the image
// file, as in a volume that had real objects deleted (what trim has to
// give back).
func FragmentWrittenInImage(t testing.TB, img string, paths []string, extents int) {
	t.Helper()
	fragmentInImage(t, img, paths, extents, true)
}

func fragmentInImage(t testing.TB, img string, paths []string, extents int, written bool) {
	t.Helper()
	mnt := Mount(t, img, false)
	for _, p := range paths {
		if err := fragment(filepath.Join(mnt, p), extents, written); err != nil {
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

func fragment(path string, extents int, written bool) error {
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
	size := 2 * int64(extents) * block
	if written {
		data := bytes.Repeat([]byte{'f'}, int(min(size, 1<<20)))
		for off := int64(0); off < size; off += int64(len(data)) {
			if _, err := f.WriteAt(data[:min(int64(len(data)), size-off)], off); err != nil {
				return err
			}
		}
		if err := f.Sync(); err != nil {
			return err
		}
	} else if err := unix.Fallocate(fd, 0, 0, size); err != nil {
		return &os.PathError{Op: "fallocate", Path: path, Err: err}
	}
	for i := range int64(extents) {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, (2*i+1)*block, block); err != nil {
			return &os.PathError{Op: "punch", Path: path, Err: err}
		}
	}
	return nil
}
