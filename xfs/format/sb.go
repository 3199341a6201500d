package format

import (
	"encoding/binary"
	"fmt"
)

// SbMagic is "XFSB".
const SbMagic = 0x58465342

// Superblock sizes and offsets.
const (
	SbSize   = 264 // sizeof(struct xfs_dsb)
	SbCRCOff = 224
)

// Version and feature bits (xfs_format.h).
const (
	SbVersion5        = 5
	SbVersionNumMask  = 0x000f
	SbVersionAttrBit  = 0x0010
	SbVersionNlinkBit = 0x0020
	SbVersionQuotaBit = 0x0040
	SbVersionAlignBit = 0x0080
	SbVersionDalign   = 0x0100
	SbVersionLogV2    = 0x0400
	SbVersionExtFlg   = 0x1000
	SbVersionDirV2    = 0x2000
	SbVersionMoreBits = 0x8000

	SbFeatures2LazySbCount = 0x00000002
	SbFeatures2Attr2       = 0x00000008
	SbFeatures2ProjID32    = 0x00000080
	SbFeatures2CRC         = 0x00000100
	SbFeatures2FType       = 0x00000200

	RoCompatFinobt   = 1 << 0
	RoCompatRmapbt   = 1 << 1
	RoCompatReflink  = 1 << 2
	RoCompatInobtCnt = 1 << 3

	IncompatFType    = 1 << 0
	IncompatSpinodes = 1 << 1
	IncompatMetaUUID = 1 << 2
	IncompatBigtime  = 1 << 3
	IncompatNeedsRep = 1 << 4
	IncompatNrext64  = 1 << 5

	// IncompatKnown lists the incompat bits this engine understands.
	IncompatKnown = IncompatFType | IncompatSpinodes | IncompatMetaUUID | IncompatBigtime | IncompatNrext64
	// RoCompatKnown lists the ro-compat bits this engine understands.
	RoCompatKnown = RoCompatFinobt | RoCompatRmapbt | RoCompatReflink | RoCompatInobtCnt
)

// Superblock is struct xfs_dsb in disk order.
type Superblock struct {
	MagicNum            uint32   // sb_magicnum
	BlockSize           uint32   // sb_blocksize
	DBlocks             uint64   // sb_dblocks
	RBlocks             uint64   // sb_rblocks
	RExtents            uint64   // sb_rextents
	UUID                [16]byte // sb_uuid
	LogStart            FsBlock  // sb_logstart
	RootIno             Ino      // sb_rootino
	RbmIno              Ino      // sb_rbmino
	RsumIno             Ino      // sb_rsumino
	RExtSize            uint32   // sb_rextsize
	AgBlocks            uint32   // sb_agblocks
	AgCount             uint32   // sb_agcount
	RbmBlocks           uint32   // sb_rbmblocks
	LogBlocks           uint32   // sb_logblocks
	VersionNum          uint16   // sb_versionnum
	SectSize            uint16   // sb_sectsize
	InodeSize           uint16   // sb_inodesize
	InoPBlock           uint16   // sb_inopblock
	FName               [12]byte // sb_fname
	BlockLog            uint8    // sb_blocklog
	SectLog             uint8    // sb_sectlog
	InodeLog            uint8    // sb_inodelog
	InoPBLog            uint8    // sb_inopblog
	AgBlkLog            uint8    // sb_agblklog
	RExtSLog            uint8    // sb_rextslog
	InProgress          uint8    // sb_inprogress
	IMaxPct             uint8    // sb_imax_pct
	ICount              uint64   // sb_icount
	IFree               uint64   // sb_ifree
	FDBlocks            uint64   // sb_fdblocks
	FRExtents           uint64   // sb_frextents
	UQuotIno            Ino      // sb_uquotino
	GQuotIno            Ino      // sb_gquotino
	QFlags              uint16   // sb_qflags
	Flags               uint8    // sb_flags
	SharedVN            uint8    // sb_shared_vn
	InoAlignMt          uint32   // sb_inoalignmt
	Unit                uint32   // sb_unit
	Width               uint32   // sb_width
	DirBlkLog           uint8    // sb_dirblklog
	LogSectLog          uint8    // sb_logsectlog
	LogSectSize         uint16   // sb_logsectsize
	LogSUnit            uint32   // sb_logsunit
	Features2           uint32   // sb_features2
	BadFeatures2        uint32   // sb_bad_features2
	FeaturesCompat      uint32   // sb_features_compat
	FeaturesRo          uint32   // sb_features_ro_compat
	FeaturesIncompat    uint32   // sb_features_incompat
	FeaturesLogIncompat uint32   // sb_features_log_incompat
	CRC                 uint32   // sb_crc (little-endian on disk)
	SpinoAlign          uint32   // sb_spino_align
	PQuotIno            Ino      // sb_pquotino
	LSN                 LSN      // sb_lsn
	MetaUUID            [16]byte // sb_meta_uuid
}

// DecodeSuperblock parses the first SbSize bytes of b without verifying it.
func DecodeSuperblock(b []byte) (*Superblock, error) {
	if len(b) < SbSize {
		return nil, Corrupt("superblock", "", "%d bytes is too short", len(b))
	}
	be := binary.BigEndian
	s := &Superblock{
		MagicNum: be.Uint32(b[0:]), BlockSize: be.Uint32(b[4:]), DBlocks: be.Uint64(b[8:]),
		RBlocks: be.Uint64(b[16:]), RExtents: be.Uint64(b[24:]),
		LogStart: FsBlock(be.Uint64(b[48:])), RootIno: Ino(be.Uint64(b[56:])),
		RbmIno: Ino(be.Uint64(b[64:])), RsumIno: Ino(be.Uint64(b[72:])),
		RExtSize: be.Uint32(b[80:]), AgBlocks: be.Uint32(b[84:]), AgCount: be.Uint32(b[88:]),
		RbmBlocks: be.Uint32(b[92:]), LogBlocks: be.Uint32(b[96:]),
		VersionNum: be.Uint16(b[100:]), SectSize: be.Uint16(b[102:]), InodeSize: be.Uint16(b[104:]),
		InoPBlock: be.Uint16(b[106:]),
		BlockLog:  b[120], SectLog: b[121], InodeLog: b[122], InoPBLog: b[123], AgBlkLog: b[124],
		RExtSLog: b[125], InProgress: b[126], IMaxPct: b[127],
		ICount: be.Uint64(b[128:]), IFree: be.Uint64(b[136:]), FDBlocks: be.Uint64(b[144:]),
		FRExtents: be.Uint64(b[152:]), UQuotIno: Ino(be.Uint64(b[160:])), GQuotIno: Ino(be.Uint64(b[168:])),
		QFlags: be.Uint16(b[176:]), Flags: b[178], SharedVN: b[179], InoAlignMt: be.Uint32(b[180:]),
		Unit: be.Uint32(b[184:]), Width: be.Uint32(b[188:]), DirBlkLog: b[192], LogSectLog: b[193],
		LogSectSize: be.Uint16(b[194:]), LogSUnit: be.Uint32(b[196:]), Features2: be.Uint32(b[200:]),
		BadFeatures2: be.Uint32(b[204:]), FeaturesCompat: be.Uint32(b[208:]), FeaturesRo: be.Uint32(b[212:]),
		FeaturesIncompat: be.Uint32(b[216:]), FeaturesLogIncompat: be.Uint32(b[220:]),
		CRC: binary.LittleEndian.Uint32(b[224:]), SpinoAlign: be.Uint32(b[228:]),
		PQuotIno: Ino(be.Uint64(b[232:])), LSN: LSN(be.Uint64(b[240:])),
	}
	copy(s.UUID[:], b[32:48])
	copy(s.FName[:], b[108:120])
	copy(s.MetaUUID[:], b[248:264])
	return s, nil
}

// Encode writes the superblock into the first SbSize bytes of b. It does not
// touch the CRC field's value (call SetCRC over the whole sector afterwards).
func (s *Superblock) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[0:], s.MagicNum)
	be.PutUint32(b[4:], s.BlockSize)
	be.PutUint64(b[8:], s.DBlocks)
	be.PutUint64(b[16:], s.RBlocks)
	be.PutUint64(b[24:], s.RExtents)
	copy(b[32:48], s.UUID[:])
	be.PutUint64(b[48:], uint64(s.LogStart))
	be.PutUint64(b[56:], uint64(s.RootIno))
	be.PutUint64(b[64:], uint64(s.RbmIno))
	be.PutUint64(b[72:], uint64(s.RsumIno))
	be.PutUint32(b[80:], s.RExtSize)
	be.PutUint32(b[84:], s.AgBlocks)
	be.PutUint32(b[88:], s.AgCount)
	be.PutUint32(b[92:], s.RbmBlocks)
	be.PutUint32(b[96:], s.LogBlocks)
	be.PutUint16(b[100:], s.VersionNum)
	be.PutUint16(b[102:], s.SectSize)
	be.PutUint16(b[104:], s.InodeSize)
	be.PutUint16(b[106:], s.InoPBlock)
	copy(b[108:120], s.FName[:])
	b[120], b[121], b[122], b[123] = s.BlockLog, s.SectLog, s.InodeLog, s.InoPBLog
	b[124], b[125], b[126], b[127] = s.AgBlkLog, s.RExtSLog, s.InProgress, s.IMaxPct
	be.PutUint64(b[128:], s.ICount)
	be.PutUint64(b[136:], s.IFree)
	be.PutUint64(b[144:], s.FDBlocks)
	be.PutUint64(b[152:], s.FRExtents)
	be.PutUint64(b[160:], uint64(s.UQuotIno))
	be.PutUint64(b[168:], uint64(s.GQuotIno))
	be.PutUint16(b[176:], s.QFlags)
	b[178], b[179] = s.Flags, s.SharedVN
	be.PutUint32(b[180:], s.InoAlignMt)
	be.PutUint32(b[184:], s.Unit)
	be.PutUint32(b[188:], s.Width)
	b[192], b[193] = s.DirBlkLog, s.LogSectLog
	be.PutUint16(b[194:], s.LogSectSize)
	be.PutUint32(b[196:], s.LogSUnit)
	be.PutUint32(b[200:], s.Features2)
	be.PutUint32(b[204:], s.BadFeatures2)
	be.PutUint32(b[208:], s.FeaturesCompat)
	be.PutUint32(b[212:], s.FeaturesRo)
	be.PutUint32(b[216:], s.FeaturesIncompat)
	be.PutUint32(b[220:], s.FeaturesLogIncompat)
	binary.LittleEndian.PutUint32(b[224:], s.CRC)
	be.PutUint32(b[228:], s.SpinoAlign)
	be.PutUint64(b[232:], uint64(s.PQuotIno))
	be.PutUint64(b[240:], uint64(s.LSN))
	copy(b[248:264], s.MetaUUID[:])
}

// HasRoCompat and friends test feature bits.
func (s *Superblock) HasRoCompat(bit uint32) bool { return s.FeaturesRo&bit != 0 }
func (s *Superblock) HasIncompat(bit uint32) bool { return s.FeaturesIncompat&bit != 0 }
func (s *Superblock) IsV5() bool                  { return s.VersionNum&SbVersionNumMask == SbVersion5 }
func (s *Superblock) HasFinobt() bool             { return s.HasRoCompat(RoCompatFinobt) }
func (s *Superblock) HasReflink() bool            { return s.HasRoCompat(RoCompatReflink) }
func (s *Superblock) HasRmapbt() bool             { return s.HasRoCompat(RoCompatRmapbt) }
func (s *Superblock) HasInobtCount() bool         { return s.HasRoCompat(RoCompatInobtCnt) }
func (s *Superblock) HasSparseInodes() bool       { return s.HasIncompat(IncompatSpinodes) }
func (s *Superblock) HasBigtime() bool            { return s.HasIncompat(IncompatBigtime) }
func (s *Superblock) HasNrext64() bool            { return s.HasIncompat(IncompatNrext64) }
func (s *Superblock) HasMetaUUID() bool           { return s.HasIncompat(IncompatMetaUUID) }
func (s *Superblock) HasFType() bool {
	return s.HasIncompat(IncompatFType) || s.Features2&SbFeatures2FType != 0
}

// MetadataUUID is the UUID stamped into every v5 metadata block.
func (s *Superblock) MetadataUUID() [16]byte {
	if s.HasMetaUUID() {
		return s.MetaUUID
	}
	return s.UUID
}

// Verify checks the superblock the way the kernel's mount-time verifier
// does for the features this engine supports. sector is the whole sector the
// superblock was read from (the CRC covers it).
func (s *Superblock) Verify(sector []byte) error {
	const what = "superblock"
	if s.MagicNum != SbMagic {
		return Corrupt(what, "", "bad magic %#x (not an XFS filesystem)", s.MagicNum)
	}
	if !s.IsV5() {
		return Corrupt(what, "", "version %d: only XFS v5 (crc=1) filesystems are supported", s.VersionNum&SbVersionNumMask)
	}
	if err := checkCRC(what, sector, SbCRCOff); err != nil {
		return err
	}
	switch {
	case s.SectSize < 512 || s.SectSize > 32768 || s.SectSize&(s.SectSize-1) != 0 || 1<<s.SectLog != uint32(s.SectSize):
		return Corrupt(what, "", "bad sector size %d (log %d)", s.SectSize, s.SectLog)
	case s.BlockSize < 512 || s.BlockSize > 65536 || 1<<s.BlockLog != s.BlockSize:
		return Corrupt(what, "", "bad block size %d (log %d)", s.BlockSize, s.BlockLog)
	case s.BlockSize < uint32(s.SectSize):
		return Corrupt(what, "", "block size %d smaller than sector size %d", s.BlockSize, s.SectSize)
	case s.InodeSize < 256 || s.InodeSize > 2048 || 1<<s.InodeLog != uint32(s.InodeSize):
		return Corrupt(what, "", "bad inode size %d (log %d)", s.InodeSize, s.InodeLog)
	case uint32(s.InodeSize) > s.BlockSize || uint32(s.InoPBlock) != s.BlockSize/uint32(s.InodeSize) ||
		s.InoPBLog != s.BlockLog-s.InodeLog:
		return Corrupt(what, "", "inodes per block %d (log %d) do not match block and inode size", s.InoPBlock, s.InoPBLog)
	case s.AgCount == 0 || s.AgBlocks < 64 || s.AgBlkLog > 31 || s.AgBlkLog < 6 ||
		1<<s.AgBlkLog < uint64(s.AgBlocks) || 1<<(s.AgBlkLog-1) >= uint64(s.AgBlocks):
		return Corrupt(what, "", "bad AG geometry: %d AGs of %d blocks (log %d)", s.AgCount, s.AgBlocks, s.AgBlkLog)
	case s.DBlocks == 0 || s.DBlocks > uint64(s.AgCount)*uint64(s.AgBlocks) ||
		s.DBlocks <= uint64(s.AgCount-1)*uint64(s.AgBlocks):
		return Corrupt(what, "", "%d data blocks do not fit %d AGs of %d blocks", s.DBlocks, s.AgCount, s.AgBlocks)
	case int(s.BlockLog)+int(s.DirBlkLog) > 16:
		return Corrupt(what, "", "directory block size 2^%d too large", int(s.BlockLog)+int(s.DirBlkLog))
	case s.AgBlkLog+s.InoPBLog > 32:
		return Corrupt(what, "", "inode numbers of %d bits per AG are too wide", s.AgBlkLog+s.InoPBLog)
	}
	return nil
}

// String summarises the geometry for messages.
func (s *Superblock) String() string {
	return fmt.Sprintf("bsize=%d isize=%d agcount=%d agblocks=%d dblocks=%d", s.BlockSize, s.InodeSize, s.AgCount, s.AgBlocks, s.DBlocks)
}
