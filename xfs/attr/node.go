package attr

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
)

// The da-btree of a node-form attribute fork (xfs_da_btree.c, specialised
// to attribute leaves):
//
//	block 0: root node (level n) ── entries (hashval, before) ──┐
//	           node (level n-1) ⇄ node ⇄ …                      │
//	             leaf ⇄ leaf ⇄ leaf ⇄ …   (forw/back sibling links per level)
//
// A node entry's hashval is the largest hash in its child. The root
// always stays at block 0: a root split copies the old root elsewhere and
// makes block 0 a new node above it; a root join copies the only child
// back into block 0. A fork whose block 0 is a leaf is handled by the same
// code with a path of length one.
//
// This is written for attributes only. The generic xfs/dabtree package
// (shared with directories) did not exist when this was written; the
// interface between the tree walk and the leaf format is the few
// functions named leaf* below, so the two can be unified later.

// pathBlk is one level of a root-to-leaf path (xfs_da_state_blk).
type pathBlk struct {
	d     *dablk
	leaf  bool   // an attribute leaf (else a da node)
	index int    // entry in this block the path goes through / insert point
	hash  uint32 // last hash in the block
}

func (p *pathBlk) no() uint32 { return p.d.no }

type daPath struct {
	blk    [maxDepth]pathBlk
	active int
}

// daState is xfs_da_state plus the arguments of the operation.
type daState struct {
	o       *op
	path    daPath
	altpath daPath
	hash    uint32
	filter  uint8
	name    []byte

	// split bookkeeping
	ne         *newEnt
	inleaf     bool
	extravalid bool
	extraafter bool
	extrablk   pathBlk
	index      int // insertion index for the new entry after a rebalance
}

func (o *op) newState(hash uint32, filter uint8, name []byte) *daState {
	return &daState{o: o, hash: hash, filter: filter, name: name}
}

func (st *daState) corrupt(d *dablk, format_ string, args ...any) error {
	return format.Corrupt(leafWhat, fmt.Sprintf("attr block %d", d.no), format_, args...)
}

// lookup is xfs_da3_node_lookup_int: descend from block 0 to the leaf
// that holds (or would hold) the name, following equal hashes into the
// next leaf. It reports whether the name was found; the bottom of the path
// gives the leaf and the entry (or insertion) index.
func (st *daState) lookup() (bool, error) {
	o := st.o
	no := uint32(0)
	expect := -1
	st.path.active = 0
	for depth := 0; ; depth++ {
		if depth >= maxDepth {
			return false, format.Corrupt(leafWhat, "", "deeper than %d levels", maxDepth)
		}
		d, err := o.read(no)
		if err != nil {
			return false, err
		}
		blk := &st.path.blk[depth]
		*blk = pathBlk{d: d}
		st.path.active = depth + 1
		if blkMagic(d.b) == format.Attr3LeafMagic {
			if expect > 0 {
				return false, st.corrupt(d, "leaf below a level-%d node", expect+1)
			}
			blk.leaf = true
			blk.hash, _ = leafLastHash(d.b)
			break
		}
		level := nodeLevel(d.b)
		if expect >= 0 && level != expect {
			return false, st.corrupt(d, "node level %d, want %d", level, expect)
		}
		expect = level - 1
		n := nodeCount(d.b)
		blk.hash, _ = nodeEnt(d.b, n-1)
		probe := 0
		for probe < n {
			if h, _ := nodeEnt(d.b, probe); h >= st.hash {
				break
			}
			probe++
		}
		if probe == n {
			probe = n - 1
		}
		blk.index = probe
		_, no = nodeEnt(d.b, probe)
		if no == 0 {
			return false, st.corrupt(d, "level-%d node entry %d points back at the root", level, probe)
		}
	}
	if expect > 0 {
		return false, st.corrupt(st.path.blk[st.path.active-1].d, "leaf reached above level 0")
	}
	for {
		blk := &st.path.blk[st.path.active-1]
		idx, found := leafLookup(blk.d.b, st.hash, st.filter, st.name)
		blk.index = idx
		if found || blk.hash != st.hash {
			return found, nil
		}
		// The next leaf may hold more entries with this hash.
		ok, err := st.shift(&st.path, true)
		if err != nil || !ok {
			return false, err
		}
	}
}

// bottom is the leaf at the end of the path.
func (st *daState) bottom() *pathBlk { return &st.path.blk[st.path.active-1] }

// shift is xfs_da3_path_shift: move path one block forward (or back) at
// its bottom level, updating the nodes above. It reports false at the
// edge of the tree.
func (st *daState) shift(p *daPath, forward bool) (bool, error) {
	level := p.active - 2
	var no uint32
	for ; level >= 0; level-- {
		blk := &p.blk[level]
		n := nodeCount(blk.d.b)
		if forward && blk.index < n-1 {
			blk.index++
			_, no = nodeEnt(blk.d.b, blk.index)
			break
		}
		if !forward && blk.index > 0 {
			blk.index--
			_, no = nodeEnt(blk.d.b, blk.index)
			break
		}
	}
	if level < 0 {
		return false, nil
	}
	for level++; level < p.active; level++ {
		d, err := st.o.read(no)
		if err != nil {
			return false, err
		}
		blk := &p.blk[level]
		*blk = pathBlk{d: d}
		if blkMagic(d.b) == format.Da3NodeMagic {
			n := nodeCount(d.b)
			blk.hash, _ = nodeEnt(d.b, n-1)
			if !forward {
				blk.index = n - 1
			}
			_, no = nodeEnt(d.b, blk.index)
			continue
		}
		if level != p.active-1 {
			return false, st.corrupt(d, "leaf above the bottom of the tree")
		}
		blk.leaf = true
		blk.hash, _ = leafLastHash(d.b)
	}
	return true, nil
}

// fixHashPath is xfs_da3_fixhashpath: propagate the bottom block's last
// hash up the path while it changes the parents' keys.
func (st *daState) fixHashPath(p *daPath) {
	level := p.active - 1
	blk := &p.blk[level]
	var last uint32
	var n int
	if blk.leaf {
		last, n = leafLastHash(blk.d.b)
	} else {
		n = nodeCount(blk.d.b)
		if n > 0 {
			last, _ = nodeEnt(blk.d.b, n-1)
		}
	}
	if n == 0 {
		return
	}
	for level--; level >= 0; level-- {
		blk = &p.blk[level]
		if h, _ := nodeEnt(blk.d.b, blk.index); h == last {
			break
		}
		blk.hash = last
		setNodeHash(blk.d.b, blk.index, last)
		st.o.dirty(blk.d)
		last, _ = nodeEnt(blk.d.b, nodeCount(blk.d.b)-1)
	}
}

// leafToNode is xfs_attr3_leaf_to_node: move the leaf at block 0 to a new
// block and make block 0 a level-1 node pointing at it.
func (o *op) leafToNode() error {
	nd, err := o.grow()
	if err != nil {
		return err
	}
	root, err := o.read(0)
	if err != nil {
		return err
	}
	copy(nd.b, root.b)
	dabtree.SetBlkno(nd.b, nd.daddr)
	last, _ := leafLastHash(nd.b)
	initNode(root.b, o.g, root.daddr, o.owner, 1)
	putNodeEnt(root.b, 0, last, nd.no)
	setNodeCount(root.b, 1)
	o.dirty(root)
	o.dirty(nd)
	return nil
}

// split is xfs_da3_split: the leaf at the bottom of the path had no room
// for st.ne. Split it (twice if the entry is large), insert the new
// blocks into the parents, splitting them as needed, and split the root
// when it overflows.
func (st *daState) split() error {
	o := st.o
	max := st.path.active - 1
	addblk := &st.path.blk[max]
	for i := max; i >= 0 && addblk != nil; i-- {
		oldblk := &st.path.blk[i]
		newblk := &st.altpath.blk[i]
		if oldblk.leaf {
			added, err := st.leafSplit(oldblk, newblk)
			if err != nil {
				return err
			}
			if !added {
				// Still no room: split again; the extra block goes next to
				// the half that receives the entry.
				st.extravalid = true
				if st.inleaf {
					st.extraafter = false
					added, err = st.leafSplit(oldblk, &st.extrablk)
				} else {
					st.extraafter = true
					added, err = st.leafSplit(newblk, &st.extrablk)
				}
				if err != nil {
					return err
				}
				if !added {
					return st.corrupt(oldblk.d, "entry of %d bytes fits in no leaf after two splits", st.ne.size)
				}
			}
			addblk = newblk
		} else {
			split, err := st.nodeSplit(oldblk, newblk, addblk, max-i)
			if err != nil {
				return err
			}
			if split {
				addblk = newblk
			} else {
				addblk = nil
			}
		}
		st.path.active = i + 1
		st.fixHashPath(&st.path)
	}
	st.path.active = 0
	if addblk == nil {
		return nil
	}
	// The root itself split: move it and put a new root above both halves.
	oldblk := &st.path.blk[0]
	if err := st.rootSplit(oldblk, addblk); err != nil {
		return err
	}
	moved := oldblk.d.b
	if f := blkForw(moved); f != 0 {
		if f != addblk.no() {
			return st.corrupt(oldblk.d, "moved root's forward sibling %d is not the new block %d", f, addblk.no())
		}
		setBlkBack(addblk.d.b, oldblk.no())
		o.dirty(addblk.d)
	}
	if bk := blkBack(moved); bk != 0 {
		if bk != addblk.no() {
			return st.corrupt(oldblk.d, "moved root's back sibling %d is not the new block %d", bk, addblk.no())
		}
		setBlkForw(addblk.d.b, oldblk.no())
		o.dirty(addblk.d)
	}
	return nil
}

// rootSplit is xfs_da3_root_split: copy the full root node to a new block
// and make block 0 a node one level higher over blk1 (the copy) and blk2.
func (st *daState) rootSplit(blk1, blk2 *pathBlk) error {
	o := st.o
	nd, err := o.grow()
	if err != nil {
		return err
	}
	old := blk1.d
	n := nodeCount(old.b)
	level := nodeLevel(old.b)
	copy(nd.b, old.b[:nodeHdrSize+8*n])
	dabtree.SetBlkno(nd.b, nd.daddr)
	o.dirty(nd)
	blk1.d = nd

	initNode(old.b, o.g, old.daddr, o.owner, level+1)
	putNodeEnt(old.b, 0, blk1.hash, blk1.no())
	putNodeEnt(old.b, 1, blk2.hash, blk2.no())
	setNodeCount(old.b, 2)
	o.dirty(old)
	return nil
}

// nodeSplit is xfs_da3_node_split: add addblk (and the extra block of a
// double leaf split) after oldblk's current entry, splitting oldblk into
// newblk first when it is full. It reports whether it split.
func (st *daState) nodeSplit(oldblk, newblk, addblk *pathBlk, level int) (bool, error) {
	o := st.o
	useExtra := st.extravalid
	newCount := 1
	if useExtra {
		newCount++
	}
	split := false
	if nodeCount(oldblk.d.b)+newCount > nodeEnts(o.bs) {
		nd, err := o.grow()
		if err != nil {
			return false, err
		}
		initNode(nd.b, o.g, nd.daddr, o.owner, level)
		*newblk = pathBlk{d: nd}
		st.nodeRebalance(oldblk, newblk)
		if err := st.blkLink(oldblk, newblk); err != nil {
			return false, err
		}
		split = true
	}
	target := oldblk
	if oldblk.index > nodeCount(oldblk.d.b) {
		target = newblk
	}
	target.index++
	st.nodeAdd(target, addblk)
	if useExtra {
		if st.extraafter {
			target.index++
		}
		st.nodeAdd(target, &st.extrablk)
		st.extravalid = false
	}
	return split, nil
}

// nodeRebalance is xfs_da3_node_rebalance for a full node blk1 and an
// empty blk2 following it: blk2 takes the upper half. Like the kernel it
// leaves the moved entries' old bytes behind the new count.
func (st *daState) nodeRebalance(blk1, blk2 *pathBlk) {
	b1, b2 := blk1.d.b, blk2.d.b
	n1, n2 := nodeCount(b1), nodeCount(b2)
	swapped := false
	if n1 > 0 && n2 > 0 && nodeOrder(b1, b2) {
		b1, b2 = b2, b1
		n1, n2 = n2, n1
		swapped = true
	}
	count := (n1 - n2) / 2
	switch {
	case count > 0:
		copy(b2[nodeHdrSize+8*count:nodeHdrSize+8*(n2+count)], b2[nodeHdrSize:nodeHdrSize+8*n2])
		copy(b2[nodeHdrSize:nodeHdrSize+8*count], b1[nodeHdrSize+8*(n1-count):nodeHdrSize+8*n1])
		n2 += count
		n1 -= count
	case count < 0:
		count = -count
		copy(b1[nodeHdrSize+8*n1:nodeHdrSize+8*(n1+count)], b2[nodeHdrSize:nodeHdrSize+8*count])
		copy(b2[nodeHdrSize:nodeHdrSize+8*(n2-count)], b2[nodeHdrSize+8*count:nodeHdrSize+8*n2])
		n1 += count
		n2 -= count
	default:
		return
	}
	setNodeCount(b1, n1)
	setNodeCount(b2, n2)
	st.o.dirty(blk1.d)
	st.o.dirty(blk2.d)
	if swapped {
		b1, b2 = b2, b1
	}
	blk1.hash, _ = nodeEnt(b1, nodeCount(b1)-1)
	blk2.hash, _ = nodeEnt(b2, nodeCount(b2)-1)
	if c1 := nodeCount(blk1.d.b); blk1.index >= c1 {
		blk2.index = blk1.index - c1
		blk1.index = c1 + 1 // past the end: insert into blk2
	}
}

// nodeOrder is xfs_da3_node_order: whether node b2 sorts before b1.
func nodeOrder(b1, b2 []byte) bool {
	n1, n2 := nodeCount(b1), nodeCount(b2)
	if n1 == 0 || n2 == 0 {
		return false
	}
	f1, _ := nodeEnt(b1, 0)
	f2, _ := nodeEnt(b2, 0)
	l1, _ := nodeEnt(b1, n1-1)
	l2, _ := nodeEnt(b2, n2-1)
	return f2 < f1 || l2 < l1
}

// nodeAdd is xfs_da3_node_add: insert (newblk.hash, newblk) at
// oldblk.index.
func (st *daState) nodeAdd(oldblk, newblk *pathBlk) {
	b := oldblk.d.b
	n := nodeCount(b)
	at := oldblk.index
	copy(b[nodeHdrSize+8*(at+1):nodeHdrSize+8*(n+1)], b[nodeHdrSize+8*at:nodeHdrSize+8*n])
	putNodeEnt(b, at, newblk.hash, newblk.no())
	setNodeCount(b, n+1)
	oldblk.hash, _ = nodeEnt(b, n)
	st.o.dirty(oldblk.d)
}

// blkLink is xfs_da3_blk_link: chain newblk next to oldblk at their level,
// before it when its hashes sort lower.
func (st *daState) blkLink(oldblk, newblk *pathBlk) error {
	o := st.o
	ob, nb := oldblk.d.b, newblk.d.b
	var before bool
	if oldblk.leaf {
		before = leafOrder(ob, nb)
	} else {
		before = nodeOrder(ob, nb)
	}
	if before {
		setBlkForw(nb, oldblk.no())
		setBlkBack(nb, blkBack(ob))
		if bk := blkBack(ob); bk != 0 {
			sib, err := o.read(bk)
			if err != nil {
				return err
			}
			setBlkForw(sib.b, newblk.no())
			o.dirty(sib)
		}
		setBlkBack(ob, newblk.no())
	} else {
		setBlkForw(nb, blkForw(ob))
		setBlkBack(nb, oldblk.no())
		if f := blkForw(ob); f != 0 {
			sib, err := o.read(f)
			if err != nil {
				return err
			}
			setBlkBack(sib.b, newblk.no())
			o.dirty(sib)
		}
		setBlkForw(ob, newblk.no())
	}
	o.dirty(oldblk.d)
	o.dirty(newblk.d)
	return nil
}

// blkUnlink is xfs_da3_blk_unlink: take dropblk out of its level's chain;
// saveblk is its neighbour.
func (st *daState) blkUnlink(dropblk, saveblk *pathBlk) error {
	o := st.o
	db, sb := dropblk.d.b, saveblk.d.b
	if blkBack(sb) == dropblk.no() {
		setBlkBack(sb, blkBack(db))
		if bk := blkBack(db); bk != 0 {
			sib, err := o.read(bk)
			if err != nil {
				return err
			}
			setBlkForw(sib.b, saveblk.no())
			o.dirty(sib)
		}
	} else {
		setBlkForw(sb, blkForw(db))
		if f := blkForw(db); f != 0 {
			sib, err := o.read(f)
			if err != nil {
				return err
			}
			setBlkBack(sib.b, saveblk.no())
			o.dirty(sib)
		}
	}
	o.dirty(saveblk.d)
	return nil
}

// leafOrder is xfs_attr3_leaf_order: whether leaf b2 sorts before b1.
func leafOrder(b1, b2 []byte) bool {
	h1, h2 := leafHdrOf(b1), leafHdrOf(b2)
	if h1.count == 0 || h2.count == 0 {
		return false
	}
	return leafEntOf(b2, 0).hash < leafEntOf(b1, 0).hash ||
		leafEntOf(b2, h2.count-1).hash < leafEntOf(b1, h1.count-1).hash
}

// leafSplit is xfs_attr3_leaf_split: move the upper part of oldblk into a
// new leaf newblk, link it, and add st.ne to whichever half it belongs
// in. It reports whether the entry was added.
func (st *daState) leafSplit(oldblk, newblk *pathBlk) (bool, error) {
	o := st.o
	nd, err := o.grow()
	if err != nil {
		return false, err
	}
	initLeaf(nd.b, o.g, nd.daddr, o.owner)
	*newblk = pathBlk{d: nd, leaf: true}
	st.leafRebalance(oldblk, newblk)
	if err := st.blkLink(oldblk, newblk); err != nil {
		return false, err
	}
	target := newblk
	if st.inleaf {
		target = oldblk
	}
	added := leafAdd(target.d.b, st.ne, st.index)
	o.dirty(target.d)
	oldblk.hash, _ = leafLastHash(oldblk.d.b)
	newblk.hash, _ = leafLastHash(newblk.d.b)
	return added, nil
}

// leafRebalance is xfs_attr3_leaf_rebalance for a full leaf blk1 and an
// empty blk2: move the entries above the balance point to blk2 and work
// out which half (st.inleaf) and index (st.index) get the new entry.
func (st *daState) leafRebalance(blk1, blk2 *pathBlk) {
	b1, b2 := blk1.d.b, blk2.d.b
	h1, h2 := leafHdrOf(b1), leafHdrOf(b2)
	swapped := leafOrder(b1, b2) // never with an empty blk2
	if swapped {
		b1, b2 = b2, b1
		h1, h2 = h2, h1
	}
	inleaf, count, totallen := st.figureBalance(blk1, b1, &h1, b2, &h2)
	st.inleaf = inleaf != swapped
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
	st.o.dirty(blk1.d)
	st.o.dirty(blk2.d)
	blk1.hash, _ = leafLastHash(blk1.d.b)
	blk2.hash, _ = leafLastHash(blk2.d.b)

	// Where the new entry goes.
	n1 := leafHdrOf(blk1.d.b).count
	switch {
	case blk1.index > n1:
		blk2.index = blk1.index - n1
		st.index = blk2.index
	case blk1.index == n1 && !st.inleaf:
		blk2.index = blk1.index - n1
		st.index = blk2.index
	default:
		st.index = blk1.index
	}
}

// figureBalance is xfs_attr3_leaf_figure_balance: walk the entries (with
// the new one at its insertion point) until the bytes in the lower block
// come closest to half. It returns whether the new entry falls in the
// lower block, how many old entries stay there and their record bytes.
func (st *daState) figureBalance(blk1 *pathBlk, b1 []byte, h1 *leafHdr, b2 []byte, h2 *leafHdr) (bool, int, int) {
	bs := st.o.bs
	maxCount := h1.count + h2.count
	half := (maxCount+1)*leafEntSize + h1.usedbytes + h2.usedbytes + st.ne.size
	half /= 2
	lastDelta := bs
	totallen := 0
	found := false
	b, index := b1, 0
	count := 0
	abs := func(v int) int {
		if v < 0 {
			return -v
		}
		return v
	}
	for ; count < maxCount; count, index = count+1, index+1 {
		if count == blk1.index {
			tmp := totallen + leafEntSize + st.ne.size
			if abs(half-tmp) > lastDelta {
				break
			}
			lastDelta = abs(half - tmp)
			totallen = tmp
			found = true
		}
		if count == h1.count {
			b, index = b2, 0
		}
		tmp := totallen + leafEntSize + entsize(b, index)
		if abs(half-tmp) > lastDelta {
			break
		}
		lastDelta = abs(half - tmp)
		totallen = tmp
	}
	totallen -= count * leafEntSize
	if found {
		totallen -= leafEntSize + st.ne.size
	}
	return found, count, totallen
}

// join is xfs_da3_join: after a removal left the bottom leaf under 37%
// full, merge it into a sibling when that leaves a quarter free (or drop
// it when empty), remove it from its parent, and repeat upwards; finally
// collapse a root with a single child.
func (st *daState) join() error {
	o := st.o
	for ; st.path.active >= 2; st.path.active-- {
		i := st.path.active - 1
		drop, save := &st.path.blk[i], &st.altpath.blk[i]
		if drop.leaf {
			action, err := st.leafTooSmall()
			if err != nil || action == 0 {
				return err
			}
			drop, save = &st.path.blk[i], &st.altpath.blk[i]
			st.leafUnbalance(drop, save)
		} else {
			st.nodeRemove(drop)
			st.fixHashPath(&st.path)
			action, err := st.nodeTooSmall()
			if err != nil || action == 0 {
				return err
			}
			drop, save = &st.path.blk[i], &st.altpath.blk[i]
			st.nodeUnbalance(drop, save)
		}
		st.fixHashPath(&st.altpath)
		if err := st.blkUnlink(drop, save); err != nil {
			return err
		}
		st.altpath.active = 0
		if err := o.shrink(drop.no()); err != nil {
			return err
		}
	}
	root := &st.path.blk[0]
	st.nodeRemove(root)
	st.fixHashPath(&st.path)
	return st.rootJoin(root)
}

// rootJoin is xfs_da3_root_join: a root node with one child takes over
// the child's contents, and the child block is freed.
func (st *daState) rootJoin(root *pathBlk) error {
	o := st.o
	switch nodeCount(root.d.b) {
	case 0:
		return st.corrupt(root.d, "root node left without children")
	case 1:
	default:
		return nil
	}
	_, child := nodeEnt(root.d.b, 0)
	cd, err := o.read(child)
	if err != nil {
		return err
	}
	copy(root.d.b, cd.b)
	dabtree.SetBlkno(root.d.b, root.d.daddr)
	o.dirty(root.d)
	return o.shrink(child)
}

// leafTooSmall is xfs_attr3_leaf_toosmall: decide whether the bottom leaf
// should be merged away. 0: leave it; 1: merge path's block into
// altpath's; 2: path's block is empty, drop it. On 1 and 2 altpath points
// at the block that stays and path at the block that goes (always keeping
// the lower block number).
func (st *daState) leafTooSmall() (int, error) {
	o := st.o
	blk := &st.path.blk[st.path.active-1]
	h := leafHdrOf(blk.d.b)
	used := leafHdrSize + h.count*leafEntSize + h.usedbytes
	if used > o.bs>>1 {
		return 0, nil
	}
	return st.tooSmall(blk, h.count == 0, h.forw, h.back, func(sib []byte) bool {
		h2 := leafHdrOf(sib)
		return o.bs-o.bs>>2-h.usedbytes-h2.usedbytes-(h.count+h2.count)*leafEntSize-leafHdrSize >= 0
	})
}

// tooSmall is the part leafTooSmall and nodeTooSmall share: an empty block
// goes (2); otherwise the first sibling, nearer one first, whose contents
// fit beside this block's (fits) takes them (1), with the cursors set up
// so the lower block number stays; no such sibling leaves things be (0).
func (st *daState) tooSmall(blk *pathBlk, empty bool, forw, back uint32, fits func(sib []byte) bool) (int, error) {
	if empty {
		st.altpath = st.path
		ok, err := st.shift(&st.altpath, forw != 0)
		if err != nil || !ok {
			return 0, err
		}
		return 2, nil
	}
	forward := forw < back
	var no uint32
	i := 0
	for ; i < 2; i, forward = i+1, !forward {
		no = back
		if forward {
			no = forw
		}
		if no == 0 {
			continue
		}
		sib, err := st.o.read(no)
		if err != nil {
			return 0, err
		}
		if fits(sib.b) {
			break
		}
	}
	if i >= 2 {
		return 0, nil
	}
	st.altpath = st.path
	var ok bool
	var err error
	if no < blk.no() {
		ok, err = st.shift(&st.altpath, forward)
	} else {
		ok, err = st.shift(&st.path, forward)
	}
	if err != nil || !ok {
		return 0, err
	}
	return 1, nil
}

// leafUnbalance is xfs_attr3_leaf_unbalance: move every entry of the
// dropped leaf into the saved one, in hash order.
func (st *daState) leafUnbalance(drop, save *pathBlk) {
	db, sb := drop.d.b, save.d.b
	dh, sh := leafHdrOf(db), leafHdrOf(sb)
	drop.hash, _ = leafLastHash(db)
	if !sh.holes {
		if leafOrder(sb, db) {
			leafMoveEnts(db, &dh, 0, sb, &sh, 0, dh.count)
		} else {
			leafMoveEnts(db, &dh, 0, sb, &sh, sh.count, dh.count)
		}
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
	st.o.dirty(save.d)
	save.hash, _ = leafLastHash(sb)
}

// nodeTooSmall is xfs_da3_node_toosmall, the node twin of leafTooSmall:
// merge when both nodes fit with a quarter of a node to spare.
func (st *daState) nodeTooSmall() (int, error) {
	o := st.o
	blk := &st.path.blk[st.path.active-1]
	n := nodeCount(blk.d.b)
	ents := nodeEnts(o.bs)
	if n > ents>>1 {
		return 0, nil
	}
	room := ents - ents>>2 - n
	return st.tooSmall(blk, n == 0, blkForw(blk.d.b), blkBack(blk.d.b), func(sib []byte) bool {
		return room-nodeCount(sib) >= 0
	})
}

// nodeUnbalance is xfs_da3_node_unbalance: move every entry of the
// dropped node into the saved one.
func (st *daState) nodeUnbalance(drop, save *pathBlk) {
	db, sb := drop.d.b, save.d.b
	dn, sn := nodeCount(db), nodeCount(sb)
	sindex := sn
	df, _ := nodeEnt(db, 0)
	sf, _ := nodeEnt(sb, 0)
	dl, _ := nodeEnt(db, max(dn-1, 0))
	sl, _ := nodeEnt(sb, max(sn-1, 0))
	if df < sf || dl < sl {
		copy(sb[nodeHdrSize+8*dn:nodeHdrSize+8*(dn+sn)], sb[nodeHdrSize:nodeHdrSize+8*sn])
		sindex = 0
	}
	copy(sb[nodeHdrSize+8*sindex:nodeHdrSize+8*(sindex+dn)], db[nodeHdrSize:nodeHdrSize+8*dn])
	setNodeCount(sb, sn+dn)
	st.o.dirty(save.d)
	save.hash, _ = nodeEnt(sb, sn+dn-1)
}

// nodeRemove is xfs_da3_node_remove: delete entry drop.index.
func (st *daState) nodeRemove(drop *pathBlk) {
	b := drop.d.b
	n := nodeCount(b)
	at := drop.index
	if n == 0 || at >= n {
		return // only in a damaged tree; the root join reports it
	}
	copy(b[nodeHdrSize+8*at:nodeHdrSize+8*(n-1)], b[nodeHdrSize+8*(at+1):nodeHdrSize+8*n])
	clear(b[nodeHdrSize+8*(n-1) : nodeHdrSize+8*n])
	setNodeCount(b, n-1)
	if n > 1 {
		drop.hash, _ = nodeEnt(b, n-2)
	}
	st.o.dirty(drop.d)
}
