package alloc

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Request describes an allocation inside one AG.
type Request struct {
	MinLen, MaxLen uint32
	Goal           format.AgBlock // prefer extents near it (0: none)
	Exact          bool           // only at Goal
	Align          uint32         // start block alignment (0 or 1: none)
	// Reserved lets the allocation take the blocks the AG keeps back
	// for its refcount btree (reserve.go): that tree's own blocks only.
	Reserved bool
}

// Alloc allocates an extent for file data or metadata outside the
// free-space trees and returns its start and length. It does not charge
// the transaction's reservation: the caller does.
func (a *AG) Alloc(r Request) (format.AgBlock, uint32, error) {
	r, err := a.leaveReserve(r)
	if err != nil {
		return 0, 0, err
	}
	if err := a.fixFreelist(); err != nil {
		return 0, 0, err
	}
	return a.allocFromTrees(r)
}

// allocFromTrees finds and removes an extent from the trees: near the
// goal in the bnobt first, then by size in the cntbt.
func (a *AG) allocFromTrees(r Request) (format.AgBlock, uint32, error) {
	if r.MinLen == 0 || r.MaxLen < r.MinLen {
		return 0, 0, fmt.Errorf("%w: allocation of %d..%d blocks", format.ErrInvalid, r.MinLen, r.MaxLen)
	}
	a.busyOnly = false
	var c candidate
	var err error
	found := false
	if r.Goal != 0 || r.Exact {
		c, found, err = a.findNear(r)
		if err != nil {
			return 0, 0, err
		}
		if !found && r.Exact {
			return 0, 0, fmt.Errorf("%w: AG %d block %d is not free", format.ErrNoSpace, a.ag, r.Goal)
		}
	}
	if !found {
		c, found, err = a.findBySize(r)
		if err != nil {
			return 0, 0, err
		}
	}
	if !found {
		if a.busyOnly {
			return 0, 0, ErrBusyOnly
		}
		return 0, 0, fmt.Errorf("%w: AG %d has no free extent of %d blocks", format.ErrNoSpace, a.ag, r.MinLen)
	}
	if err := a.removeFree(c.rec, c.start, c.n); err != nil {
		return 0, 0, err
	}
	return c.start, c.n, nil
}

// candidate is the part [start, start+n) of free extent rec a search
// chose.
type candidate struct {
	rec   format.AllocRec
	start format.AgBlock
	n     uint32
}

// usable returns the part of free extent rec an allocation can take:
// aligned, clear of busy extents, starting as close to goal as it can.
func (a *AG) usable(rec format.AllocRec, r Request) (candidate, bool) {
	start, end := uint64(rec.StartBlock), uint64(rec.StartBlock)+uint64(rec.BlockCount)
	if r.Goal > rec.StartBlock && uint64(r.Goal) < end {
		start = uint64(r.Goal)
	}
	start = alignUp(start, r.Align)
	if start >= end {
		return candidate{}, false
	}
	n := min(end-start, uint64(r.MaxLen))
	busy := a.t.Space.busy
	// Skip past busy extents overlapping the candidate.
	for _, b := range busy.Overlap(a.ag, format.AgBlock(start), uint32(n)) {
		a.busyOnly = true
		if uint64(b.Start) > start && uint64(b.Start)-start >= uint64(r.MinLen) {
			n = uint64(b.Start) - start
			break
		}
		start = alignUp(b.End(), r.Align)
		if start >= end {
			return candidate{}, false
		}
		n = min(end-start, uint64(r.MaxLen))
	}
	if n < uint64(r.MinLen) || len(busy.Overlap(a.ag, format.AgBlock(start), uint32(n))) > 0 {
		return candidate{}, false
	}
	return candidate{rec, format.AgBlock(start), uint32(n)}, true
}

func alignUp(b uint64, align uint32) uint64 {
	if align <= 1 {
		return b
	}
	return (b + uint64(align) - 1) / uint64(align) * uint64(align)
}

// findNear looks for a usable extent at or next to goal in the bnobt,
// walking a bounded number of records each way.
func (a *AG) findNear(r Request) (candidate, bool, error) {
	const maxProbe = 64
	key := encodeRec(format.AllocRec{StartBlock: r.Goal})
	left := a.Tree(format.BtBno).NewCursor()
	ok, err := left.Lookup(btree.LE, key)
	if err != nil {
		return candidate{}, false, err
	}
	if ok {
		rec := decodeRec(left)
		if uint64(rec.StartBlock)+uint64(rec.BlockCount) > uint64(r.Goal) {
			if c, good := a.usable(rec, r); good && (!r.Exact || c.start == r.Goal) {
				return c, true, nil
			}
		}
	}
	if r.Exact {
		return candidate{}, false, nil
	}
	right := a.Tree(format.BtBno).NewCursor()
	rok, err := right.Lookup(btree.GE, key)
	if err != nil {
		return candidate{}, false, err
	}
	if ok {
		if ok, err = left.Decrement(); err != nil {
			return candidate{}, false, err
		}
	}
	for i := 0; i < maxProbe && (ok || rok); i++ {
		// Take whichever side is closer to the goal first.
		var lrec, rrec format.AllocRec
		ldist, rdist := uint64(1<<63), uint64(1<<63)
		if ok {
			lrec = decodeRec(left)
			ldist = uint64(r.Goal) - (uint64(lrec.StartBlock) + uint64(lrec.BlockCount))
		}
		if rok {
			rrec = decodeRec(right)
			rdist = uint64(rrec.StartBlock) - uint64(r.Goal)
		}
		if ok && ldist <= rdist {
			if c, good := a.usableTail(lrec, r); good {
				return c, true, nil
			}
			if ok, err = left.Decrement(); err != nil {
				return candidate{}, false, err
			}
			continue
		}
		if c, good := a.usable(rrec, r); good {
			return c, true, nil
		}
		if rok, err = right.Increment(); err != nil {
			return candidate{}, false, err
		}
	}
	return candidate{}, false, nil
}

// usableTail is usable for an extent left of the goal: take its end, the
// part closest to the goal.
func (a *AG) usableTail(rec format.AllocRec, r Request) (candidate, bool) {
	if rec.BlockCount > r.MaxLen {
		tail := r
		tail.Goal = rec.StartBlock + format.AgBlock(rec.BlockCount-r.MaxLen)
		if c, ok := a.usable(rec, tail); ok {
			return c, true
		}
	}
	r.Goal = 0
	return a.usable(rec, r)
}

// findBySize looks in the cntbt for the smallest extent that holds maxLen,
// or else the largest one that holds minLen.
func (a *AG) findBySize(r Request) (candidate, bool, error) {
	const maxProbe = 256
	key := encodeRec(format.AllocRec{BlockCount: r.MaxLen + max(r.Align, 1) - 1})
	cur := a.Tree(format.BtCnt).NewCursor()
	ok, err := cur.Lookup(btree.GE, key)
	if err != nil {
		return candidate{}, false, err
	}
	r.Goal = 0
	for i := 0; ok && i < maxProbe; i++ {
		if c, good := a.usable(decodeRec(cur), r); good {
			return c, true, nil
		}
		if ok, err = cur.Increment(); err != nil {
			return candidate{}, false, err
		}
	}
	// Nothing holds maxLen: walk down from the largest extent.
	if ok, err = cur.Last(); err != nil {
		return candidate{}, false, err
	}
	for i := 0; ok && i < maxProbe; i++ {
		rec := decodeRec(cur)
		if rec.BlockCount < r.MinLen {
			break
		}
		if c, good := a.usable(rec, r); good {
			return c, true, nil
		}
		if ok, err = cur.Decrement(); err != nil {
			return candidate{}, false, err
		}
	}
	return candidate{}, false, nil
}

func decodeRec(c *btree.Cursor) format.AllocRec {
	rec, _ := c.View()
	return format.DecodeAllocRec(rec)
}

func encodeRec(r format.AllocRec) []byte {
	b := make([]byte, 8)
	r.Encode(b)
	return b
}
