package attr

import (
	"bytes"
	"encoding/binary"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Attribute leaf block (xfs_attr3_leafblock), one filesystem block:
//
//	0    xfs_da3_blkinfo (forw, back, magic 0x3BEE, crc, blkno, lsn, uuid, owner)
//	56   count  usedbytes  firstused  holes pad   freemap[3] (base, size)   pad2
//	80   entries[count]: hashval be32, nameidx be16, flags u8, pad u8  (hash order)
//	     ... free space, described (partly) by the freemap ...
//	firstused ... name records packed towards the block end, each 4-byte aligned:
//	     local:  valuelen be16, namelen u8, name, value
//	     remote: valueblk be32, valuelen be32, namelen u8, name
//
// firstused is stored as 0 when it equals a 64 KiB block size. Removing a
// name record that is not the lowest one leaves a hole: holes is set and
// the next add that does not find room in the freemap compacts the block.
const (
	leafHdrSize = format.Attr3LeafHdrSize
	leafEntSize = 8
	leafMapSize = 3   // XFS_ATTR_LEAF_MAPSIZE
	sfEntMax    = 255 // XFS_ATTR_SF_ENTSIZE_MAX: short form needs namelen and valuelen below it
)

type freeRegion struct{ base, size int }

// leafHdr is the in-core leaf header (xfs_attr3_icleaf_hdr).
type leafHdr struct {
	forw, back uint32
	count      int
	usedbytes  int
	firstused  int // the block size when the block holds no names
	holes      bool
	freemap    [leafMapSize]freeRegion
}

type leafEnt struct {
	hash  uint32
	idx   int // nameidx
	flags uint8
}

func leafHdrOf(b []byte) leafHdr {
	be := binary.BigEndian
	h := leafHdr{
		forw: be.Uint32(b), back: be.Uint32(b[4:]),
		count: int(be.Uint16(b[56:])), usedbytes: int(be.Uint16(b[58:])),
		firstused: int(be.Uint16(b[60:])), holes: b[62] != 0,
	}
	if h.firstused == 0 {
		h.firstused = len(b) // XFS_ATTR3_LEAF_NULLOFF: only a 64 KiB block's end
	}
	for i := range h.freemap {
		h.freemap[i] = freeRegion{int(be.Uint16(b[64+4*i:])), int(be.Uint16(b[66+4*i:]))}
	}
	return h
}

func putLeafHdr(b []byte, h *leafHdr) {
	be := binary.BigEndian
	be.PutUint32(b, h.forw)
	be.PutUint32(b[4:], h.back)
	be.PutUint16(b[56:], uint16(h.count))
	be.PutUint16(b[58:], uint16(h.usedbytes))
	fu := h.firstused
	if fu > 0xFFFF {
		fu = 0
	}
	be.PutUint16(b[60:], uint16(fu))
	b[62] = 0
	if h.holes {
		b[62] = 1
	}
	b[63] = 0
	for i, r := range h.freemap {
		be.PutUint16(b[64+4*i:], uint16(r.base))
		be.PutUint16(b[66+4*i:], uint16(r.size))
	}
}

func entOff(i int) int { return leafHdrSize + leafEntSize*i }

func leafEntOf(b []byte, i int) leafEnt {
	o := entOff(i)
	return leafEnt{binary.BigEndian.Uint32(b[o:]), int(binary.BigEndian.Uint16(b[o+4:])), b[o+6]}
}

func putLeafEnt(b []byte, i int, e leafEnt) {
	o := entOff(i)
	binary.BigEndian.PutUint32(b[o:], e.hash)
	binary.BigEndian.PutUint16(b[o+4:], uint16(e.idx))
	b[o+6], b[o+7] = e.flags, 0
}

// leafCount is the header's count, without decoding the rest.
func leafCount(b []byte) int { return int(binary.BigEndian.Uint16(b[56:])) }

func leafLastHash(b []byte) (uint32, int) {
	n := leafCount(b)
	if n == 0 {
		return 0, 0
	}
	return leafEntOf(b, n-1).hash, n
}

// Name record sizes (xfs_attr_leaf_entsize_local/_remote): the fixed part
// of the local record is 3 bytes, that of the remote one 11 bytes (the
// C struct's sizeof, 12, minus its one-byte name array), rounded up to 4.
func entsizeLocal(nameLen, valueLen int) int { return (3 + nameLen + valueLen + 3) &^ 3 }
func entsizeRemote(nameLen int) int          { return (11 + nameLen + 3) &^ 3 }

// localMax is xfs_attr_leaf_entsize_local_max: a local record must stay
// below 3/4 of the block, else the value goes to remote blocks.
func localMax(bs int) int { return bs>>1 + bs>>2 }

// newEntsize is xfs_attr_leaf_newentsize: the record size of a new entry
// and whether its value is stored locally.
func newEntsize(bs, nameLen, valueLen int) (int, bool) {
	if sz := entsizeLocal(nameLen, valueLen); sz < localMax(bs) {
		return sz, true
	}
	return entsizeRemote(nameLen), false
}

// entsize is the size of the name record of entry i.
func entsize(b []byte, i int) int {
	e := leafEntOf(b, i)
	if e.flags&format.AttrLocal != 0 {
		return entsizeLocal(int(b[e.idx+2]), int(binary.BigEndian.Uint16(b[e.idx:])))
	}
	return entsizeRemote(int(b[e.idx+8]))
}

// entName returns the name of entry i.
func entName(b []byte, i int) []byte {
	e := leafEntOf(b, i)
	if e.flags&format.AttrLocal != 0 {
		n := int(b[e.idx+2])
		return b[e.idx+3 : e.idx+3+n]
	}
	n := int(b[e.idx+8])
	return b[e.idx+9 : e.idx+9+n]
}

// entLocalValue returns the value of local entry i.
func entLocalValue(b []byte, i int) []byte {
	e := leafEntOf(b, i)
	vl, nl := int(binary.BigEndian.Uint16(b[e.idx:])), int(b[e.idx+2])
	return b[e.idx+3+nl : e.idx+3+nl+vl]
}

// entRemote returns the value block and length of remote entry i.
func entRemote(b []byte, i int) (blk uint32, length int) {
	e := leafEntOf(b, i)
	return binary.BigEndian.Uint32(b[e.idx:]), int(binary.BigEndian.Uint32(b[e.idx+4:]))
}

func setEntRemote(b []byte, i int, blk uint32, length int) {
	e := leafEntOf(b, i)
	binary.BigEndian.PutUint32(b[e.idx:], blk)
	binary.BigEndian.PutUint32(b[e.idx+4:], uint32(length))
}

// matchMask selects the flag bits that must agree for a name to match:
// the namespace and the INCOMPLETE bit (xfs_attr_match outside recovery),
// so a half-built entry never matches a normal lookup.
const matchMask = format.AttrRoot | format.AttrSecure | format.AttrParent | format.AttrIncomplete

// initLeaf formats b as an empty leaf (xfs_attr3_leaf_create).
func initLeaf(b []byte, g *format.Geometry, daddr format.Daddr, owner format.Ino) {
	clear(b)
	dabtree.InitHeader(b, leafHdrSize, format.Attr3LeafMagic, daddr, g.UUID, owner)
	h := leafHdr{firstused: len(b)}
	h.freemap[0] = freeRegion{leafHdrSize, len(b) - leafHdrSize}
	putLeafHdr(b, &h)
}

// leafLookup is xfs_attr3_leaf_lookup_int: it returns the index of the
// entry named (filter, name) with hash, or, when absent, the index where
// such an entry is inserted: after every entry of a smaller or equal hash.
func leafLookup(b []byte, hash uint32, filter uint8, name []byte) (int, bool) {
	count := leafHdrOf(b).count
	lo, hi := 0, count
	for lo < hi { // first entry with hashval >= hash
		mid := (lo + hi) / 2
		if leafEntOf(b, mid).hash < hash {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := lo
	for ; i < count; i++ {
		e := leafEntOf(b, i)
		if e.hash != hash {
			break
		}
		if e.flags&matchMask == filter&matchMask && bytes.Equal(entName(b, i), name) {
			return i, true
		}
	}
	return i, false
}

// newEnt describes an entry being added to a leaf.
type newEnt struct {
	hash       uint32
	flags      uint8 // namespace bits, plus AttrIncomplete while a replace is under way
	name       []byte
	value      []byte
	size       int  // record size in the block
	local      bool // value stored in the record
	incomplete bool
}

// leafAdd is xfs_attr3_leaf_add: insert e at index if the block has room,
// compacting it first when its free space is fragmented. It reports false
// when the entry does not fit; the block may have been compacted anyway.
func leafAdd(b []byte, e *newEnt, index int) bool {
	h := leafHdrOf(b)
	tablesize := (h.count+1)*leafEntSize + leafHdrSize
	sum := 0
	for i := leafMapSize - 1; i >= 0; i-- {
		if tablesize > h.firstused {
			sum += h.freemap[i].size
			continue
		}
		if h.freemap[i].size == 0 {
			continue
		}
		need := e.size
		if h.freemap[i].base < h.firstused {
			need += leafEntSize // the region also has to hold the new table slot
		}
		if h.freemap[i].size >= need {
			leafAddWork(b, &h, e, index, i)
			putLeafHdr(b, &h)
			return true
		}
		sum += h.freemap[i].size
	}
	// Without holes compaction cannot find more than the freemap has.
	if !h.holes && sum < e.size {
		return false
	}
	leafCompact(b, &h)
	// Compaction leaves one free region, in freemap[0].
	if h.freemap[0].size < e.size+leafEntSize {
		putLeafHdr(b, &h)
		return false
	}
	leafAddWork(b, &h, e, index, 0)
	putLeafHdr(b, &h)
	return true
}

// leafAddWork is xfs_attr3_leaf_add_work: open a table slot at index and
// carve the name record from the end of free region mapIndex.
func leafAddWork(b []byte, h *leafHdr, e *newEnt, index, mapIndex int) {
	if index < h.count {
		copy(b[entOff(index+1):entOff(h.count+1)], b[entOff(index):entOff(h.count)])
	}
	h.count++

	fm := &h.freemap[mapIndex]
	fm.size -= e.size
	ent := leafEnt{hash: e.hash, idx: fm.base + fm.size, flags: e.flags &^ format.AttrIncomplete}
	if e.local {
		ent.flags |= format.AttrLocal
	}
	if e.incomplete || !e.local {
		// A remote value is written after the entry; until then (and for
		// the new half of a replace) the entry must stay invisible.
		ent.flags |= format.AttrIncomplete
	}
	putLeafEnt(b, index, ent)

	rec := b[ent.idx : ent.idx+e.size]
	clear(rec)
	if e.local {
		binary.BigEndian.PutUint16(rec, uint16(len(e.value)))
		rec[2] = byte(len(e.name))
		copy(rec[3:], e.name)
		copy(rec[3+len(e.name):], e.value)
	} else {
		// valueblk and valuelen stay 0 until the value blocks exist.
		rec[8] = byte(len(e.name))
		copy(rec[9:], e.name)
	}

	if ent.idx < h.firstused {
		h.firstused = ent.idx
	}
	// The entry table grew by one slot: a free region that started at its
	// old end moves up, and so does one the new slot ran into (the freemap
	// is not a full index of free space, so that can happen). A region left
	// empty is cleared and the block marked for compaction, so that no
	// empty region lingers at an address another region may reach (both
	// as in the kernel since "xfs: fix freemap adjustments when adding
	// xattrs to leaf blocks" and "xfs: delete attr leaf freemap entries
	// when empty", 2026).
	newEnd := entOff(h.count)
	oldEnd := newEnd - leafEntSize
	for i := range h.freemap {
		fm := &h.freemap[i]
		diff := 0
		switch {
		case fm.base == oldEnd:
			diff = leafEntSize
		case fm.size > 0 && fm.base < newEnd:
			diff = newEnd - fm.base
		}
		if diff != 0 {
			fm.base += diff
			fm.size -= min(fm.size, diff)
		}
		if fm.size == 0 && fm.base > 0 {
			fm.base = 0
			h.holes = true
		}
	}
	h.usedbytes += e.size
}

// leafCompact is xfs_attr3_leaf_compact: rewrite the block with its name
// records packed at the end, in entry order, and one free region.
func leafCompact(b []byte, h *leafHdr) {
	src := append([]byte(nil), b...)
	clear(b[leafHdrSize:])
	srcHdr := *h
	h.firstused = len(b)
	h.usedbytes, h.count, h.holes = 0, 0, false
	h.freemap = [leafMapSize]freeRegion{{leafHdrSize, len(b) - leafHdrSize}}
	putLeafHdr(b, h)
	leafMoveEnts(src, &srcHdr, 0, b, h, 0, srcHdr.count)
}

// leafMoveEnts is xfs_attr3_leaf_moveents: move count entries starting at
// srcStart of src to dstStart of dst, packing their records below dst's
// firstused. dst gets a single free region; src is marked as having holes.
// Only moves of a tail of src are ever needed (splits, joins, compaction).
func leafMoveEnts(src []byte, hs *leafHdr, srcStart int, dst []byte, hd *leafHdr, dstStart, count int) {
	if count == 0 {
		return
	}
	if dstStart < hd.count {
		copy(dst[entOff(dstStart+count):entOff(hd.count+count)], dst[entOff(dstStart):entOff(hd.count)])
	}
	for i := 0; i < count; i++ {
		si := srcStart + i
		e := leafEntOf(src, si)
		sz := entsize(src, si)
		hd.firstused -= sz
		putLeafEnt(dst, dstStart+i, leafEnt{e.hash, hd.firstused, e.flags})
		copy(dst[hd.firstused:hd.firstused+sz], src[e.idx:e.idx+sz])
		clear(src[e.idx : e.idx+sz])
		hs.usedbytes -= sz
		hd.usedbytes += sz
		hd.count++
	}
	// Close the gap in src's table and clear the vacated slots.
	oldCount := hs.count
	hs.count -= count
	if srcStart+count < oldCount {
		copy(src[entOff(srcStart):entOff(hs.count)], src[entOff(srcStart+count):entOff(oldCount)])
	}
	clear(src[entOff(hs.count):entOff(oldCount)])

	hd.freemap[0].base = leafHdrSize + hd.count*leafEntSize
	hd.freemap[0].size = hd.firstused - hd.freemap[0].base
	hd.freemap[1], hd.freemap[2] = freeRegion{}, freeRegion{}
	hs.holes = true
}

// leafRemove is xfs_attr3_leaf_remove: delete entry index, returning its
// space to the freemap (merging with neighbouring regions or replacing the
// smallest one). (The kernel also reports whether the block fell under 37%
// full, but its caller ignores that and always tries a join.)
func leafRemove(b []byte, index int) {
	h := leafHdrOf(b)
	e := leafEntOf(b, index)
	tablesize := h.count*leafEntSize + leafHdrSize
	sz := entsize(b, index)

	smallest := leafMapSize - 1
	tmp := h.freemap[0].size
	before, after := -1, -1
	for i := range h.freemap {
		fm := &h.freemap[i]
		if fm.base == tablesize { // the table shrinks by one slot
			fm.base -= leafEntSize
			fm.size += leafEntSize
		}
		switch {
		case fm.base+fm.size == e.idx:
			before = i
		case fm.base == e.idx+sz:
			after = i
		case fm.size < tmp:
			tmp = fm.size
			smallest = i
		}
	}
	switch {
	case before >= 0 && after >= 0:
		h.freemap[before].size += sz + h.freemap[after].size
		h.freemap[after] = freeRegion{}
	case before >= 0:
		h.freemap[before].size += sz
	case after >= 0:
		h.freemap[after].base = e.idx
		h.freemap[after].size += sz
	default:
		if h.freemap[smallest].size < sz {
			h.freemap[smallest] = freeRegion{e.idx, sz}
		}
	}

	wasFirst := e.idx == h.firstused
	clear(b[e.idx : e.idx+sz])
	h.usedbytes -= sz
	copy(b[entOff(index):entOff(h.count-1)], b[entOff(index+1):entOff(h.count)])
	h.count--
	clear(b[entOff(h.count):entOff(h.count+1)])

	if wasFirst {
		// The lowest record went: find the new lowest; no hole is left.
		fu := len(b)
		for i := 0; i < h.count; i++ {
			fu = min(fu, leafEntOf(b, i).idx)
		}
		h.firstused = fu
	} else {
		h.holes = true
	}
	putLeafHdr(b, &h)
}

// allFit is xfs_attr_shortform_allfit: whether every complete entry of
// the leaf could live in a short-form fork. It returns the fork offset to
// use, -1 when the leaf holds nothing and the fork can go (data fork not
// a btree), or 0 when the entries do not fit in short form.
func allFit(b []byte, f Fork) int {
	h := leafHdrOf(b)
	size := format.AttrSFHdrSize
	for i := 0; i < h.count; i++ {
		e := leafEntOf(b, i)
		if e.flags&format.AttrIncomplete != 0 {
			continue
		}
		if e.flags&format.AttrLocal == 0 {
			return 0
		}
		nl, vl := int(b[e.idx+2]), int(binary.BigEndian.Uint16(b[e.idx:]))
		if nl >= sfEntMax || vl >= sfEntMax {
			return 0
		}
		size += 3 + nl + vl
	}
	dataFmt, dataBytes := f.DataFork()
	if dataFmt != format.FmtBtree && size == format.AttrSFHdrSize {
		return -1
	}
	return ShortformFit(f.Geometry(), f.ForkOff(), dataFmt, dataBytes, size)
}
