package format

import (
	"encoding/binary"
)

// Remote blocks: attribute values and symlink targets too large for their
// fork. On v5 every filesystem block of such a value starts with a header.
const (
	AttrRmtMagic = 0x5841524D // "XARM"
	SymlinkMagic = 0x58534C4D // "XSLM"
	RmtHdrSize   = 56
	RmtCRCOff    = 12
	// MaxSymlinkLen is XFS_SYMLINK_MAXLEN.
	MaxSymlinkLen = 1024
)

// RmtHdr is the header shared by remote attr value and symlink blocks.
type RmtHdr struct {
	Magic  uint32
	Offset uint32 // byte offset of this piece within the whole value
	Bytes  uint32 // bytes of payload in this block
	CRC    uint32
	UUID   [16]byte
	Owner  Ino
	Blkno  Daddr
	LSN    LSN
}

// Encode writes the header into b.
func (h *RmtHdr) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b, h.Magic)
	be.PutUint32(b[4:], h.Offset)
	be.PutUint32(b[8:], h.Bytes)
	binary.LittleEndian.PutUint32(b[12:], h.CRC)
	copy(b[16:32], h.UUID[:])
	be.PutUint64(b[32:], uint64(h.Owner))
	be.PutUint64(b[40:], uint64(h.Blkno))
	be.PutUint64(b[48:], uint64(h.LSN))
}

// RmtSpace is the payload capacity of one remote block.
func RmtSpace(blockSize int) int { return blockSize - RmtHdrSize }

// VerifyRmtBlock checks one remote block and returns its payload. wantOff
// is the value offset this block must hold.
func VerifyRmtBlock(g *Geometry, what string, magic uint32, b []byte, blkno Daddr, owner Ino, wantOff uint32) ([]byte, error) {
	if len(b) < RmtHdrSize {
		return nil, Corrupt(what, "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	h := RmtHdr{Magic: be.Uint32(b), Offset: be.Uint32(b[4:]), Bytes: be.Uint32(b[8:]),
		Owner: Ino(be.Uint64(b[32:])), Blkno: Daddr(be.Uint64(b[40:]))}
	copy(h.UUID[:], b[16:32])
	if h.Magic != magic {
		return nil, Corrupt(what, "", "bad magic %#x", h.Magic)
	}
	if err := checkCRC(what, b, RmtCRCOff); err != nil {
		return nil, err
	}
	if err := checkSelf(what, g, h.UUID, h.Blkno, blkno, uint64(h.Owner), uint64(owner)); err != nil {
		return nil, err
	}
	switch {
	case h.Offset != wantOff:
		return nil, Corrupt(what, "", "holds offset %d, want %d", h.Offset, wantOff)
	case int(h.Bytes) > len(b)-RmtHdrSize:
		return nil, Corrupt(what, "", "%d payload bytes do not fit", h.Bytes)
	}
	return b[RmtHdrSize : RmtHdrSize+int(h.Bytes)], nil
}
