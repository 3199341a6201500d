package mkfs

import (
	"encoding/binary"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// superblock returns the primary superblock as it reads once formatting is
// complete: counters filled in, root and realtime inodes set.
func (g *geometry) superblock(uuid [16]byte, c counts) *format.Superblock {
	o := g.opts
	root := g.rootIno()
	version := uint16(format.SbVersion5 | format.SbVersionNlinkBit | format.SbVersionAlignBit |
		format.SbVersionLogV2 | format.SbVersionExtFlg | format.SbVersionDirV2 | format.SbVersionMoreBits)
	var logSectLog uint8
	var logSectSize uint16
	if o.SectorSize > 512 {
		version |= format.SbVersionSector
		logSectLog, logSectSize = uint8(g.sectLog), uint16(o.SectorSize)
	}
	f2 := uint32(format.SbFeatures2LazySbCount | format.SbFeatures2Attr2 |
		format.SbFeatures2ProjID32 | format.SbFeatures2CRC)
	rextsize := uint32(1)
	if o.BlockSize < 4096 {
		rextsize = 4096 >> g.blockLog // mkfs's minimum realtime extent
	}
	sb := &format.Superblock{
		MagicNum: format.SbMagic, BlockSize: uint32(o.BlockSize), DBlocks: g.dblocks, UUID: uuid,
		LogStart: g.logStart, RootIno: root, RbmIno: root + 1, RsumIno: root + 2,
		RExtSize: rextsize, AgBlocks: g.agblocks, AgCount: g.agcount, LogBlocks: g.logBlocks,
		VersionNum: version, SectSize: uint16(o.SectorSize), InodeSize: uint16(o.InodeSize),
		InoPBlock: uint16(o.BlockSize / o.InodeSize),
		BlockLog:  uint8(g.blockLog), SectLog: uint8(g.sectLog), InodeLog: uint8(g.inodeLog),
		InoPBLog: uint8(g.blockLog - g.inodeLog), AgBlkLog: uint8(g.agblklog), IMaxPct: uint8(g.imaxpct),
		ICount: c.icount, IFree: c.ifree, FDBlocks: c.fdblocks,
		InoAlignMt: g.inoAlignMt, DirBlkLog: uint8(g.dirBlkLog),
		LogSectLog: logSectLog, LogSectSize: logSectSize, LogSUnit: g.logSUnit,
		Features2: f2, BadFeatures2: f2,
		FeaturesRo:       format.RoCompatFinobt | format.RoCompatInobtCnt,
		FeaturesIncompat: format.IncompatFType | format.IncompatSpinodes | format.IncompatBigtime,
		SpinoAlign:       g.spinoAlign,
	}
	if g.reflink() {
		sb.FeaturesRo |= format.RoCompatReflink
	}
	copy(sb.FName[:], o.Label)
	return sb
}

// secondary returns the superblock copy for AG ag. mkfs.xfs writes the
// copies before it creates any inode, so they keep the initial counters,
// no realtime inodes and the in-progress flag; afterwards it stores the
// root inode number in the last AG's copy and in the middle one.
func (g *geometry) secondary(primary *format.Superblock, ag uint32) *format.Superblock {
	s := *primary
	s.RootIno, s.RbmIno, s.RsumIno = format.NullIno, format.NullIno, format.NullIno
	if ag == g.agcount-1 || (g.agcount > 2 && ag == (g.agcount-1)/2) {
		s.RootIno = primary.RootIno
	}
	s.InProgress = 1
	s.ICount, s.IFree = 0, 0
	s.FDBlocks = g.dblocks - uint64(g.agcount)*uint64(g.prealloc) - uint64(g.logBlocks)
	return &s
}

// encodeSuperblock writes sb into a whole sector and sets its CRC.
func encodeSuperblock(sector []byte, sb *format.Superblock) {
	clear(sector)
	sb.Encode(sector)
	format.SetCRC(sector, format.SbCRCOff)
}

// agHeaders encodes the AG's header blocks and btree root blocks into buf,
// which covers AG blocks [0, prealloc).
func (g *geometry) agHeaders(buf []byte, sb *format.Superblock, a *agLayout, geo *format.Geometry) {
	clear(buf)
	ss, bs := g.opts.SectorSize, g.opts.BlockSize
	uuid := sb.UUID
	encodeSuperblock(buf[0:ss], sb)

	agf := &format.Agf{
		Magic: format.AgfMagic, Version: 1, SeqNo: format.AgNumber(a.ag), Length: a.length,
		Roots:  [3]format.AgBlock{format.AgBlock(g.bnoRoot), format.AgBlock(g.cntRoot), 0},
		Levels: [3]uint32{1, 1, 0},
		// Slot 0 stays empty: a fresh AGF starts with flfirst 1.
		FlFirst: 1, FlLast: uint32(len(a.agfl)), FlCount: uint32(len(a.agfl)),
		FreeBlks: a.freeBlocks(), Longest: a.longest(), UUID: uuid,
	}
	if g.reflink() {
		agf.RefcountRoot, agf.RefcountLevel, agf.RefcountBlocks = format.AgBlock(g.refcRoot), 1, 1
	}
	agf.Encode(buf[ss : 2*ss])
	format.SetCRC(buf[ss:2*ss], format.AgfCRCOff)

	agi := &format.Agi{
		Magic: format.AgiMagic, Version: 1, SeqNo: format.AgNumber(a.ag), Length: a.length,
		Root: format.AgBlock(g.inoRoot), Level: 1, NewIno: format.NullAgIno, DirIno: format.NullAgIno,
		UUID: uuid, FreeRoot: format.AgBlock(g.finoRoot), FreeLevel: 1, IBlocks: 1, FBlocks: 1,
	}
	for i := range agi.Unlinked {
		agi.Unlinked[i] = format.NullAgIno
	}
	for _, r := range a.inodes {
		agi.Count += uint32(r.Count)
		agi.FreeCount += uint32(r.FreeCount)
	}
	if len(a.inodes) > 0 {
		agi.NewIno = a.inodes[0].StartIno
	}
	agi.Encode(buf[2*ss : 3*ss])
	format.SetCRC(buf[2*ss:3*ss], format.AgiCRCOff)

	agfl := &format.Agfl{Magic: format.AgflMagic, SeqNo: format.AgNumber(a.ag), UUID: uuid,
		Bno: make([]format.AgBlock, format.AgflSize(geo))}
	for i := range agfl.Bno {
		agfl.Bno[i] = format.NullAgBlock
	}
	for i, b := range a.agfl {
		agfl.Bno[1+i] = format.AgBlock(b)
	}
	agfl.Encode(buf[3*ss : 4*ss])
	format.SetCRC(buf[3*ss:4*ss], format.AgflCRCOff)

	block := func(bno uint32) []byte { return buf[int(bno)*bs : int(bno+1)*bs] }
	free := make([][]byte, 0, len(a.free))
	for _, e := range a.free {
		free = append(free, allocRec(e))
	}
	cnt := make([][]byte, 0, len(a.free))
	for _, e := range a.byCount() {
		cnt = append(cnt, allocRec(e))
	}
	ino := make([][]byte, 0, len(a.inodes))
	fino := make([][]byte, 0, len(a.inodes))
	for _, r := range a.inodes {
		b := make([]byte, 16)
		r.Encode(b)
		ino = append(ino, b)
		if r.FreeCount > 0 {
			fino = append(fino, b)
		}
	}
	g.btreeLeaf(block(g.bnoRoot), format.BnobtMagic, a.ag, g.bnoRoot, geo, uuid, free)
	g.btreeLeaf(block(g.cntRoot), format.CntbtMagic, a.ag, g.cntRoot, geo, uuid, cnt)
	g.btreeLeaf(block(g.inoRoot), format.InobtMagic, a.ag, g.inoRoot, geo, uuid, ino)
	g.btreeLeaf(block(g.finoRoot), format.FinobtMagic, a.ag, g.finoRoot, geo, uuid, fino)
	if g.reflink() {
		g.btreeLeaf(block(g.refcRoot), format.RefcountMagic, a.ag, g.refcRoot, geo, uuid, nil)
	}
}

func allocRec(e extent) []byte {
	b := make([]byte, 8)
	format.AllocRec{StartBlock: format.AgBlock(e.bno), BlockCount: e.len}.Encode(b)
	return b
}

// btreeLeaf encodes a single-block (root and leaf) short-form btree.
func (g *geometry) btreeLeaf(b []byte, magic uint32, ag, bno uint32, geo *format.Geometry, uuid [16]byte, recs [][]byte) {
	h := &format.BtreeBlock{
		Magic: magic, NumRecs: uint16(len(recs)),
		LeftSib: uint64(format.NullAgBlock), RightSib: uint64(format.NullAgBlock),
		Blkno: geo.AgbToDaddr(format.AgNumber(ag), format.AgBlock(bno)), UUID: uuid, Owner: uint64(ag),
	}
	h.Encode(b)
	off := format.ShortBlockHdrSize
	for _, r := range recs {
		off += copy(b[off:], r)
	}
	format.SetCRC(b, format.ShortBlockCRCOff)
}

// encodeInodeChunk encodes the first inode chunk: the root directory (an empty
// short-form directory that is its own parent), the realtime bitmap and
// summary inodes (empty regular files) and free inodes.
func (g *geometry) encodeInodeChunk(buf []byte, uuid [16]byte, now time.Time) {
	clear(buf)
	isize := g.opts.InodeSize
	root := g.rootIno()
	stamp := format.TimestampOf(now)
	for i := 0; i < g.iallocInos; i++ {
		b := buf[i*isize : (i+1)*isize]
		d := &format.Dinode{Magic: format.InodeMagic, Version: 3, NextUnlinked: format.NullAgIno,
			Ino: root + format.Ino(i), UUID: uuid}
		if i < 3 {
			// mkfs leaves the access time at the epoch and stamps the
			// other times with the moment of creation.
			d.Mtime, d.Ctime, d.Crtime = stamp, stamp, stamp
			d.AFormat = format.FmtExtents
			d.ChangeCount = 2
			d.Flags2 = format.Diflag2Bigtime
		}
		switch i {
		case 0:
			d.Mode = format.SIFDIR | 0o755
			d.Format = format.FmtLocal
			d.Nlink = 2
			d.Size = 6 // empty short-form directory with a 4-byte parent
		case 1:
			d.Mode = format.SIFREG
			d.Format = format.FmtExtents
			d.Nlink = 1
			d.Flags = format.DiflagNewRtBm
		case 2:
			d.Mode = format.SIFREG
			d.Format = format.FmtExtents
			d.Nlink = 1
		}
		d.Encode(b)
		if i == 0 {
			// xfs_dir2_sf_hdr: count 0, i8count 0, parent (itself).
			lit := b[format.InodeCoreSize:]
			lit[0], lit[1] = 0, 0
			binary.BigEndian.PutUint32(lit[2:], uint32(root))
		}
		format.SetCRC(b, format.InodeCRCOff)
	}
}
