package xfs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// TestErrAfterFailedWrite: Err is nil on a usable volume and reports the
// shutdown once a metadata write fails, as a health check needs.
func TestErrAfterFailedWrite(t *testing.T) {
	img := filepath.Join(t.TempDir(), "h.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	d := dev.NewFault(f, fi.Size())
	v, err := xfs.OpenDevice(d, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Err(); err != nil {
		t.Fatalf("fresh volume: %v", err)
	}
	d.Cut()
	if _, err := v.Create(v.Root(), "lost", xfs.Attrs{Mode: 0o644}); err == nil {
		t.Fatal("a create succeeded on a device that fails every write")
	}
	if v.Err() == nil {
		t.Error("Err is nil after a failed metadata write")
	}
}
