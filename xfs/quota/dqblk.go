package quota

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// On-disk dquot (xfs_dqblk): a 104-byte xfs_disk_dquot, 4 bytes of fill,
// then the v5 tail (CRC, LSN, UUID). Block limits and counts are in
// filesystem blocks. Each 136-byte record has its own CRC.
const (
	RecordSize = 136
	Magic      = format.DquotMagic // "DQ"
	Version    = 1

	crcOff  = 108
	lsnOff  = 112
	uuidOff = 120

	// Record types (d_type). A record is exactly one of user, project or
	// group, and may carry the bigtime flag.
	TypeUser    = 0x01
	TypeProject = 0x02
	TypeGroup   = 0x04
	typeBigtime = 0x80

	// bigtime timers hold (unix seconds + slack) >> shift.
	bigtimeShift = 2
	bigtimeSlack = 3
)

// Superblock quota flags (sb_qflags) for project quota, and the version
// bit that says quota may be in use.
const (
	FlagProjectAcct    = 0x0008 // XFS_PQUOTA_ACCT: counts are kept
	FlagProjectEnforce = 0x0200 // XFS_PQUOTA_ENFD: limits are enforced
	FlagProjectChecked = 0x0400 // XFS_PQUOTA_CHKD: counts may be trusted
	// FlagsChecked are the "checked" bits of every quota type (user,
	// v4 other, group, project): a checker trusts only counts whose bit
	// is set.
	FlagsChecked = 0x0004 | 0x0020 | 0x0100 | FlagProjectChecked
	// FlagsProject is project quota accounted, enforced and checked.
	FlagsProject = FlagProjectAcct | FlagProjectEnforce | FlagProjectChecked
)

// DefaultGrace is the grace period the kernel applies when the defaults
// record (id 0) holds none.
const DefaultGrace = 7 * 24 * time.Hour

// Record is one decoded dquot: the limits and usage of one project. For
// id 0 it holds the defaults: limits that apply to every project whose own
// limit is 0, and in its timer fields the grace periods in seconds.
type Record struct {
	ID        uint32
	Type      uint8 // TypeProject, without the bigtime flag
	BlkHard   uint64
	BlkSoft   uint64
	InoHard   uint64
	InoSoft   uint64
	BCount    uint64
	ICount    uint64
	ITimer    int64 // unix seconds the inode grace ends; 0: not running
	BTimer    int64 // same for blocks
	IWarns    uint16
	BWarns    uint16
	RtbHard   uint64
	RtbSoft   uint64
	RtbCount  uint64
	RtbTimer  int64
	RtbWarns  uint16
	Bigtime   bool // timers are stored in bigtime form (never for id 0)
	CRCStored uint32
	LSN       format.LSN
	UUID      [16]byte
}

// timer decodes a 32-bit on-disk timer.
func timer(v uint32, bigtime bool) int64 {
	if bigtime && v != 0 {
		return int64(v) << bigtimeShift
	}
	return int64(v)
}

// timerBits encodes a timer; bigtime rounds up to the next 4 seconds as
// the kernel does, so a grace period never ends early.
func timerBits(t int64, bigtime bool) uint32 {
	if bigtime && t != 0 {
		return uint32((t + bigtimeSlack) >> bigtimeShift)
	}
	return uint32(t)
}

// Decode reads the record at the start of b without verifying it.
func Decode(b []byte) Record {
	be := binary.BigEndian
	typ := b[3]
	big := typ&typeBigtime != 0
	r := Record{
		ID: be.Uint32(b[4:]), Type: typ &^ typeBigtime, Bigtime: big,
		BlkHard: be.Uint64(b[8:]), BlkSoft: be.Uint64(b[16:]),
		InoHard: be.Uint64(b[24:]), InoSoft: be.Uint64(b[32:]),
		BCount: be.Uint64(b[40:]), ICount: be.Uint64(b[48:]),
		ITimer: timer(be.Uint32(b[56:]), big), BTimer: timer(be.Uint32(b[60:]), big),
		IWarns: be.Uint16(b[64:]), BWarns: be.Uint16(b[66:]),
		RtbHard: be.Uint64(b[72:]), RtbSoft: be.Uint64(b[80:]), RtbCount: be.Uint64(b[88:]),
		RtbTimer: timer(be.Uint32(b[96:]), big), RtbWarns: be.Uint16(b[100:]),
		CRCStored: binary.LittleEndian.Uint32(b[crcOff:]),
		LSN:       format.LSN(be.Uint64(b[lsnOff:])),
	}
	copy(r.UUID[:], b[uuidOff:uuidOff+16])
	return r
}

// Encode writes r as a complete record (fill zeroed, CRC set) into the
// first RecordSize bytes of b.
func (r *Record) Encode(b []byte) {
	b = b[:RecordSize]
	clear(b)
	be := binary.BigEndian
	be.PutUint16(b, Magic)
	b[2] = Version
	b[3] = r.Type
	if r.Bigtime {
		b[3] |= typeBigtime
	}
	be.PutUint32(b[4:], r.ID)
	be.PutUint64(b[8:], r.BlkHard)
	be.PutUint64(b[16:], r.BlkSoft)
	be.PutUint64(b[24:], r.InoHard)
	be.PutUint64(b[32:], r.InoSoft)
	be.PutUint64(b[40:], r.BCount)
	be.PutUint64(b[48:], r.ICount)
	be.PutUint32(b[56:], timerBits(r.ITimer, r.Bigtime))
	be.PutUint32(b[60:], timerBits(r.BTimer, r.Bigtime))
	be.PutUint16(b[64:], r.IWarns)
	be.PutUint16(b[66:], r.BWarns)
	be.PutUint64(b[72:], r.RtbHard)
	be.PutUint64(b[80:], r.RtbSoft)
	be.PutUint64(b[88:], r.RtbCount)
	be.PutUint32(b[96:], timerBits(r.RtbTimer, r.Bigtime))
	be.PutUint16(b[100:], r.RtbWarns)
	be.PutUint64(b[lsnOff:], uint64(r.LSN))
	copy(b[uuidOff:], r.UUID[:])
	format.SetCRC(b, crcOff)
}

// NewRecord returns the empty record a fresh dquot block holds for id.
func NewRecord(g *format.Geometry, id uint32) Record {
	return Record{ID: id, Type: TypeProject, Bigtime: g.Bigtime && id != 0, UUID: g.UUID}
}

// PerBlock is how many records one filesystem block holds (30 for 4 KiB):
// block b of the quota file holds ids b·PerBlock … b·PerBlock+PerBlock-1.
func PerBlock(g *format.Geometry) int { return g.BlockSize / RecordSize }

// Locate returns the quota file block holding id and the byte offset of
// its record within the block.
func Locate(g *format.Geometry, id uint32) (fileBlock uint64, off int) {
	n := uint32(PerBlock(g))
	return uint64(id / n), int(id%n) * RecordSize
}

// InitBlock fills b, the quota file block fileBlock, with the empty
// records of its ids.
func InitBlock(g *format.Geometry, b []byte, fileBlock uint64) {
	clear(b)
	n := PerBlock(g)
	for i := 0; i < n; i++ {
		r := NewRecord(g, uint32(fileBlock)*uint32(n)+uint32(i))
		r.Encode(b[i*RecordSize:])
	}
}

// VerifyRecord checks one record: CRC, identity, and the kernel's rules
// (one type, bigtime only where allowed, a running timer wherever a soft
// limit is exceeded).
func VerifyRecord(g *format.Geometry, b []byte, wantID uint32) (Record, error) {
	const what = "dquot"
	if len(b) < RecordSize {
		return Record{}, format.Corrupt(what, "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	if m := be.Uint16(b); m != Magic {
		return Record{}, format.Corrupt(what, fmt.Sprintf("id %d", wantID), "bad magic %#x", m)
	}
	if !format.CRCOK(b[:RecordSize], crcOff) {
		return Record{}, format.Corrupt(what, fmt.Sprintf("id %d", wantID), "bad CRC")
	}
	r := Decode(b)
	bad := func(format_ string, args ...any) (Record, error) {
		return Record{}, format.Corrupt(what, fmt.Sprintf("id %d", wantID), format_, args...)
	}
	switch {
	case b[2] != Version:
		return bad("version %d", b[2])
	case r.ID != wantID:
		return bad("holds id %d", r.ID)
	case r.Type != TypeUser && r.Type != TypeProject && r.Type != TypeGroup:
		return bad("type %#x", b[3])
	case r.UUID != g.UUID:
		return bad("UUID of another filesystem")
	case r.Bigtime && (!g.Bigtime || r.ID == 0):
		return bad("bigtime timers where they are not allowed")
	}
	if r.ID != 0 {
		if r.BlkSoft != 0 && r.BCount > r.BlkSoft && r.BTimer == 0 {
			return bad("block soft limit exceeded with no timer")
		}
		if r.InoSoft != 0 && r.ICount > r.InoSoft && r.ITimer == 0 {
			return bad("inode soft limit exceeded with no timer")
		}
		if r.RtbSoft != 0 && r.RtbCount > r.RtbSoft && r.RtbTimer == 0 {
			return bad("realtime soft limit exceeded with no timer")
		}
	}
	return r, nil
}

// VerifyBlock checks every record of a quota file block: they must hold
// consecutive ids starting at a multiple of PerBlock.
func VerifyBlock(g *format.Geometry, b []byte) error {
	if len(b) < RecordSize {
		return format.Corrupt("dquot block", "", "%d bytes is too short", len(b))
	}
	first := binary.BigEndian.Uint32(b[4:])
	n := PerBlock(g)
	if first%uint32(n) != 0 {
		return format.Corrupt("dquot block", "", "first id %d is not a multiple of %d", first, n)
	}
	for i := 0; i < n; i++ {
		if _, err := VerifyRecord(g, b[i*RecordSize:], first+uint32(i)); err != nil {
			return err
		}
	}
	return nil
}

// FinishBlock recomputes the CRC of every record of a modified block.
func FinishBlock(b []byte) {
	for off := 0; off+RecordSize <= len(b); off += RecordSize {
		format.SetCRC(b[off:off+RecordSize], crcOff)
	}
}
