package xfs

import (
	"errors"
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

// extents returns the verified, sorted extent map of an inode's fork.
// Extent and btree forks only; callers handle local forks themselves.
func (v *mount) extents(ip *inode, f Fork) ([]format.Extent, error) {
	m := &ip.maps[f]
	m.once.Do(func() {
		m.ext, m.err = v.loadExtents(ip, f)
		if m.err != nil {
			m.err = v.markSick(format.Located(m.err, fmt.Sprintf("inode %d %v", ip.ino, f)), ip.ino)
		}
	})
	return m.ext, m.err
}

func (v *mount) loadExtents(ip *inode, f Fork) ([]format.Extent, error) {
	fork := ip.fork(f)
	n := ip.nextents(f)
	var ext []format.Extent
	switch ip.format(f) {
	case format.FmtExtents:
		if n > uint64(len(fork))/format.ExtentRecSize { // n*16 could overflow (nrext64)
			return nil, format.Corrupt("extent list", "", "%d extents do not fit a %d-byte fork", n, len(fork))
		}
		ext = make([]format.Extent, n)
		for i := range ext {
			ext[i] = format.DecodeExtent(fork[i*format.ExtentRecSize:])
		}
	case format.FmtBtree:
		var err error
		if ext, err = v.readBmbt(ip, fork); err != nil {
			return nil, err
		}
		if uint64(len(ext)) != n {
			return nil, format.Corrupt("bmbt", "", "tree holds %d extents, inode says %d", len(ext), n)
		}
	case format.FmtLocal:
		return nil, nil
	default:
		return nil, format.Corrupt("inode", "", "%v has format %d", f, ip.format(f))
	}
	return ext, v.checkExtents(ext)
}

// checkExtents enforces what the kernel's bmap verifier enforces: every
// extent inside one AG, non-empty, and the list sorted without overlap.
func (v *mount) checkExtents(ext []format.Extent) error {
	var next format.FileOff
	for i, e := range ext {
		if e.BlockCount == 0 || !v.geo.ValidExtent(e.StartBlock, e.BlockCount) {
			return format.Corrupt("extent", "", "extent %d (%d blocks at fsb %d) lies outside the filesystem", i, e.BlockCount, e.StartBlock)
		}
		if i > 0 && e.StartOff < next {
			return format.Corrupt("extent", "", "extent %d at file block %d overlaps or is out of order", i, e.StartOff)
		}
		if e.StartOff+format.FileOff(e.BlockCount) < e.StartOff {
			return format.Corrupt("extent", "", "extent %d wraps the file offset space", i)
		}
		next = e.End()
	}
	return nil
}

// readBmbt collects the records of a bmap btree rooted in the fork, in
// key order, through package btree's whole-tree check (siblings, levels,
// key order, loops), reading committed blocks.
func (v *mount) readBmbt(ip *inode, fork []byte) ([]format.Extent, error) {
	root, err := format.DecodeBmdrRoot(fork)
	if err != nil {
		return nil, err
	}
	tr := &btree.Tree{Kind: btree.Bmbt, Geo: &v.geo, Ino: ip.ino, ForkSize: len(fork), IRoot: root}
	tr.Store = &btree.ReadOnly{Tree: tr, Fetch: func(ptr uint64) ([]byte, error) {
		return v.readFsb(format.FsBlock(ptr), 1)
	}}
	var out []format.Extent
	_, err = tr.Check(func(rec []byte) error {
		out = append(out, format.DecodeExtent(rec))
		return nil
	})
	return out, err
}

// lookupExtent returns the index of the extent containing file block off,
// or of the first extent after it (len(ext) when none).
func lookupExtent(ext []format.Extent, off format.FileOff) int {
	return sort.Search(len(ext), func(i int) bool { return ext[i].End() > off })
}

// mapBlocks returns the filesystem block holding file block off of a fork,
// and how many following file blocks are contiguous with it; ok is false
// for a hole, and unwritten reports preallocated blocks that read as zeros.
func mapBlock(ext []format.Extent, off format.FileOff) (fsb format.FsBlock, run uint64, ok, unwritten bool) {
	i := lookupExtent(ext, off)
	if i == len(ext) || ext[i].StartOff > off {
		return 0, 0, false, false
	}
	e := ext[i]
	d := uint64(off - e.StartOff)
	return e.StartBlock + format.FsBlock(d), e.BlockCount - d, true, e.Unwritten
}

// Writing fork mappings. A transaction edits a fork's extent list as a
// whole (inodeChange.mapping / setMapping); setMapping stores it in the
// inode when it fits (extents format) and in a bmbt otherwise, applying
// only the records that changed, and converting between the two formats
// exactly when the kernel would: btree if and only if the records do not
// fit in the fork (xfs_repair flags a btree fork that would fit).

// forkBytes returns the private copy's bytes of fork f.
func (c *inodeChange) forkBytes(f Fork) []byte {
	data, attr := c.forks()
	if f == AttrFork {
		return attr
	}
	return data
}

func (c *inodeChange) forkFormat(f Fork) int8 {
	if f == AttrFork {
		return c.core.AFormat
	}
	return c.core.Format
}

func (c *inodeChange) setForkFormat(f Fork, fmt_ int8) {
	if f == AttrFork {
		c.core.AFormat = fmt_
	} else {
		c.core.Format = fmt_
	}
}

func (c *inodeChange) setNextents(f Fork, n int) {
	if f == AttrFork {
		if c.core.Nrext64() {
			c.core.Nextents32 = uint32(n)
		} else {
			c.core.Anextents16 = uint16(n)
		}
		return
	}
	if c.core.Nrext64() {
		c.core.BigNextents = uint64(n)
	} else {
		c.core.Nextents32 = uint32(n)
	}
}

// maxInodeExtents is how many extent records fit in fork f right now.
func (c *inodeChange) maxInodeExtents(f Fork) int { return len(c.forkBytes(f)) / format.ExtentRecSize }

// mapping returns the transaction's extent list of fork f (a copy the
// caller may edit and hand to setMapping).
func (c *inodeChange) mapping(f Fork) ([]format.Extent, error) {
	ext, err := c.extentsOf(f)
	if err != nil {
		return nil, err
	}
	return append([]format.Extent(nil), ext...), nil
}

// extentsOf returns the transaction's extent list of fork f, read-only:
// for lookups, which need no copy of it.
func (c *inodeChange) extentsOf(f Fork) ([]format.Extent, error) {
	if !c.extLoaded[f] {
		switch c.forkFormat(f) {
		case format.FmtExtents, format.FmtBtree:
			base := c.base
			ext, err := c.t.v.extents(base, f)
			if err != nil {
				return nil, err
			}
			c.ext[f] = append([]format.Extent(nil), ext...)
		default:
			c.ext[f] = nil
		}
		c.extLoaded[f] = true
	}
	return c.ext[f], nil
}

// bmbt returns the fork's btree, its blocks allocated near the inode and
// counted in di_nblocks.
func (c *inodeChange) bmbt(f Fork) (*btree.Tree, error) {
	fork := c.forkBytes(f)
	var root *format.BmdrRoot
	if c.forkFormat(f) == format.FmtBtree {
		var err error
		if root, err = format.DecodeBmdrRoot(fork); err != nil {
			return nil, format.Located(err, fmt.Sprintf("inode %d %v", c.ino, f))
		}
	}
	return c.bmbtWith(f, root, len(fork)), nil
}

// bmbtWith is bmbt for a root already decoded from a fork of forkSize.
func (c *inodeChange) bmbtWith(f Fork, root *format.BmdrRoot, forkSize int) *btree.Tree {
	v := c.t.v
	tr := &btree.Tree{Kind: btree.Bmbt, Geo: &v.geo, Ino: c.ino, ForkSize: forkSize, IRoot: root}
	tr.Store = alloc.NewStore(c.t.Tx, v.w.space, tr,
		func(near uint64) (uint64, error) {
			goal := format.FsBlock(near)
			if near == 0 {
				goal = c.inodeGoal()
			}
			fsb, _, err := c.t.alloc.AllocBlocks(goal, 1, 1, 0)
			if err != nil {
				return 0, err
			}
			c.core.NBlocks++
			return uint64(fsb), nil
		},
		func(ptr uint64) error {
			if err := c.t.alloc.FreeExtents([]format.Extent{{StartBlock: format.FsBlock(ptr), BlockCount: 1}}); err != nil {
				return err
			}
			c.core.NBlocks--
			return nil
		})
	tr.RootChanged = func() {
		fork := c.forkBytes(f)
		clear(fork)
		if tr.IRoot != nil {
			tr.IRoot.Encode(fork)
		}
	}
	return tr
}

// inodeGoal is the block next to the inode: where its data should go.
func (c *inodeChange) inodeGoal() format.FsBlock {
	g := &c.t.v.geo
	ag, agino := g.InoToAg(c.ino)
	bno, _ := g.AgInoToAgBlock(agino)
	return g.AgToFsb(ag, bno)
}

// setMapping stores ext as fork f's mapping.
func (c *inodeChange) setMapping(f Fork, ext []format.Extent) error {
	if err := c.t.v.checkExtents(ext); err != nil {
		return err
	}
	old, err := c.mapping(f)
	if err != nil {
		return err
	}
	maxExt := c.maxInodeExtents(f)
	fmt_ := c.forkFormat(f)
	switch {
	case fmt_ != format.FmtBtree && len(ext) <= maxExt:
		c.writeInodeExtents(f, ext)
	case fmt_ == format.FmtBtree && len(ext) <= maxExt && len(ext) < len(old)/2:
		// Most records are going: drop the whole tree rather than
		// deleting record by record.
		if err := c.freeBmbt(f); err != nil {
			return err
		}
		c.writeInodeExtents(f, ext)
	default:
		tr, err := c.bmbt(f)
		if err != nil {
			return err
		}
		if fmt_ != format.FmtBtree {
			seed := old
			if len(seed) == 0 {
				seed = ext[:1]
			}
			if err := tr.FromExtents(seed, uint64(c.inodeGoal())); err != nil {
				return err
			}
			c.setForkFormat(f, format.FmtBtree)
			old = seed
		}
		if err := applyExtentDiff(tr, old, ext); err != nil {
			return err
		}
		if len(ext) <= maxExt {
			back, err := tr.ToExtents()
			if err != nil {
				if errors.Is(err, btree.ErrNotSingleLeaf) {
					return fmt.Errorf("xfs: internal error: %d extents fit inode %d but its bmbt did not shrink to one leaf", len(ext), c.ino)
				}
				return err
			}
			if len(back) != len(ext) {
				return fmt.Errorf("xfs: internal error: bmbt of inode %d holds %d extents, want %d", c.ino, len(back), len(ext))
			}
			c.writeInodeExtents(f, ext)
		}
	}
	c.setNextents(f, len(ext))
	c.ext[f] = append([]format.Extent(nil), ext...)
	c.extLoaded[f] = true
	return nil
}

// freeBmbt frees every block of fork f's bmbt.
func (c *inodeChange) freeBmbt(f Fork) error {
	tr, err := c.bmbt(f)
	if err != nil {
		return err
	}
	var blocks []uint64
	ptrs := make([]uint64, 0, len(tr.IRoot.Ptrs))
	for _, p := range tr.IRoot.Ptrs {
		ptrs = append(ptrs, uint64(p))
	}
	for level := int(tr.IRoot.Level) - 1; level >= 0 && len(ptrs) > 0; level-- {
		var next []uint64
		for _, p := range ptrs {
			blocks = append(blocks, p)
			if level == 0 {
				continue
			}
			b, err := tr.Store.Read(p)
			if err != nil {
				return err
			}
			h, err := format.DecodeBtreeBlock(b.Bytes(), true)
			if err != nil {
				return err
			}
			for i := 0; i < int(h.NumRecs); i++ {
				next = append(next, format.BmbtShape.Ptr(b.Bytes(), i))
			}
		}
		ptrs = next
	}
	for _, p := range blocks {
		b, err := tr.Store.Read(p)
		if err != nil {
			return err
		}
		if err := tr.Store.Free(b); err != nil {
			return err
		}
	}
	tr.IRoot = nil
	return nil
}

// writeInodeExtents stores ext as an extents-format fork.
func (c *inodeChange) writeInodeExtents(f Fork, ext []format.Extent) {
	fork := c.forkBytes(f)
	clear(fork)
	for i, e := range ext {
		e.Encode(fork[i*format.ExtentRecSize:])
	}
	c.setForkFormat(f, format.FmtExtents)
}

// applyExtentDiff turns the records of old into those of ext in the tree:
// records whose start offset stays are updated in place, new start offsets
// are inserted, and only then are vanished ones deleted. The tree thus
// never holds fewer records than it ends with, so a single leaf under the
// inode root cannot run empty part-way (deleting first emptied one when a
// write rewrote every extent of a fragmented preallocation, and a lookup
// refuses an empty leaf below a root, as the kernel's does).
func applyExtentDiff(tr *btree.Tree, old, ext []format.Extent) error {
	oldAt := make(map[format.FileOff]format.Extent, len(old))
	for _, e := range old {
		oldAt[e.StartOff] = e
	}
	newAt := make(map[format.FileOff]bool, len(ext))
	rec := make([]byte, format.ExtentRecSize)
	// find places a cursor on the record of old starting at e.StartOff.
	find := func(e format.Extent) (*btree.Cursor, error) {
		e.Encode(rec)
		cur := tr.NewCursor()
		found, err := cur.Lookup(btree.EQ, rec)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, format.Corrupt("bmbt", fmt.Sprintf("inode %d", tr.Ino), "extent at file block %d missing from the tree", e.StartOff)
		}
		return cur, nil
	}
	for _, e := range ext {
		newAt[e.StartOff] = true
		o, ok := oldAt[e.StartOff]
		if !ok || o == e {
			continue
		}
		cur, err := find(o)
		if err != nil {
			return err
		}
		e.Encode(rec)
		if err := cur.Update(append([]byte(nil), rec...)); err != nil {
			return err
		}
	}
	for _, e := range ext {
		if _, ok := oldAt[e.StartOff]; ok {
			continue
		}
		e.Encode(rec)
		cur := tr.NewCursor()
		if _, err := cur.Lookup(btree.EQ, rec); err != nil {
			return err
		}
		if err := cur.Insert(append([]byte(nil), rec...)); err != nil {
			return err
		}
	}
	for _, o := range old {
		if newAt[o.StartOff] {
			continue
		}
		cur, err := find(o)
		if err != nil {
			return err
		}
		if err := cur.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// Pure operations on a sorted, non-overlapping extent list: the in-memory
// form of a fork mapping that the bmap code stores either in the inode
// (extents format) or in a bmbt.

// extentsInsert adds e, which must not overlap any extent, merging it with
// neighbours that continue it in both file and disk space with the same
// written state, as long as the result stays within one record and one AG.
func (v *mount) extentsInsert(ext []format.Extent, e format.Extent) []format.Extent {
	i := sort.Search(len(ext), func(i int) bool { return ext[i].StartOff > e.StartOff })
	if i > 0 && v.contiguous(ext[i-1], e) {
		ext[i-1].BlockCount += e.BlockCount
		if i < len(ext) && v.contiguous(ext[i-1], ext[i]) {
			ext[i-1].BlockCount += ext[i].BlockCount
			ext = append(ext[:i], ext[i+1:]...)
		}
		return ext
	}
	if i < len(ext) && v.contiguous(e, ext[i]) {
		ext[i].StartOff, ext[i].StartBlock = e.StartOff, e.StartBlock
		ext[i].BlockCount += e.BlockCount
		return ext
	}
	ext = append(ext, format.Extent{})
	copy(ext[i+1:], ext[i:])
	ext[i] = e
	return ext
}

// contiguous reports whether b directly continues a.
func (v *mount) contiguous(a, b format.Extent) bool {
	if a.Unwritten != b.Unwritten || a.End() != b.StartOff ||
		a.StartBlock+format.FsBlock(a.BlockCount) != b.StartBlock ||
		a.BlockCount+b.BlockCount > format.MaxExtentLen {
		return false
	}
	agA, _ := v.geo.FsbToAg(a.StartBlock)
	agB, _ := v.geo.FsbToAg(b.StartBlock)
	return agA == agB
}

// extentsRemove unmaps file blocks [off, off+n) and returns the remaining
// list and the removed pieces (whose disk blocks the caller frees).
func extentsRemove(ext []format.Extent, off format.FileOff, n uint64) (rest, removed []format.Extent) {
	if n == 0 {
		return ext, nil
	}
	end := off + format.FileOff(n)
	rest = make([]format.Extent, 0, len(ext)+1)
	for _, e := range ext {
		if e.End() <= off || e.StartOff >= end {
			rest = append(rest, e)
			continue
		}
		if e.StartOff < off {
			head := e
			head.BlockCount = uint64(off - e.StartOff)
			rest = append(rest, head)
		}
		cutStart := max(e.StartOff, off)
		cutEnd := min(e.End(), end)
		cut := format.Extent{StartOff: cutStart, StartBlock: e.StartBlock + format.FsBlock(cutStart-e.StartOff),
			BlockCount: uint64(cutEnd - cutStart), Unwritten: e.Unwritten}
		removed = append(removed, cut)
		if e.End() > end {
			tail := format.Extent{StartOff: end, StartBlock: e.StartBlock + format.FsBlock(end-e.StartOff),
				BlockCount: uint64(e.End() - end), Unwritten: e.Unwritten}
			rest = append(rest, tail)
		}
	}
	return rest, removed
}

// mergeRanges merges an extent list into [start, end) ranges of mapped
// file blocks.
func mergeRanges(ext []format.Extent) [][2]format.FileOff {
	var out [][2]format.FileOff
	for _, e := range ext {
		if n := len(out); n > 0 && out[n-1][1] == e.StartOff {
			out[n-1][1] = e.End()
		} else {
			out = append(out, [2]format.FileOff{e.StartOff, e.End()})
		}
	}
	return out
}
