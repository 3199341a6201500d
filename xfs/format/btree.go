package format

import (
	"bytes"
	"encoding/binary"
)

// B+tree block magics (v5).
const (
	BnobtMagic    = 0x41423342 // "AB3B"
	CntbtMagic    = 0x41423343 // "AB3C"
	InobtMagic    = 0x49414233 // "IAB3"
	FinobtMagic   = 0x46494233 // "FIB3"
	RefcountMagic = 0x52334643 // "R3FC"
	RmapMagic     = 0x524D4233 // "RMB3"
	BmbtMagic     = 0x424D4133 // "BMA3"

	ShortBlockHdrSize = 56
	LongBlockHdrSize  = 72
	ShortBlockCRCOff  = 52
	LongBlockCRCOff   = 64

	// MaxBtreeLevels bounds every tree walk; XFS trees are far shallower.
	MaxBtreeLevels = 9
)

// BtreeBlock is the header of a short (AG) or long (bmbt) form v5 btree block.
// Sibling and owner fields are widened to 64 bits for both forms.
type BtreeBlock struct {
	Magic    uint32
	Level    uint16
	NumRecs  uint16
	LeftSib  uint64 // AgBlock (short) or FsBlock (long); all ones = none
	RightSib uint64
	Blkno    Daddr
	LSN      LSN
	UUID     [16]byte
	Owner    uint64 // AG number (short) or inode (long)
	CRC      uint32
	Long     bool
}

// HdrSize returns the header size of the block's form.
func (h *BtreeBlock) HdrSize() int {
	if h.Long {
		return LongBlockHdrSize
	}
	return ShortBlockHdrSize
}

// NullSib is the "no sibling" value of the block's form.
func (h *BtreeBlock) NullSib() uint64 {
	if h.Long {
		return uint64(NullFsBlock)
	}
	return uint64(NullAgBlock)
}

// DecodeBtreeBlock parses the header of a btree block.
func DecodeBtreeBlock(b []byte, long bool) (BtreeBlock, error) {
	be := binary.BigEndian
	h := BtreeBlock{Long: long}
	if long {
		if len(b) < LongBlockHdrSize {
			return BtreeBlock{}, Corrupt("btree block", "", "%d bytes is too short", len(b))
		}
		h.Magic, h.Level, h.NumRecs = be.Uint32(b[0:]), be.Uint16(b[4:]), be.Uint16(b[6:])
		h.LeftSib, h.RightSib = be.Uint64(b[8:]), be.Uint64(b[16:])
		h.Blkno, h.LSN = Daddr(be.Uint64(b[24:])), LSN(be.Uint64(b[32:]))
		copy(h.UUID[:], b[40:56])
		h.Owner = be.Uint64(b[56:])
		h.CRC = binary.LittleEndian.Uint32(b[64:])
		return h, nil
	}
	if len(b) < ShortBlockHdrSize {
		return BtreeBlock{}, Corrupt("btree block", "", "%d bytes is too short", len(b))
	}
	h.Magic, h.Level, h.NumRecs = be.Uint32(b[0:]), be.Uint16(b[4:]), be.Uint16(b[6:])
	h.LeftSib, h.RightSib = widenShortSib(be.Uint32(b[8:])), widenShortSib(be.Uint32(b[12:]))
	h.Blkno, h.LSN = Daddr(be.Uint64(b[16:])), LSN(be.Uint64(b[24:]))
	copy(h.UUID[:], b[32:48])
	h.Owner = uint64(be.Uint32(b[48:]))
	h.CRC = binary.LittleEndian.Uint32(b[52:])
	return h, nil
}

func widenShortSib(v uint32) uint64 { return uint64(v) }

// Encode writes the header into b.
func (h *BtreeBlock) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[0:], h.Magic)
	be.PutUint16(b[4:], h.Level)
	be.PutUint16(b[6:], h.NumRecs)
	if h.Long {
		be.PutUint64(b[8:], h.LeftSib)
		be.PutUint64(b[16:], h.RightSib)
		be.PutUint64(b[24:], uint64(h.Blkno))
		be.PutUint64(b[32:], uint64(h.LSN))
		copy(b[40:56], h.UUID[:])
		be.PutUint64(b[56:], h.Owner)
		binary.LittleEndian.PutUint32(b[64:], h.CRC)
		be.PutUint32(b[68:], 0)
		return
	}
	be.PutUint32(b[8:], uint32(h.LeftSib))
	be.PutUint32(b[12:], uint32(h.RightSib))
	be.PutUint64(b[16:], uint64(h.Blkno))
	be.PutUint64(b[24:], uint64(h.LSN))
	copy(b[32:48], h.UUID[:])
	be.PutUint32(b[48:], uint32(h.Owner))
	binary.LittleEndian.PutUint32(b[52:], h.CRC)
}

// BtreeShape describes one kind of btree: its magic, form and record sizes.
type BtreeShape struct {
	Name   string
	Magic  uint32
	Long   bool
	RecLen int
	KeyLen int
	PtrLen int
}

// The btree kinds this engine reads.
var (
	BnobtShape    = BtreeShape{"bnobt", BnobtMagic, false, 8, 8, 4}
	CntbtShape    = BtreeShape{"cntbt", CntbtMagic, false, 8, 8, 4}
	InobtShape    = BtreeShape{"inobt", InobtMagic, false, 16, 4, 4}
	FinobtShape   = BtreeShape{"finobt", FinobtMagic, false, 16, 4, 4}
	RefcountShape = BtreeShape{"refcountbt", RefcountMagic, false, 12, 4, 4}
	BmbtShape     = BtreeShape{"bmbt", BmbtMagic, true, 16, 8, 8}
)

// MaxRecs returns how many records (leaf) or key/pointer pairs (node) fit
// in a block of blockSize bytes.
func (s *BtreeShape) MaxRecs(blockSize int, leaf bool) int {
	hdr := ShortBlockHdrSize
	if s.Long {
		hdr = LongBlockHdrSize
	}
	if leaf {
		return (blockSize - hdr) / s.RecLen
	}
	return (blockSize - hdr) / (s.KeyLen + s.PtrLen)
}

// VerifyBtreeBlock checks a btree block's CRC and header. owner is the AG
// number (short form) or the inode (long form) the block must belong to.
func VerifyBtreeBlock(g *Geometry, s *BtreeShape, b []byte, blkno Daddr, owner uint64) (*BtreeBlock, error) {
	crcOff := ShortBlockCRCOff
	if s.Long {
		crcOff = LongBlockCRCOff
	}
	if err := checkCRC(s.Name+" block", b, crcOff); err != nil {
		return nil, err
	}
	h, err := DecodeBtreeBlock(b, s.Long)
	if err != nil {
		return nil, err
	}
	what := s.Name + " block"
	switch {
	case h.Magic != s.Magic:
		return nil, Corrupt(what, "", "bad magic %#x, want %#x", h.Magic, s.Magic)
	case !bytes.Equal(h.UUID[:], g.UUID[:]):
		return nil, Corrupt(what, "", "UUID does not match the superblock")
	case h.Blkno != blkno:
		return nil, Corrupt(what, "", "block claims to live at daddr %d", h.Blkno)
	case h.Owner != owner:
		return nil, Corrupt(what, "", "owner %d, want %d", h.Owner, owner)
	case h.Level >= MaxBtreeLevels:
		return nil, Corrupt(what, "", "level %d too deep", h.Level)
	case int(h.NumRecs) > s.MaxRecs(len(b), h.Level == 0):
		return nil, Corrupt(what, "", "%d records exceed the block's capacity", h.NumRecs)
	}
	return &h, nil
}

// BtreeRec returns record i of a leaf block.
func (s *BtreeShape) Rec(b []byte, i int) []byte {
	off := ShortBlockHdrSize
	if s.Long {
		off = LongBlockHdrSize
	}
	off += i * s.RecLen
	return b[off : off+s.RecLen]
}

// Key returns key i of a node block.
func (s *BtreeShape) Key(b []byte, i int) []byte {
	off := ShortBlockHdrSize
	if s.Long {
		off = LongBlockHdrSize
	}
	off += i * s.KeyLen
	return b[off : off+s.KeyLen]
}

// Ptr returns pointer i of a node block; pointers follow maxrecs keys.
func (s *BtreeShape) Ptr(b []byte, i int) uint64 {
	hdr := ShortBlockHdrSize
	if s.Long {
		hdr = LongBlockHdrSize
	}
	off := hdr + s.MaxRecs(len(b), false)*s.KeyLen + i*s.PtrLen
	if s.PtrLen == 8 {
		return binary.BigEndian.Uint64(b[off:])
	}
	return uint64(binary.BigEndian.Uint32(b[off:]))
}

// AllocRec is a bnobt/cntbt record: a free extent.
type AllocRec struct {
	StartBlock AgBlock // ar_startblock
	BlockCount uint32  // ar_blockcount
}

// DecodeAllocRec parses an 8-byte free-space record.
func DecodeAllocRec(b []byte) AllocRec {
	return AllocRec{AgBlock(binary.BigEndian.Uint32(b)), binary.BigEndian.Uint32(b[4:])}
}

// Encode writes the record into 8 bytes.
func (r AllocRec) Encode(b []byte) {
	binary.BigEndian.PutUint32(b, uint32(r.StartBlock))
	binary.BigEndian.PutUint32(b[4:], r.BlockCount)
}

// InodesPerChunk is the number of inodes an inobt record describes.
const InodesPerChunk = 64

// InobtRec is an inobt/finobt record for a 64-inode chunk (sparse form:
// holemask bit i covers inodes 4i..4i+3 and means "not allocated").
type InobtRec struct {
	StartIno  AgIno  // ir_startino
	HoleMask  uint16 // ir_holemask
	Count     uint8  // ir_count
	FreeCount uint8  // ir_freecount
	Free      uint64 // ir_free
}

// DecodeInobtRec parses a 16-byte inode btree record.
func DecodeInobtRec(b []byte) InobtRec {
	be := binary.BigEndian
	return InobtRec{AgIno(be.Uint32(b)), be.Uint16(b[4:]), b[6], b[7], be.Uint64(b[8:])}
}

// Encode writes the record into 16 bytes.
func (r InobtRec) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b, uint32(r.StartIno))
	be.PutUint16(b[4:], r.HoleMask)
	b[6], b[7] = r.Count, r.FreeCount
	be.PutUint64(b[8:], r.Free)
}

// Allocated reports whether inode i of the chunk is physically present
// (not in a sparse hole).
func (r InobtRec) Present(i int) bool { return r.HoleMask&(1<<(i/4)) == 0 }

// RefcountRec is a refcountbt record.
type RefcountRec struct {
	StartBlock uint32 // rc_startblock (bit 31: CoW staging)
	BlockCount uint32 // rc_blockcount
	Refcount   uint32 // rc_refcount
}

// DecodeRefcountRec parses a 12-byte refcount record.
func DecodeRefcountRec(b []byte) RefcountRec {
	be := binary.BigEndian
	return RefcountRec{be.Uint32(b), be.Uint32(b[4:]), be.Uint32(b[8:])}
}

// Encode writes the record into 12 bytes, the CoW bit of StartBlock as
// it is (package refcount gives it its meaning).
func (r RefcountRec) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b, r.StartBlock)
	be.PutUint32(b[4:], r.BlockCount)
	be.PutUint32(b[8:], r.Refcount)
}
