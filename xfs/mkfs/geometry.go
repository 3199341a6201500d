package mkfs

import (
	"github.com/xfs3/xfs3/xfs/format"
)

// Size rules of mkfs.xfs 6.1 that shape the geometry.
const (
	agMinBytes = 16 << 20  // smallest AG mkfs formats
	agMaxBytes = 1<<40 - 1 // largest AG (just under 1 TiB)

	// AG count rule for a single device: 4 AGs from 128 MiB to 4 TiB,
	// AGs of maximal size above; below 128 MiB fewer, smaller AGs.
	noMultidiskAgLog = 2
	multidiskAgLog   = 5

	maxLogBlocks        = 1 << 20        // XFS_MAX_LOG_BLOCKS
	minLogBytes         = 10 << 20       // XFS_MIN_LOG_BYTES
	maxLogBytes         = 2<<30 - 10<<20 // XFS_MAX_LOG_BYTES
	realisticLogBytes   = 64 << 20       // default floor of the log size
	tinyFilesystemBytes = 300 << 20      // below this the log is the minimum

	inodesPerChunk   = 64
	inodeClusterSize = 8192 // XFS_INODE_BIG_CLUSTER_SIZE, before scaling
	agflReserve      = 4    // XFS_ALLOCBT_AGFL_RESERVE
	defaultIMaxPct   = 25
)

// geometry is everything decided before a byte is written. It is a pure
// function of the options and the device size (see plan), so it can be
// compared against mkfs.xfs -N without touching a disk.
type geometry struct {
	opts Options

	blockLog, sectLog, inodeLog uint
	dirBlkLog                   uint // log2(dir block size / block size)

	dblocks  uint64
	agcount  uint32
	agblocks uint32
	agblklog uint
	imaxpct  int

	inoAlignMt uint32 // sb_inoalignmt: full inode chunk alignment in blocks
	spinoAlign uint32 // sb_spino_align: sparse chunk alignment in blocks
	logSUnit   uint32 // sb_logsunit in bytes (1 = none)

	// Per-AG layout shared by every AG.
	prealloc  uint32 // first AG block after headers and btree roots
	bnoRoot   uint32
	cntRoot   uint32
	inoRoot   uint32
	finoRoot  uint32
	refcRoot  uint32 // 0 without reflink
	agflCount uint32 // blocks put on each AGFL

	allocMaxLevels int
	refcMaxLevels  int // tallest refcount btree an AG can hold (0 without reflink)

	// The internal log.
	minLogBlocks uint32
	logBlocks    uint32
	logAg        uint32
	logStart     format.FsBlock

	// The first inode chunk (AG 0).
	iallocInos   int    // inodes allocated at once (one chunk or one block)
	iallocBlocks uint32 // blocks they occupy
	chunkBno     uint32 // AG 0 block of the first inode chunk
}

// plan computes the geometry of a filesystem of devBytes bytes (the device
// size, or o.Size when it is set) the way mkfs.xfs 6.1 does with no stripe
// geometry, and "-m reflink=0" when o.NoReflink is set.
func plan(o Options, devBytes int64) (*geometry, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	size := o.Size
	if size == 0 {
		size = devBytes
	}
	if o.Size > 0 && devBytes > 0 && o.Size > devBytes {
		return nil, invalid("size %d is larger than the device (%d bytes)", o.Size, devBytes)
	}
	if size < MinSize {
		return nil, invalid("size %d bytes is too small: an XFS filesystem made by xfs3 needs at least %d MiB", size, MinSize>>20)
	}
	g := &geometry{opts: o}
	g.blockLog, g.sectLog, g.inodeLog = log2(o.BlockSize), log2(o.SectorSize), log2(o.InodeSize)
	g.dirBlkLog = log2(o.DirBlockSize) - g.blockLog
	g.dblocks = uint64(size) >> g.blockLog

	if err := g.agGeometry(); err != nil {
		return nil, err
	}
	g.imaxpct = g.defaultIMaxPct()
	g.features()
	if err := g.logGeometry(); err != nil {
		return nil, err
	}
	if err := g.placeInodeChunk(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *geometry) agMinBlocks() uint64 { return agMinBytes >> g.blockLog }
func (g *geometry) agMaxBlocks() uint64 { return agMaxBytes >> g.blockLog }

// agGeometry picks agcount and agblocks (calc_default_ag_geometry or the
// user's count) and drops a runt last AG.
func (g *geometry) agGeometry() error {
	d := g.dblocks
	var agsize, agcount uint64
	if g.opts.AgCount > 0 {
		agcount = uint64(g.opts.AgCount)
		agsize = (d + agcount - 1) / agcount
	} else {
		agsize = g.defaultAgSize()
		agcount = (d + agsize - 1) / agsize
	}
	if agsize == 0 {
		return invalid("%d blocks cannot be split into %d allocation groups", d, agcount)
	}
	// A last AG smaller than the minimum is dropped along with its blocks.
	if rem := d % agsize; rem != 0 && rem < g.agMinBlocks() {
		d = (agcount - 1) * agsize
		agcount--
	}
	switch {
	case agsize < g.agMinBlocks():
		return invalid("allocation groups of %d blocks are too small (at least %d blocks = 16 MiB); use fewer AGs",
			agsize, g.agMinBlocks())
	case agsize > g.agMaxBlocks():
		return invalid("allocation groups of %d blocks are too big (at most %d blocks = 1 TiB); use more AGs",
			agsize, g.agMaxBlocks())
	case agsize > d:
		return invalid("allocation group of %d blocks is larger than the %d-block data area", agsize, d)
	case agcount < 2:
		return invalid("%d allocation group(s): need at least 2 for redundant superblocks", agcount)
	case agcount > MaxAgCount:
		return invalid("%d allocation groups is too many (at most %d)", agcount, uint64(MaxAgCount))
	}
	g.dblocks, g.agcount, g.agblocks = d, uint32(agcount), uint32(agsize)
	g.agblklog = log2(int(agsize))
	return nil
}

// defaultAgSize is mkfs.xfs's AG size for a single, non-striped device.
func (g *geometry) defaultAgSize() uint64 {
	d, bl := g.dblocks, g.blockLog
	tb := func(n uint64) uint64 { return n << (40 - bl) }
	gb := func(n uint64) uint64 { return n << (30 - bl) }
	mb := func(n uint64) uint64 { return n << (20 - bl) }
	if d >= tb(4) {
		return g.agMaxBlocks()
	}
	shift := uint(noMultidiskAgLog)
	if d < mb(128) {
		shift = multidiskAgLog
		if d <= gb(512) {
			shift--
		}
		if d <= gb(8) {
			shift--
		}
		if d < mb(128) {
			shift--
		}
		if d < mb(64) {
			shift--
		}
		if d < mb(32) {
			shift--
		}
	}
	blocks := d >> shift
	if d&(1<<shift-1) != 0 && blocks < g.agMaxBlocks() {
		blocks++
	}
	return blocks
}

// defaultIMaxPct is the share of space inodes may take: 25% under 1 TiB,
// 5% under 50 TiB, 1% above.
func (g *geometry) defaultIMaxPct() int {
	switch {
	case g.dblocks < 1<<(40-g.blockLog):
		return defaultIMaxPct
	case g.dblocks < 50<<(40-g.blockLog):
		return 5
	}
	return 1
}

// features derives the alignment fields that depend on the feature set.
func (g *geometry) features() {
	isize := uint32(g.opts.InodeSize)
	// Sparse inodes: sparse chunks align to the (scaled) cluster size,
	// full chunks to the chunk size.
	g.spinoAlign = (inodeClusterSize * isize / 256) >> g.blockLog
	g.inoAlignMt = (inodesPerChunk * isize) >> g.blockLog
	g.logSUnit = 1
	if g.opts.SectorSize > 512 {
		// A log sector larger than a basic block makes mkfs use a log
		// stripe unit of one filesystem block.
		g.logSUnit = uint32(g.opts.BlockSize)
	}

	// Fixed AG blocks: the header sectors, then the free space, inode,
	// free inode and refcount btree roots.
	agflBlock := uint32((3 * g.opts.SectorSize) >> g.blockLog)
	g.bnoRoot = agflBlock + 1
	g.cntRoot = g.bnoRoot + 1
	g.inoRoot = g.cntRoot + 1
	g.finoRoot = g.inoRoot + 1
	g.prealloc = g.finoRoot + 1
	if g.reflink() {
		g.refcRoot = g.prealloc
		g.prealloc++
		// Every block of the AG may need its own refcount record.
		leaf := format.RefcountShape.MaxRecs(g.opts.BlockSize, true) / 2
		node := format.RefcountShape.MaxRecs(g.opts.BlockSize, false) / 2
		g.refcMaxLevels = btreeMaxLevels(leaf, node, uint64(g.agblocks))
	}

	// The AGFL starts with what splitting each (one-level) free space
	// btree can take: a block per level plus one for a new root, capped
	// at the tallest such tree an AG can hold (every other block free).
	mnr := (format.BnobtShape.MaxRecs(g.opts.BlockSize, true) / 2)
	mnrNode := (format.BnobtShape.MaxRecs(g.opts.BlockSize, false) / 2)
	g.allocMaxLevels = btreeMaxLevels(mnr, mnrNode, (uint64(g.agblocks)+1)/2)
	g.agflCount = uint32(2 * min(2, g.allocMaxLevels))
}

// reflink reports whether the filesystem gets the reflink feature.
func (g *geometry) reflink() bool { return !g.opts.NoReflink }

// btreeMaxLevels is the height of a btree of minimally full blocks that
// indexes records records.
func btreeMaxLevels(leafMin, nodeMin int, records uint64) int {
	blocks := (records + uint64(leafMin) - 1) / uint64(leafMin)
	h := 1
	for blocks > 1 {
		blocks = (blocks + uint64(nodeMin) - 1) / uint64(nodeMin)
		h++
	}
	return h
}

// agHeaderBlocks is the number of blocks the four header sectors cover.
func (g *geometry) agHeaderBlocks() uint32 {
	return uint32((4*g.opts.SectorSize + g.opts.BlockSize - 1) >> g.blockLog)
}

// agMaxUsable is the largest allocation an AG can satisfy: all but the
// headers, the AGFL reserve and the btree roots.
func (g *geometry) agMaxUsable() uint32 {
	roots := uint32(3 + 1) // AGF and AGI trees, finobt
	if g.reflink() {
		roots++
	}
	return g.agblocks - (g.agHeaderBlocks() + agflReserve + roots)
}

// logGeometry sizes and places the internal log (calculate_log_size).
func (g *geometry) logGeometry() error {
	bl := g.blockLog
	minLog := uint64(g.minimumLogBlocks())
	minLog = max(minLog, format.MinLogBlocks)
	if g.dblocks >= (1<<30)>>bl {
		minLog = max(minLog, minLogBytes>>bl)
	}
	maxLog := uint64(g.agMaxUsable()) - 1
	if maxLog < minLog {
		return invalid("filesystem too small: the log needs at least %d blocks but an AG can hold only %d; use fewer, larger AGs",
			minLog, maxLog)
	}
	lb := (g.dblocks << bl) / 2048 >> bl
	lb = max(lb, realisticLogBytes>>bl)
	if g.dblocks < tinyFilesystemBytes>>bl {
		lb = minLog
	}
	lb = max(lb, minLog)
	lb = min(lb, maxLog)
	lb = min(lb, maxLogBlocks)
	if lb<<bl > maxLogBytes {
		lb = maxLogBytes >> bl
	}
	if lb < minLog || lb > maxLogBlocks || lb<<bl > maxLogBytes {
		return invalid("log of %d blocks is outside the allowed range (%d to %d blocks)", lb, minLog, uint64(maxLogBlocks))
	}
	if lb > uint64(g.agblocks-g.prealloc) {
		return invalid("internal log of %d blocks does not fit in an allocation group", lb)
	}
	g.minLogBlocks = uint32(minLog)
	g.logBlocks = uint32(lb)
	// The log goes to the middle AG, right after the btree roots. With
	// at least two AGs that is never AG 0.
	g.logAg = g.agcount / 2
	g.logStart = format.FsBlock(uint64(g.logAg)<<g.agblklog | uint64(g.prealloc))
	return nil
}

// placeInodeChunk places the first inode chunk of AG 0 where mkfs.xfs (and
// xfs_repair's check of the root inode number) expects it: after the
// headers, btree roots and the initial AGFL, aligned to sb_inoalignmt.
func (g *geometry) placeInodeChunk() error {
	inopblock := g.opts.BlockSize / g.opts.InodeSize
	g.iallocInos = max(inodesPerChunk, inopblock)
	g.iallocBlocks = uint32(g.iallocInos / inopblock)
	first := g.agHeaderBlocks() + 2 + 1 + g.agflCount + 1 // headers, bno+cnt, ino roots, AGFL, fino root
	if g.reflink() {
		first++ // refcount root
	}
	if g.inoAlignMt > 1 {
		first = (first + g.inoAlignMt - 1) / g.inoAlignMt * g.inoAlignMt
	}
	if uint64(first)+uint64(g.iallocBlocks) > uint64(g.agSize(0)) {
		return invalid("AG 0 has no room for the first inode chunk")
	}
	g.chunkBno = first
	return nil
}

// agSize is the length of AG ag (the last one may be shorter).
func (g *geometry) agSize(ag uint32) uint32 {
	if ag == g.agcount-1 {
		return uint32(g.dblocks - uint64(g.agcount-1)*uint64(g.agblocks))
	}
	return g.agblocks
}

// rootIno is the inode number of the root directory.
func (g *geometry) rootIno() format.Ino {
	return format.Ino(uint64(g.chunkBno) << (g.blockLog - g.inodeLog))
}
