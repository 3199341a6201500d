package format

import (
	"encoding/binary"
	"fmt"
)

// Directory format constants (dir2 with v5 "dir3" headers).
//
// A directory's data fork is one 32 GiB address space per kind of block:
//
//	[0, 32G)   data blocks (XDB3 for a single-block dir, XDD3 otherwise)
//	[32G,64G)  leaf blocks: one leaf1 (0x3DF1), or da nodes (0x3EBE) + leafn (0x3DFF)
//	[64G, ..)  free-index blocks (XDF3)
const (
	Dir3BlockMagic = 0x58444233 // "XDB3"
	Dir3DataMagic  = 0x58444433 // "XDD3"
	Dir3FreeMagic  = 0x58444633 // "XDF3"

	Dir3DataHdrSize = 64
	Dir3DataCRCOff  = 4
	Dir3LeafHdrSize = 64
	Dir3FreeHdrSize = 64
	DirDataFreeTag  = 0xFFFF
	DirBestFreeN    = 3

	DirSpaceSize  = 1 << 35
	DirLeafOffset = 1 * DirSpaceSize
	DirFreeOffset = 2 * DirSpaceSize

	// MaxNameLen bounds directory entry and xattr names.
	MaxNameLen = 255
)

// Directory entry file types (ftype).
const (
	FTUnknown = 0
	FTReg     = 1
	FTDir     = 2
	FTChrdev  = 3
	FTBlkdev  = 4
	FTFifo    = 5
	FTSock    = 6
	FTSymlink = 7
)

// FTypeOfMode maps an inode mode to a directory entry file type.
func FTypeOfMode(mode uint16) uint8 {
	switch mode & SIFMT {
	case SIFREG:
		return FTReg
	case SIFDIR:
		return FTDir
	case SIFCHR:
		return FTChrdev
	case SIFBLK:
		return FTBlkdev
	case SIFIFO:
		return FTFifo
	case SIFSOCK:
		return FTSock
	case SIFLNK:
		return FTSymlink
	}
	return FTUnknown
}

// DirEntry is a decoded directory entry.
type DirEntry struct {
	Name   []byte
	Ino    Ino
	FType  uint8
	Offset uint32 // byte offset in the data space (shortform: the logical offset)
}

// SFDir is a decoded short-form directory.
type SFDir struct {
	Parent  Ino
	I8Count uint8
	Entries []DirEntry
}

// DecodeSFDir parses a short-form directory held in an inode's data fork.
// size is di_size; ftype says whether entries carry a file type byte.
func DecodeSFDir(fork []byte, size int64, ftype bool) (*SFDir, error) {
	const what = "short-form directory"
	if size < 6 || size > int64(len(fork)) {
		return nil, Corrupt(what, "", "size %d outside the %d-byte fork", size, len(fork))
	}
	b := fork[:size]
	count, i8 := int(b[0]), b[1]
	inoLen := 4
	if i8 != 0 {
		inoLen = 8
	}
	if 2+inoLen > len(b) {
		return nil, Corrupt(what, "", "header does not fit")
	}
	// count == 0 with i8count != 0 is an empty directory whose parent
	// needs 8 bytes (xfs_dir2_sf_create with a parent >= 2^32).
	d := &SFDir{I8Count: i8, Parent: sfIno(b[2:], inoLen)}
	p := 2 + inoLen
	lastOff := -1
	for e := 0; e < count; e++ {
		if p+3 > len(b) {
			return nil, Corrupt(what, "", "entry %d starts past the end", e)
		}
		nl := int(b[p])
		off := int(binary.BigEndian.Uint16(b[p+1:]))
		end := p + 3 + nl + inoLen
		if ftype {
			end++
		}
		if nl == 0 || end > len(b) {
			return nil, Corrupt(what, "", "entry %d (name length %d) overruns the fork", e, nl)
		}
		if off <= lastOff {
			return nil, Corrupt(what, "", "entry %d offset %d out of order", e, off)
		}
		lastOff = off
		ent := DirEntry{Name: b[p+3 : p+3+nl], Offset: uint32(off)}
		q := p + 3 + nl
		if ftype {
			ent.FType = b[q]
			q++
		}
		ent.Ino = sfIno(b[q:], inoLen)
		d.Entries = append(d.Entries, ent)
		p = end
	}
	if p != len(b) {
		return nil, Corrupt(what, "", "%d entries end at byte %d of %d", count, p, len(b))
	}
	return d, nil
}

func sfIno(b []byte, n int) Ino {
	if n == 8 {
		return Ino(binary.BigEndian.Uint64(b) & (1<<56 - 1))
	}
	return Ino(binary.BigEndian.Uint32(b))
}

// DirDataEntrySize is the on-disk size of a data entry with a name of n bytes.
func DirDataEntrySize(n int, ftype bool) int {
	s := 8 + 1 + n + 2
	if ftype {
		s++
	}
	return (s + 7) &^ 7
}

// DirDataHdr is struct xfs_dir3_data_hdr.
type DirDataHdr struct {
	Magic    uint32
	CRC      uint32
	Blkno    Daddr
	LSN      LSN
	UUID     [16]byte
	Owner    Ino
	BestFree [DirBestFreeN]DirFree
}

// DirFree is a bestfree slot: a free region's offset and length.
type DirFree struct{ Offset, Length uint16 }

// DecodeDirDataHdr parses the header of a data or single-block directory block.
func DecodeDirDataHdr(b []byte) (*DirDataHdr, error) {
	if len(b) < Dir3DataHdrSize {
		return nil, Corrupt("dir3 data block", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	h := &DirDataHdr{Magic: be.Uint32(b), CRC: binary.LittleEndian.Uint32(b[4:]), Blkno: Daddr(be.Uint64(b[8:])),
		LSN: LSN(be.Uint64(b[16:])), Owner: Ino(be.Uint64(b[40:]))}
	copy(h.UUID[:], b[24:40])
	for i := range h.BestFree {
		h.BestFree[i] = DirFree{be.Uint16(b[48+4*i:]), be.Uint16(b[50+4*i:])}
	}
	return h, nil
}

// Encode writes the header into b.
func (h *DirDataHdr) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b, h.Magic)
	binary.LittleEndian.PutUint32(b[4:], h.CRC)
	be.PutUint64(b[8:], uint64(h.Blkno))
	be.PutUint64(b[16:], uint64(h.LSN))
	copy(b[24:40], h.UUID[:])
	be.PutUint64(b[40:], uint64(h.Owner))
	for i, f := range h.BestFree {
		be.PutUint16(b[48+4*i:], f.Offset)
		be.PutUint16(b[50+4*i:], f.Length)
	}
	be.PutUint32(b[60:], 0)
}

// DirBlockTail is the trailer of a single-block directory: the number of
// leaf entries before it and how many of them are stale.
type DirBlockTail struct{ Count, Stale uint32 }

// DirLeafEntry maps a name hash to a data entry address (offset / 8).
type DirLeafEntry struct{ HashVal, Address uint32 }

// NullDataptr marks a stale leaf entry.
const NullDataptr = 0

// DirBlockLeaf returns the leaf entries and the end of the data region of a
// single-block directory ("XDB3").
func DirBlockLeaf(b []byte) ([]DirLeafEntry, int, error) {
	const what = "dir3 block"
	be := binary.BigEndian
	n := len(b)
	if n < Dir3DataHdrSize+8 {
		return nil, 0, Corrupt(what, "", "%d bytes is too short", n)
	}
	t := DirBlockTail{be.Uint32(b[n-8:]), be.Uint32(b[n-4:])}
	if t.Stale > t.Count || uint64(t.Count)*8+8 > uint64(n-Dir3DataHdrSize) {
		return nil, 0, Corrupt(what, "", "tail count %d stale %d do not fit", t.Count, t.Stale)
	}
	start := n - 8 - int(t.Count)*8
	ents := make([]DirLeafEntry, t.Count)
	for i := range ents {
		ents[i] = DirLeafEntry{be.Uint32(b[start+8*i:]), be.Uint32(b[start+8*i+4:])}
	}
	return ents, start, nil
}

// DecodeDirData walks the entries of a data block region b[Dir3DataHdrSize:end]
// and calls fn for every live entry. blockOff is the byte offset of the
// block in the directory's data space, so entries report their address.
func DecodeDirData(b []byte, end int, blockOff uint64, ftype bool, fn func(DirEntry) error) error {
	const what = "dir3 data block"
	be := binary.BigEndian
	p := Dir3DataHdrSize
	for p < end {
		if p+4 > end {
			return Corrupt(what, "", "entry at %d runs past the data region", p)
		}
		if be.Uint16(b[p:]) == DirDataFreeTag {
			l := int(be.Uint16(b[p+2:]))
			if l < 8 || l%8 != 0 || p+l > end {
				return Corrupt(what, "", "free region at %d has bad length %d", p, l)
			}
			if int(be.Uint16(b[p+l-2:])) != p {
				return Corrupt(what, "", "free region at %d has a bad tag", p)
			}
			p += l
			continue
		}
		if p+11 > end {
			return Corrupt(what, "", "entry at %d runs past the data region", p)
		}
		nl := int(b[p+8])
		size := DirDataEntrySize(nl, ftype)
		if nl == 0 || p+size > end {
			return Corrupt(what, "", "entry at %d with name length %d runs past the data region", p, nl)
		}
		if int(be.Uint16(b[p+size-2:])) != p {
			return Corrupt(what, "", "entry at %d has a bad tag", p)
		}
		e := DirEntry{Ino: Ino(be.Uint64(b[p:])), Name: b[p+9 : p+9+nl], Offset: uint32(blockOff) + uint32(p)}
		if ftype {
			e.FType = b[p+9+nl]
		}
		if err := fn(e); err != nil {
			return err
		}
		p += size
	}
	if p != end {
		return Corrupt(what, "", "entries overrun the data region")
	}
	return nil
}

// DirLeafHdr is the count/stale part of a dir3 leaf header after blkinfo.
type DirLeafHdr struct {
	Info  *DaBlkinfo
	Count uint16
	Stale uint16
}

// DecodeDirLeaf parses a leaf1 or leafn block's entries. For leaf1 blocks the
// bests table at the end of the block limits where entries may go.
func DecodeDirLeaf(b []byte, info *DaBlkinfo) (*DirLeafHdr, []DirLeafEntry, error) {
	const what = "dir3 leaf block"
	be := binary.BigEndian
	if len(b) < Dir3LeafHdrSize {
		return nil, nil, Corrupt(what, "", "%d bytes is too short", len(b))
	}
	h := &DirLeafHdr{Info: info, Count: be.Uint16(b[56:]), Stale: be.Uint16(b[58:])}
	limit := len(b)
	if info.Magic == Dir3Leaf1Magic {
		bestCount := int(be.Uint32(b[len(b)-4:]))
		limit = len(b) - 4 - 2*bestCount
		if limit < Dir3LeafHdrSize {
			return nil, nil, Corrupt(what, "", "bests table of %d entries does not fit", bestCount)
		}
	}
	if Dir3LeafHdrSize+int(h.Count)*8 > limit || h.Stale > h.Count {
		return nil, nil, Corrupt(what, "", "%d entries (%d stale) do not fit", h.Count, h.Stale)
	}
	ents := make([]DirLeafEntry, h.Count)
	for i := range ents {
		off := Dir3LeafHdrSize + 8*i
		ents[i] = DirLeafEntry{be.Uint32(b[off:]), be.Uint32(b[off+4:])}
		if i > 0 && ents[i].HashVal < ents[i-1].HashVal {
			return nil, nil, Corrupt(what, "", "hash order broken at entry %d", i)
		}
	}
	return h, ents, nil
}

// DirDataBlockAt returns the data-space byte offset of a dataptr address.
func DirAddrToOffset(addr uint32) uint64 { return uint64(addr) << 3 }

// String renders an entry for debugging.
func (e DirEntry) String() string { return fmt.Sprintf("%q->%d", e.Name, e.Ino) }

// VerifyDirDataBlock checks a whole directory data or single-block
// directory block (CRC over the full directory block).
func VerifyDirDataBlock(g *Geometry, b []byte, blkno Daddr, owner Ino) (*DirDataHdr, error) {
	const what = "dir3 data block"
	h, err := DecodeDirDataHdr(b)
	if err != nil {
		return nil, err
	}
	if h.Magic != Dir3BlockMagic && h.Magic != Dir3DataMagic {
		return nil, Corrupt(what, "", "bad magic %#x", h.Magic)
	}
	if err := checkCRC(what, b, Dir3DataCRCOff); err != nil {
		return nil, err
	}
	if err := checkSelf(what, g, h.UUID, h.Blkno, blkno, uint64(h.Owner), uint64(owner)); err != nil {
		return nil, err
	}
	return h, nil
}

// DirFreeHdr is struct xfs_dir3_free_hdr: a free-index block that records
// the longest free region (bests) of each data block in its range.
type DirFreeHdr struct {
	Magic   uint32
	CRC     uint32
	Blkno   Daddr
	LSN     LSN
	UUID    [16]byte
	Owner   Ino
	FirstDB uint32 // firstdb: the first data block this block describes
	NValid  uint32 // nvalid: entries in bests[]
	NUsed   uint32 // nused: entries that are not NullDirBest
}

// NullDirBest marks a data block that no longer exists.
const NullDirBest = 0xFFFF

// DirFreeMaxBests is how many bests a free-index block of dirBlkSize holds.
func DirFreeMaxBests(dirBlkSize int) int { return (dirBlkSize - Dir3FreeHdrSize) / 2 }

// VerifyDirFree checks a free-index block and returns its header and bests.
func VerifyDirFree(g *Geometry, b []byte, blkno Daddr, owner Ino) (*DirFreeHdr, []uint16, error) {
	const what = "dir3 free block"
	if len(b) < Dir3FreeHdrSize {
		return nil, nil, Corrupt(what, "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	h := &DirFreeHdr{Magic: be.Uint32(b), CRC: binary.LittleEndian.Uint32(b[4:]), Blkno: Daddr(be.Uint64(b[8:])),
		LSN: LSN(be.Uint64(b[16:])), Owner: Ino(be.Uint64(b[40:])),
		FirstDB: be.Uint32(b[48:]), NValid: be.Uint32(b[52:]), NUsed: be.Uint32(b[56:])}
	copy(h.UUID[:], b[24:40])
	if h.Magic != Dir3FreeMagic {
		return nil, nil, Corrupt(what, "", "bad magic %#x", h.Magic)
	}
	if err := checkCRC(what, b, Dir3DataCRCOff); err != nil {
		return nil, nil, err
	}
	maxBests := DirFreeMaxBests(len(b))
	if err := checkSelf(what, g, h.UUID, h.Blkno, blkno, uint64(h.Owner), uint64(owner)); err != nil {
		return nil, nil, err
	}
	switch {
	case int(h.NValid) > maxBests || h.NUsed > h.NValid || h.FirstDB%uint32(maxBests) != 0:
		return nil, nil, Corrupt(what, "", "firstdb %d nvalid %d nused %d out of range", h.FirstDB, h.NValid, h.NUsed)
	}
	bests := make([]uint16, h.NValid)
	used := uint32(0)
	for i := range bests {
		bests[i] = be.Uint16(b[Dir3FreeHdrSize+2*i:])
		if bests[i] != NullDirBest {
			used++
		}
	}
	if used != h.NUsed {
		return nil, nil, Corrupt(what, "", "nused %d but %d bests are in use", h.NUsed, used)
	}
	return h, bests, nil
}
