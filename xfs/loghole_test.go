package xfs_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// firstHole is the first hole of path at or after off (the file's size
// when there is none).
func firstHole(t *testing.T, path string, off int64) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hole, err := unix.Seek(int(f.Fd()), off, unix.SEEK_HOLE)
	if err != nil {
		t.Fatal(err)
	}
	return hole
}

// TestLogHolesFilled: mkfs leaves the log a hole; a writable open fills
// it with zeros (log writes then find their blocks allocated), a
// read-only open writes nothing, and the volume stays one that
// xfs_repair accepts.
func TestLogHolesFilled(t *testing.T) {
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(probe, 1<<20); err != nil {
		t.Fatal(err)
	}
	if hole := firstHole(t, probe, 0); hole != 0 {
		t.Skipf("the temporary directory's filesystem reports no holes (first hole of a sparse file at %d)", hole)
	}
	img := filepath.Join(dir, "vol.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	ro, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	off, n := xfs.LogRange(ro)
	ro.Close()
	if hole := firstHole(t, img, off); hole >= off+n {
		t.Fatalf("no hole in the log's region after mkfs and a read-only open (first hole from it at %d)", hole)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hole := firstHole(t, img, off); hole < off+n {
		t.Errorf("after a writable open: a hole at %d in the log's region [%d, %d)", hole, off, off+n)
	}
	if _, err := v.Create(v.Root(), "after-fill", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}
