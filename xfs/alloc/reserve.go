package alloc

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// The refcount btree's reservation. On a reflink volume a free can need
// a block: taking one count off the middle of a shared extent splits its
// refcount record, and a full leaf splits. So that deleting works in a
// full AG, as the kernel does (xfs_refcountbt_calc_reserves, the per-AG
// metadata reservation), every AG keeps back as many blocks as its
// refcount btree could ever hold, less those it holds now: ordinary
// allocations (Alloc without Request.Reserved, AllocBlocks) leave them,
// and only the refcount btree's own allocations take them.

// refcountAsk is the most blocks AG ag's refcount btree can take.
func (s *Space) refcountAsk(ag format.AgNumber) uint32 {
	var log uint32
	for _, e := range s.neverFree {
		if e.AG == ag {
			log += e.Len
		}
	}
	return RefcountAsk(s.geo, ag, log)
}

// RefcountAsk is the most blocks AG ag's refcount btree can take, logBlocks
// of the AG being the internal log: the blocks of a tree of minimally
// filled blocks with a record for every other block of the AG, as the
// kernel sizes it. 0 without reflink.
func RefcountAsk(g *format.Geometry, ag format.AgNumber, logBlocks uint32) uint32 {
	if !g.Reflink {
		return 0
	}
	blocks := uint64(g.AgSize(ag)) - uint64(min(logBlocks, g.AgSize(ag)))
	leafMin := uint64(format.RefcountShape.MaxRecs(g.BlockSize, true) / 2)
	nodeMin := uint64(format.RefcountShape.MaxRecs(g.BlockSize, false) / 2)
	level := (blocks + leafMin - 1) / leafMin
	total := level
	for level > 1 {
		level = (level + nodeMin - 1) / nodeMin
		total += level
	}
	return uint32(total)
}

// Reserved returns the blocks AG ag keeps back for its refcount btree,
// which holds refcountBlocks now (agf_refcount_blocks).
func (s *Space) Reserved(ag format.AgNumber, refcountBlocks uint32) uint32 {
	return max(s.refcountAsk(ag), refcountBlocks) - refcountBlocks
}

// reserved is Reserved for the locked AG.
func (a *AG) reserved() uint32 { return a.t.Space.Reserved(a.ag, a.h.RefcountBlocks) }

// leaveReserve clips r so that the allocation leaves the AG's reserve
// alone, or fails with ErrNoSpace when it cannot.
func (a *AG) leaveReserve(r Request) (Request, error) {
	res := a.reserved()
	if r.Reserved || res == 0 {
		return r, nil
	}
	if a.h.FreeBlks <= res || a.h.FreeBlks-res < r.MinLen+r.Align {
		return r, fmt.Errorf("%w: AG %d keeps its last %d free blocks for its refcount btree", format.ErrNoSpace, a.ag, res)
	}
	r.MaxLen = min(r.MaxLen, a.h.FreeBlks-res)
	return r, nil
}
