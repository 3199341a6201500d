package alloc

import (
	"encoding/binary"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// The AGFL is a ring of block numbers in sector 3 of the AG: flfirst is
// the head, fllast the tail, flcount how many slots are in use.

func (a *AG) agfl() ([]byte, error) {
	if a.fl != nil {
		return a.fl, nil
	}
	g := a.t.Geo()
	b, err := a.t.Read(g.AgHeaderDaddr(a.ag, 3), g.SectSize, a.t.Space.agHeaders(a.ag).agfl)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("AG %d AGFL", a.ag))
	}
	a.fl = b
	return b, nil
}

// agflGet takes the block at the head of the free list.
func (a *AG) agflGet() (format.AgBlock, error) {
	if a.h.FlCount == 0 {
		return 0, fmt.Errorf("%w: AG %d free list is empty", format.ErrNoSpace, a.ag)
	}
	fl, err := a.agfl()
	if err != nil {
		return 0, err
	}
	g := a.t.Geo()
	bno := format.AgBlock(binary.BigEndian.Uint32(fl[format.AgflHdrSize+4*a.h.FlFirst:]))
	if !g.ValidAgBlock(a.ag, bno) || bno == 0 {
		return 0, format.Corrupt("AGFL", fmt.Sprintf("AG %d", a.ag), "slot %d holds block %d", a.h.FlFirst, bno)
	}
	size := uint32(format.AgflSize(g))
	a.h.FlFirst = (a.h.FlFirst + 1) % size
	a.h.FlCount--
	if a.h.FlCount == 0 {
		// An empty list keeps fllast one behind flfirst, as the kernel does.
		a.h.FlLast = (a.h.FlFirst + size - 1) % size
	}
	a.log()
	return bno, nil
}

// agflPut appends a block to the free list.
func (a *AG) agflPut(bno format.AgBlock) error {
	g := a.t.Geo()
	size := uint32(format.AgflSize(g))
	if a.h.FlCount >= size {
		return format.Corrupt("AGFL", fmt.Sprintf("AG %d", a.ag), "free list is full")
	}
	fl, err := a.agfl()
	if err != nil {
		return err
	}
	a.h.FlLast = (a.h.FlLast + 1) % size
	if a.h.FlCount == 0 {
		a.h.FlFirst = a.h.FlLast
	}
	a.h.FlCount++
	binary.BigEndian.PutUint32(fl[format.AgflHdrSize+4*a.h.FlLast:], uint32(bno))
	a.t.Dirty(g.AgHeaderDaddr(a.ag, 3))
	a.log()
	return nil
}

// MinFreelist is how many AGFL blocks must be on hand before a change to
// the free-space trees: enough for a split at every level of both, plus
// a new root.
func (a *AG) MinFreelist() uint32 {
	maxl := a.t.Space.maxLevels
	return min(a.h.Levels[format.BtBno]+1, maxl) + min(a.h.Levels[format.BtCnt]+1, maxl)
}

// fixFreelist tops the AGFL up to what a tree change may need, or trims it
// back, the way xfs_alloc_fix_freelist does around every allocation.
func (a *AG) fixFreelist() error {
	need := a.MinFreelist()
	for a.h.FlCount > need {
		bno, err := a.agflGet()
		if err != nil {
			return err
		}
		// Busy, as the kernel's deferred AGFL free makes it: the block
		// may be a tree block freed by a commit that is not durable yet
		// (tree blocks go to the AGFL unmarked), and until it is, neither
		// new data nor a discard may overwrite what a crash brings back.
		if err := a.freeToTrees(bno, 1, true); err != nil {
			return err
		}
	}
	for a.h.FlCount < need {
		want := need - a.h.FlCount
		bno, n, err := a.allocFromTrees(Request{MinLen: 1, MaxLen: want})
		if err != nil {
			return err
		}
		for i := uint32(0); i < n; i++ {
			if err := a.agflPut(bno + format.AgBlock(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
