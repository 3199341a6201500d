package alloc

import (
	"errors"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// TestRefcountReserve: an AG of a reflink volume keeps back what its
// refcount btree may need; ordinary allocations leave it (and are
// clipped to what is above it), the tree's own take it; without reflink
// nothing is kept.
func TestRefcountReserve(t *testing.T) {
	h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2})
	const ag = 1
	ask := h.space.refcountAsk(ag)
	// The kernel's size for 8192 blocks of 4 KiB: 49 leaves at the
	// minimum of 168 records, and one node.
	if h.geo.AgSize(ag) != 8192 || ask != 50 {
		t.Fatalf("AG of %d blocks asks %d", h.geo.AgSize(ag), ask)
	}
	a := h.lock(ag)
	res := a.reserved()
	if want := ask - a.h.RefcountBlocks; res != want {
		t.Fatalf("reserved %d, want %d", res, want)
	}
	free := a.h.FreeBlks
	// Take everything an ordinary allocation may have, in one go.
	_, n, err := a.Alloc(Request{MinLen: 1, MaxLen: free})
	if err != nil || n != free-res {
		t.Fatalf("ordinary allocation of up to %d: %d, %v; want %d", free, n, err, free-res)
	}
	if _, _, err := a.Alloc(Request{MinLen: 1, MaxLen: 1}); !errors.Is(err, format.ErrNoSpace) {
		t.Fatalf("ordinary allocation into the reserve: %v, want ErrNoSpace", err)
	}
	if _, n, err := a.Alloc(Request{MinLen: 1, MaxLen: 1, Reserved: true}); err != nil || n != 1 {
		t.Fatalf("refcount btree allocation from the reserve: %d, %v", n, err)
	}
	a.t.Cancel()

	plain := newHarness(t, 64<<20, mkfs.Options{AgCount: 2, NoReflink: true})
	if got := plain.space.refcountAsk(ag); got != 0 {
		t.Fatalf("a volume without reflink asks %d", got)
	}
}
