package dir

import (
	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Node form: data blocks, a da-btree of leafn blocks rooted at the start
// of the leaf space, and free-index blocks from 64 GiB recording each data
// block's longest free region (free block k covers data blocks
// k*freeMax .. (k+1)*freeMax-1).

// leafnOps describes leafn blocks to the da-btree.
type leafnOps struct{ d *geom }

func (leafnOps) Magic() uint16 { return format.Dir3LeafNMagic }

func (leafnOps) Bounds(b []byte) (first, last uint32, count int) {
	l := lblock(b)
	if n := l.count(); n > 0 {
		return l.hash(0), l.hash(n - 1), n
	}
	return 0, 0, 0
}

// Order is xfs_dir2_leafn_order.
func (leafnOps) Order(a, b []byte) bool {
	la, lb := lblock(a), lblock(b)
	na, nb := la.count(), lb.count()
	return na > 0 && nb > 0 && (lb.hash(0) < la.hash(0) || lb.hash(nb-1) < la.hash(na-1))
}

func (x leafnOps) Usage(b []byte) (bool, bool) {
	l := lblock(b)
	live := l.count() - l.stale()
	return leafHdrSize+8*live > x.d.blk>>1, live == 0
}

func (x leafnOps) Fits(a, b []byte) bool {
	la, lb := lblock(a), lblock(b)
	live := la.count() - la.stale() + lb.count() - lb.stale()
	return x.d.blk-x.d.blk>>2-8*live >= 0
}

// Merge is xfs_dir2_leafn_unbalance: stale entries are purged from both
// and drop's entries go to the end of save that keeps hash order.
func (x leafnOps) Merge(drop, save *dabtree.Blk) {
	dl, sl := lblock(drop.Buf.B), lblock(save.Buf.B)
	dl.compact()
	sl.compact()
	at := sl.count()
	if x.Order(sl, dl) {
		at = 0
	}
	moveEnts(dl, 0, sl, at, dl.count())
	drop.Hash = dl.lastHash()
	save.Hash = sl.lastHash()
}

// moveEnts moves count entries from src[from:] to dst[to:], opening a gap
// in dst and closing the one in src (xfs_dir3_leafn_moveents).
func moveEnts(src lblock, from int, dst lblock, to int, count int) {
	if count == 0 {
		return
	}
	dc, sc := dst.count(), src.count()
	if to < dc {
		copy(dst.ents(to+count, dc+count), dst.ents(to, dc))
	}
	stale := 0
	for i := from; i < from+count; i++ {
		if src.addr(i) == format.NullDataptr {
			stale++
		}
	}
	copy(dst.ents(to, to+count), src.ents(from, from+count))
	if from+count < sc {
		copy(src.ents(from, sc-count), src.ents(from+count, sc))
	}
	src.setCount(sc - count)
	src.setStale(src.stale() - stale)
	dst.setCount(dc + count)
	dst.setStale(dst.stale() + stale)
}

// nodeState is what a lookup in the tree found (struct xfs_da_state).
type nodeState struct {
	path dabtree.Path
	// For adds: the free-index block read while looking at entries of the
	// same hash, and the index there of a data block with room, or -1.
	fbuf   *dabtree.Buf
	fdb    uint32
	findex int
	// For lookups: where the entry lives.
	dbuf *dabtree.Buf
	db   uint32
	off  int
}

// nodeLookup finds name's leaf entry, or with forAdd the insertion point
// and a data block holding the same hash with room; equal hashes may span
// leaves, so it shifts right while the leaf ends with the hash
// (xfs_da3_node_lookup_int).
func (o *op) nodeLookup(name []byte, hash uint32, forAdd bool) (*nodeState, bool, error) {
	t := o.tree()
	p, err := t.Lookup(hash)
	if err != nil {
		return nil, false, err
	}
	st := &nodeState{path: p, findex: -1}
	for {
		leaf := p.Bottom()
		found := false
		if forAdd {
			err = o.leafnLookupForAdd(leaf, hash, len(name), st)
		} else {
			found, err = o.leafnLookupEntry(leaf, name, hash, st)
		}
		if err != nil || found {
			return st, found, err
		}
		if leaf.Hash < hash {
			return st, false, t.CheckRightmost(p)
		}
		if leaf.Hash != hash {
			return st, false, nil
		}
		ok, err := t.Shift(p, true)
		if err != nil || !ok {
			return st, false, err
		}
	}
}

// leafnLookupForAdd sets the insertion index in leaf and remembers a data
// block already holding the hash that has room for the entry
// (xfs_dir2_leafn_lookup_for_addname).
func (o *op) leafnLookupForAdd(leaf *dabtree.Blk, hash uint32, namelen int, st *nodeState) error {
	l := lblock(leaf.Buf.B)
	index := l.searchHash(hash)
	length := o.d.entSize(namelen)
	curdb := int64(-1)
	fi := -1
	count := l.count()
	// The insertion index follows the scan: before the entry whose data
	// block has room, or after the leaf's run of equal hashes.
	for ; index < count && l.hash(index) == hash; index++ {
		a := l.addr(index)
		if a == format.NullDataptr {
			continue
		}
		db, _ := o.d.unptr(a)
		if int64(db) == curdb {
			continue
		}
		curdb = int64(db)
		fdb, idx := o.d.fdbOf(db)
		if st.fbuf == nil || st.fdb != fdb {
			fbuf, err := o.readFree(fdb)
			if err != nil {
				return err
			}
			st.fbuf, st.fdb = fbuf, fdb
		}
		f := fblock(st.fbuf.B)
		if idx >= f.nvalid() || f.best(idx) == nullOff {
			return format.Corrupt("dir3 free block", "", "no best for data block %d holding a live entry", db)
		}
		if f.best(idx) >= length {
			fi = idx
			break
		}
	}
	leaf.Index = index
	st.findex = fi
	return nil
}

// leafnLookupEntry looks for name among the leaf's entries of its hash
// (xfs_dir2_leafn_lookup_for_entry).
func (o *op) leafnLookupEntry(leaf *dabtree.Blk, name []byte, hash uint32, st *nodeState) (bool, error) {
	l := lblock(leaf.Buf.B)
	count := l.count()
	if count == 0 {
		return false, format.Corrupt("dir3 leafn", "", "empty leaf block %d", leaf.Blkno)
	}
	i := l.searchHash(hash)
	for ; i < count && l.hash(i) == hash; i++ {
		a := l.addr(i)
		if a == format.NullDataptr {
			continue
		}
		db, off := o.d.unptr(a)
		dbuf, err := o.readData(db)
		if err != nil {
			return false, err
		}
		ok, err := o.entryAt(dblock(dbuf.B), off, name)
		if err != nil {
			return false, format.Located(err, dataWhere(db))
		}
		if ok {
			leaf.Index = i
			st.dbuf, st.db, st.off = dbuf, db, off
			return true, nil
		}
	}
	leaf.Index = i
	return false, nil
}

func (o *op) nodeLookupName(name []byte) (format.Ino, uint8, error) {
	st, found, err := o.nodeLookup(name, format.DaHashName(name), false)
	if err != nil {
		return 0, 0, err
	}
	if !found {
		return 0, 0, ErrNotFound
	}
	b := dblock(st.dbuf.B)
	return b.ino(st.off), b.ftype(st.off), nil
}

// nodeAdd adds an entry to a node directory (xfs_dir2_node_addname): the
// data entry first, then its leaf entry, splitting the leaf (and up the
// tree) when it is full.
func (o *op) nodeAdd(name []byte, ino format.Ino, ftype uint8) error {
	hash := format.DaHashName(name)
	st, _, err := o.nodeLookup(name, hash, true)
	if err != nil {
		return err
	}
	db, off, err := o.nodeAddData(name, ino, ftype, st)
	if err != nil {
		return err
	}
	addr := o.d.ptr(db, off)
	leaf := st.path.Bottom()
	t := o.tree()
	if o.leafnAdd(leaf, hash, addr) {
		return t.FixHash(st.path)
	}
	return o.leafnSplit(t, st.path, hash, addr)
}

// nodeAddData places the data entry (xfs_dir2_node_addname_int): in the
// data block the lookup found, else the highest-numbered data block with
// room according to the free-index blocks, else a new data block.
func (o *op) nodeAddData(name []byte, ino format.Ino, ftype uint8, st *nodeState) (uint32, int, error) {
	length := o.d.entSize(len(name))
	db := int64(-1)
	var fbuf *dabtree.Buf
	findex := -1
	skip := int64(-1)
	if st.fbuf != nil {
		if st.findex >= 0 {
			fbuf, findex = st.fbuf, st.findex
			db = int64(fblock(fbuf.B).firstDB() + findex)
		} else {
			// That free block was looked at already (xfs_dir2_node_find_freeblk).
			skip = int64(st.fdb)
		}
	}
	if db < 0 {
		lastData := uint32(o.r.Size()>>o.d.blkLog) - 1
		lastFdb, _ := o.d.fdbOf(lastData)
	scan:
		for fdb := int64(lastFdb); fdb >= int64(o.d.freeDB); fdb-- {
			if fdb == skip {
				continue
			}
			fb, hole, err := o.tryReadFree(uint32(fdb))
			if err != nil {
				return 0, 0, err
			}
			if hole {
				continue
			}
			f := fblock(fb.B)
			for i := f.nvalid() - 1; i >= 0; i-- {
				if v := f.best(i); v != nullOff && v >= length {
					db, fbuf, findex = int64(f.firstDB()+i), fb, i
					break scan
				}
			}
		}
	}
	var dbuf *dabtree.Buf
	var err error
	if db < 0 {
		if dbuf, fbuf, findex, err = o.nodeAddDataBlock(); err != nil {
			return 0, 0, err
		}
		db = int64(o.d.dbOf(dbuf.Blkno))
	} else if dbuf, err = o.readData(uint32(db)); err != nil {
		return 0, 0, err
	}
	b := dblock(dbuf.B)
	off, _ := b.bf(0)
	scan, err := b.useFree(off, off, length)
	if err != nil {
		return 0, 0, format.Located(err, dataWhere(uint32(db)))
	}
	b.putEntry(off, name, ino, ftype)
	if scan {
		b.freeScan()
	}
	f := fblock(fbuf.B)
	if f.best(findex) != b.longest() {
		f.setBest(findex, b.longest())
	}
	o.c.Dirty(dbuf)
	o.c.Dirty(fbuf)
	return uint32(db), off, nil
}

// nodeAddDataBlock maps a new data block and records it in its free-index
// block, creating that block if needed (xfs_dir2_node_add_datablk).
func (o *op) nodeAddDataBlock() (*dabtree.Buf, *dabtree.Buf, int, error) {
	dbuf, err := o.growData()
	if err != nil {
		return nil, nil, 0, err
	}
	b := dblock(dbuf.B)
	initData(b, format.Dir3DataMagic, dbuf.Daddr, o.g.UUID, o.owner)
	db := o.d.dbOf(dbuf.Blkno)
	fdb, findex := o.d.fdbOf(db)
	fbuf, hole, err := o.tryReadFree(fdb)
	if err != nil {
		return nil, nil, 0, err
	}
	if hole {
		da, err := o.c.FirstUnused(o.d.freeBlk, 1)
		if err != nil {
			return nil, nil, 0, err
		}
		if o.d.dbOf(da) != fdb {
			return nil, nil, 0, format.Corrupt("directory", "", "free-index block %d needed for data block %d, first hole is %d", fdb, db, o.d.dbOf(da))
		}
		if fbuf, err = o.c.Alloc(da, FreeOps); err != nil {
			return nil, nil, 0, err
		}
		initFree(fblock(fbuf.B), int(fdb-o.d.freeDB)*o.d.freeMax, fbuf.Daddr, o.g.UUID, o.owner)
	}
	f := fblock(fbuf.B)
	if findex >= f.nvalid() {
		for i := f.nvalid(); i <= findex; i++ {
			f.setBest(i, nullOff)
		}
		f.setNvalid(findex + 1)
	}
	if f.best(findex) == nullOff {
		f.setNused(f.nused() + 1)
	}
	f.setBest(findex, b.longest())
	o.c.Dirty(fbuf)
	return dbuf, fbuf, findex, nil
}

// leafnAdd inserts a leaf entry at leaf.Index (xfs_dir2_leafn_add); it
// reports false when the leaf is full without stale entries to reuse.
func (o *op) leafnAdd(leaf *dabtree.Blk, hash, addr uint32) bool {
	l := lblock(leaf.Buf.B)
	index := leaf.Index
	compact := false
	if l.count() >= o.d.leafMax {
		if l.stale() == 0 {
			return false
		}
		compact = l.stale() > 1
	}
	low, high := 0, 0
	if compact {
		index, low, high = l.compactX1(index)
	}
	pos := l.findEntry(index, compact, low, high)
	l.setEnt(pos, hash, addr)
	o.c.Dirty(leaf.Buf)
	return true
}

// leafnSplit splits a full leaf (xfs_dir2_leafn_split) and lets the tree
// record the new leaf above it.
func (o *op) leafnSplit(t *dabtree.Tree, p dabtree.Path, hash, addr uint32) error {
	old := p.Bottom()
	nbuf, err := t.Grow(LeafNOps)
	if err != nil {
		return err
	}
	initLeaf(lblock(nbuf.B), format.Dir3LeafNMagic, nbuf.Daddr, o.g.UUID, o.owner)
	nb := &dabtree.Blk{Blkno: nbuf.Blkno, Buf: nbuf, Leaf: true}
	inOld := o.leafnRebalance(old, nb, hash)
	if err := t.Link(old, nb); err != nil {
		return err
	}
	target := nb
	if inOld {
		target = old
	}
	if !o.leafnAdd(target, hash, addr) {
		return format.Corrupt("dir3 leafn", "", "no room in leaf %d after a split", target.Blkno)
	}
	o.c.Dirty(old.Buf)
	o.c.Dirty(nbuf)
	return t.Split(p, nb)
}

// leafnRebalance evens out two leaves, taking the entry about to be added
// into account; it reports whether that entry goes into the first one and
// sets both blocks' Index for it (xfs_dir2_leafn_rebalance).
func (o *op) leafnRebalance(blk1, blk2 *dabtree.Blk, hash uint32) bool {
	swap := leafnOps{}.Order(blk1.Buf.B, blk2.Buf.B)
	if swap {
		blk1, blk2 = blk2, blk1
	}
	l1, l2 := lblock(blk1.Buf.B), lblock(blk2.Buf.B)
	c1, c2 := l1.count(), l2.count()
	sum := c1 + c2
	mid := sum >> 1
	isLeft := true
	if sum&1 != 0 {
		var midHash uint32
		if mid >= c1 {
			midHash = l2.hash(mid - c1)
		} else {
			midHash = l1.hash(mid)
		}
		isLeft = hash <= midHash
	}
	count := c1 - mid
	if !isLeft {
		count++
	}
	if count > 0 {
		moveEnts(l1, c1-count, l2, 0, count)
	} else if count < 0 {
		moveEnts(l2, 0, l1, c1, -count)
	}
	c1, c2 = l1.count(), l2.count()
	var inLeaf bool
	switch {
	case c1 < c2:
		inLeaf = swap
	case c1 > c2:
		inLeaf = !swap
	default:
		inLeaf = swap != (blk1.Index <= c1)
	}
	if !inLeaf {
		blk2.Index = blk1.Index - c1
	}
	if blk2.Index < 0 {
		inLeaf = true
		blk2.Index = 0
	}
	return inLeaf
}

// nodeRemove removes an entry (xfs_dir2_node_removename): the leaf entry
// goes stale, the data space is freed (an emptied data block is unmapped
// and its free-index entry dropped, and an emptied free-index block with
// it), small leaves are joined, and the directory returns to leaf form
// when its single leaf and bests fit one leaf1 block.
func (o *op) nodeRemove(name []byte) (format.Ino, error) {
	st, found, err := o.nodeLookup(name, format.DaHashName(name), false)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, ErrNotFound
	}
	leaf := st.path.Bottom()
	l := lblock(leaf.Buf.B)
	b := dblock(st.dbuf.B)
	ino := b.ino(st.off)
	l.setStale(l.stale() + 1)
	l.setAddr(leaf.Index, format.NullDataptr)
	o.c.Dirty(leaf.Buf)
	longest := b.longest()
	scan := b.makeFree(st.off, entSize(b.nameLen(st.off)))
	if scan {
		b.freeScan()
	}
	o.c.Dirty(st.dbuf)
	if longest < b.longest() {
		fdb, findex := o.d.fdbOf(st.db)
		fbuf, err := o.readFree(fdb)
		if err != nil {
			return 0, err
		}
		longest = b.longest()
		gone := false
		if longest == o.d.emptyFree {
			if err := o.freeData(st.dbuf); err != nil {
				return 0, err
			}
			gone = true
		}
		if err := o.dataBlockFree(fbuf, findex, gone, longest); err != nil {
			return 0, err
		}
	}
	join := leafHdrSize+8*(l.count()-l.stale()) < o.d.magicPct
	t := o.tree()
	if err := t.FixHash(st.path); err != nil {
		return 0, err
	}
	toRoot := len(st.path) == 1
	if join && len(st.path) > 1 {
		if toRoot, err = t.Join(st.path); err != nil {
			return 0, err
		}
	}
	if toRoot {
		return ino, o.nodeToLeaf()
	}
	return ino, nil
}

// dataBlockFree updates the free-index entry of a data block whose
// longest free region grew, or that is gone (xfs_dir3_data_block_free).
func (o *op) dataBlockFree(fbuf *dabtree.Buf, findex int, gone bool, longest int) error {
	f := fblock(fbuf.B)
	o.c.Dirty(fbuf)
	if !gone {
		f.setBest(findex, longest)
		return nil
	}
	f.setNused(f.nused() - 1)
	if findex == f.nvalid()-1 {
		i := findex - 1
		for ; i >= 0 && f.best(i) == nullOff; i-- {
		}
		f.setNvalid(i + 1)
	} else {
		f.setBest(findex, nullOff)
	}
	if f.nused() == 0 {
		return o.c.Free(fbuf.Blkno)
	}
	return nil
}

// nodeToLeaf turns a node directory whose tree is a single leafn block and
// whose bests fit beside its live entries into a leaf directory
// (xfs_dir2_node_to_leaf), then tries block form.
func (o *op) nodeToLeaf() error {
	root, err := o.readLeafSpace(o.d.leafBlk)
	if err != nil {
		return err
	}
	l := lblock(root.B)
	if l.magic() != format.Dir3LeafNMagic {
		return nil
	}
	lastData := uint32(o.r.Size()>>o.d.blkLog) - 1
	if fdb, _ := o.d.fdbOf(lastData); fdb != o.d.freeDB {
		return nil // more than one free-index block
	}
	fbuf, err := o.readFree(o.d.freeDB)
	if err != nil {
		return err
	}
	f := fblock(fbuf.B)
	nvalid := f.nvalid()
	if leafHdrSize+8*(l.count()-l.stale())+2*nvalid+4 > o.d.blk {
		return nil
	}
	l.compact()
	l.setMagic(format.Dir3Leaf1Magic)
	l.setBestCount(nvalid)
	for i := 0; i < nvalid; i++ {
		l.setBest(i, f.best(i))
	}
	o.c.Dirty(root)
	if err := o.c.Free(fbuf.Blkno); err != nil {
		return err
	}
	return o.leafToBlock(root)
}

func (o *op) nodeReplace(name []byte, ino format.Ino, ftype uint8) (format.Ino, error) {
	st, found, err := o.nodeLookup(name, format.DaHashName(name), false)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, ErrNotFound
	}
	b := dblock(st.dbuf.B)
	old := b.ino(st.off)
	b.setTarget(st.off, ino, ftype)
	o.c.Dirty(st.dbuf)
	return old, nil
}
