package dabtree

import (
	"github.com/xfs3/xfs3/xfs/format"
)

// Split finishes the split of the path's bottom block. The caller has
// already split that block (a leaf, with its own format rules) into itself
// and the new blocks in adds, linked them into the level and left them in
// hash order after it. Split records the new blocks in the parent node,
// splitting nodes as they fill, and finally the root
// (xfs_da3_split). The path is not valid afterwards.
func (t *Tree) Split(p Path, adds ...*Blk) error {
	if err := t.writablePath(p); err != nil {
		return err
	}
	if err := t.FixHash(p); err != nil {
		return err
	}
	for i := len(p) - 2; i >= 0 && len(adds) > 0; i-- {
		var err error
		if adds, err = t.nodeSplit(&p[i], adds, len(p)-1-i); err != nil {
			return err
		}
		if err := t.FixHash(p[:i+1]); err != nil {
			return err
		}
	}
	if len(adds) == 0 {
		return nil
	}
	return t.rootSplit(&p[0], adds)
}

// nodeSplit adds the blocks in adds after entry old.Index of node old,
// splitting old first when they do not fit (xfs_da3_node_split). It
// returns the new node to record one level up, if any.
func (t *Tree) nodeSplit(old *Blk, adds []*Blk, level int) ([]*Blk, error) {
	var up []*Blk
	nb := &Blk{}
	if NodeCount(old.Buf.B)+len(adds) > t.NodeEnts() {
		b, err := t.Grow(NodeOps)
		if err != nil {
			return nil, err
		}
		g := t.g()
		InitNode(b.B, level, b.Daddr, g.UUID, t.C.R.Owner())
		nb.Blkno, nb.Buf = b.Blkno, b
		t.nodeRebalance(old, nb)
		if err := t.Link(old, nb); err != nil {
			return nil, err
		}
		up = []*Blk{nb}
	}
	into := old
	if old.Index > NodeCount(old.Buf.B) {
		into = nb
	}
	for _, a := range adds {
		into.Index++
		t.nodeAdd(into, a)
	}
	return up, nil
}

// nodeRebalance moves entries between two nodes so that they hold about
// the same number, the lower hashes in the first; when the entry being
// followed moves to blk2, blk1.Index becomes invalid and blk2.Index points
// at it (xfs_da3_node_rebalance).
func (t *Tree) nodeRebalance(blk1, blk2 *Blk) {
	n1, n2 := blk1.Buf.B, blk2.Buf.B
	if t.order(n1, n2) {
		n1, n2 = n2, n1
	}
	c1, c2 := NodeCount(n1), NodeCount(n2)
	count := (c1 - c2) / 2
	switch {
	case count > 0:
		copy(n2[HdrSize+count*entrySize:], n2[HdrSize:HdrSize+c2*entrySize])
		copy(n2[HdrSize:], n1[HdrSize+(c1-count)*entrySize:HdrSize+c1*entrySize])
		c1, c2 = c1-count, c2+count
	case count < 0:
		count = -count
		copy(n1[HdrSize+c1*entrySize:], n2[HdrSize:HdrSize+count*entrySize])
		copy(n2[HdrSize:], n2[HdrSize+count*entrySize:HdrSize+c2*entrySize])
		c1, c2 = c1+count, c2-count
	default:
		return
	}
	setNodeCount(n1, c1)
	setNodeCount(n2, c2)
	t.dirty(blk1.Buf)
	t.dirty(blk2.Buf)
	b1, b2 := blk1.Buf.B, blk2.Buf.B
	blk1.Hash = nodeHash(b1, NodeCount(b1)-1)
	blk2.Hash = nodeHash(b2, NodeCount(b2)-1)
	if k1 := NodeCount(b1); blk1.Index >= k1 {
		blk2.Index = blk1.Index - k1
		blk1.Index = k1 + 1
	}
}

// nodeAdd inserts an entry for block a at blk.Index (xfs_da3_node_add).
func (t *Tree) nodeAdd(blk, a *Blk) {
	b := blk.Buf.B
	count := NodeCount(b)
	i := blk.Index
	copy(b[HdrSize+(i+1)*entrySize:], b[HdrSize+i*entrySize:HdrSize+count*entrySize])
	hash, _ := t.lastHash(a.Buf.B)
	a.Hash = hash
	setNodeEntry(b, i, hash, a.Blkno)
	setNodeCount(b, count+1)
	blk.Hash = nodeHash(b, count)
	t.dirty(blk.Buf)
}

// Deepen moves the contents of the root, a leaf or a node, to a new block
// and makes the root a node with that block as its only child, one level
// up (xfs_attr3_leaf_to_node for an attribute fork's single leaf). A
// split below it then has a parent to record the new block in.
func (t *Tree) Deepen() error {
	b, err := t.Read(t.Root)
	if err != nil {
		return err
	}
	return t.rootSplit(&Blk{Blkno: t.Root, Buf: b, Leaf: Magic(b.B) != NodeMagic}, nil)
}

// rootSplit grows the tree by one level: the root's contents move to a new
// block and the root becomes a node over that block and the blocks in adds
// (xfs_da3_root_split), so the root block number never changes. A node's
// header and entries are copied, not the bytes a rebalance left behind
// them, as the kernel does; a leaf is copied whole, as
// xfs_attr3_leaf_to_node does (the kernel's split of a lone leafn root
// copies its entries only; what follows them is never read).
func (t *Tree) rootSplit(root *Blk, adds []*Blk) error {
	moved, err := t.Grow(t.Ops)
	if err != nil {
		return err
	}
	rb := root.Buf.B
	level, used := 1, len(rb)
	if Magic(rb) == NodeMagic {
		level, used = NodeLevel(rb)+1, min(HdrSize+NodeCount(rb)*entrySize, len(rb))
	}
	copy(moved.B, rb[:used])
	SetBlkno(moved.B, moved.Daddr)
	// The moved block's siblings can only be blocks just split off; they
	// pointed back at the root's number (which may be 0, the "none" of
	// sibling links in an attribute tree, so go by the moved block's
	// links, as the kernel does).
	for i, sib := range []uint32{Forw(moved.B), Back(moved.B)} {
		if sib == 0 {
			continue
		}
		var a *Blk
		for _, x := range adds {
			if x.Blkno == sib {
				a = x
			}
		}
		if a == nil {
			return format.Corrupt(t.What, blockWhere(root.Blkno), "root has sibling %d", sib)
		}
		if i == 0 {
			SetBack(a.Buf.B, moved.Blkno)
		} else {
			SetForw(a.Buf.B, moved.Blkno)
		}
		t.dirty(a.Buf)
	}
	g := t.g()
	InitNode(rb, level, root.Buf.Daddr, g.UUID, t.C.R.Owner())
	h, _ := t.lastHash(moved.B)
	setNodeEntry(rb, 0, h, moved.Blkno)
	for i, a := range adds {
		h, _ := t.lastHash(a.Buf.B)
		setNodeEntry(rb, i+1, h, a.Blkno)
	}
	setNodeCount(rb, 1+len(adds))
	t.dirty(root.Buf)
	return nil
}
