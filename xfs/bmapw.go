package xfs

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

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
	return append([]format.Extent(nil), c.ext[f]...), nil
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
