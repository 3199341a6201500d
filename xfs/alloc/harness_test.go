package alloc

import (
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/trans/transtest"
)

// harness is a volume open through a log-less cache, with its allocator.
type harness struct {
	*transtest.Image
	t     testing.TB
	geo   *format.Geometry
	space *Space
}

func newHarness(t testing.TB, size int64, o mkfs.Options) *harness {
	t.Helper()
	im := transtest.New(t, size, o)
	return &harness{Image: im, t: t, geo: &im.Geo, space: NewSpace(&im.Geo, im.Cache.Busy())}
}

// begin starts a transaction.
func (h *harness) begin() *Tx {
	h.t.Helper()
	tx, err := h.Cache.Begin()
	if err != nil {
		h.t.Fatal(err)
	}
	return h.space.Begin(tx, transtest.NoReservation{})
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
	if err := h.Cache.Sync(); err != nil {
		h.t.Fatal(err)
	}
}
