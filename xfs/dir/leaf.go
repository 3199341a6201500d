package dir

import (
	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Leaf form: data blocks 0..n-1 (holes allowed where blocks emptied out)
// and one leaf1 block at the start of the leaf space holding every leaf
// entry plus the bests table: the longest free region of each data block,
// NULLDATAOFF for holes.

// leafFind looks name up in the leaf1 block (xfs_dir2_leaf_lookup_int):
// the leaf index, the data block and the entry's offset, or index -1.
func (o *op) leafFind(l lblock, name []byte, hash uint32) (int, *dabtree.Buf, int, error) {
	count := l.count()
	for i := l.searchHash(hash); i < count && l.hash(i) == hash; i++ {
		a := l.addr(i)
		if a == format.NullDataptr {
			continue
		}
		db, off := o.d.unptr(a)
		dbuf, err := o.readData(db)
		if err != nil {
			return -1, nil, 0, err
		}
		ok, err := o.entryAt(dblock(dbuf.B), off, name)
		if err != nil {
			return -1, nil, 0, format.Located(err, dataWhere(db))
		}
		if ok {
			return i, dbuf, off, nil
		}
	}
	return -1, nil, 0, nil
}

func (o *op) leafLookup(name []byte) (format.Ino, uint8, error) {
	lbuf, err := o.readLeaf1()
	if err != nil {
		return 0, 0, err
	}
	i, dbuf, off, err := o.leafFind(lblock(lbuf.B), name, format.DaHashName(name))
	if err != nil {
		return 0, 0, err
	}
	if i < 0 {
		return 0, 0, ErrNotFound
	}
	b := dblock(dbuf.B)
	return b.ino(off), b.ftype(off), nil
}

// leafAdd adds an entry to a leaf directory (xfs_dir2_leaf_addname): into
// a data block that already holds an entry of the same hash if it has
// room, else the first data block with room (or the first hole); the leaf
// entry reuses a stale slot, compacting when the leaf is full. When the
// leaf cannot take the entry and a new best, the directory becomes a node
// directory first.
func (o *op) leafAdd(name []byte, ino format.Ino, ftype uint8) error {
	lbuf, err := o.readLeaf1()
	if err != nil {
		return err
	}
	l := lblock(lbuf.B)
	hash := format.DaHashName(name)
	length := o.d.entSize(len(name))
	index := l.searchHash(hash)
	count, bestCount := l.count(), l.bestCount()
	// Prefer a data block already holding this hash; the new leaf entry
	// then goes just before that block's entry (or after the whole run of
	// equal hashes when none has room): index moves with the scan.
	use := -1
	for ; index < count && l.hash(index) == hash; index++ {
		a := l.addr(index)
		if a == format.NullDataptr {
			continue
		}
		db, _ := o.d.unptr(a)
		if int(db) >= bestCount {
			return format.Corrupt("dir3 leaf1", "", "entry %d points past the bests table", index)
		}
		if l.best(int(db)) >= length {
			use = int(db)
			break
		}
	}
	if use < 0 {
		for i := 0; i < bestCount; i++ {
			if v := l.best(i); v == nullOff && use < 0 {
				use = i
			} else if v >= length {
				use = i
				break
			}
		}
	}
	need := 0
	if l.stale() == 0 {
		need += 8
	}
	if use < 0 {
		need += 2
	}
	if use >= 0 && l.best(use) == nullOff {
		use = -1
	}
	compact := false
	if l.bestsStart()-(leafHdrSize+8*count) < need {
		if l.stale() <= 1 {
			if err := o.leafToNode(lbuf); err != nil {
				return err
			}
			return o.nodeAdd(name, ino, ftype)
		}
		compact = true
	}
	low, high := 0, 0
	if compact {
		index, low, high = l.compactX1(index)
	}
	var dbuf *dabtree.Buf
	if use < 0 {
		if dbuf, err = o.growData(); err != nil {
			return err
		}
		initData(dblock(dbuf.B), format.Dir3DataMagic, dbuf.Daddr, o.g.UUID, o.owner)
		use = int(o.d.dbOf(dbuf.Blkno))
		if use >= bestCount {
			// The bests table grows by one slot towards the entries.
			old := append([]byte(nil), l.bestsBytes()...)
			l.setBestCount(bestCount + 1)
			copy(l.bestsBytes(), old)
		}
		l.setBest(use, dblock(dbuf.B).longest())
	} else if dbuf, err = o.readData(uint32(use)); err != nil {
		return err
	}
	b := dblock(dbuf.B)
	off, _ := b.bf(0)
	scan, err := b.useFree(off, off, length)
	if err != nil {
		return format.Located(err, dataWhere(uint32(use)))
	}
	b.putEntry(off, name, ino, ftype)
	if scan {
		b.freeScan()
	}
	if l.best(use) != b.longest() {
		l.setBest(use, b.longest())
	}
	pos := l.findEntry(index, compact, low, high)
	l.setEnt(pos, hash, o.d.ptr(uint32(use), off))
	o.c.Dirty(dbuf)
	o.c.Dirty(lbuf)
	return nil
}

// leafRemove removes an entry (xfs_dir2_leaf_removename): the data space
// is freed, the leaf entry goes stale, a data block left empty is
// unmapped (the bests table loses its trailing holes), and the directory
// returns to block form when it fits.
func (o *op) leafRemove(name []byte) (format.Ino, error) {
	lbuf, err := o.readLeaf1()
	if err != nil {
		return 0, err
	}
	l := lblock(lbuf.B)
	i, dbuf, off, err := o.leafFind(l, name, format.DaHashName(name))
	if err != nil {
		return 0, err
	}
	if i < 0 {
		return 0, ErrNotFound
	}
	db, _ := o.d.unptr(l.addr(i))
	b := dblock(dbuf.B)
	ino := b.ino(off)
	old := b.longest()
	if int(db) >= l.bestCount() || l.best(int(db)) != old {
		return 0, format.Corrupt("dir3 leaf1", "", "bests entry of data block %d does not match it", db)
	}
	scan := b.makeFree(off, entSize(b.nameLen(off)))
	l.setStale(l.stale() + 1)
	l.setAddr(i, format.NullDataptr)
	if scan {
		b.freeScan()
	}
	if b.longest() != old {
		l.setBest(int(db), b.longest())
	}
	o.c.Dirty(lbuf)
	o.c.Dirty(dbuf)
	if b.longest() == o.d.emptyFree {
		if err := o.freeData(dbuf); err != nil {
			return 0, err
		}
		if bc := l.bestCount(); int(db) == bc-1 {
			// Drop the trailing holes with it (block 0 always stays).
			k := int(db) - 1
			for ; k > 0 && l.best(k) == nullOff; k-- {
			}
			drop := int(db) - k
			keep := append([]byte(nil), l.bestsBytes()[:2*(bc-drop)]...)
			l.setBestCount(bc - drop)
			copy(l.bestsBytes(), keep)
		} else {
			l.setBest(int(db), nullOff)
		}
	}
	return ino, o.leafToBlock(lbuf)
}

func (o *op) leafReplace(name []byte, ino format.Ino, ftype uint8) (format.Ino, error) {
	lbuf, err := o.readLeaf1()
	if err != nil {
		return 0, err
	}
	i, dbuf, off, err := o.leafFind(lblock(lbuf.B), name, format.DaHashName(name))
	if err != nil {
		return 0, err
	}
	if i < 0 {
		return 0, ErrNotFound
	}
	b := dblock(dbuf.B)
	old := b.ino(off)
	b.setTarget(off, ino, ftype)
	o.c.Dirty(dbuf)
	return old, nil
}

// leafToBlock turns a leaf directory whose only data block is block 0
// back into block form when that block's last free region can hold the
// live leaf entries and the tail (xfs_dir2_leaf_to_block), and then into
// short form when it fits the inode.
func (o *op) leafToBlock(lbuf *dabtree.Buf) error {
	l := lblock(lbuf.B)
	for o.r.Size() > int64(o.d.blk) {
		bc := l.bestCount()
		if bc == 0 || l.best(bc-1) != o.d.emptyFree {
			return nil
		}
		if err := o.leafTrimData(l, uint32(bc-1)); err != nil {
			return err
		}
	}
	dbuf, err := o.readData(0)
	if err != nil {
		return err
	}
	b := dblock(dbuf.B)
	live := l.count() - l.stale()
	size := 8 + 8*live
	t := b.tagBefore(len(b))
	if !b.isFree(t) || b.freeLen(t) < size {
		return nil
	}
	initBlkHdr(b, format.Dir3BlockMagic, dbuf.Daddr, o.g.UUID, o.owner)
	scan, err := b.useFree(t, len(b)-size, size)
	if err != nil {
		return format.Located(err, dataWhere(0))
	}
	b.setTail(live, 0)
	ls := b.leafStart()
	n := 0
	for i := 0; i < l.count(); i++ {
		if l.addr(i) == format.NullDataptr {
			continue
		}
		copy(b[ls+8*n:ls+8*n+8], l.ents(i, i+1))
		n++
	}
	if scan {
		b.freeScan()
	}
	o.c.Dirty(dbuf)
	if err := o.c.Free(lbuf.Blkno); err != nil {
		return err
	}
	s, ok, err := o.blockSF(b)
	if err != nil || !ok {
		return err
	}
	return o.blockToSF(dbuf, s)
}

// leafTrimData unmaps the empty last data block db and drops its best
// (xfs_dir2_leaf_trim_data).
func (o *op) leafTrimData(l lblock, db uint32) error {
	dbuf, err := o.readData(db)
	if err != nil {
		return err
	}
	if dblock(dbuf.B).longest() != o.d.emptyFree {
		return format.Corrupt("dir3 leaf1", "", "bests say data block %d is empty, it is not", db)
	}
	if err := o.freeData(dbuf); err != nil {
		return err
	}
	bc := l.bestCount()
	keep := append([]byte(nil), l.bestsBytes()[:2*(bc-1)]...)
	l.setBestCount(bc - 1)
	copy(l.bestsBytes(), keep)
	return nil
}

// leafToNode turns the leaf1 block into a leafn block, moving the bests
// table to the first free-index block (xfs_dir2_leaf_to_node).
func (o *op) leafToNode(lbuf *dabtree.Buf) error {
	l := lblock(lbuf.B)
	da, err := o.c.FirstUnused(o.d.freeBlk, 1)
	if err != nil {
		return err
	}
	if da != o.d.freeBlk {
		return format.Corrupt("directory", "", "free-index space of a leaf directory is in use")
	}
	fbuf, err := o.c.Alloc(da, FreeOps)
	if err != nil {
		return err
	}
	f := fblock(fbuf.B)
	initFree(f, 0, fbuf.Daddr, o.g.UUID, o.owner)
	bc := l.bestCount()
	if int64(bc) > o.r.Size()/int64(o.d.blk) || bc > o.d.freeMax {
		return format.Corrupt("dir3 leaf1", "", "%d bests for %d bytes of data", bc, o.r.Size())
	}
	used := 0
	for i := 0; i < bc; i++ {
		v := l.best(i)
		if v != nullOff {
			used++
		}
		f.setBest(i, v)
	}
	f.setNused(used)
	f.setNvalid(bc)
	l.setMagic(format.Dir3LeafNMagic)
	o.c.Dirty(fbuf)
	o.c.Dirty(lbuf)
	return nil
}
