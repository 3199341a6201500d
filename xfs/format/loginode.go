package format

import (
	"encoding/binary"
	"fmt"
)

// Items the kernel logs and this engine only replays: inode items (the
// inode core in host byte order plus fork bytes), inode-chunk creation, and
// extent-free intents (whose done items say the work was finished).

// Inode log item field flags (XFS_ILOG_*).
const (
	IlogCore   = 0x1
	IlogDData  = 0x2
	IlogDExt   = 0x4
	IlogDBroot = 0x8
	IlogDev    = 0x10
	IlogAData  = 0x40
	IlogAExt   = 0x80
	IlogABroot = 0x100
	IlogDOwner = 0x200
	IlogAOwner = 0x400

	IlogDFork = IlogDData | IlogDExt | IlogDBroot
	IlogAFork = IlogAData | IlogAExt | IlogABroot
)

// InodeLogFormatSize is sizeof(struct xfs_inode_log_format) on 64-bit
// kernels; InodeLogFormat32Size the packed layout 32-bit kernels write.
const (
	InodeLogFormatSize   = 56
	InodeLogFormat32Size = 52
)

// InodeLogFormat is struct xfs_inode_log_format (host-endian).
type InodeLogFormat struct {
	Type    uint16 // ilf_type
	Size    uint16 // ilf_size: regions
	Fields  uint32 // ilf_fields
	ASize   uint16 // ilf_asize
	DSize   uint16 // ilf_dsize
	Ino     Ino    // ilf_ino
	Rdev    uint32 // ilf_u.ilfu_rdev
	Blkno   int64  // ilf_blkno: inode cluster daddr
	Len     int32  // ilf_len: cluster BBs
	BOffset int32  // ilf_boffset: inode's byte offset in the cluster
}

// DecodeInodeLogFormat parses either layout of an inode item's format.
func DecodeInodeLogFormat(b []byte) (*InodeLogFormat, error) {
	le := binary.LittleEndian
	var f InodeLogFormat
	switch len(b) {
	case InodeLogFormatSize:
		f = InodeLogFormat{Type: le.Uint16(b[0:]), Size: le.Uint16(b[2:]), Fields: le.Uint32(b[4:]), ASize: le.Uint16(b[8:]),
			DSize: le.Uint16(b[10:]), Ino: Ino(le.Uint64(b[16:])), Rdev: le.Uint32(b[24:]), Blkno: int64(le.Uint64(b[40:])),
			Len: int32(le.Uint32(b[48:])), BOffset: int32(le.Uint32(b[52:]))}
	case InodeLogFormat32Size:
		f = InodeLogFormat{Type: le.Uint16(b[0:]), Size: le.Uint16(b[2:]), Fields: le.Uint32(b[4:]), ASize: le.Uint16(b[8:]),
			DSize: le.Uint16(b[10:]), Ino: Ino(le.Uint64(b[12:])), Rdev: le.Uint32(b[20:]), Blkno: int64(le.Uint64(b[36:])),
			Len: int32(le.Uint32(b[44:])), BOffset: int32(le.Uint32(b[48:]))}
	default:
		return nil, Corrupt("inode log item", "", "format region of %d bytes", len(b))
	}
	where := fmt.Sprintf("inode %d", f.Ino)
	if f.Type != LogItemInode || f.Size < 2 || f.Size > 4 || f.Fields&IlogCore == 0 {
		return nil, Corrupt("inode log item", where, "type %#x, %d regions, fields %#x", f.Type, f.Size, f.Fields)
	}
	if f.Blkno < 0 || f.Len <= 0 || f.Len > 128 || f.BOffset < 0 || int(f.BOffset)+InodeCoreSize > int(f.Len)*BBSize {
		return nil, Corrupt("inode log item", where, "cluster %d+%d BBs, offset %d", f.Blkno, f.Len, f.BOffset)
	}
	return &f, nil
}

// logDinodeFields lists the widths of the inode core's fields in order, so
// that a host-endian log dinode converts field by field; 0 marks bytes
// copied as they are, and timestamps are handled apart.
var logDinodeFields = []struct{ off, size int }{
	{0, 2}, {2, 2}, {4, 0}, {5, 0}, {6, 0}, {8, 4}, {12, 4}, {16, 4}, {20, 2}, {22, 2},
	{24, 8}, {56, 8}, {64, 8}, {72, 4}, {76, 4}, {80, 2}, {82, 0}, {83, 0},
	{84, 4}, {88, 2}, {90, 2}, {92, 4}, {104, 8}, {120, 8}, {128, 4}, {152, 8},
}

// logDinodeTimes are the timestamp fields: one 64-bit count with bigtime,
// else a pair of 32-bit seconds and nanoseconds.
var logDinodeTimes = []int{32, 40, 48, 144}

// LogDinodeToDisk converts the host-endian inode core of an inode item
// into the on-disk core in dst, the way the kernel's recovery does: the
// logged LSN is meaningless and lsn is stored instead; the unlinked pointer
// (logged through the inode buffer) and the CRC stay as they are in dst;
// the UUID is copied.
func LogDinodeToDisk(ld, dst []byte, lsn LSN) error {
	if len(ld) < InodeCoreSize || len(dst) < InodeCoreSize {
		return Corrupt("log dinode", "", "%d bytes", len(ld))
	}
	le, be := binary.LittleEndian, binary.BigEndian
	if le.Uint16(ld) != InodeMagic || ld[4] != 3 {
		return Corrupt("log dinode", "", "magic %#x, version %d", le.Uint16(ld), ld[4])
	}
	for _, f := range logDinodeFields {
		switch f.size {
		case 0:
			dst[f.off] = ld[f.off]
		case 2:
			be.PutUint16(dst[f.off:], le.Uint16(ld[f.off:]))
		case 4:
			be.PutUint32(dst[f.off:], le.Uint32(ld[f.off:]))
		case 8:
			be.PutUint64(dst[f.off:], le.Uint64(ld[f.off:]))
		}
	}
	dst[6], dst[7] = 0, 0 // di_onlink / pad
	bigtime := le.Uint64(ld[120:])&Diflag2Bigtime != 0
	for _, off := range logDinodeTimes {
		if bigtime {
			be.PutUint64(dst[off:], le.Uint64(ld[off:]))
		} else {
			be.PutUint32(dst[off:], le.Uint32(ld[off:]))
			be.PutUint32(dst[off+4:], le.Uint32(ld[off+4:]))
		}
	}
	be.PutUint64(dst[112:], uint64(lsn))
	clear(dst[132:144])
	copy(dst[160:176], ld[160:176])
	return nil
}

// ICreateLogSize is sizeof(struct xfs_icreate_log).
const ICreateLogSize = 28

// ICreateLog is struct xfs_icreate_log: an inode chunk the recovery must
// initialise. Unlike other item formats its fields are big-endian.
type ICreateLog struct {
	AG, AgBno, Count, ISize, Length, Gen uint32
}

// DecodeICreateLog parses and checks an inode-create item.
func DecodeICreateLog(b []byte) (*ICreateLog, error) {
	if len(b) < ICreateLogSize || binary.LittleEndian.Uint16(b) != LogItemICreate {
		return nil, Corrupt("icreate log item", "", "%d bytes", len(b))
	}
	be := binary.BigEndian
	c := &ICreateLog{AG: be.Uint32(b[4:]), AgBno: be.Uint32(b[8:]), Count: be.Uint32(b[12:]), ISize: be.Uint32(b[16:]),
		Length: be.Uint32(b[20:]), Gen: be.Uint32(b[24:])}
	if c.Count == 0 || c.Count > 1<<16 || c.ISize < 256 || c.ISize > 2048 || c.ISize&(c.ISize-1) != 0 || c.Length == 0 || c.Length > 1<<16 {
		return nil, Corrupt("icreate log item", fmt.Sprintf("AG %d block %d", c.AG, c.AgBno), "%d inodes of %d bytes in %d blocks", c.Count, c.ISize, c.Length)
	}
	return c, nil
}

// Extent-free intent and done items share a head: type, size, extent count
// and the intent's ID.
const (
	LogItemRUI   = 0x1240
	LogItemCUI   = 0x1242
	LogItemBUI   = 0x1244
	LogItemATTRI = 0x1246
	LogItemXMI   = 0x1248
)

// DecodeIntentID returns the ID an EFI announces or an EFD completes.
func DecodeIntentID(b []byte) (uint64, error) {
	if len(b) < 16 {
		return 0, Corrupt("intent log item", "", "%d bytes", len(b))
	}
	return binary.LittleEndian.Uint64(b[8:]), nil
}

// BmbtToBmdr converts a B+tree root as the kernel logs it (an in-core long
// btree block: 72-byte v5 header, keys, then pointers after room for as
// many keys as the block could hold) into the on-disk root of an inode fork
// of dlen bytes (level, numrecs, keys, pointers after room for its own
// maximum).
func BmbtToBmdr(src, dst []byte) error {
	const hdr, rec = 72, 16
	if len(src) < hdr || len(dst) < 4 {
		return Corrupt("bmbt root", "", "%d bytes logged for a %d-byte fork", len(src), len(dst))
	}
	be := binary.BigEndian
	level, n := be.Uint16(src[4:]), int(be.Uint16(src[6:]))
	smax := (len(src) - hdr) / rec
	dmax := (len(dst) - 4) / rec
	if level == 0 || n > smax || n > dmax {
		return Corrupt("bmbt root", "", "level %d with %d records (room for %d logged, %d in the fork)", level, n, smax, dmax)
	}
	clear(dst)
	be.PutUint16(dst[0:], level)
	be.PutUint16(dst[2:], uint16(n))
	copy(dst[4:4+8*n], src[hdr:hdr+8*n])
	copy(dst[4+8*dmax:4+8*dmax+8*n], src[hdr+8*smax:hdr+8*smax+8*n])
	return nil
}
