package xfs_test

import (
	"os"
	"path/filepath"
	"syscall"
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

// emptySparseFile creates path as a file of size bytes with no data: one
// hole where the filesystem reports holes.
func emptySparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// freshLogVolume makes a 1 GiB volume in dir and returns its path and its
// log's byte range (64 MiB), found by a read-only open.
func freshLogVolume(t *testing.T, dir string) (img string, off, n int64) {
	t.Helper()
	img = filepath.Join(dir, "vol.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	ro, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	off, n = xfs.LogRange(ro)
	ro.Close()
	return img, off, n
}

// TestLogHolesFilled: mkfs leaves the log a hole; a writable open fills
// it with zeros (log writes then find their blocks allocated), a
// read-only open writes nothing, and the volume stays one that
// xfs_repair accepts.
func TestLogHolesFilled(t *testing.T) {
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe")
	emptySparseFile(t, probe, 1<<20)
	if hole := firstHole(t, probe, 0); hole != 0 {
		t.Skipf("the temporary directory's filesystem reports no holes (first hole of a sparse file at %d)", hole)
	}
	img, off, n := freshLogVolume(t, dir)
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
	if _, err := v.Names().Create(v.Root(), "after-fill", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestLogHolesHostFull: on a host filesystem with less free space than
// the log, a writable open leaves the log's holes (the volume's own
// writes need that space) and goes on; the volume works, the next open
// once space is back fills them, and xfs_repair accepts the result.
func TestLogHolesHostFull(t *testing.T) {
	oracle.Require(t, oracle.ToolMount, oracle.ToolRepair)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256m"); err != nil {
		t.Fatalf("mount a tmpfs for the host: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	img, off, n := freshLogVolume(t, dir)
	// Leave 8 MiB of the host free, far less than the 64 MiB log.
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, int64(st.Bavail)*st.Bsize-8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	before := oracle.AllocatedOutside(t, img, 0, 0)
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatalf("open on a nearly full host: %v", err)
	}
	// The open's own writes take a few blocks; a fill would take most
	// of the 64 MiB log.
	if grew := oracle.AllocatedOutside(t, img, 0, 0) - before; grew > 1<<20 {
		t.Errorf("an open on a nearly full host took %d more bytes of it: the log was filled", grew)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Create(v.Root(), "after-full-host", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	v, err = xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hole := firstHole(t, img, off); hole < off+n {
		t.Errorf("after an open with space back: a hole at %d in the log's region [%d, %d)", hole, off, off+n)
	}
	if _, err := v.Names().Lookup(v.Root(), "after-full-host"); err != nil {
		t.Errorf("the file made after the partial fill: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}
