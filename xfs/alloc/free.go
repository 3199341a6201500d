package alloc

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// removeFree takes [start, start+n) out of free extent rec in both trees.
func (a *AG) removeFree(rec format.AllocRec, start format.AgBlock, n uint32) error {
	recEnd := uint64(rec.StartBlock) + uint64(rec.BlockCount)
	if start < rec.StartBlock || uint64(start)+uint64(n) > recEnd {
		return fmt.Errorf("xfs: internal error: allocation outside its free extent")
	}
	var pieces []format.AllocRec
	if start > rec.StartBlock {
		pieces = append(pieces, format.AllocRec{StartBlock: rec.StartBlock, BlockCount: uint32(start - rec.StartBlock)})
	}
	if end := uint64(start) + uint64(n); end < recEnd {
		pieces = append(pieces, format.AllocRec{StartBlock: format.AgBlock(end), BlockCount: uint32(recEnd - end)})
	}
	if err := a.replaceFree([]format.AllocRec{rec}, pieces); err != nil {
		return err
	}
	a.h.FreeBlks -= n
	return a.updateLongest()
}

// replaceFree deletes the records old from both trees and inserts new.
// Cursors take whole records and derive each tree's key (start block, or
// length then start) themselves.
func (a *AG) replaceFree(old, new []format.AllocRec) error {
	for _, which := range []int{format.BtBno, format.BtCnt} {
		tr := a.Tree(which)
		for _, r := range old {
			c := tr.NewCursor()
			ok, err := c.Lookup(btree.EQ, encodeRec(r))
			if err != nil {
				return err
			}
			if !ok || decodeRec(c) != r {
				return format.Corrupt(tr.Kind.Shape.Name, fmt.Sprintf("AG %d", a.ag), "free extent %d+%d missing", r.StartBlock, r.BlockCount)
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		for _, r := range new {
			c := tr.NewCursor()
			ok, err := c.Lookup(btree.EQ, encodeRec(r))
			if err != nil {
				return err
			}
			if ok {
				return format.Corrupt(tr.Kind.Shape.Name, fmt.Sprintf("AG %d", a.ag), "free extent %d+%d already present", r.StartBlock, r.BlockCount)
			}
			if err := c.Insert(encodeRec(r)); err != nil {
				return err
			}
		}
	}
	return nil
}

// updateLongest sets agf_longest from the last cntbt record.
func (a *AG) updateLongest() error {
	c := a.Tree(format.BtCnt).NewCursor()
	ok, err := c.Last()
	if err != nil {
		return err
	}
	a.h.Longest = 0
	if ok {
		a.h.Longest = decodeRec(c).BlockCount
	}
	a.log()
	return nil
}

// Free returns [bno, bno+n) to the trees, busy until the transaction is
// durable. It does not credit the reservation: the caller does.
func (a *AG) Free(bno format.AgBlock, n uint32) error { return a.freeExtent(bno, n, true) }

// freeExtent returns [bno, bno+n) to the trees, merging with free
// neighbours, after making sure the free list can feed the tree changes.
// busy marks it busy until the transaction is durable.
func (a *AG) freeExtent(bno format.AgBlock, n uint32, busy bool) error {
	err := a.fixFreelist()
	if errors.Is(err, format.ErrNoSpace) {
		// A full AG cannot top its free list up before the free; freeing
		// needs at most what is left, and then the list can be refilled
		// (xfs_alloc_fix_freelist's FREEING case).
		if err := a.freeToTrees(bno, n, busy); err != nil {
			return err
		}
		if err := a.fixFreelist(); err != nil && !errors.Is(err, format.ErrNoSpace) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	return a.freeToTrees(bno, n, busy)
}

// neighbours returns the free extents left (at or before bno) and right
// (at or after bno) of block bno in the bnobt.
func (a *AG) neighbours(bno format.AgBlock) (left, right *format.AllocRec, err error) {
	key := encodeRec(format.AllocRec{StartBlock: bno})
	for _, dir := range []btree.Dir{btree.LE, btree.GE} {
		c := a.Tree(format.BtBno).NewCursor()
		ok, err := c.Lookup(dir, key)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		rec := decodeRec(c)
		if dir == btree.LE {
			left = &rec
		} else {
			right = &rec
		}
	}
	return left, right, nil
}

// freeToTrees is freeExtent without the free list upkeep.
func (a *AG) freeToTrees(bno format.AgBlock, n uint32, busy bool) error {
	g := a.t.Geo()
	end := uint64(bno) + uint64(n)
	if n == 0 || bno == 0 || end > uint64(g.AgSize(a.ag)) {
		return format.Corrupt("extent", fmt.Sprintf("AG %d", a.ag), "freeing %d+%d outside the AG", bno, n)
	}
	l, r, err := a.neighbours(bno)
	if err != nil {
		return err
	}
	var old []format.AllocRec
	merged := format.AllocRec{StartBlock: bno, BlockCount: n}
	if l != nil {
		lend := uint64(l.StartBlock) + uint64(l.BlockCount)
		if lend > uint64(bno) {
			return format.Corrupt("bnobt", fmt.Sprintf("AG %d", a.ag), "freeing %d+%d, already free in %d+%d", bno, n, l.StartBlock, l.BlockCount)
		}
		if lend == uint64(bno) && uint64(l.BlockCount)+uint64(merged.BlockCount) <= format.MaxExtentLen<<11 {
			old = append(old, *l)
			merged = format.AllocRec{StartBlock: l.StartBlock, BlockCount: l.BlockCount + merged.BlockCount}
		}
	}
	if r != nil {
		if uint64(r.StartBlock) < end {
			return format.Corrupt("bnobt", fmt.Sprintf("AG %d", a.ag), "freeing %d+%d, already free in %d+%d", bno, n, r.StartBlock, r.BlockCount)
		}
		if uint64(r.StartBlock) == end {
			old = append(old, *r)
			merged.BlockCount += r.BlockCount
		}
	}
	if err := a.replaceFree(old, []format.AllocRec{merged}); err != nil {
		return err
	}
	a.h.FreeBlks += n
	a.t.Space.untrimmed.mark(a.ag, bno, n)
	if busy {
		a.t.FreeExtent(trans.Extent{AG: a.ag, Start: bno, Len: n})
	}
	return a.updateLongest()
}

// OverlapsFree reports whether any of [bno, bno+n) is free.
func (a *AG) OverlapsFree(bno format.AgBlock, n uint32) (bool, error) {
	l, r, err := a.neighbours(bno)
	if err != nil {
		return false, err
	}
	if l != nil && uint64(l.StartBlock)+uint64(l.BlockCount) > uint64(bno) {
		return true, nil
	}
	return r != nil && uint64(r.StartBlock) < uint64(bno)+uint64(n), nil
}
