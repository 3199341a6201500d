package xfs_test

import (
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// TestErrAfterFailedWrite: Err is nil on a usable volume and reports the
// shutdown once a metadata write fails, as a health check needs.
func TestErrAfterFailedWrite(t *testing.T) {
	v, d := newFaultVolume(t, filepath.Join(t.TempDir(), "h.img"), xfs.Options{})
	defer v.Close()
	if err := v.Err(); err != nil {
		t.Fatalf("fresh volume: %v", err)
	}
	d.Cut()
	if _, err := v.Names().Create(v.Root(), "lost", xfs.Attrs{Mode: 0o644}); err == nil {
		t.Fatal("a create succeeded on a device that fails every write")
	}
	if v.Err() == nil {
		t.Error("Err is nil after a failed metadata write")
	}
}

// newFaultVolume formats a 64 MiB volume at img and opens it through a
// Fault device, which never writes img itself.
func newFaultVolume(t *testing.T, img string, o xfs.Options) (*xfs.Volume, *dev.Fault) {
	t.Helper()
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	d, closeBase, err := dev.OpenFault(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBase() })
	v, err := xfs.OpenDevice(d, o)
	if err != nil {
		t.Fatal(err)
	}
	return v, d
}
