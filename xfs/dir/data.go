package dir

import (
	"encoding/binary"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

var be = binary.BigEndian

// dblock is a directory data block: "XDD3" in leaf and node directories,
// "XDB3" (with the leaf array and tail at its end) in block directories.
//
//	0   xfs_dir3_blk_hdr (48): magic, crc, blkno, lsn, uuid, owner
//	48  bestfree[3] (offset be16, length be16), pad be32
//	64  entries and free regions, 8-byte aligned, in offset order:
//	      entry: inumber be64, namelen u8, name, ftype u8, pad, tag be16
//	      free:  0xFFFF be16, length be16, ..., tag be16
//	    XDB3 only: leaf entries (hashval be32, address be32) sorted by
//	    hash, then the tail: count be32, stale be32 at the block's end.
//
// A tag is the offset of the object it ends. bestfree holds the three
// longest free regions, longest first, unused slots zero.
type dblock []byte

func (b dblock) magic() uint32     { return be.Uint32(b) }
func (b dblock) isBlockForm() bool { return b.magic() == format.Dir3BlockMagic }

// Block-form tail.
func (b dblock) tailCount() int { return int(be.Uint32(b[len(b)-8:])) }
func (b dblock) tailStale() int { return int(be.Uint32(b[len(b)-4:])) }
func (b dblock) setTail(count, stale int) {
	be.PutUint32(b[len(b)-8:], uint32(count))
	be.PutUint32(b[len(b)-4:], uint32(stale))
}

// leafStart is where the leaf array of a block-form directory begins.
func (b dblock) leafStart() int { return len(b) - 8 - 8*b.tailCount() }

// end is the end of the entry area (xfs_dir3_data_end_offset).
func (b dblock) end() int {
	if b.isBlockForm() {
		return b.leafStart()
	}
	return len(b)
}

func (b dblock) bf(i int) (off, length int) {
	return int(be.Uint16(b[48+4*i:])), int(be.Uint16(b[50+4*i:]))
}

func (b dblock) setBF(i, off, length int) {
	be.PutUint16(b[48+4*i:], uint16(off))
	be.PutUint16(b[50+4*i:], uint16(length))
}

func (b dblock) longest() int { _, l := b.bf(0); return l }

func (b dblock) isFree(off int) bool { return be.Uint16(b[off:]) == freeTag }
func (b dblock) freeLen(off int) int { return int(be.Uint16(b[off+2:])) }

// setFree writes a free region's header and tag.
func (b dblock) setFree(off, length int) {
	be.PutUint16(b[off:], freeTag)
	be.PutUint16(b[off+2:], uint16(length))
	be.PutUint16(b[off+length-2:], uint16(off))
}

// tagBefore returns the offset recorded in the tag that ends just before off.
func (b dblock) tagBefore(off int) int { return int(be.Uint16(b[off-2:])) }

func (b dblock) nameLen(off int) int { return int(b[off+8]) }
func (b dblock) name(off int) []byte { return b[off+9 : off+9+b.nameLen(off)] }
func (b dblock) ino(off int) format.Ino {
	return format.Ino(be.Uint64(b[off:]))
}
func (b dblock) ftype(off int) uint8 { return b[off+9+b.nameLen(off)] }

// objLen is the length of the entry or free region at off.
func (b dblock) objLen(off int) int {
	if b.isFree(off) {
		return b.freeLen(off)
	}
	return entSize(b.nameLen(off))
}

// putEntry writes a data entry at off (its padding zeroed).
func (b dblock) putEntry(off int, name []byte, ino format.Ino, ftype uint8) {
	size := entSize(len(name))
	be.PutUint64(b[off:], uint64(ino))
	b[off+8] = byte(len(name))
	copy(b[off+9:], name)
	b[off+9+len(name)] = ftype
	clear(b[off+10+len(name) : off+size-2])
	be.PutUint16(b[off+size-2:], uint16(off))
}

func (b dblock) setTarget(off int, ino format.Ino, ftype uint8) {
	be.PutUint64(b[off:], uint64(ino))
	b[off+9+b.nameLen(off)] = ftype
}

// initData formats b as an empty data block: one free region after the
// header (xfs_dir3_data_init).
func initData(b dblock, magic uint32, daddr format.Daddr, uuid [16]byte, owner format.Ino) {
	initBlkHdr(b, magic, daddr, uuid, owner)
	clear(b[48:64])
	b.setBF(0, dataHdrSize, len(b)-dataHdrSize)
	b.setFree(dataHdrSize, len(b)-dataHdrSize)
}

// initBlkHdr writes xfs_dir3_blk_hdr (48 bytes) of a data, block or free
// block; bestfree is left alone (xfs_dir3_block_init).
func initBlkHdr(b []byte, magic uint32, daddr format.Daddr, uuid [16]byte, owner format.Ino) {
	clear(b[:48])
	be.PutUint32(b, magic)
	be.PutUint64(b[8:], uint64(daddr))
	copy(b[24:40], uuid[:])
	be.PutUint64(b[40:], uint64(owner))
}

// The bestfree table, kept exactly as the kernel keeps it
// (xfs_dir2_data_freefind/freeinsert/freeremove/freescan).

// freeFind returns the slot of the free region at off, or -1.
func (b dblock) freeFind(off int) int {
	if _, l2 := b.bf(2); b.freeLen(off) < l2 {
		return -1
	}
	for i := 0; i < 3; i++ {
		o, _ := b.bf(i)
		if o == 0 {
			return -1
		}
		if o == off {
			return i
		}
	}
	return -1
}

// freeInsert puts a region into the table if it is longer than a slot's,
// returning the slot or -1.
func (b dblock) freeInsert(off, length int) int {
	_, l0 := b.bf(0)
	_, l1 := b.bf(1)
	_, l2 := b.bf(2)
	o0, _ := b.bf(0)
	o1, _ := b.bf(1)
	switch {
	case length > l0:
		b.setBF(2, o1, l1)
		b.setBF(1, o0, l0)
		b.setBF(0, off, length)
		return 0
	case length > l1:
		b.setBF(2, o1, l1)
		b.setBF(1, off, length)
		return 1
	case length > l2:
		b.setBF(2, off, length)
		return 2
	}
	return -1
}

// freeRemove drops slot i, sliding the later slots up.
func (b dblock) freeRemove(i int) {
	for ; i < 2; i++ {
		o, l := b.bf(i + 1)
		b.setBF(i, o, l)
	}
	b.setBF(2, 0, 0)
}

// freeScan rebuilds the table from the block's free regions.
func (b dblock) freeScan() {
	clear(b[48:60])
	end := b.end()
	for off := dataHdrSize; off < end; {
		if b.isFree(off) {
			b.freeInsert(off, b.freeLen(off))
			off += b.freeLen(off)
			continue
		}
		off += entSize(b.nameLen(off))
	}
}

// makeFree turns [off, off+length) into free space, merging it with free
// neighbours (xfs_dir2_data_make_free). It reports whether the table must
// be rebuilt with freeScan.
func (b dblock) makeFree(off, length int) bool {
	end := b.end()
	prev, post := -1, -1
	if off > dataHdrSize {
		if t := b.tagBefore(off); b.isFree(t) {
			prev = t
		}
	}
	if off+length < end && b.isFree(off+length) {
		post = off + length
	}
	_, l2 := b.bf(2)
	switch {
	case prev >= 0 && post >= 0:
		s1, s2 := b.freeFind(prev), b.freeFind(post)
		needScan := l2 != 0
		n := b.freeLen(prev) + length + b.freeLen(post)
		b.setFree(prev, n)
		if !needScan {
			// Both neighbours are the only two regions, in slots 0 and 1.
			if s1 == 1 {
				s1, s2 = 0, 1
			}
			b.freeRemove(s2)
			b.freeRemove(s1)
			b.freeInsert(prev, n)
		}
		return needScan
	case prev >= 0:
		s := b.freeFind(prev)
		n := b.freeLen(prev) + length
		b.setFree(prev, n)
		if s >= 0 {
			b.freeRemove(s)
			b.freeInsert(prev, n)
			return false
		}
		return n > l2
	case post >= 0:
		s := b.freeFind(post)
		n := length + b.freeLen(post)
		b.setFree(off, n)
		if s >= 0 {
			b.freeRemove(s)
			b.freeInsert(off, n)
			return false
		}
		return n > l2
	}
	b.setFree(off, length)
	b.freeInsert(off, length)
	return false
}

// useFree takes [off, off+length) out of the free region at dup
// (xfs_dir2_data_use_free). It reports whether the table must be rebuilt.
func (b dblock) useFree(dup, off, length int) (bool, error) {
	if dup < dataHdrSize || dup+4 > len(b) || !b.isFree(dup) || off < dup || off+length > dup+b.freeLen(dup) ||
		dup+b.freeLen(dup) > len(b) || b.tagBefore(dup+b.freeLen(dup)) != dup {
		return false, format.Corrupt("dir3 data block", "", "free region at %d cannot hold %d bytes at %d", dup, length, off)
	}
	old := b.freeLen(dup)
	s := b.freeFind(dup)
	front, back := dup == off, dup+old == off+length
	switch {
	case front && back:
		if s >= 0 {
			if o2, _ := b.bf(2); o2 != 0 {
				return true, nil
			}
			b.freeRemove(s)
		}
		return false, nil
	case front, back:
		at, n := off+length, old-length
		if back {
			at, n = dup, off-dup
		}
		b.setFree(at, n)
		if s < 0 {
			return false, nil
		}
		b.freeRemove(s)
		slot := b.freeInsert(at, n)
		if slot < 0 {
			return false, format.Corrupt("dir3 data block", "", "bestfree table lost the region at %d", at)
		}
		// Landing in the last slot: a region not in the table may be longer.
		return slot == 2, nil
	}
	n1 := off - dup
	b.setFree(dup, n1)
	b.setFree(off+length, old-length-n1)
	if s < 0 {
		return false, nil
	}
	if _, l2 := b.bf(2); l2 != 0 {
		return true, nil
	}
	b.freeRemove(s)
	b.freeInsert(dup, n1)
	b.freeInsert(off+length, old-length-n1)
	return false, nil
}

// checkData verifies a data or block-form block's structure the way the
// kernel's verifier does (__xfs_dir3_data_check): entries and free regions
// tile the area with correct tags, no two free regions touch, the bestfree
// table is exactly right, and in a block-form block the leaf array is
// sorted, its counts are right and every entry has its leaf entry.
func checkData(b dblock) error {
	const what = "dir3 data block"
	if len(b) < dataHdrSize+16 {
		return format.Corrupt(what, "", "%d bytes is too short", len(b))
	}
	// Block form: leaf hashes by address (offset/8), with bit 32 set for
	// a live leaf entry; a slice, not a map, as this runs on every read.
	var leaf []uint64
	liveLeaf := 0
	if b.isBlockForm() {
		count := b.tailCount()
		if count >= (len(b)-8-dataHdrSize)/8 || b.tailStale() > count {
			return format.Corrupt(what, "", "tail count %d stale %d do not fit", count, b.tailStale())
		}
		leaf = make([]uint64, len(b)/8)
		stale := 0
		var prev uint32
		for i := 0; i < count; i++ {
			o := b.leafStart() + 8*i
			h, a := be.Uint32(b[o:]), be.Uint32(b[o+4:])
			if i > 0 && h < prev {
				return format.Corrupt(what, "", "leaf hash order broken at entry %d", i)
			}
			prev = h
			if a == format.NullDataptr {
				stale++
				continue
			}
			liveLeaf++
			if int(a) >= len(leaf) {
				continue // matches no entry: the counts below disagree
			}
			if leaf[a] != 0 {
				return format.Corrupt(what, "", "two leaf entries for address %#x", a)
			}
			leaf[a] = 1<<32 | uint64(h)
		}
		if stale != b.tailStale() {
			return format.Corrupt(what, "", "%d stale leaf entries, tail says %d", stale, b.tailStale())
		}
	}
	end := b.end()
	var slots [3][2]int
	for i := range slots {
		slots[i][0], slots[i][1] = b.bf(i)
		if slots[i][1] == 0 && slots[i][0] != 0 {
			return format.Corrupt(what, "", "bestfree slot %d has offset %d but no length", i, slots[i][0])
		}
		if i > 0 && slots[i][1] > slots[i-1][1] {
			return format.Corrupt(what, "", "bestfree table out of order")
		}
		if i > 0 && slots[i][1] != 0 && slots[i-1][1] == 0 {
			return format.Corrupt(what, "", "bestfree slot %d used after an empty one", i)
		}
	}
	seen := 0
	for i := range slots {
		if slots[i][1] == 0 {
			seen |= 1 << i
		}
	}
	lastFree := false
	live := 0
	off := dataHdrSize
	for off < end {
		if off+4 > end {
			return format.Corrupt(what, "", "object at %d runs past the entry area", off)
		}
		if b.isFree(off) {
			l := b.freeLen(off)
			switch {
			case lastFree:
				return format.Corrupt(what, "", "free regions at %d and before it touch", off)
			case l < 8 || l%8 != 0 || off+l > end:
				return format.Corrupt(what, "", "free region at %d has bad length %d", off, l)
			case b.tagBefore(off+l) != off:
				return format.Corrupt(what, "", "free region at %d has a bad tag", off)
			}
			found := -1
			for i, s := range slots {
				switch {
				case s[1] == 0:
				case s[0] == off:
					if s[1] != l {
						return format.Corrupt(what, "", "bestfree slot %d says length %d, region at %d has %d", i, s[1], off, l)
					}
					found = i
				case s[0] < off+l && off < s[0]+s[1]:
					return format.Corrupt(what, "", "bestfree slot %d overlaps the region at %d", i, off)
				}
			}
			if found >= 0 {
				if seen&(1<<found) != 0 {
					return format.Corrupt(what, "", "bestfree slot %d matched twice", found)
				}
				seen |= 1 << found
			} else if l > slots[2][1] {
				return format.Corrupt(what, "", "free region at %d (%d bytes) missing from bestfree", off, l)
			}
			off += l
			lastFree = true
			continue
		}
		if off+11 > end {
			return format.Corrupt(what, "", "entry at %d runs past the entry area", off)
		}
		nl := b.nameLen(off)
		size := entSize(nl)
		switch {
		case nl == 0:
			return format.Corrupt(what, "", "entry at %d has an empty name", off)
		case off+size > end:
			return format.Corrupt(what, "", "entry at %d runs past the entry area", off)
		case b.tagBefore(off+size) != off:
			return format.Corrupt(what, "", "entry at %d has a bad tag", off)
		case b.ftype(off) > format.FTSymlink:
			return format.Corrupt(what, "", "entry at %d has file type %d", off, b.ftype(off))
		}
		if leaf != nil {
			if leaf[off>>3] != 1<<32|uint64(format.DaHashName(b.name(off))) {
				return format.Corrupt(what, "", "entry %q at %d has no matching leaf entry", b.name(off), off)
			}
		}
		live++
		lastFree = false
		off += size
	}
	if off != end {
		return format.Corrupt(what, "", "entries overrun the entry area")
	}
	if seen != 7 {
		return format.Corrupt(what, "", "bestfree table names regions that do not exist")
	}
	if leaf != nil && live != liveLeaf {
		return format.Corrupt(what, "", "%d entries but %d live leaf entries", live, liveLeaf)
	}
	return nil
}

func dataWhere(db uint32) string { return fmt.Sprintf("dir block %d", db) }
