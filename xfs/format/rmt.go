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

// VerifyRmtHdr checks what a buffer verifier can check of one remote
// block knowing neither its filesystem nor its value, as
// xfs_attr3_rmt_verify and xfs_symlink_verify do: magic, CRC, its own
// address, and a piece that fits both the block and the largest value of
// its kind. UUID and owner are CheckRmtOwner's to check after each read;
// VerifyRmtBlock checks everything, including the piece's offset.
func VerifyRmtHdr(what string, magic uint32, b []byte, blkno Daddr) (RmtHdr, error) {
	if len(b) < RmtHdrSize {
		return RmtHdr{}, Corrupt(what, "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	h := RmtHdr{Magic: be.Uint32(b), Offset: be.Uint32(b[4:]), Bytes: be.Uint32(b[8:]),
		Owner: Ino(be.Uint64(b[32:])), Blkno: Daddr(be.Uint64(b[40:])), LSN: LSN(be.Uint64(b[48:]))}
	copy(h.UUID[:], b[16:32])
	if h.Magic != magic {
		return h, Corrupt(what, "", "bad magic %#x", h.Magic)
	}
	if err := checkCRC(what, b, RmtCRCOff); err != nil {
		return h, err
	}
	maxLen := MaxAttrValueLen
	if magic == SymlinkMagic {
		maxLen = MaxSymlinkLen
	}
	switch {
	case h.Blkno != blkno:
		return h, Corrupt(what, "", "block claims to live at daddr %d", h.Blkno)
	case int(h.Bytes) > len(b)-RmtHdrSize:
		return h, Corrupt(what, "", "%d payload bytes do not fit", h.Bytes)
	case uint64(h.Offset)+uint64(h.Bytes) > uint64(maxLen):
		return h, Corrupt(what, "", "piece %d+%d beyond the largest value", h.Offset, h.Bytes)
	}
	return h, nil
}

// CheckRmtOwner checks the UUID and owner of a remote block whose header
// VerifyRmtHdr passed.
func CheckRmtOwner(what string, g *Geometry, b []byte, owner Ino) error {
	if [16]byte(b[16:32]) != g.UUID {
		return Corrupt(what, "", "UUID does not match the superblock")
	}
	if o := Ino(binary.BigEndian.Uint64(b[32:])); o != owner {
		return Corrupt(what, "", "owner %d, want %d", o, owner)
	}
	return nil
}

// VerifyRmtBlock checks one remote block whole (VerifyRmtHdr,
// CheckRmtOwner) and returns its payload. wantOff is the value offset
// this block must hold.
func VerifyRmtBlock(g *Geometry, what string, magic uint32, b []byte, blkno Daddr, owner Ino, wantOff uint32) ([]byte, error) {
	h, err := VerifyRmtHdr(what, magic, b, blkno)
	if err != nil {
		return nil, err
	}
	if err := CheckRmtOwner(what, g, b, owner); err != nil {
		return nil, err
	}
	if h.Offset != wantOff {
		return nil, Corrupt(what, "", "holds offset %d, want %d", h.Offset, wantOff)
	}
	return b[RmtHdrSize : RmtHdrSize+int(h.Bytes)], nil
}
