package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// Inode constants.
const (
	InodeMagic    = 0x494E // "IN"
	InodeCoreSize = 176    // v3 core; the literal area starts here
	InodeCRCOff   = 100

	// Fork formats (di_format / di_aformat).
	FmtDev     = 0
	FmtLocal   = 1
	FmtExtents = 2
	FmtBtree   = 3

	// di_flags
	DiflagRealtime    = 0x0001
	DiflagPrealloc    = 0x0002
	DiflagImmutable   = 0x0008
	DiflagAppend      = 0x0010
	DiflagSync        = 0x0020
	DiflagNoatime     = 0x0040
	DiflagNodump      = 0x0080
	DiflagRtInherit   = 0x0100
	DiflagProjInherit = 0x0200
	DiflagNosymlinks  = 0x0400
	DiflagExtsize     = 0x0800
	DiflagExtszInh    = 0x1000
	DiflagNodefrag    = 0x2000
	DiflagFilestream  = 0x4000

	// di_flags2
	Diflag2Dax     = 0x1
	Diflag2Reflink = 0x2
	Diflag2CowExt  = 0x4
	Diflag2Bigtime = 0x8
	Diflag2Nrext64 = 0x10
)

// Mode bits (Linux stat).
const (
	SIFMT   = 0o170000
	SIFSOCK = 0o140000
	SIFLNK  = 0o120000
	SIFREG  = 0o100000
	SIFBLK  = 0o060000
	SIFDIR  = 0o040000
	SIFCHR  = 0o020000
	SIFIFO  = 0o010000
)

// Timestamp is an XFS inode timestamp as wall-clock seconds and nanoseconds.
type Timestamp struct {
	Sec  int64
	Nsec uint32
}

// bigtimeEpochOffset shifts the bigtime epoch to 1901-12-13 so the encoded
// value is never negative.
const bigtimeEpochOffset = 1 << 31

// DecodeTimestamp reads an 8-byte timestamp in either encoding.
func DecodeTimestamp(b []byte, bigtime bool) Timestamp {
	v := binary.BigEndian.Uint64(b)
	if bigtime {
		return Timestamp{Sec: int64(v/1e9) - bigtimeEpochOffset, Nsec: uint32(v % 1e9)}
	}
	return Timestamp{Sec: int64(int32(v >> 32)), Nsec: uint32(v)}
}

// Encode writes the timestamp in the chosen encoding.
func (t Timestamp) Encode(b []byte, bigtime bool) {
	if bigtime {
		binary.BigEndian.PutUint64(b, uint64(t.Sec+bigtimeEpochOffset)*1e9+uint64(t.Nsec))
		return
	}
	binary.BigEndian.PutUint64(b, uint64(uint32(int32(t.Sec)))<<32|uint64(t.Nsec))
}

// Time converts to time.Time.
func (t Timestamp) Time() time.Time { return time.Unix(t.Sec, int64(t.Nsec)) }

// TimestampOf converts a time.Time.
func TimestampOf(t time.Time) Timestamp {
	return Timestamp{Sec: t.Unix(), Nsec: uint32(t.Nanosecond())}
}

// Dinode is the v3 inode core (struct xfs_dinode up to di_uuid).
type Dinode struct {
	Magic        uint16    // di_magic
	Mode         uint16    // di_mode
	Version      uint8     // di_version
	Format       int8      // di_format
	OnLink       uint16    // di_onlink
	UID          uint32    // di_uid
	GID          uint32    // di_gid
	Nlink        uint32    // di_nlink
	ProjIDLo     uint16    // di_projid_lo
	ProjIDHi     uint16    // di_projid_hi
	BigNextents  uint64    // di_big_nextents (NREXT64) or di_pad[6]+di_flushiter
	Atime        Timestamp // di_atime
	Mtime        Timestamp // di_mtime
	Ctime        Timestamp // di_ctime
	Size         int64     // di_size
	NBlocks      uint64    // di_nblocks
	ExtSize      uint32    // di_extsize
	Nextents32   uint32    // di_nextents (or di_big_anextents with NREXT64)
	Anextents16  uint16    // di_anextents (or pad with NREXT64)
	ForkOff      uint8     // di_forkoff, in 8-byte units
	AFormat      int8      // di_aformat
	DmEvMask     uint32    // di_dmevmask
	DmState      uint16    // di_dmstate
	Flags        uint16    // di_flags
	Gen          uint32    // di_gen
	NextUnlinked AgIno     // di_next_unlinked
	CRC          uint32    // di_crc
	ChangeCount  uint64    // di_changecount
	LSN          LSN       // di_lsn
	Flags2       uint64    // di_flags2
	CowExtSize   uint32    // di_cowextsize
	Pad2         [12]byte  // di_pad2
	Crtime       Timestamp // di_crtime
	Ino          Ino       // di_ino
	UUID         [16]byte  // di_uuid
}

// Bigtime reports whether the timestamps use the bigtime encoding.
func (d *Dinode) Bigtime() bool { return d.Flags2&Diflag2Bigtime != 0 }

// Nrext64 reports whether the inode uses the large extent counters.
func (d *Dinode) Nrext64() bool { return d.Flags2&Diflag2Nrext64 != 0 }

// ProjID returns the 32-bit project ID.
func (d *Dinode) ProjID() uint32 { return uint32(d.ProjIDHi)<<16 | uint32(d.ProjIDLo) }

// SetProjID stores a 32-bit project ID.
func (d *Dinode) SetProjID(id uint32) { d.ProjIDHi, d.ProjIDLo = uint16(id>>16), uint16(id) }

// DataExtents returns the data fork's extent count.
func (d *Dinode) DataExtents() uint64 {
	if d.Nrext64() {
		return d.BigNextents
	}
	return uint64(d.Nextents32)
}

// AttrExtents returns the attribute fork's extent count.
func (d *Dinode) AttrExtents() uint64 {
	if d.Nrext64() {
		return uint64(d.Nextents32)
	}
	return uint64(d.Anextents16)
}

// DecodeDinode parses the inode core from the start of an inode buffer.
func DecodeDinode(b []byte) (*Dinode, error) {
	if len(b) < InodeCoreSize {
		return nil, Corrupt("inode", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	d := &Dinode{
		Magic: be.Uint16(b[0:]), Mode: be.Uint16(b[2:]), Version: b[4], Format: int8(b[5]),
		OnLink: be.Uint16(b[6:]), UID: be.Uint32(b[8:]), GID: be.Uint32(b[12:]), Nlink: be.Uint32(b[16:]),
		ProjIDLo: be.Uint16(b[20:]), ProjIDHi: be.Uint16(b[22:]), BigNextents: be.Uint64(b[24:]),
		Size: int64(be.Uint64(b[56:])), NBlocks: be.Uint64(b[64:]), ExtSize: be.Uint32(b[72:]),
		Nextents32: be.Uint32(b[76:]), Anextents16: be.Uint16(b[80:]), ForkOff: b[82], AFormat: int8(b[83]),
		DmEvMask: be.Uint32(b[84:]), DmState: be.Uint16(b[88:]), Flags: be.Uint16(b[90:]), Gen: be.Uint32(b[92:]),
		NextUnlinked: AgIno(be.Uint32(b[96:])), CRC: binary.LittleEndian.Uint32(b[100:]),
		ChangeCount: be.Uint64(b[104:]), LSN: LSN(be.Uint64(b[112:])), Flags2: be.Uint64(b[120:]),
		CowExtSize: be.Uint32(b[128:]), Ino: Ino(be.Uint64(b[152:])),
	}
	copy(d.Pad2[:], b[132:144])
	copy(d.UUID[:], b[160:176])
	bt := d.Bigtime()
	d.Atime, d.Mtime, d.Ctime = DecodeTimestamp(b[32:], bt), DecodeTimestamp(b[40:], bt), DecodeTimestamp(b[48:], bt)
	d.Crtime = DecodeTimestamp(b[144:], bt)
	return d, nil
}

// Encode writes the core into the first InodeCoreSize bytes of b.
func (d *Dinode) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint16(b[0:], d.Magic)
	be.PutUint16(b[2:], d.Mode)
	b[4], b[5] = d.Version, byte(d.Format)
	be.PutUint16(b[6:], d.OnLink)
	be.PutUint32(b[8:], d.UID)
	be.PutUint32(b[12:], d.GID)
	be.PutUint32(b[16:], d.Nlink)
	be.PutUint16(b[20:], d.ProjIDLo)
	be.PutUint16(b[22:], d.ProjIDHi)
	be.PutUint64(b[24:], d.BigNextents)
	bt := d.Bigtime()
	d.Atime.Encode(b[32:], bt)
	d.Mtime.Encode(b[40:], bt)
	d.Ctime.Encode(b[48:], bt)
	be.PutUint64(b[56:], uint64(d.Size))
	be.PutUint64(b[64:], d.NBlocks)
	be.PutUint32(b[72:], d.ExtSize)
	be.PutUint32(b[76:], d.Nextents32)
	be.PutUint16(b[80:], d.Anextents16)
	b[82], b[83] = d.ForkOff, byte(d.AFormat)
	be.PutUint32(b[84:], d.DmEvMask)
	be.PutUint16(b[88:], d.DmState)
	be.PutUint16(b[90:], d.Flags)
	be.PutUint32(b[92:], d.Gen)
	be.PutUint32(b[96:], uint32(d.NextUnlinked))
	binary.LittleEndian.PutUint32(b[100:], d.CRC)
	be.PutUint64(b[104:], d.ChangeCount)
	be.PutUint64(b[112:], uint64(d.LSN))
	be.PutUint64(b[120:], d.Flags2)
	be.PutUint32(b[128:], d.CowExtSize)
	copy(b[132:144], d.Pad2[:])
	d.Crtime.Encode(b[144:], bt)
	be.PutUint64(b[152:], uint64(d.Ino))
	copy(b[160:176], d.UUID[:])
}

// LiteralSize is the size of the fork area of an inode of inodeSize bytes.
func LiteralSize(inodeSize int) int { return inodeSize - InodeCoreSize }

// DataForkSize returns the bytes available to the data fork.
func (d *Dinode) DataForkSize(inodeSize int) int {
	if d.ForkOff != 0 {
		return int(d.ForkOff) << 3
	}
	return LiteralSize(inodeSize)
}

// AttrForkSize returns the bytes available to the attribute fork (0 if none).
func (d *Dinode) AttrForkSize(inodeSize int) int {
	if d.ForkOff == 0 {
		return 0
	}
	return LiteralSize(inodeSize) - int(d.ForkOff)<<3
}

// Forks splits an inode buffer into its data and attribute fork bytes.
func (d *Dinode) Forks(b []byte) (data, attr []byte) {
	lit := b[InodeCoreSize:]
	if d.ForkOff == 0 {
		return lit, nil
	}
	off := int(d.ForkOff) << 3
	return lit[:off], lit[off:]
}

// VerifyInode checks an inode buffer's CRC and core the way the kernel's
// inode verifier does, and returns the decoded core.
func VerifyInode(g *Geometry, ino Ino, b []byte) (*Dinode, error) {
	what := "inode"
	if len(b) < g.InodeSize {
		return nil, Corrupt(what, "", "%d bytes is too short", len(b))
	}
	b = b[:g.InodeSize]
	d, err := DecodeDinode(b)
	if err != nil {
		return nil, err
	}
	if d.Magic != InodeMagic {
		return nil, Corrupt(what, "", "bad magic %#x", d.Magic)
	}
	if d.Version != 3 {
		return nil, Corrupt(what, "", "version %d, want 3", d.Version)
	}
	if err := checkCRC(what, b, InodeCRCOff); err != nil {
		return nil, err
	}
	switch {
	case d.Ino != ino:
		return nil, Corrupt(what, "", "claims to be inode %d", d.Ino)
	case !bytes.Equal(d.UUID[:], g.UUID[:]):
		return nil, Corrupt(what, "", "UUID does not match the superblock")
	case d.Mode == 0:
		return d, nil // a free inode: nothing more to check
	case d.OnLink != 0:
		return nil, Corrupt(what, "", "v3 inode with di_onlink %d", d.OnLink)
	case d.Size < 0:
		return nil, Corrupt(what, "", "negative size %d", d.Size)
	case d.Nrext64() && !g.Nrext64:
		return nil, Corrupt(what, "", "large extent counts on a filesystem without nrext64")
	case d.Bigtime() && !g.Bigtime:
		return nil, Corrupt(what, "", "bigtime timestamps on a filesystem without bigtime")
	case int(d.ForkOff)<<3 >= LiteralSize(g.InodeSize):
		return nil, Corrupt(what, "", "attr fork offset %d beyond the literal area", d.ForkOff)
	}
	if err := verifyForkFormat(d, g); err != nil {
		return nil, err
	}
	return d, nil
}

func verifyForkFormat(d *Dinode, g *Geometry) error {
	what := "inode"
	dsize := d.DataForkSize(g.InodeSize)
	switch d.Mode & SIFMT {
	case SIFCHR, SIFBLK, SIFIFO, SIFSOCK:
		if d.Format != FmtDev {
			return Corrupt(what, "", "device inode with data fork format %d", d.Format)
		}
	case SIFREG, SIFDIR, SIFLNK:
		switch d.Format {
		case FmtLocal:
			if d.Mode&SIFMT == SIFREG {
				return Corrupt(what, "", "regular file with a local data fork")
			}
			if d.Size > int64(dsize) {
				return Corrupt(what, "", "local fork of %d bytes in a %d-byte fork", d.Size, dsize)
			}
		case FmtExtents:
			if d.DataExtents() > uint64(dsize)/ExtentRecSize { // 64-bit counts (nrext64) would overflow n*16
				return Corrupt(what, "", "%d extents do not fit a %d-byte data fork", d.DataExtents(), dsize)
			}
		case FmtBtree:
		default:
			return Corrupt(what, "", "bad data fork format %d", d.Format)
		}
	default:
		return Corrupt(what, "", "bad file type in mode %#o", d.Mode)
	}
	if d.ForkOff == 0 {
		if d.AttrExtents() != 0 {
			return Corrupt(what, "", "attr extents without an attr fork")
		}
		return nil
	}
	asize := d.AttrForkSize(g.InodeSize)
	switch d.AFormat {
	case FmtLocal:
	case FmtExtents:
		if d.AttrExtents() > uint64(asize)/ExtentRecSize {
			return Corrupt(what, "", "%d attr extents do not fit a %d-byte attr fork", d.AttrExtents(), asize)
		}
	case FmtBtree:
	default:
		return Corrupt(what, "", "bad attr fork format %d", d.AFormat)
	}
	return nil
}

// FileType names the type in a mode.
func FileType(mode uint16) string {
	switch mode & SIFMT {
	case SIFREG:
		return "file"
	case SIFDIR:
		return "dir"
	case SIFLNK:
		return "symlink"
	case SIFCHR:
		return "chardev"
	case SIFBLK:
		return "blockdev"
	case SIFIFO:
		return "fifo"
	case SIFSOCK:
		return "socket"
	}
	return fmt.Sprintf("mode%#o", mode&SIFMT)
}

// FormatName names a fork format.
func FormatName(f int8) string {
	switch f {
	case FmtDev:
		return "dev"
	case FmtLocal:
		return "local"
	case FmtExtents:
		return "extents"
	case FmtBtree:
		return "btree"
	}
	return fmt.Sprintf("format%d", f)
}
