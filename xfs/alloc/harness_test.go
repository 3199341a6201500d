package alloc

import (
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/trans"
)

// harness is a volume made by our mkfs, changed through a buffer cache
// without a log: commits go straight to the device, Sync makes busy
// extents reusable.
type harness struct {
	t     testing.TB
	img   string
	dev   *dev.File
	geo   format.Geometry
	cache *trans.Cache
	space *Space
}

func newHarness(t testing.TB, size int64, o mkfs.Options) *harness {
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
	h := &harness{t: t, img: img, dev: d, geo: format.NewGeometry(sb)}
	h.cache = trans.NewCache(d, 16<<20)
	h.space = NewSpace(&h.geo, h.cache.Busy())
	return h
}

// noReservation lets a test allocate without a block budget.
type noReservation struct{}

func (noReservation) UseBlocks(int64) error { return nil }
func (noReservation) FreeBlocks(int64)      {}

// begin starts a transaction.
func (h *harness) begin() *Tx {
	h.t.Helper()
	tx, err := h.cache.Begin()
	if err != nil {
		h.t.Fatal(err)
	}
	return h.space.Begin(tx, noReservation{})
}

// lock starts a transaction and locks AG ag's AGF in it.
func (h *harness) lock(ag format.AgNumber) *AG {
	h.t.Helper()
	tx := h.begin()
	a, err := tx.Lock(ag)
	if err != nil {
		tx.Cancel()
		h.t.Fatal(err)
	}
	return a
}

func (h *harness) sync() {
	h.t.Helper()
	if err := h.cache.Sync(); err != nil {
		h.t.Fatal(err)
	}
}
