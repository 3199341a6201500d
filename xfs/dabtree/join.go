package dabtree

import "github.com/xfs3/xfs3/xfs/format"

// Join shrinks the tree after an entry was removed from the path's bottom
// leaf (xfs_da3_join): while the block at the bottom is small enough it is
// merged into a sibling (or dropped when empty) and its entry removed from
// the parent, level by level; a root left with a single child absorbs it.
// The path must have at least two levels. It is not valid afterwards;
// Join reports whether it went all the way up to the root.
func (t *Tree) Join(p Path) (toRoot bool, err error) {
	for len(p) >= 2 {
		if !p.Bottom().Leaf {
			// The child below was dropped: remove its entry first.
			t.nodeRemove(p.Bottom())
			if err := t.FixHash(p); err != nil {
				return false, err
			}
		}
		action, alt, err := t.tooSmall(p)
		if err != nil || action == 0 {
			return false, err
		}
		// Something goes: the path's nodes change from here on (alt
		// shares them above the level it shifted at).
		if err := t.writablePath(p); err != nil {
			return false, err
		}
		drop, save := p.Bottom(), alt.Bottom()
		if drop.Leaf {
			t.Leaf.Merge(drop, save)
		} else {
			t.nodeMerge(drop, save)
		}
		if err := t.FixHash(alt); err != nil {
			return false, err
		}
		if err := t.Unlink(drop, save); err != nil {
			return false, err
		}
		if err := t.C.Free(drop.Blkno); err != nil {
			return false, err
		}
		p = p[:len(p)-1]
	}
	t.nodeRemove(&p[0])
	if err := t.FixHash(p); err != nil {
		return false, err
	}
	return true, t.rootJoin(&p[0])
}

// tooSmall decides what to do with the path's bottom block
// (xfs_dir2_leafn_toosmall, xfs_da3_node_toosmall): 0 leave it, 1 merge
// it into a sibling, 2 drop it (empty). For 1 and 2 it returns alt, a copy
// of the path that leads to the block that stays; p is moved to the block
// to drop. The lower-numbered block of a pair is the one kept.
func (t *Tree) tooSmall(p Path) (int, Path, error) {
	blk := p.Bottom()
	b := blk.Buf.B
	var overHalf, empty bool
	if blk.Leaf {
		overHalf, empty = t.Leaf.Usage(b)
	} else {
		n := NodeCount(b)
		overHalf, empty = n > t.NodeEnts()>>1, n == 0
	}
	if overHalf {
		return 0, nil, nil
	}
	forw, back := Forw(b), Back(b)
	if empty {
		alt := p.Clone()
		ok, err := t.Shift(alt, forw != 0)
		if err != nil || !ok {
			return 0, nil, err
		}
		return 2, alt, nil
	}
	forward := forw < back
	var sib uint32
	found := false
	for i := 0; i < 2; i, forward = i+1, !forward {
		sib = back
		if forward {
			sib = forw
		}
		if sib == 0 {
			continue
		}
		s, err := t.Read(sib)
		if err != nil {
			return 0, nil, err
		}
		if blk.Leaf {
			found = t.Leaf.Fits(b, s.B)
		} else {
			ents := t.NodeEnts()
			found = ents-ents>>2-NodeCount(b)-NodeCount(s.B) >= 0
		}
		if found {
			break
		}
	}
	if !found {
		return 0, nil, nil
	}
	alt := p.Clone()
	var ok bool
	var err error
	if sib < blk.Blkno {
		ok, err = t.Shift(alt, forward)
	} else {
		ok, err = t.Shift(p, forward)
	}
	if err != nil || !ok {
		return 0, nil, err
	}
	return 1, alt, nil
}

// nodeRemove deletes entry blk.Index of a node (xfs_da3_node_remove).
func (t *Tree) nodeRemove(blk *Blk) {
	b := blk.Buf.B
	count := NodeCount(b)
	i := blk.Index
	if i >= count {
		return // only in a damaged tree; the root join reports it
	}
	copy(b[HdrSize+i*entrySize:], b[HdrSize+(i+1)*entrySize:HdrSize+count*entrySize])
	clear(b[HdrSize+(count-1)*entrySize : HdrSize+count*entrySize])
	setNodeCount(b, count-1)
	if count > 1 {
		blk.Hash = nodeHash(b, count-2)
	}
	t.dirty(blk.Buf)
}

// nodeMerge moves all entries of node drop into node save, before or after
// its own by hash order (xfs_da3_node_unbalance).
func (t *Tree) nodeMerge(drop, save *Blk) {
	d, s := drop.Buf.B, save.Buf.B
	dc, sc := NodeCount(d), NodeCount(s)
	at := sc
	if dc > 0 && sc > 0 && (nodeHash(d, 0) < nodeHash(s, 0) || nodeHash(d, dc-1) < nodeHash(s, sc-1)) {
		copy(s[HdrSize+dc*entrySize:], s[HdrSize:HdrSize+sc*entrySize])
		at = 0
	}
	copy(s[HdrSize+at*entrySize:], d[HdrSize:HdrSize+dc*entrySize])
	setNodeCount(s, sc+dc)
	if sc+dc > 0 {
		save.Hash = nodeHash(s, sc+dc-1)
	}
	t.dirty(save.Buf)
}

// rootJoin makes the only child of the root the new root by copying it
// into the root block (xfs_da3_root_join).
func (t *Tree) rootJoin(root *Blk) error {
	b := root.Buf.B
	switch NodeCount(b) {
	case 0:
		return format.Corrupt(t.What, blockWhere(root.Blkno), "root node left empty")
	case 1:
	default:
		return nil
	}
	_, child := NodeEntry(b, 0)
	c, err := t.Read(child)
	if err != nil {
		return err
	}
	if Forw(c.B) != 0 || Back(c.B) != 0 {
		return format.Corrupt(t.What, blockWhere(child), "only child of the root has siblings")
	}
	copy(b, c.B)
	SetBlkno(b, root.Buf.Daddr)
	t.dirty(root.Buf)
	return t.C.Free(child)
}
