package dir

import (
	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
)

// lblock is a leaf block: leaf1 (0x3DF1, the one leaf of a leaf directory)
// or leafn (0x3DFF, a leaf of a node directory's da-btree).
//
//	0   xfs_da3_blkinfo (56): forw, back, magic, pad, crc, blkno, lsn, uuid, owner
//	56  count be16, stale be16, pad be32
//	64  entries (hashval be32, address be32) sorted by hash; address 0 = stale
//	    leaf1 only, at the block's end: bests[bestcount] be16, bestcount be32
type lblock []byte

func (l lblock) magic() uint16     { return dabtree.Magic(l) }
func (l lblock) count() int        { return int(be.Uint16(l[56:])) }
func (l lblock) stale() int        { return int(be.Uint16(l[58:])) }
func (l lblock) setCount(n int)    { be.PutUint16(l[56:], uint16(n)) }
func (l lblock) setStale(n int)    { be.PutUint16(l[58:], uint16(n)) }
func (l lblock) setMagic(m uint16) { be.PutUint16(l[8:], m) }

func (l lblock) ent(i int) (hash, addr uint32) {
	o := leafHdrSize + 8*i
	return be.Uint32(l[o:]), be.Uint32(l[o+4:])
}

func (l lblock) hash(i int) uint32 { return be.Uint32(l[leafHdrSize+8*i:]) }
func (l lblock) addr(i int) uint32 { return be.Uint32(l[leafHdrSize+8*i+4:]) }

func (l lblock) setEnt(i int, hash, addr uint32) {
	o := leafHdrSize + 8*i
	be.PutUint32(l[o:], hash)
	be.PutUint32(l[o+4:], addr)
}

func (l lblock) setAddr(i int, addr uint32) { be.PutUint32(l[leafHdrSize+8*i+4:], addr) }

// ents returns the byte range of entries [i, j).
func (l lblock) ents(i, j int) []byte { return l[leafHdrSize+8*i : leafHdrSize+8*j] }

// Leaf1 tail and bests table.
func (l lblock) bestCount() int       { return int(be.Uint32(l[len(l)-4:])) }
func (l lblock) setBestCount(n int)   { be.PutUint32(l[len(l)-4:], uint32(n)) }
func (l lblock) bestsStart() int      { return len(l) - 4 - 2*l.bestCount() }
func (l lblock) best(i int) int       { return int(be.Uint16(l[l.bestsStart()+2*i:])) }
func (l lblock) setBest(i int, v int) { be.PutUint16(l[l.bestsStart()+2*i:], uint16(v)) }
func (l lblock) bestsBytes() []byte   { return l[l.bestsStart() : len(l)-4] }
func (l lblock) lastHash() uint32 {
	if n := l.count(); n > 0 {
		return l.hash(n - 1)
	}
	return 0
}

// initLeaf formats an empty leaf1 or leafn block (xfs_dir3_leaf_init).
func initLeaf(l lblock, magic uint16, daddr format.Daddr, uuid [16]byte, owner format.Ino) {
	dabtree.InitHeader(l, leafHdrSize, magic, daddr, uuid, owner)
	if magic == format.Dir3Leaf1Magic {
		l.setBestCount(0)
	}
}

// searchHash returns the first entry whose hash is >= hash, or count
// (xfs_dir2_leaf_search_hash).
func (l lblock) searchHash(hash uint32) int {
	lo, hi := 0, l.count()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.hash(m) < hash {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// findStale finds the nearest stale entries below and at or above index,
// not looking further up than it pays (xfs_dir3_leaf_find_stale).
func (l lblock) findStale(index int) (low, high int) {
	for low = index - 1; low >= 0; low-- {
		if l.addr(low) == format.NullDataptr {
			break
		}
	}
	count := l.count()
	for high = index; high < count; high++ {
		if l.addr(high) == format.NullDataptr {
			break
		}
		if low >= 0 && index-low <= high-index {
			break
		}
	}
	return low, high
}

// compactX1 squeezes out all stale entries but the one nearest index,
// returning the new insertion index and where that stale entry went, as
// (low, high) for findEntry (xfs_dir3_leaf_compact_x1).
func (l lblock) compactX1(index int) (newIndex, low, high int) {
	count := l.count()
	low, high = l.findStale(index)
	keep := high
	if low >= 0 && (high == count || index-low <= high-index) {
		keep = low
	}
	to := 0
	from := 0
	for ; from < count; from++ {
		if index == from {
			newIndex = to
		}
		if from != keep && l.addr(from) == format.NullDataptr {
			continue
		}
		if from == keep {
			low, high = to, to
		}
		if from > to {
			copy(l.ents(to, to+1), l.ents(from, from+1))
		}
		to++
	}
	if index == from {
		newIndex = to
	}
	l.setCount(to)
	l.setStale(1)
	if low >= newIndex {
		low = -1
	} else {
		high = to
	}
	return newIndex, low, high
}

// findEntry makes room for a new entry at index, using a stale entry when
// there is one (the nearest, or the one compactX1 kept), and returns the
// position to fill (xfs_dir3_leaf_find_entry).
func (l lblock) findEntry(index int, compacted bool, low, high int) int {
	count := l.count()
	if l.stale() == 0 {
		copy(l.ents(index+1, count+1), l.ents(index, count))
		l.setCount(count + 1)
		return index
	}
	if !compacted {
		low, high = l.findStale(index)
	}
	l.setStale(l.stale() - 1)
	if low >= 0 && (high == count || index-low-1 < high-index) {
		copy(l.ents(low, index-1), l.ents(low+1, index))
		return index - 1
	}
	copy(l.ents(index+1, high+1), l.ents(index, high))
	return index
}

// compact squeezes out every stale entry (xfs_dir3_leaf_compact).
func (l lblock) compact() {
	if l.stale() == 0 {
		return
	}
	count := l.count()
	to := 0
	for from := 0; from < count; from++ {
		if l.addr(from) == format.NullDataptr {
			continue
		}
		if from > to {
			copy(l.ents(to, to+1), l.ents(from, from+1))
		}
		to++
	}
	l.setCount(to)
	l.setStale(0)
}

// fblock is a free-index block ("XDF3"): the longest free region of each
// data block firstdb .. firstdb+nvalid-1, NULLDATAOFF for missing ones.
//
//	0   xfs_dir3_blk_hdr (48)
//	48  firstdb be32, nvalid be32, nused be32, pad be32
//	64  bests[] be16
type fblock []byte

func (f fblock) firstDB() int         { return int(be.Uint32(f[48:])) }
func (f fblock) nvalid() int          { return int(be.Uint32(f[52:])) }
func (f fblock) nused() int           { return int(be.Uint32(f[56:])) }
func (f fblock) setNvalid(n int)      { be.PutUint32(f[52:], uint32(n)) }
func (f fblock) setNused(n int)       { be.PutUint32(f[56:], uint32(n)) }
func (f fblock) best(i int) int       { return int(be.Uint16(f[freeHdrSize+2*i:])) }
func (f fblock) setBest(i int, v int) { be.PutUint16(f[freeHdrSize+2*i:], uint16(v)) }

// initFree formats an empty free-index block for the data blocks from
// firstdb (xfs_dir3_free_get_buf).
func initFree(f fblock, firstdb int, daddr format.Daddr, uuid [16]byte, owner format.Ino) {
	initBlkHdr(f, format.Dir3FreeMagic, daddr, uuid, owner)
	clear(f[48:freeHdrSize])
	be.PutUint32(f[48:], uint32(firstdb))
}
