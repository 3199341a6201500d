package xfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// The free-space allocator of one AG, inside a transaction.
//
//	agfCtx ── bnobt (free extents by start)   ┐ both trees always describe
//	       └─ cntbt (free extents by length)  ┘ the same extents
//	       └─ AGFL: blocks set aside for splits of those two trees
//
// Every change keeps agf_freeblks (blocks in the trees), agf_longest (the
// last cntbt record), agf_flcount and agf_btreeblks (non-root tree blocks,
// which come from and go back to the AGFL) exact, as xfs_repair checks.

var agfOps = &trans.Ops{Name: "AGF", Finish: func(b []byte) { format.SetCRC(b, format.AgfCRCOff) }}
var agflOps = &trans.Ops{Name: "AGFL", Finish: func(b []byte) { format.SetCRC(b, format.AgflCRCOff) }}

// errBusyOnly says the AG has room, but only in extents freed by commits
// that are not durable yet.
var errBusyOnly = errors.New("free space is busy")

// agfCtx is a transaction's locked view of one AG's free space.
type agfCtx struct {
	t        *txn
	ag       format.AgNumber
	daddr    format.Daddr
	buf      []byte // the transaction's copy of the AGF sector
	h        *format.Agf
	fl       []byte // the AGFL sector, read on first use
	busyOnly bool   // an allocation skipped busy extents
}

// readAgf locks AG ag's AGF for the transaction (once; later calls
// return the same view).
func (t *txn) readAgf(ag format.AgNumber) (*agfCtx, error) {
	a, _, err := t.lockAgf(ag, false)
	return a, err
}

// tryAgf is readAgf that gives up instead of waiting when another
// transaction holds the AGF.
func (t *txn) tryAgf(ag format.AgNumber) (*agfCtx, bool, error) { return t.lockAgf(ag, true) }

func (t *txn) lockAgf(ag format.AgNumber, try bool) (*agfCtx, bool, error) {
	if a, ok := t.agfs[ag]; ok {
		return a, true, nil
	}
	g := &t.v.geo
	d := g.AgHeaderDaddr(ag, 1)
	ops := &trans.Ops{Name: "AGF", Finish: agfOps.Finish, Verify: func(b []byte, _ format.Daddr) error {
		_, err := format.VerifyAgf(g, ag, b)
		return err
	}}
	var buf []byte
	var err error
	if try {
		var got bool
		if buf, got, err = t.TryRead(d, g.SectSize, ops); err == nil && !got {
			return nil, false, nil
		}
	} else {
		buf, err = t.Read(d, g.SectSize, ops)
	}
	if err != nil {
		return nil, false, format.Located(err, fmt.Sprintf("AG %d AGF", ag))
	}
	h, err := format.DecodeAgf(buf)
	if err != nil {
		return nil, false, err
	}
	a := &agfCtx{t: t, ag: ag, daddr: d, buf: buf, h: h}
	t.agfs[ag] = a
	return a, true, nil
}

// allocBlocks allocates between minLen and maxLen blocks anywhere, trying
// the goal's AG first. AGFs are locked in ascending AG order: other AGs
// are only tried without waiting, or when above every AG already held.
func (t *txn) allocBlocks(goal format.FsBlock, minLen, maxLen uint32, align uint32) (format.FsBlock, uint32, error) {
	g := &t.v.geo
	startAG, goalBno := g.FsbToAg(goal)
	if !g.ValidFsb(goal) {
		startAG, goalBno = 0, 0
	}
	busy := false
	for pass := 0; pass < 2; pass++ {
		for i := uint32(0); i < g.AgCount; i++ {
			ag := format.AgNumber((uint32(startAG) + i) % g.AgCount)
			var a *agfCtx
			if pass == 0 {
				var ok bool
				var err error
				if a, ok, err = t.tryAgf(ag); err != nil {
					return 0, 0, err
				} else if !ok {
					continue
				}
			} else {
				if _, held := t.agfs[ag]; !held && ag < t.highestAgf() {
					continue
				}
				var err error
				if a, err = t.readAgf(ag); err != nil {
					return 0, 0, err
				}
			}
			if a.h.Longest < minLen+align {
				continue
			}
			r := allocReq{minLen: minLen, maxLen: maxLen, align: align}
			if ag == startAG {
				r.goal = goalBno
			}
			bno, n, err := a.alloc(r)
			if errors.Is(err, errBusyOnly) {
				busy = true
				continue
			}
			if errors.Is(err, ErrNoSpace) {
				continue
			}
			if err != nil {
				return 0, 0, err
			}
			if err := t.useBlocks(int64(n)); err != nil {
				return 0, 0, err
			}
			return g.AgToFsb(ag, bno), n, nil
		}
	}
	if busy {
		return 0, 0, errBusyOnly
	}
	return 0, 0, fmt.Errorf("%w: no free extent of %d blocks", ErrNoSpace, minLen)
}

// highestAgf is the highest AG whose AGF the transaction holds.
func (t *txn) highestAgf() format.AgNumber {
	var hi format.AgNumber
	for ag := range t.agfs {
		hi = max(hi, ag)
	}
	return hi
}

// freeBlocksAt frees extents of any AGs, taking AGFs in ascending order.
func (t *txn) freeExtents(exts []format.Extent) error {
	g := &t.v.geo
	sorted := append([]format.Extent(nil), exts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].StartBlock < sorted[j].StartBlock })
	for _, e := range sorted {
		ag, bno := g.FsbToAg(e.StartBlock)
		a, err := t.readAgf(ag)
		if err != nil {
			return err
		}
		if err := a.freeExtent(bno, uint32(e.BlockCount), true); err != nil {
			return err
		}
		t.freeBlocks(int64(e.BlockCount))
	}
	return nil
}

// log re-encodes the header into the transaction's copy.
func (a *agfCtx) log() {
	a.h.Encode(a.buf)
	a.t.Dirty(a.daddr)
}

// tree returns the bnobt or cntbt of the AG; blocks for splits come from
// the AGFL and go back to it.
func (a *agfCtx) tree(which int) *btree.Tree {
	kind := btree.Bnobt
	if which == format.BtCnt {
		kind = btree.Cntbt
	}
	tr := &btree.Tree{Kind: kind, Geo: &a.t.v.geo, AG: a.ag,
		Root: uint64(a.h.Roots[which]), Levels: int(a.h.Levels[which])}
	tr.Store = &treeStore{t: a.t, tree: tr,
		alloc: func(uint64) (uint64, error) {
			bno, err := a.agflGet()
			if err != nil {
				return 0, err
			}
			a.h.BtreeBlks++
			a.log()
			return uint64(bno), nil
		},
		free: func(ptr uint64) error {
			if err := a.agflPut(format.AgBlock(ptr)); err != nil {
				return err
			}
			a.h.BtreeBlks--
			a.log()
			return nil
		}}
	tr.RootChanged = func() {
		a.h.Roots[which], a.h.Levels[which] = format.AgBlock(tr.Root), uint32(tr.Levels)
		a.log()
	}
	return tr
}

func (a *agfCtx) agfl() ([]byte, error) {
	if a.fl != nil {
		return a.fl, nil
	}
	g := &a.t.v.geo
	ag := a.ag
	ops := &trans.Ops{Name: "AGFL", Finish: agflOps.Finish, Verify: func(b []byte, _ format.Daddr) error {
		_, err := format.VerifyAgfl(g, ag, b)
		return err
	}}
	b, err := a.t.Read(g.AgHeaderDaddr(ag, 3), g.SectSize, ops)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("AG %d AGFL", ag))
	}
	a.fl = b
	return b, nil
}

// agflGet takes the block at the head of the free list.
func (a *agfCtx) agflGet() (format.AgBlock, error) {
	if a.h.FlCount == 0 {
		return 0, fmt.Errorf("%w: AG %d free list is empty", ErrNoSpace, a.ag)
	}
	fl, err := a.agfl()
	if err != nil {
		return 0, err
	}
	bno := format.AgBlock(binary.BigEndian.Uint32(fl[format.AgflHdrSize+4*a.h.FlFirst:]))
	if !a.t.v.geo.ValidAgBlock(a.ag, bno) || bno == 0 {
		return 0, format.Corrupt("AGFL", fmt.Sprintf("AG %d", a.ag), "slot %d holds block %d", a.h.FlFirst, bno)
	}
	a.h.FlFirst = (a.h.FlFirst + 1) % uint32(format.AgflSize(&a.t.v.geo))
	a.h.FlCount--
	if a.h.FlCount == 0 {
		// An empty list keeps fllast one behind flfirst, as the kernel does.
		a.h.FlLast = (a.h.FlFirst + uint32(format.AgflSize(&a.t.v.geo)) - 1) % uint32(format.AgflSize(&a.t.v.geo))
	}
	a.log()
	return bno, nil
}

// agflPut appends a block to the free list.
func (a *agfCtx) agflPut(bno format.AgBlock) error {
	size := uint32(format.AgflSize(&a.t.v.geo))
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
	a.t.Dirty(a.t.v.geo.AgHeaderDaddr(a.ag, 3))
	a.log()
	return nil
}

// minFreelist is how many AGFL blocks must be on hand before a change to
// the free-space trees: enough for a split at every level of both, plus
// a new root.
func (a *agfCtx) minFreelist() uint32 {
	maxl := a.t.v.allocMaxLevels()
	return min(a.h.Levels[format.BtBno]+1, maxl) + min(a.h.Levels[format.BtCnt]+1, maxl)
}

// allocMaxLevels is the tallest a free-space tree can get in an AG.
func (v *Volume) allocMaxLevels() uint32 {
	leafMin := uint64(format.BnobtShape.MaxRecs(v.geo.BlockSize, true) / 2)
	nodeMin := uint64(format.BnobtShape.MaxRecs(v.geo.BlockSize, false) / 2)
	recs := (uint64(v.geo.AgBlocks) + 1) / 2
	blocks := (recs + leafMin - 1) / leafMin
	levels := uint32(1)
	for blocks > 1 {
		blocks = (blocks + nodeMin - 1) / nodeMin
		levels++
	}
	return levels
}

// fixFreelist tops the AGFL up to what a tree change may need, or trims it
// back, the way xfs_alloc_fix_freelist does around every allocation.
func (a *agfCtx) fixFreelist() error {
	need := a.minFreelist()
	for a.h.FlCount > need {
		bno, err := a.agflGet()
		if err != nil {
			return err
		}
		if err := a.freeToTrees(bno, 1, false); err != nil {
			return err
		}
	}
	for a.h.FlCount < need {
		want := need - a.h.FlCount
		bno, n, err := a.allocFromTrees(allocReq{minLen: 1, maxLen: want})
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

// allocReq describes an allocation inside one AG.
type allocReq struct {
	minLen, maxLen uint32
	goal           format.AgBlock // prefer extents near it (0: none)
	exact          bool           // only at goal
	align          uint32         // start block alignment (0 or 1: none)
}

// alloc allocates an extent for file data or metadata outside the
// free-space trees and returns its start and length.
func (a *agfCtx) alloc(r allocReq) (format.AgBlock, uint32, error) {
	if err := a.fixFreelist(); err != nil {
		return 0, 0, err
	}
	return a.allocFromTrees(r)
}

// allocFromTrees finds and removes an extent from the trees.
func (a *agfCtx) allocFromTrees(r allocReq) (format.AgBlock, uint32, error) {
	if r.minLen == 0 || r.maxLen < r.minLen {
		return 0, 0, fmt.Errorf("%w: allocation of %d..%d blocks", ErrInvalid, r.minLen, r.maxLen)
	}
	a.busyOnly = false
	var rec format.AllocRec
	var start format.AgBlock
	var n uint32
	var err error
	found := false
	if r.goal != 0 || r.exact {
		rec, start, n, found, err = a.findNear(r)
		if err != nil {
			return 0, 0, err
		}
		if !found && r.exact {
			return 0, 0, fmt.Errorf("%w: AG %d block %d is not free", ErrNoSpace, a.ag, r.goal)
		}
	}
	if !found {
		rec, start, n, found, err = a.findBySize(r)
		if err != nil {
			return 0, 0, err
		}
	}
	if !found {
		if a.busyOnly {
			return 0, 0, errBusyOnly
		}
		return 0, 0, fmt.Errorf("%w: AG %d has no free extent of %d blocks", ErrNoSpace, a.ag, r.minLen)
	}
	if err := a.removeFree(rec, start, n); err != nil {
		return 0, 0, err
	}
	return start, n, nil
}

// usable returns the part of free extent rec an allocation can take:
// aligned, clear of busy extents, starting as close to goal as it can.
func (a *agfCtx) usable(rec format.AllocRec, r allocReq) (format.AgBlock, uint32, bool) {
	start, end := uint64(rec.StartBlock), uint64(rec.StartBlock)+uint64(rec.BlockCount)
	if r.goal > rec.StartBlock && uint64(r.goal) < end {
		start = uint64(r.goal)
	}
	if r.align > 1 {
		start = (start + uint64(r.align) - 1) / uint64(r.align) * uint64(r.align)
	}
	if start >= end {
		return 0, 0, false
	}
	n := min(end-start, uint64(r.maxLen))
	// Skip past busy extents overlapping the candidate.
	for _, b := range a.t.v.w.cache.Busy().Overlap(a.ag, format.AgBlock(start), uint32(n)) {
		a.busyOnly = true
		if uint64(b.Start) > start && uint64(b.Start)-start >= uint64(r.minLen) {
			n = uint64(b.Start) - start
			break
		}
		start = b.End()
		if r.align > 1 {
			start = (start + uint64(r.align) - 1) / uint64(r.align) * uint64(r.align)
		}
		if start >= end {
			return 0, 0, false
		}
		n = min(end-start, uint64(r.maxLen))
	}
	if n < uint64(r.minLen) || len(a.t.v.w.cache.Busy().Overlap(a.ag, format.AgBlock(start), uint32(n))) > 0 {
		return 0, 0, false
	}
	return format.AgBlock(start), uint32(n), true
}

// findNear looks for a usable extent at or next to goal in the bnobt,
// walking a bounded number of records each way.
func (a *agfCtx) findNear(r allocReq) (format.AllocRec, format.AgBlock, uint32, bool, error) {
	const maxProbe = 64
	tr := a.tree(format.BtBno)
	key := make([]byte, 8)
	format.AllocRec{StartBlock: r.goal}.Encode(key)
	left := tr.NewCursor()
	ok, err := left.Lookup(btree.LE, key)
	if err != nil {
		return format.AllocRec{}, 0, 0, false, err
	}
	if ok {
		rec := decodeAlloc(left)
		if uint64(rec.StartBlock)+uint64(rec.BlockCount) > uint64(r.goal) {
			if s, n, good := a.usable(rec, r); good && (!r.exact || s == r.goal) {
				return rec, s, n, true, nil
			}
		}
	}
	if r.exact {
		return format.AllocRec{}, 0, 0, false, nil
	}
	right := tr.NewCursor()
	rok, err := right.Lookup(btree.GE, key)
	if err != nil {
		return format.AllocRec{}, 0, 0, false, err
	}
	if ok {
		if ok, err = left.Decrement(); err != nil {
			return format.AllocRec{}, 0, 0, false, err
		}
	}
	for i := 0; i < maxProbe && (ok || rok); i++ {
		// Take whichever side is closer to the goal first.
		var lrec, rrec format.AllocRec
		ldist, rdist := uint64(1<<63), uint64(1<<63)
		if ok {
			lrec = decodeAlloc(left)
			ldist = uint64(r.goal) - (uint64(lrec.StartBlock) + uint64(lrec.BlockCount))
		}
		if rok {
			rrec = decodeAlloc(right)
			rdist = uint64(rrec.StartBlock) - uint64(r.goal)
		}
		if ok && ldist <= rdist {
			if s, n, good := a.usableTail(lrec, r); good {
				return lrec, s, n, true, nil
			}
			if ok, err = left.Decrement(); err != nil {
				return format.AllocRec{}, 0, 0, false, err
			}
			continue
		}
		if s, n, good := a.usable(rrec, r); good {
			return rrec, s, n, true, nil
		}
		if rok, err = right.Increment(); err != nil {
			return format.AllocRec{}, 0, 0, false, err
		}
	}
	return format.AllocRec{}, 0, 0, false, nil
}

// usableTail is usable for an extent left of the goal: take its end, the
// part closest to the goal.
func (a *agfCtx) usableTail(rec format.AllocRec, r allocReq) (format.AgBlock, uint32, bool) {
	if rec.BlockCount > r.maxLen {
		tail := r
		tail.goal = rec.StartBlock + format.AgBlock(rec.BlockCount-r.maxLen)
		if s, n, ok := a.usable(rec, tail); ok {
			return s, n, true
		}
	}
	r.goal = 0
	return a.usable(rec, r)
}

// findBySize looks in the cntbt for the smallest extent that holds maxLen,
// or else the largest one that holds minLen.
func (a *agfCtx) findBySize(r allocReq) (format.AllocRec, format.AgBlock, uint32, bool, error) {
	const maxProbe = 256
	tr := a.tree(format.BtCnt)
	key := encodeAlloc(format.AllocRec{BlockCount: r.maxLen + max(r.align, 1) - 1})
	c := tr.NewCursor()
	ok, err := c.Lookup(btree.GE, key)
	if err != nil {
		return format.AllocRec{}, 0, 0, false, err
	}
	r.goal = 0
	for i := 0; ok && i < maxProbe; i++ {
		rec := decodeAlloc(c)
		if s, n, good := a.usable(rec, r); good {
			return rec, s, n, true, nil
		}
		if ok, err = c.Increment(); err != nil {
			return format.AllocRec{}, 0, 0, false, err
		}
	}
	// Nothing holds maxLen: walk down from the largest extent.
	if ok, err = c.Last(); err != nil {
		return format.AllocRec{}, 0, 0, false, err
	}
	for i := 0; ok && i < maxProbe; i++ {
		rec := decodeAlloc(c)
		if rec.BlockCount < r.minLen {
			break
		}
		if s, n, good := a.usable(rec, r); good {
			return rec, s, n, true, nil
		}
		if ok, err = c.Decrement(); err != nil {
			return format.AllocRec{}, 0, 0, false, err
		}
	}
	return format.AllocRec{}, 0, 0, false, nil
}

func decodeAlloc(c *btree.Cursor) format.AllocRec {
	rec, _ := c.Get()
	return format.DecodeAllocRec(rec)
}

func encodeAlloc(r format.AllocRec) []byte {
	b := make([]byte, 8)
	r.Encode(b)
	return b
}

// removeFree takes [start, start+n) out of free extent rec in both trees.
func (a *agfCtx) removeFree(rec format.AllocRec, start format.AgBlock, n uint32) error {
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
func (a *agfCtx) replaceFree(old, new []format.AllocRec) error {
	for _, which := range []int{format.BtBno, format.BtCnt} {
		tr := a.tree(which)
		for _, r := range old {
			c := tr.NewCursor()
			ok, err := c.Lookup(btree.EQ, cntOrBnoKey(which, r))
			if err != nil {
				return err
			}
			if !ok || decodeAlloc(c) != r {
				return format.Corrupt(tr.Kind.Shape.Name, fmt.Sprintf("AG %d", a.ag), "free extent %d+%d missing", r.StartBlock, r.BlockCount)
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		for _, r := range new {
			c := tr.NewCursor()
			ok, err := c.Lookup(btree.EQ, cntOrBnoKey(which, r))
			if err != nil {
				return err
			}
			if ok {
				return format.Corrupt(tr.Kind.Shape.Name, fmt.Sprintf("AG %d", a.ag), "free extent %d+%d already present", r.StartBlock, r.BlockCount)
			}
			if err := c.Insert(encodeAlloc(r)); err != nil {
				return err
			}
		}
	}
	return nil
}

// cntOrBnoKey is the lookup argument for r: cursors take records and
// derive each tree's key (start block, or length then start) themselves.
func cntOrBnoKey(_ int, r format.AllocRec) []byte { return encodeAlloc(r) }

// updateLongest sets agf_longest from the last cntbt record.
func (a *agfCtx) updateLongest() error {
	c := a.tree(format.BtCnt).NewCursor()
	ok, err := c.Last()
	if err != nil {
		return err
	}
	a.h.Longest = 0
	if ok {
		a.h.Longest = decodeAlloc(c).BlockCount
	}
	a.log()
	return nil
}

// freeExtent returns [bno, bno+n) to the trees, merging with free
// neighbours, after making sure the free list can feed the tree changes.
// busy marks it busy until the transaction is durable.
func (a *agfCtx) freeExtent(bno format.AgBlock, n uint32, busy bool) error {
	err := a.fixFreelist()
	if errors.Is(err, ErrNoSpace) {
		// A full AG cannot top its free list up before the free; freeing
		// needs at most what is left, and then the list can be refilled
		// (xfs_alloc_fix_freelist's FREEING case).
		if err := a.freeToTrees(bno, n, busy); err != nil {
			return err
		}
		if err := a.fixFreelist(); err != nil && !errors.Is(err, ErrNoSpace) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	return a.freeToTrees(bno, n, busy)
}

// freeToTrees is freeExtent without the free list upkeep.
func (a *agfCtx) freeToTrees(bno format.AgBlock, n uint32, busy bool) error {
	g := &a.t.v.geo
	end := uint64(bno) + uint64(n)
	if n == 0 || bno == 0 || end > uint64(g.AgSize(a.ag)) {
		return format.Corrupt("extent", fmt.Sprintf("AG %d", a.ag), "freeing %d+%d outside the AG", bno, n)
	}
	tr := a.tree(format.BtBno)
	key := encodeAlloc(format.AllocRec{StartBlock: bno})
	var old []format.AllocRec
	merged := format.AllocRec{StartBlock: bno, BlockCount: n}
	c := tr.NewCursor()
	ok, err := c.Lookup(btree.LE, key)
	if err != nil {
		return err
	}
	if ok {
		l := decodeAlloc(c)
		lend := uint64(l.StartBlock) + uint64(l.BlockCount)
		if lend > uint64(bno) {
			return format.Corrupt("bnobt", fmt.Sprintf("AG %d", a.ag), "freeing %d+%d, already free in %d+%d", bno, n, l.StartBlock, l.BlockCount)
		}
		if lend == uint64(bno) && uint64(l.BlockCount)+uint64(merged.BlockCount) <= format.MaxExtentLen<<11 {
			old = append(old, l)
			merged = format.AllocRec{StartBlock: l.StartBlock, BlockCount: l.BlockCount + merged.BlockCount}
		}
	}
	c = tr.NewCursor()
	if ok, err = c.Lookup(btree.GE, key); err != nil {
		return err
	}
	if ok {
		r := decodeAlloc(c)
		if uint64(r.StartBlock) < end {
			return format.Corrupt("bnobt", fmt.Sprintf("AG %d", a.ag), "freeing %d+%d, already free in %d+%d", bno, n, r.StartBlock, r.BlockCount)
		}
		if uint64(r.StartBlock) == end {
			old = append(old, r)
			merged.BlockCount += r.BlockCount
		}
	}
	if err := a.replaceFree(old, []format.AllocRec{merged}); err != nil {
		return err
	}
	a.h.FreeBlks += n
	if busy {
		a.t.FreeExtent(trans.Extent{AG: a.ag, Start: bno, Len: n})
	}
	return a.updateLongest()
}
