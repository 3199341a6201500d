package refcount

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// Domain is the key space a record lives in. The on-disk start block
// carries it in bit 31 (CoWFlag), so every shared record sorts before
// every CoW staging record and the two never meet in a merge.
type Domain uint8

const (
	// Shared records count the mappings of blocks that two or more
	// file extents map (XFS_REFC_DOMAIN_SHARED); their count is at
	// least 2. Blocks mapped once have no record.
	Shared Domain = iota
	// CoW records hold blocks allocated for copy-on-write that no file
	// maps yet (XFS_REFC_DOMAIN_COW); their count is always 1.
	CoW
)

func (d Domain) String() string {
	if d == CoW {
		return "cow"
	}
	return "shared"
}

const (
	// CoWFlag is bit 31 of rc_startblock: set on CoW staging records
	// (XFS_REFC_COWFLAG). An AG of a reflink filesystem has fewer than
	// 2^31 blocks, so the bit never belongs to a block number.
	CoWFlag = 1 << 31
	// MaxRefcount is the highest count a record holds (MAXREFCOUNT). A
	// record that reaches it stays there: neither increments nor
	// decrements change it, and its blocks are never freed.
	MaxRefcount = 1<<31 - 1
	// MaxExtentLen bounds rc_blockcount (MAXREFCEXTLEN); merges stop
	// short of it.
	MaxExtentLen = 1<<31 - 1
)

// Rec is a refcount record as the algorithms see it (the kernel's
// struct xfs_refcount_irec): the start without the CoW bit, and the
// domain apart.
type Rec struct {
	Start  format.AgBlock // rc_startblock without CoWFlag
	Len    uint32         // rc_blockcount
	Count  uint32         // rc_refcount
	Domain Domain
}

// End is the first block after the record.
func (r Rec) End() format.AgBlock { return r.Start + format.AgBlock(r.Len) }

func (r Rec) String() string {
	return fmt.Sprintf("%s %d+%d×%d", r.Domain, r.Start, r.Len, r.Count)
}

// Extent is a range of blocks of one AG.
type Extent struct {
	Start format.AgBlock
	Len   uint32
}

// End is the first block after the extent.
func (e Extent) End() format.AgBlock { return e.Start + format.AgBlock(e.Len) }

// DecodeRec turns a 12-byte on-disk record into a Rec; Check says
// whether it is valid.
func DecodeRec(b []byte) Rec {
	raw := format.DecodeRefcountRec(b)
	r := Rec{Start: format.AgBlock(raw.StartBlock &^ CoWFlag), Len: raw.BlockCount, Count: raw.Refcount}
	if raw.StartBlock&CoWFlag != 0 {
		r.Domain = CoW
	}
	return r
}

// Encode writes the record into 12 bytes.
func (r Rec) Encode(b []byte) {
	format.RefcountRec{StartBlock: encodeStart(r.Start, r.Domain), BlockCount: r.Len, Refcount: r.Count}.Encode(b)
}

// bytes returns the record encoded; with Len and Count zero it is a
// search key (lookups read only the start block).
func (r Rec) bytes() []byte {
	b := make([]byte, format.RefcountShape.RecLen)
	r.Encode(b)
	return b
}

func encodeStart(bno format.AgBlock, d Domain) uint32 {
	if d == CoW {
		return uint32(bno) | CoWFlag
	}
	return uint32(bno)
}

// Check reports whether r may be a record of AG ag, as the kernel's
// xfs_refcount_check_irec decides for every record it reads: a length
// from 1 to MaxExtentLen, a range inside the AG past its headers, a
// count of at least 2 for a shared record and exactly 1 for a CoW one.
// The error is a *format.CorruptError without a location.
func (r Rec) Check(g *format.Geometry, ag format.AgNumber) error {
	bad := func(why string, args ...any) error {
		return format.Corrupt("refcountbt record", "", "%v: "+why, append([]any{r}, args...)...)
	}
	switch {
	case r.Start&CoWFlag != 0:
		return bad("start block has bit 31 set")
	case r.Len == 0 || r.Len > MaxExtentLen:
		return bad("bad length")
	case r.Start <= headerBlock(g):
		return bad("starts in the AG headers")
	case uint64(r.Start)+uint64(r.Len) > uint64(g.AgSize(ag)):
		return bad("ends past the AG's %d blocks", g.AgSize(ag))
	case r.Count == 0 || r.Count > MaxRefcount:
		return bad("bad count")
	case r.Domain == Shared && r.Count < 2:
		return bad("a shared record counts at least 2")
	case r.Domain == CoW && r.Count != 1:
		return bad("a CoW staging record counts 1")
	}
	return nil
}

// headerBlock is the last AG block that holds AG headers (the AGFL's,
// XFS_AGFL_BLOCK): no extent may start at or before it.
func headerBlock(g *format.Geometry) format.AgBlock {
	return format.AgBlock(3 * g.SectSize / g.BlockSize)
}
