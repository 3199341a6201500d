package format

import (
	"encoding/binary"
	"fmt"
)

// Log items: what a transaction in the log carries. Inside a record's
// payload a transaction is a run of op headers with one tid:
//
//	op START (len 0)
//	op: xfs_trans_header        16 B, host-endian ("TRAN", type, tid, items)
//	op: item format             first region of an item; its u16 at byte 2
//	op: region 1..n-1             counts the item's regions (itself included)
//	...
//	op COMMIT (len 0)
//
// Item formats are host-endian (little-endian: the kernels we share
// volumes with); the logged metadata after them is the on-disk big-endian
// block. An op whose data does not fit the rest of a record continues in
// the next one (CONTINUE on the first piece, WAS_CONT on the others).

// Log item types (the first u16 of an item's format region).
const (
	LogItemEFI      = 0x1236
	LogItemEFD      = 0x1237
	LogItemIUnlink  = 0x1238
	LogItemInode    = 0x123B
	LogItemBuf      = 0x123C
	LogItemDquot    = 0x123D
	LogItemQuotaOff = 0x123E
	LogItemICreate  = 0x123F
)

// Transaction header constants.
const (
	LogTransMagic      = 0x5452414E // "TRAN"
	LogTransCheckpoint = 40         // XFS_TRANS_CHECKPOINT
	LogTransHeaderSize = 16
)

// LogTransHeader is struct xfs_trans_header (host-endian).
type LogTransHeader struct {
	Magic    uint32 // th_magic
	Type     uint32 // th_type
	Tid      uint32 // th_tid
	NumItems uint32 // th_num_items
}

// Encode writes the header into 16 bytes.
func (h *LogTransHeader) Encode(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], h.Magic)
	le.PutUint32(b[4:], h.Type)
	le.PutUint32(b[8:], h.Tid)
	le.PutUint32(b[12:], h.NumItems)
}

// DecodeLogTransHeader parses and checks a transaction header region.
func DecodeLogTransHeader(b []byte) (LogTransHeader, error) {
	if len(b) < LogTransHeaderSize {
		return LogTransHeader{}, Corrupt("log transaction header", "", "%d bytes is too short", len(b))
	}
	le := binary.LittleEndian
	h := LogTransHeader{le.Uint32(b[0:]), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:])}
	if h.Magic != LogTransMagic {
		return h, Corrupt("log transaction header", "", "bad magic %#x", h.Magic)
	}
	return h, nil
}

// Buffer log format constants.
const (
	// BlfChunk is the granularity of a buffer item's dirty map.
	BlfChunk      = 128
	BlfChunkShift = 7
	// BlfMapWordsMax is XFS_BLF_DATAMAP_SIZE: enough words for a 64 KiB
	// block.
	BlfMapWordsMax = 65536 / BlfChunk / 32
	// BlfHeaderSize is the size of xfs_buf_log_format before the map.
	BlfHeaderSize = 20

	BlfInodeBuf = 0x1
	BlfCancel   = 0x2
	BlfUDquot   = 0x4
	BlfPDquot   = 0x8
	BlfGDquot   = 0x10
	// The buffer's type (XFS_BLFT_*) lives in the top five bits of
	// blf_flags.
	BlfTypeShift = 11
)

// Buffer types (XFS_BLFT_*): recovery checks the block's magic against it
// and picks the verifier that recomputes the CRC.
const (
	BlftUnknown   = 0
	BlftUDquot    = 1
	BlftPDquot    = 2
	BlftGDquot    = 3
	BlftBtree     = 4
	BlftAgf       = 5
	BlftAgfl      = 6
	BlftAgi       = 7
	BlftDinode    = 8
	BlftSymlink   = 9
	BlftDir3Block = 10
	BlftDir3Data  = 11
	BlftDir3Free  = 12
	BlftDir3Leaf1 = 13
	BlftDir3LeafN = 14
	BlftDa3Node   = 15
	BlftAttrLeaf  = 16
	BlftAttrRmt   = 17
	BlftSb        = 18
)

// DquotMagic is the magic of an on-disk dquot ("DQ").
const DquotMagic = 0x4451

// BlockLogInfo tells, from a finished metadata block's magic, its buffer
// log type and where its v5 header keeps the LSN (lsnOff < 0: none, or a
// per-inode LSN the block as a whole does not have).
func BlockLogInfo(b []byte) (blft uint16, lsnOff, crcOff int) {
	if len(b) < 4 {
		return BlftUnknown, -1, -1
	}
	be := binary.BigEndian
	switch be.Uint32(b) {
	case SbMagic:
		return BlftSb, 240, SbCRCOff
	case AgfMagic:
		return BlftAgf, 208, AgfCRCOff
	case AgiMagic:
		return BlftAgi, 320, AgiCRCOff
	case AgflMagic:
		return BlftAgfl, 24, AgflCRCOff
	case BnobtMagic, CntbtMagic, InobtMagic, FinobtMagic, RefcountMagic, RmapMagic:
		return BlftBtree, 24, ShortBlockCRCOff
	case BmbtMagic:
		return BlftBtree, 32, LongBlockCRCOff
	case Dir3BlockMagic:
		return BlftDir3Block, 16, 4
	case Dir3DataMagic:
		return BlftDir3Data, 16, 4
	case Dir3FreeMagic:
		return BlftDir3Free, 16, 4
	case AttrRmtMagic:
		return BlftAttrRmt, 48, RmtCRCOff
	case SymlinkMagic:
		return BlftSymlink, 48, RmtCRCOff
	}
	if len(b) >= 10 {
		// xfs_da3_blkinfo: forw, back, magic16 at 8, pad, crc at 12,
		// blkno, lsn at 24.
		switch be.Uint16(b[8:]) {
		case Dir3Leaf1Magic:
			return BlftDir3Leaf1, 24, 12
		case Dir3LeafNMagic:
			return BlftDir3LeafN, 24, 12
		case Da3NodeMagic:
			return BlftDa3Node, 24, 12
		case Attr3LeafMagic:
			return BlftAttrLeaf, 24, 12
		}
	}
	switch be.Uint16(b) {
	case InodeMagic:
		return BlftDinode, -1, -1
	case DquotMagic:
		return BlftPDquot, -1, -1
	}
	return BlftUnknown, -1, -1
}

// BufLogFormat is struct xfs_buf_log_format (host-endian). Only
// BlfHeaderSize+4*MapSize bytes of it are logged.
type BufLogFormat struct {
	Type    uint16   // blf_type: LogItemBuf
	Size    uint16   // blf_size: regions, this one included
	Flags   uint16   // blf_flags
	Len     uint16   // blf_len: buffer length in BBs
	Blkno   int64    // blf_blkno: daddr
	MapSize uint32   // blf_map_size: words of DataMap in use
	DataMap []uint32 // blf_data_map: one bit per 128-byte chunk
}

// EncodedLen is the number of bytes Encode writes.
func (f *BufLogFormat) EncodedLen() int { return BlfHeaderSize + 4*len(f.DataMap) }

// Encode writes the format region.
func (f *BufLogFormat) Encode(b []byte) {
	le := binary.LittleEndian
	le.PutUint16(b[0:], f.Type)
	le.PutUint16(b[2:], f.Size)
	le.PutUint16(b[4:], f.Flags)
	le.PutUint16(b[6:], f.Len)
	le.PutUint64(b[8:], uint64(f.Blkno))
	le.PutUint32(b[16:], f.MapSize)
	for i, w := range f.DataMap {
		le.PutUint32(b[20+4*i:], w)
	}
}

// DecodeBufLogFormat parses and checks a buffer item's format region.
func DecodeBufLogFormat(b []byte) (*BufLogFormat, error) {
	if len(b) < BlfHeaderSize {
		return nil, Corrupt("buffer log item", "", "format region of %d bytes is too short", len(b))
	}
	le := binary.LittleEndian
	f := &BufLogFormat{Type: le.Uint16(b[0:]), Size: le.Uint16(b[2:]), Flags: le.Uint16(b[4:]), Len: le.Uint16(b[6:]),
		Blkno: int64(le.Uint64(b[8:])), MapSize: le.Uint32(b[16:])}
	where := fmt.Sprintf("daddr %d", f.Blkno)
	if f.Type != LogItemBuf {
		return nil, Corrupt("buffer log item", where, "type %#x", f.Type)
	}
	if f.MapSize > BlfMapWordsMax || len(b) < BlfHeaderSize+4*int(f.MapSize) {
		return nil, Corrupt("buffer log item", where, "map of %d words in %d bytes", f.MapSize, len(b))
	}
	if f.Size == 0 || f.Blkno < 0 || f.Len == 0 || int(f.Len)*BBSize > 65536 {
		return nil, Corrupt("buffer log item", where, "%d regions, %d BBs", f.Size, f.Len)
	}
	f.DataMap = make([]uint32, f.MapSize)
	for i := range f.DataMap {
		f.DataMap[i] = le.Uint32(b[20+4*i:])
	}
	return f, nil
}

// Blft is the buffer type kept in the flags.
func (f *BufLogFormat) Blft() uint16 { return f.Flags >> BlfTypeShift }

// Runs returns the dirty chunk runs of the map as [first, end) chunk
// indexes, in order: region i+1 of the item holds run i.
func (f *BufLogFormat) Runs() [][2]int {
	var runs [][2]int
	nbits := 32 * len(f.DataMap)
	for bit := 0; bit < nbits; {
		if f.DataMap[bit/32]&(1<<(bit%32)) == 0 {
			bit++
			continue
		}
		start := bit
		for bit < nbits && f.DataMap[bit/32]&(1<<(bit%32)) != 0 {
			bit++
		}
		runs = append(runs, [2]int{start, bit})
	}
	return runs
}

// NewBufLogFormat describes a buffer of n bytes at daddr with the chunk
// runs given as [first, end) chunk indexes.
func NewBufLogFormat(daddr Daddr, n int, blft uint16, runs [][2]int) *BufLogFormat {
	chunks := (n + BlfChunk - 1) / BlfChunk
	dataMap := make([]uint32, (chunks+31)/32)
	for _, r := range runs {
		for bit := r[0]; bit < r[1]; bit++ {
			dataMap[bit/32] |= 1 << (bit % 32)
		}
	}
	f := BufLogFormatOf(daddr, n, blft, len(runs), dataMap)
	return &f
}

// BufLogFormatOf is NewBufLogFormat for a caller that built the chunk
// bitmap itself (covering every chunk of the n bytes) and counted its
// runs: nothing is allocated.
func BufLogFormatOf(daddr Daddr, n int, blft uint16, runs int, dataMap []uint32) BufLogFormat {
	// Dquot blocks are logged without BlfPDquot on purpose: a kernel that
	// replays the log without project quota on skips buffers carrying that
	// flag, which would leave a quota file block made in the log as
	// garbage (bad CRCs) on disk. Without it every kernel replays them.
	return BufLogFormat{Type: LogItemBuf, Size: uint16(1 + runs), Flags: blft << BlfTypeShift,
		Len: uint16(n / BBSize), Blkno: int64(daddr), MapSize: uint32(len(dataMap)), DataMap: dataMap}
}

// DecodeUnmountFormat checks an unmount op's payload.
func DecodeUnmountFormat(b []byte) error {
	if len(b) < 2 || binary.LittleEndian.Uint16(b) != LogUnmountMagic {
		return Corrupt("log unmount record", "", "bad magic")
	}
	return nil
}

// Extent-free intent layouts: a 16-byte head (type, size, extent count,
// ID), then the extents, each a u64 start block and a u32 length, packed
// (12 bytes, as 32-bit kernels log them) or padded to 16 bytes (64-bit
// kernels). Only the region's length tells which.
const (
	EFIHeadSize     = 16
	EFIExtentSize32 = 12
	EFIExtentSize64 = 16
)

// EFIExtent is one extent an EFI promises to free.
type EFIExtent struct {
	Start FsBlock
	Len   uint32
}

// EFILogFormat is struct xfs_efi_log_format (host-endian).
type EFILogFormat struct {
	Size    uint16 // efi_size: regions
	ID      uint64 // efi_id: what the EFD names
	Extents []EFIExtent
}

// Encode returns the format region with packed (12-byte) or padded
// (16-byte) extents.
func (f *EFILogFormat) Encode(padded bool) []byte {
	es := EFIExtentSize32
	if padded {
		es = EFIExtentSize64
	}
	b := make([]byte, EFIHeadSize+es*len(f.Extents))
	le := binary.LittleEndian
	le.PutUint16(b[0:], LogItemEFI)
	le.PutUint16(b[2:], f.Size)
	le.PutUint32(b[4:], uint32(len(f.Extents)))
	le.PutUint64(b[8:], f.ID)
	for i, e := range f.Extents {
		p := b[EFIHeadSize+es*i:]
		le.PutUint64(p, uint64(e.Start))
		le.PutUint32(p[8:], e.Len)
	}
	return b
}

// DecodeEFI parses an EFI format region. The region must be exactly the
// head plus nextents extents of one of the two layouts; the extents are
// not checked against any geometry.
func DecodeEFI(b []byte) (*EFILogFormat, error) {
	if len(b) < EFIHeadSize {
		return nil, Corrupt("EFI log item", "", "%d bytes", len(b))
	}
	le := binary.LittleEndian
	n := uint64(le.Uint32(b[4:]))
	f := &EFILogFormat{Size: le.Uint16(b[2:]), ID: le.Uint64(b[8:])}
	where := fmt.Sprintf("id %#x", f.ID)
	if typ := le.Uint16(b); typ != LogItemEFI {
		return nil, Corrupt("EFI log item", where, "type %#x", typ)
	}
	var es int
	switch uint64(len(b)) {
	case EFIHeadSize + EFIExtentSize64*n:
		es = EFIExtentSize64
	case EFIHeadSize + EFIExtentSize32*n:
		es = EFIExtentSize32
	default:
		return nil, Corrupt("EFI log item", where, "%d bytes for %d extents", len(b), n)
	}
	f.Extents = make([]EFIExtent, n)
	for i := range f.Extents {
		p := b[EFIHeadSize+es*i:]
		f.Extents[i] = EFIExtent{Start: FsBlock(le.Uint64(p)), Len: le.Uint32(p[8:])}
	}
	return f, nil
}
