package dir

import (
	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Block form: the single directory block 0 holds the entries, then the
// leaf array (hash, address) sorted by hash and the tail (count, stale).

func (o *op) readBlock() (*dabtree.Buf, dblock, error) {
	buf, err := o.readData(0)
	if err != nil {
		return nil, nil, err
	}
	b := dblock(buf.B)
	if !b.isBlockForm() {
		return nil, nil, format.Corrupt("dir3 block", dataWhere(0), "magic %#x in a block directory", b.magic())
	}
	return buf, b, nil
}

func (b dblock) leafHash(i int) uint32 { return be.Uint32(b[b.leafStart()+8*i:]) }
func (b dblock) leafAddr(i int) uint32 { return be.Uint32(b[b.leafStart()+8*i+4:]) }

// blockEntry reads the directory's block and finds name in it: the
// block, the entry's leaf index and its data offset, or ErrNotFound
// (xfs_dir2_block_lookup_int).
func (o *op) blockEntry(name []byte) (buf *dabtree.Buf, b dblock, i, off int, err error) {
	if buf, b, err = o.readBlock(); err != nil {
		return nil, nil, 0, 0, err
	}
	if i, off, err = o.blockFind(b, name, format.DaHashName(name)); err == nil && i < 0 {
		err = ErrNotFound
	}
	return buf, b, i, off, err
}

// blockFind returns the leaf index and data offset of name in b, or -1.
func (o *op) blockFind(b dblock, name []byte, hash uint32) (int, int, error) {
	count := b.tailCount()
	lo, hi := 0, count
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.leafHash(m) < hash {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for i := lo; i < count && b.leafHash(i) == hash; i++ {
		a := b.leafAddr(i)
		if a == format.NullDataptr {
			continue
		}
		db, off := o.d.unptr(a)
		if db != 0 {
			return -1, 0, format.Corrupt("dir3 block", dataWhere(0), "leaf entry %d points at block %d", i, db)
		}
		ok, err := o.entryAt(b, off, name)
		if err != nil {
			return -1, 0, format.Located(err, dataWhere(0))
		}
		if ok {
			return i, off, nil
		}
	}
	return -1, 0, nil
}

func (o *op) blockLookup(name []byte) (format.Ino, uint8, error) {
	_, b, _, off, err := o.blockEntry(name)
	if err != nil {
		return 0, 0, err
	}
	return b.ino(off), b.ftype(off), nil
}

// blockAdd adds an entry to a block directory, reusing stale leaf entries
// and compacting them when that makes room; when the entry and its leaf
// entry do not fit, the directory becomes a leaf directory first
// (xfs_dir2_block_addname).
func (o *op) blockAdd(name []byte, ino format.Ino, ftype uint8) error {
	buf, b, err := o.readBlock()
	if err != nil {
		return err
	}
	length := o.d.entSize(len(name))
	hash := format.DaHashName(name)
	stale := b.tailStale()
	ls := b.leafStart()
	o0, l0 := b.bf(0)
	dup, endDup := -1, -1
	compact := false
	if stale > 0 {
		if l0 >= length {
			dup = o0
		} else {
			// Compacting frees stale-1 leaf entries at the leaf's start.
			compact = true
			t := b.tagBefore(ls)
			if b.isFree(t) {
				if b.freeLen(t)+(stale-1)*8 >= length {
					dup = t
				}
			} else if (stale-1)*8 >= length {
				dup = ls
			}
		}
	} else if t := b.tagBefore(ls); b.isFree(t) {
		// The region before the leaf must give 8 bytes to a new leaf entry.
		endDup = t
		dup = o0
		if dup != endDup {
			if l0 < length {
				dup = -1
			}
		} else if l0 < length+8 {
			if o1, l1 := b.bf(1); l1 >= length {
				dup = o1
			} else {
				dup = -1
			}
		}
	}
	if dup < 0 {
		if err := o.blockToLeaf(buf); err != nil {
			return err
		}
		return o.leafAdd(name, ino, ftype)
	}
	if compact {
		o.blockCompact(b)
	}
	count := b.tailCount()
	ls = b.leafStart()
	// mid: the last leaf entry with a lower hash (-1 if none).
	mid := -1
	for lo, hi := 0, count; ; {
		if lo >= hi {
			mid = lo - 1
			break
		}
		m := int(uint(lo+hi) >> 1)
		if b.leafHash(m) < hash {
			lo = m + 1
		} else {
			hi = m
		}
	}
	ent := func(i int) []byte { return b[ls+8*i : ls+8*i+8] }
	if b.tailStale() == 0 {
		// Take 8 bytes off the end of the region before the leaf and
		// slide the lower-hash entries down into them.
		scan, err := b.useFree(endDup, endDup+b.freeLen(endDup)-8, 8)
		if err != nil {
			return err
		}
		b.setTail(count+1, 0)
		if scan {
			b.freeScan()
		}
		mid++
		copy(b[ls-8:ls-8+8*mid], b[ls:ls+8*mid])
		ls -= 8
		ent = func(i int) []byte { return b[ls+8*i : ls+8*i+8] }
	} else {
		// Reuse the nearest stale entry, shifting the ones in between.
		low := mid
		for ; low >= 0 && b.leafAddr(low) != format.NullDataptr; low-- {
		}
		high := mid + 1
		for ; high < count && b.leafAddr(high) != format.NullDataptr && (low < 0 || mid-low > high-mid); high++ {
		}
		if low >= 0 && (high == count || mid-low <= high-mid) {
			copy(b[ls+8*low:ls+8*mid], b[ls+8*(low+1):ls+8*(mid+1)])
		} else {
			mid++
			copy(b[ls+8*(mid+1):ls+8*(high+1)], b[ls+8*mid:ls+8*high])
		}
		b.setTail(count, b.tailStale()-1)
	}
	e := ent(mid)
	be.PutUint32(e, hash)
	be.PutUint32(e[4:], o.d.ptr(0, dup))
	scan, err := b.useFree(dup, dup, length)
	if err != nil {
		return err
	}
	b.putEntry(dup, name, ino, ftype)
	if scan {
		b.freeScan()
	}
	o.c.Dirty(buf)
	return nil
}

// blockCompact removes all stale leaf entries but the highest-indexed one,
// sliding the array up and freeing its old start (xfs_dir2_block_compact).
func (o *op) blockCompact(b dblock) {
	count, stale := b.tailCount(), b.tailStale()
	ls := b.leafStart()
	to := count - 1
	kept := false
	for from := count - 1; from >= 0; from-- {
		if be.Uint32(b[ls+8*from+4:]) == format.NullDataptr {
			if kept {
				continue
			}
			kept = true
		}
		if from < to {
			copy(b[ls+8*to:ls+8*to+8], b[ls+8*from:ls+8*from+8])
		}
		to--
	}
	b.setTail(count-(stale-1), stale)
	scan := b.makeFree(ls, (stale-1)*8)
	b.setTail(count-(stale-1), 1)
	if scan {
		b.freeScan()
	}
}

// blockRemove removes an entry: its space becomes free, its leaf entry
// stale; a directory that now fits the inode goes back to short form
// (xfs_dir2_block_removename).
func (o *op) blockRemove(name []byte) (format.Ino, error) {
	buf, b, i, off, err := o.blockEntry(name)
	if err != nil {
		return 0, err
	}
	ino := b.ino(off)
	scan := b.makeFree(off, entSize(b.nameLen(off)))
	b.setTail(b.tailCount(), b.tailStale()+1)
	be.PutUint32(b[b.leafStart()+8*i+4:], format.NullDataptr)
	if scan {
		b.freeScan()
	}
	o.c.Dirty(buf)
	s, ok, err := o.blockSF(b)
	if err != nil || !ok {
		return ino, err
	}
	return ino, o.blockToSF(buf, s)
}

// blockReplace points an entry at another inode (xfs_dir2_block_replace).
func (o *op) blockReplace(name []byte, ino format.Ino, ftype uint8) (format.Ino, error) {
	buf, b, _, off, err := o.blockEntry(name)
	if err != nil {
		return 0, err
	}
	old := b.ino(off)
	b.setTarget(off, ino, ftype)
	o.c.Dirty(buf)
	return old, nil
}

// blockToLeaf turns the block into data block 0 of a leaf directory: the
// leaf array moves to a new leaf1 block with a one-entry bests table, and
// its old place becomes free space (xfs_dir2_block_to_leaf).
func (o *op) blockToLeaf(buf *dabtree.Buf) error {
	b := dblock(buf.B)
	da, err := o.c.FirstUnused(o.d.leafBlk, 1)
	if err != nil {
		return err
	}
	lbuf, err := o.c.Alloc(da, Leaf1Ops)
	if err != nil {
		return err
	}
	l := lblock(lbuf.B)
	initLeaf(l, format.Dir3Leaf1Magic, lbuf.Daddr, o.g.UUID, o.owner)
	count, stale := b.tailCount(), b.tailStale()
	ls := b.leafStart()
	l.setCount(count)
	l.setStale(stale)
	copy(l.ents(0, count), b[ls:ls+8*count])
	scan := b.makeFree(ls, len(b)-ls)
	be.PutUint32(b, format.Dir3DataMagic)
	if scan {
		b.freeScan()
	}
	l.setBestCount(1)
	l.setBest(0, b.longest())
	o.c.Dirty(buf)
	o.c.Dirty(lbuf)
	return nil
}
