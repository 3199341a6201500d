package format

import "encoding/binary"

// Extent is one decoded bmbt record: a run of file blocks mapped to disk.
type Extent struct {
	StartOff   FileOff // br_startoff
	StartBlock FsBlock // br_startblock
	BlockCount uint64  // br_blockcount
	Unwritten  bool    // the extent is allocated but reads as zeros
}

// End is the first file block after the extent.
func (e Extent) End() FileOff { return e.StartOff + FileOff(e.BlockCount) }

// ExtentRecSize is the size of a packed extent record.
const ExtentRecSize = 16

// MaxExtentLen is the largest blockcount one record can hold (21 bits).
const MaxExtentLen = 1<<21 - 1

// DecodeExtent unpacks a 16-byte bmbt record:
//
//	l0: [63] unwritten | [62:9] startoff | [8:0] startblock high bits
//	l1: [63:21] startblock low bits | [20:0] blockcount
func DecodeExtent(b []byte) Extent {
	l0, l1 := binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])
	return Extent{
		Unwritten:  l0>>63 != 0,
		StartOff:   FileOff((l0 >> 9) & (1<<54 - 1)),
		StartBlock: FsBlock((l0&0x1FF)<<43 | l1>>21),
		BlockCount: l1 & (1<<21 - 1),
	}
}

// Encode packs the extent into 16 bytes.
func (e Extent) Encode(b []byte) {
	var l0 uint64
	if e.Unwritten {
		l0 = 1 << 63
	}
	l0 |= (uint64(e.StartOff) & (1<<54 - 1)) << 9
	l0 |= uint64(e.StartBlock) >> 43
	l1 := uint64(e.StartBlock)<<21 | e.BlockCount&(1<<21-1)
	binary.BigEndian.PutUint64(b, l0)
	binary.BigEndian.PutUint64(b[8:], l1)
}

// BmdrHdrSize is the size of the btree root header kept in an inode fork.
const BmdrHdrSize = 4

// BmdrRoot is the root of a bmap btree stored inside an inode fork
// (struct xfs_bmdr_block): level and numrecs, then keys, then pointers at
// the offset that maxrecs keys would end.
type BmdrRoot struct {
	Level   uint16
	NumRecs uint16
	Keys    []FileOff
	Ptrs    []FsBlock
}

// BmdrMaxRecs is how many key/pointer pairs fit in a fork of forkSize bytes.
func BmdrMaxRecs(forkSize int) int { return (forkSize - BmdrHdrSize) / 16 }

// DecodeBmdrRoot parses a btree root from an inode fork.
func DecodeBmdrRoot(fork []byte) (*BmdrRoot, error) {
	if len(fork) < BmdrHdrSize {
		return nil, Corrupt("bmbt root", "", "fork of %d bytes too small", len(fork))
	}
	be := binary.BigEndian
	r := &BmdrRoot{Level: be.Uint16(fork), NumRecs: be.Uint16(fork[2:])}
	maxr := BmdrMaxRecs(len(fork))
	if r.Level == 0 || r.Level >= MaxBtreeLevels {
		return nil, Corrupt("bmbt root", "", "bad level %d", r.Level)
	}
	if r.NumRecs == 0 || int(r.NumRecs) > maxr {
		return nil, Corrupt("bmbt root", "", "%d records, at most %d fit", r.NumRecs, maxr)
	}
	for i := 0; i < int(r.NumRecs); i++ {
		r.Keys = append(r.Keys, FileOff(be.Uint64(fork[BmdrHdrSize+8*i:])))
		r.Ptrs = append(r.Ptrs, FsBlock(be.Uint64(fork[BmdrHdrSize+8*maxr+8*i:])))
	}
	return r, nil
}

// Encode writes the root into a fork of len(fork) bytes.
func (r *BmdrRoot) Encode(fork []byte) {
	be := binary.BigEndian
	be.PutUint16(fork, r.Level)
	be.PutUint16(fork[2:], r.NumRecs)
	maxr := BmdrMaxRecs(len(fork))
	for i := range r.Keys {
		be.PutUint64(fork[BmdrHdrSize+8*i:], uint64(r.Keys[i]))
		be.PutUint64(fork[BmdrHdrSize+8*maxr+8*i:], uint64(r.Ptrs[i]))
	}
}
