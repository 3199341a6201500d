package attr

import (
	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// Leaf and node forms are one da-btree of package dabtree rooted at block
// 0: a single attr3 leaf there is the leaf form; a da node there is the
// node form, over leaves (and nodes) at other blocks:
//
//	block 0: root node (level n) ── entries (hashval, before) ──┐
//	           node (level n-1) ⇄ node ⇄ …                      │
//	             leaf ⇄ leaf ⇄ leaf ⇄ …   (forw/back sibling links per level)
//
// dabtree owns the nodes, the path from the root, sibling links, splits
// and joins above the leaves, and the block cache; this file gives it the
// leaf format (leafOps) and does the leaf's own share of a split
// (xfs_attr3_leaf_split, _rebalance, _figure_balance) and of a join
// (xfs_attr3_leaf_unbalance).

// treeOps verifies and finishes every block of the tree, leaf or node
// (both may sit at block 0). dabtree.Tree.Read checks UUID and owner.
var treeOps = dabtree.TreeOps(leafWhat, format.Attr3LeafMagic, verifyLeaf)

// op is one attribute operation on one fork. Its blocks go through one
// dabtree.Blocks, so that each is read (and verified) once and every
// change is made to the same private copy; flush hands the changed blocks
// to the caller's transaction once the operation has succeeded.
type op struct {
	r     fork.Reader
	w     Fork // nil for reads
	g     *format.Geometry
	bs    int
	owner format.Ino
	c     *dabtree.Blocks // &blocks
	t     dabtree.Tree
	// blocks is kept here so that an operation costs one allocation.
	blocks dabtree.Blocks
}

func newOp(r fork.Reader) *op {
	g := r.Geometry()
	o := &op{r: r, g: g, bs: g.BlockSize, owner: r.Owner(), blocks: *dabtree.NewBlocks(r, 1)}
	o.c = &o.blocks
	o.t = dabtree.Tree{C: o.c, Root: 0, Ops: treeOps, Leaf: leafOps{}, What: leafWhat}
	if w, ok := r.(Fork); ok {
		o.w = w
	}
	return o
}

// hasBlocks reports whether the (non-local) fork maps any block.
func (o *op) hasBlocks() (bool, error) {
	m, err := o.c.Mapped()
	return len(m) > 0, err
}

// isLeaf is xfs_attr_is_leaf: the fork maps exactly block 0.
func (o *op) isLeaf() (bool, error) {
	m, err := o.c.Mapped()
	return len(m) == 1 && m[0] == [2]format.FileOff{0, 1}, err
}

// isShortform is xfs_attr_is_shortform: a local fork, or an extents fork
// without blocks (a fork just created, or one emptied during a replace).
func (o *op) isShortform() (bool, error) {
	blocks, err := o.hasBlocks()
	return !blocks, err
}

// lookup finds the entry named (filter, name) with hash: the bottom of
// the path is the leaf that holds it, or would hold it, and its Index the
// entry (or insertion) index. Equal hashes may continue in the following
// leaves, so a miss shifts right while the leaf ends with the hash
// (xfs_da3_node_lookup_int over xfs_attr3_leaf_lookup_int).
func (o *op) lookup(hash uint32, filter uint8, name []byte) (dabtree.Path, bool, error) {
	p, err := o.t.Lookup(hash)
	if err != nil {
		return nil, false, err
	}
	for {
		leaf := p.Bottom()
		var found bool
		leaf.Index, found = leafLookup(leaf.Buf.B, hash, filter, name)
		switch {
		case found:
			return p, true, nil
		case leaf.Hash < hash:
			return p, false, o.t.CheckRightmost(p)
		case leaf.Hash != hash:
			return p, false, nil
		}
		if ok, err := o.t.Shift(p, true); err != nil || !ok {
			return p, false, err
		}
	}
}

// leafOps describes attribute leaves to the da-btree.
type leafOps struct{}

func (leafOps) Magic() uint16 { return format.Attr3LeafMagic }

func (leafOps) Bounds(b []byte) (first, last uint32, count int) {
	if n := leafCount(b); n > 0 {
		return leafEntOf(b, 0).hash, leafEntOf(b, n-1).hash, n
	}
	return 0, 0, 0
}

// Order is xfs_attr3_leaf_order: whether leaf b sorts before a.
func (leafOps) Order(a, b []byte) bool { return leafOrder(a, b) }

// Usage: xfs_attr3_leaf_toosmall leaves a leaf alone when more than half
// of it is in use.
func (leafOps) Usage(b []byte) (overHalf, empty bool) {
	h := leafHdrOf(b)
	return leafHdrSize+h.count*leafEntSize+h.usedbytes > len(b)>>1, h.count == 0
}

// Fits is the sibling test of xfs_attr3_leaf_toosmall: both leaves'
// entries and records fit one block with a quarter of it to spare.
func (leafOps) Fits(a, b []byte) bool {
	ha, hb := leafHdrOf(a), leafHdrOf(b)
	bs := len(a)
	return bs-bs>>2-ha.usedbytes-hb.usedbytes-(ha.count+hb.count)*leafEntSize-leafHdrSize >= 0
}

// Merge is xfs_attr3_leaf_unbalance: move every entry of the dropped leaf
// into the saved one, in hash order.
func (leafOps) Merge(drop, save *dabtree.Blk) {
	db, sb := drop.Buf.B, save.Buf.B
	dh, sh := leafHdrOf(db), leafHdrOf(sb)
	drop.Hash, _ = leafLastHash(db)
	if !sh.holes {
		at := sh.count
		if leafOrder(sb, db) {
			at = 0
		}
		leafMoveEnts(db, &dh, 0, sb, &sh, at, dh.count)
	} else {
		// The saved leaf has holes: rebuild it compactly from both.
		tmp := make([]byte, len(sb))
		copy(tmp[:leafHdrSize], sb[:leafHdrSize])
		th := leafHdr{forw: sh.forw, back: sh.back, firstused: len(sb)}
		putLeafHdr(tmp, &th)
		if leafOrder(sb, db) {
			leafMoveEnts(db, &dh, 0, tmp, &th, 0, dh.count)
			leafMoveEnts(sb, &sh, 0, tmp, &th, th.count, sh.count)
		} else {
			leafMoveEnts(sb, &sh, 0, tmp, &th, 0, sh.count)
			leafMoveEnts(db, &dh, 0, tmp, &th, th.count, dh.count)
		}
		copy(sb, tmp)
		sh = th
	}
	putLeafHdr(sb, &sh)
	putLeafHdr(db, &dh)
	save.Hash, _ = leafLastHash(sb)
}

// leafOrder is xfs_attr3_leaf_order: whether leaf b2 sorts before b1.
func leafOrder(b1, b2 []byte) bool {
	n1, n2 := leafCount(b1), leafCount(b2)
	if n1 == 0 || n2 == 0 {
		return false
	}
	return leafEntOf(b2, 0).hash < leafEntOf(b1, 0).hash ||
		leafEntOf(b2, n2-1).hash < leafEntOf(b1, n1-1).hash
}

// split is the leaf part of xfs_da3_split: the bottom leaf of p has no
// room for ne. It is split, and split again when the half that takes the
// entry still has no room; the tree then records the new leaves above,
// splitting nodes and the root as they fill.
func (o *op) split(p dabtree.Path, ne *newEnt) error {
	old := p.Bottom()
	nb, inOld, added, err := o.leafSplit(old, ne)
	if err != nil {
		return err
	}
	adds := []*dabtree.Blk{nb}
	if !added {
		// The extra leaf follows the half it was split from: between old
		// and nb, or after nb.
		var extra *dabtree.Blk
		if inOld {
			extra, _, added, err = o.leafSplit(old, ne)
			adds = []*dabtree.Blk{extra, nb}
		} else {
			extra, _, added, err = o.leafSplit(nb, ne)
			adds = []*dabtree.Blk{nb, extra}
		}
		if err != nil {
			return err
		}
		if !added {
			return format.Corrupt(leafWhat, blockWhere(old.Blkno), "entry of %d bytes fits in no leaf after two splits", ne.size)
		}
	}
	return o.t.Split(p, adds...)
}

// leafSplit is xfs_attr3_leaf_split: move the upper part of leaf old into
// a new leaf linked after it, then add ne to the half it belongs in. It
// returns the new leaf, whether ne belongs in old and whether it fitted.
func (o *op) leafSplit(old *dabtree.Blk, ne *newEnt) (nb *dabtree.Blk, inOld, added bool, err error) {
	buf, err := o.t.Grow(treeOps)
	if err != nil {
		return nil, false, false, err
	}
	initLeaf(buf.B, o.g, buf.Daddr, o.owner)
	nb = &dabtree.Blk{Blkno: buf.Blkno, Buf: buf, Leaf: true}
	inOld, index := o.leafRebalance(old, nb, ne)
	if err := o.t.Link(old, nb); err != nil {
		return nil, false, false, err
	}
	target := nb
	if inOld {
		target = old
	}
	added = leafAdd(target.Buf.B, ne, index)
	o.c.Dirty(target.Buf)
	old.Hash, _ = leafLastHash(old.Buf.B)
	nb.Hash, _ = leafLastHash(nb.Buf.B)
	return nb, inOld, added, nil
}

// leafRebalance is xfs_attr3_leaf_rebalance for a full leaf blk1 and an
// empty blk2: move the entries above the balance point to blk2 and work
// out which half gets ne (inLeaf1) and at which index.
func (o *op) leafRebalance(blk1, blk2 *dabtree.Blk, ne *newEnt) (inLeaf1 bool, index int) {
	b1, b2 := blk1.Buf.B, blk2.Buf.B
	h1, h2 := leafHdrOf(b1), leafHdrOf(b2)
	swapped := leafOrder(b1, b2) // never with an empty blk2
	if swapped {
		b1, b2 = b2, b1
		h1, h2 = h2, h1
	}
	inLow, count, totallen := figureBalance(blk1.Index, ne, b1, &h1, b2, &h2)
	inLeaf1 = inLow != swapped
	if count < h1.count {
		count = h1.count - count
		space := h1.usedbytes - totallen + count*leafEntSize
		room := h2.firstused - leafHdrSize - h2.count*leafEntSize
		if space > room {
			leafCompact(b2, &h2)
		}
		leafMoveEnts(b1, &h1, h1.count-count, b2, &h2, 0, count)
	}
	putLeafHdr(b1, &h1)
	putLeafHdr(b2, &h2)
	o.c.Dirty(blk1.Buf)
	o.c.Dirty(blk2.Buf)
	blk1.Hash, _ = leafLastHash(blk1.Buf.B)
	blk2.Hash, _ = leafLastHash(blk2.Buf.B)

	// Where the new entry goes.
	n1 := leafCount(blk1.Buf.B)
	if blk1.Index > n1 || blk1.Index == n1 && !inLeaf1 {
		blk2.Index = blk1.Index - n1
		return inLeaf1, blk2.Index
	}
	return inLeaf1, blk1.Index
}

// figureBalance is xfs_attr3_leaf_figure_balance: walk the entries of
// both leaves, with ne at its insertion point index, until the bytes in
// the lower one come closest to half. It returns whether ne falls in the
// lower leaf, how many old entries stay there and their record bytes.
func figureBalance(index int, ne *newEnt, b1 []byte, h1 *leafHdr, b2 []byte, h2 *leafHdr) (bool, int, int) {
	maxCount := h1.count + h2.count
	half := (maxCount+1)*leafEntSize + h1.usedbytes + h2.usedbytes + ne.size
	half /= 2
	lastDelta := len(b1)
	totallen := 0
	found := false
	b, i := b1, 0
	count := 0
	// closer adds n bytes to the lower leaf while that brings it closer
	// to half.
	closer := func(n int) bool {
		d := half - (totallen + n)
		if d < 0 {
			d = -d
		}
		if d > lastDelta {
			return false
		}
		lastDelta, totallen = d, totallen+n
		return true
	}
	for ; count < maxCount; count, i = count+1, i+1 {
		if count == index {
			if !closer(leafEntSize + ne.size) {
				break
			}
			found = true
		}
		if count == h1.count {
			b, i = b2, 0
		}
		if !closer(leafEntSize + entsize(b, i)) {
			break
		}
	}
	totallen -= count * leafEntSize
	if found {
		totallen -= leafEntSize + ne.size
	}
	return found, count, totallen
}
