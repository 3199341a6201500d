// Package transtest gives tests of the allocators a volume made by our
// mkfs and a buffer cache over it without a log: commits go straight to
// the device, Sync makes busy extents reusable. Only tests import it.
package transtest

import (
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Image is a freshly made volume open for changes through Cache.
type Image struct {
	Path  string
	Dev   *dev.File
	Sb    *format.Superblock // as mkfs wrote it
	Geo   format.Geometry
	Cache *trans.Cache
}

// New makes a volume of size bytes with options o in a temporary
// directory of t and opens it; t's cleanup closes it.
func New(t testing.TB, size int64, o mkfs.Options) *Image {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.img")
	o.Size = size
	if _, err := mkfs.Format(img, o); err != nil {
		t.Fatal(err)
	}
	d, err := dev.Open(img, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	sector := make([]byte, 512)
	if _, err := d.ReadAt(sector, 0); err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(sector)
	if err != nil {
		t.Fatal(err)
	}
	return &Image{Path: img, Dev: d, Sb: sb, Geo: format.NewGeometry(sb), Cache: trans.NewCache(d, 16<<20)}
}

// NoReservation is a block budget that never runs out.
type NoReservation struct{}

func (NoReservation) UseBlocks(int64) error { return nil }
func (NoReservation) FreeBlocks(int64)      {}
