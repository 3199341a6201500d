package format

import (
	"encoding/binary"
	"fmt"
)

// Refcount and bmap update intents (KL/xfs_log_format.h): the deferred
// work of the kernel's reflink code. A CUI names refcount changes, a BUI
// one mapping change of an inode fork; each is finished later by a done
// item (CUD, BUD) naming the intent's ID, logged in the transaction that
// does the work. Like every item format they are host-endian (little
// endian on the machines that write them); unlike the EFI, the extent
// records have no packed 32-bit variant (every field is naturally
// aligned).
//
//	cui / bui head, 16 bytes:  type u16 · size u16 (regions) ·
//	                           nextents u32 · id u64
//	xfs_phys_extent, 16 bytes: startblock u64 · len u32 · flags u32
//	xfs_map_extent, 32 bytes:  owner u64 · startblock u64 ·
//	                           startoff u64 · len u32 · flags u32
//	cud / bud, 16 bytes:       type u16 · size u16 · pad u32 · intent id u64
//
// (LogItemCUI and LogItemBUI are declared with the other intent types.)
const (
	LogItemCUD = 0x1243
	LogItemBUD = 0x1245

	IntentHeadSize   = 16
	PhysExtentSize   = 16
	MapExtentSize    = 32
	IntentDoneSize   = 16
	BUIMaxExtents    = 1 // XFS_BUI_MAX_FAST_EXTENTS: the kernel logs one mapping per BUI
	intentTypeMask   = 0xFF
	refcountFlagMask = intentTypeMask // XFS_REFCOUNT_EXTENT_FLAGS: no flag bits
)

// CUI extent types (enum xfs_refcount_intent_type).
const (
	RefcountIncrease = 1 // one more mapping of each block
	RefcountDecrease = 2 // one fewer; blocks that reach zero are freed
	RefcountAllocCoW = 3 // stage the blocks for copy-on-write
	RefcountFreeCoW  = 4 // drop the staging record
)

// BUI extent types (enum xfs_bmap_intent_type) and flags.
const (
	BmapMap   = 1
	BmapUnmap = 2

	BmapExtentAttrFork  = 1 << 31
	BmapExtentUnwritten = 1 << 30
	BmapExtentRealtime  = 1 << 29
	bmapFlagMask        = intentTypeMask | BmapExtentAttrFork | BmapExtentUnwritten | BmapExtentRealtime
)

// PhysExtent is one refcount change of a CUI (struct xfs_phys_extent).
// Start is a plain filesystem block also for the CoW types (the staging
// domain is the record's, not the intent's).
type PhysExtent struct {
	Start FsBlock
	Len   uint32
	Flags uint32 // low byte: the type
}

// Type returns the extent's change (RefcountIncrease...).
func (e PhysExtent) Type() uint32 { return e.Flags & intentTypeMask }

// CUILogFormat is struct xfs_cui_log_format.
type CUILogFormat struct {
	Size    uint16 // cui_size: regions
	ID      uint64
	Extents []PhysExtent
}

// MapExtent is the mapping change of a BUI (struct xfs_map_extent).
type MapExtent struct {
	Owner    Ino
	Start    FsBlock
	StartOff FileOff
	Len      uint32
	Flags    uint32 // low byte: the type; BmapExtent* bits
}

// Type returns BmapMap or BmapUnmap.
func (e MapExtent) Type() uint32 { return e.Flags & intentTypeMask }

// AttrFork reports whether the change is to the attribute fork.
func (e MapExtent) AttrFork() bool { return e.Flags&BmapExtentAttrFork != 0 }

// Unwritten reports whether a mapped extent is unwritten.
func (e MapExtent) Unwritten() bool { return e.Flags&BmapExtentUnwritten != 0 }

// BUILogFormat is struct xfs_bui_log_format.
type BUILogFormat struct {
	Size    uint16 // bui_size: regions
	ID      uint64
	Extents []MapExtent
}

func encodeIntentHead(b []byte, typ, size uint16, n int, id uint64) {
	le := binary.LittleEndian
	le.PutUint16(b[0:], typ)
	le.PutUint16(b[2:], size)
	le.PutUint32(b[4:], uint32(n))
	le.PutUint64(b[8:], id)
}

// Encode returns the CUI's format region.
func (f *CUILogFormat) Encode() []byte {
	b := make([]byte, IntentHeadSize+PhysExtentSize*len(f.Extents))
	encodeIntentHead(b, LogItemCUI, f.Size, len(f.Extents), f.ID)
	le := binary.LittleEndian
	for i, e := range f.Extents {
		p := b[IntentHeadSize+PhysExtentSize*i:]
		le.PutUint64(p, uint64(e.Start))
		le.PutUint32(p[8:], e.Len)
		le.PutUint32(p[12:], e.Flags)
	}
	return b
}

// Encode returns the BUI's format region.
func (f *BUILogFormat) Encode() []byte {
	b := make([]byte, IntentHeadSize+MapExtentSize*len(f.Extents))
	encodeIntentHead(b, LogItemBUI, f.Size, len(f.Extents), f.ID)
	le := binary.LittleEndian
	for i, e := range f.Extents {
		p := b[IntentHeadSize+MapExtentSize*i:]
		le.PutUint64(p, uint64(e.Owner))
		le.PutUint64(p[8:], uint64(e.Start))
		le.PutUint64(p[16:], uint64(e.StartOff))
		le.PutUint32(p[24:], e.Len)
		le.PutUint32(p[28:], e.Flags)
	}
	return b
}

// decodeIntentHead checks a region's type and that its length is the head
// plus its nextents records of recSize bytes, as the kernel's commit_pass2
// does, and returns the record count and ID.
func decodeIntentHead(b []byte, what string, typ uint16, recSize int) (n int, size uint16, id uint64, err error) {
	if len(b) < IntentHeadSize {
		return 0, 0, 0, Corrupt(what, "", "%d bytes", len(b))
	}
	le := binary.LittleEndian
	size, id = le.Uint16(b[2:]), le.Uint64(b[8:])
	where := fmt.Sprintf("id %#x", id)
	if t := le.Uint16(b); t != typ {
		return 0, 0, 0, Corrupt(what, where, "type %#x", t)
	}
	nx := uint64(le.Uint32(b[4:]))
	if uint64(len(b)) != IntentHeadSize+uint64(recSize)*nx {
		return 0, 0, 0, Corrupt(what, where, "%d bytes for %d extents", len(b), nx)
	}
	return int(nx), size, id, nil
}

// DecodeCUI parses a CUI format region: exactly the head and its extents,
// as the kernel's xlog_recover_cui_commit_pass2 requires of every CUI.
// What the extents say is checked by Check, which the kernel applies only
// to the intents it finishes.
func DecodeCUI(b []byte) (*CUILogFormat, error) {
	n, size, id, err := decodeIntentHead(b, "CUI log item", LogItemCUI, PhysExtentSize)
	if err != nil {
		return nil, err
	}
	f := &CUILogFormat{Size: size, ID: id, Extents: make([]PhysExtent, n)}
	le := binary.LittleEndian
	for i := range f.Extents {
		p := b[IntentHeadSize+PhysExtentSize*i:]
		f.Extents[i] = PhysExtent{Start: FsBlock(le.Uint64(p)), Len: le.Uint32(p[8:]), Flags: le.Uint32(p[12:])}
	}
	return f, nil
}

// DecodeBUI parses a BUI format region: the head and exactly one mapping,
// as xlog_recover_bui_commit_pass2 requires (the kernel logs one mapping
// per BUI). Check does the rest.
func DecodeBUI(b []byte) (*BUILogFormat, error) {
	n, size, id, err := decodeIntentHead(b, "BUI log item", LogItemBUI, MapExtentSize)
	if err != nil {
		return nil, err
	}
	if n != BUIMaxExtents {
		return nil, Corrupt("BUI log item", fmt.Sprintf("id %#x", id), "%d extents", n)
	}
	le := binary.LittleEndian
	p := b[IntentHeadSize:]
	e := MapExtent{Owner: Ino(le.Uint64(p)), Start: FsBlock(le.Uint64(p[8:])), StartOff: FileOff(le.Uint64(p[16:])),
		Len: le.Uint32(p[24:]), Flags: le.Uint32(p[28:])}
	return &BUILogFormat{Size: size, ID: id, Extents: []MapExtent{e}}, nil
}

// EncodeIntentDone returns a done item's region (CUD, BUD: typ names it).
func EncodeIntentDone(typ uint16, id uint64) []byte {
	b := make([]byte, IntentDoneSize)
	le := binary.LittleEndian
	le.PutUint16(b, typ)
	le.PutUint16(b[2:], 1)
	le.PutUint64(b[8:], id)
	return b
}

// DecodeIntentDone parses a CUD or BUD region of type typ: exactly 16
// bytes, as the kernel requires, and returns the intent ID it finishes.
func DecodeIntentDone(b []byte, typ uint16) (uint64, error) {
	what := map[uint16]string{LogItemCUD: "CUD log item", LogItemBUD: "BUD log item"}[typ]
	if what == "" {
		what = "intent done log item"
	}
	if len(b) != IntentDoneSize {
		return 0, Corrupt(what, "", "%d bytes", len(b))
	}
	le := binary.LittleEndian
	if t := le.Uint16(b); t != typ {
		return 0, Corrupt(what, "", "type %#x", t)
	}
	return le.Uint64(b[8:]), nil
}

// agflBlock is the AG block holding the AGFL sector: the kernel's
// xfs_verify_agbno accepts only blocks past it (the AG headers).
func (g *Geometry) agflBlock() uint64 { return uint64(3*g.SectSize) >> g.BlockLog }

// ValidIntentExtent is the kernel's xfs_verify_fsbext: length blocks from
// start, all inside one AG and past its headers, with no overflow (the
// AG number is taken from the whole 64 bits, not truncated).
func (g *Geometry) ValidIntentExtent(start FsBlock, length uint64) bool {
	if length == 0 || uint64(start)+length <= uint64(start) {
		return false
	}
	last := uint64(start) + length - 1
	ag, lastAg := uint64(start)>>g.AgBlkLog, last>>g.AgBlkLog
	if ag >= uint64(g.AgCount) || ag != lastAg {
		return false
	}
	mask := uint64(1)<<g.AgBlkLog - 1
	return uint64(start)&mask > g.agflBlock() && last&mask < uint64(g.AgSize(AgNumber(ag)))
}

// ValidIntentIno is the geometric part of the kernel's xfs_verify_ino: an
// inode of an existing AG, in a block past the AG headers and inside the
// AG. (That it is no metadata inode of the superblock is the caller's.)
func (g *Geometry) ValidIntentIno(ino Ino) bool {
	ag := uint64(ino) >> g.AgInoBits()
	if ag >= uint64(g.AgCount) {
		return false
	}
	_, agino := g.InoToAg(ino)
	bno, _ := g.AgInoToAgBlock(agino)
	return uint64(bno) > g.agflBlock() && uint32(bno) < g.AgSize(AgNumber(ag))
}

// MaxFileOff is the last file block a bmbt record can address
// (XFS_MAX_FILEOFF: 54-bit start offsets).
const MaxFileOff = 1<<54 - 1

// Check validates the CUI's extents against the volume as the kernel's
// recovery does before it finishes one (xfs_cui_validate_phys): reflink
// on, every extent of a known type with no other flag bit, inside one AG.
func (f *CUILogFormat) Check(g *Geometry) error {
	where := fmt.Sprintf("id %#x", f.ID)
	if !g.Reflink {
		return Corrupt("CUI log item", where, "refcount intent on a volume without reflink")
	}
	for _, e := range f.Extents {
		if e.Flags&^refcountFlagMask != 0 || e.Type() < RefcountIncrease || e.Type() > RefcountFreeCoW {
			return Corrupt("CUI log item", where, "extent %d+%d has flags %#x", e.Start, e.Len, e.Flags)
		}
		if !g.ValidIntentExtent(e.Start, uint64(e.Len)) {
			return Corrupt("CUI log item", where, "extent %d+%d is not inside one AG", e.Start, e.Len)
		}
	}
	return nil
}

// Check validates the BUI's mapping against the volume as the kernel's
// xfs_bui_validate does: type map or unmap with only the known flag bits,
// owner inode number, file range, and disk extent inside one AG. A realtime extent is refused too: the engine has no
// realtime device (the kernel would find it outside the realtime device).
func (f *BUILogFormat) Check(g *Geometry) error {
	where := fmt.Sprintf("id %#x", f.ID)
	for _, e := range f.Extents {
		switch {
		case e.Flags&^bmapFlagMask != 0 || (e.Type() != BmapMap && e.Type() != BmapUnmap):
			return Corrupt("BUI log item", where, "flags %#x", e.Flags)
		case !g.ValidIntentIno(e.Owner):
			return Corrupt("BUI log item", where, "owner inode %d", e.Owner)
		case e.Len == 0 || uint64(e.StartOff)+uint64(e.Len)-1 > MaxFileOff:
			return Corrupt("BUI log item", where, "file blocks %d+%d", e.StartOff, e.Len)
		case e.Flags&BmapExtentRealtime != 0:
			return Corrupt("BUI log item", where, "realtime extent on a volume without a realtime device")
		case !g.ValidIntentExtent(e.Start, uint64(e.Len)):
			return Corrupt("BUI log item", where, "extent %d+%d is not inside one AG", e.Start, e.Len)
		}
	}
	return nil
}
