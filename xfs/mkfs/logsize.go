package mkfs

// The minimum log size.
//
// The kernel refuses to mount a v5 filesystem whose log is smaller than a
// size derived from its worst-case transaction reservations: the log must
// hold three of the largest transaction (with its log record overheads)
// plus some padding. mkfs.xfs uses the same computation to size the log of
// small filesystems, so to produce the same log size we reproduce the
// reservation table of xfsprogs 6.1 for our feature set: v5 inodes, finobt,
// reflink or not, no rmapbt, no realtime device, no large extent counts.
//
// With reflink, the minimum is computed from the reservations of the first
// reflink kernels (xfs_log_calc_trans_resv_for_minlogblocks), so that new
// filesystems still mount there: the write, truncate and quota allocation
// transactions carry refcount btree splits and a log count of 8.
//
// Every reservation is a number of bytes to log, made of:
//   - buffers: n × (size + 128), the 128 bytes covering the op header and
//     buffer log format item that precede each logged buffer;
//   - inodes: n × (4 op headers + inode log format + the inode + two
//     long-form btree block headers for the fork roots);
//   - a fixed 768 bytes for dquots on every transaction that can change
//     quota usage.

// Sizes of log structures that enter the reservations.
const (
	resvBufOverhead  = 128 // round_up(op header 12 + buf log format 88, 128)
	resvOpHeader     = 12  // struct xlog_op_header
	resvTransHeader  = 16  // struct xfs_trans_header
	resvInodeLogFmt  = 56  // struct xfs_inode_log_format
	resvLongBtreeHdr = 72  // v5 long-form btree block header
	resvDquot        = (24 + 104) * 6
	resvSymlinkMax   = 1024 // XFS_SYMLINK_MAXLEN
	resvMaxNameLen   = 256  // MAXNAMELEN
	resvDaMaxDepth   = 5    // XFS_DA_NODE_MAXDEPTH
	resvIclogSize    = 256 << 10
	resvIclogHdr     = 4096 // header space of a 256 KiB in-core log buffer
	resvMinLogFactor = 3
)

// resvGeom holds the mount-time numbers the reservations are built from.
type resvGeom struct {
	bs, ss, isize  int64
	dirBlkSize     int64
	dirFsbCount    int64
	allocMaxLevels int64
	bmMaxData      int64 // bmap btree height bound, data fork
	bmMaxAttr      int64 // bmap btree height bound, attr fork
	inobtMaxLevels int64
	iallocBlocks   int64
	clusterSize    int64
	maxContig      int64 // bnobt records that one leaf split can absorb
	logSUnit       int64
	reflink        bool
	refcMaxLevels  int64
}

func newResvGeom(g *geometry) *resvGeom {
	bs := int64(g.opts.BlockSize)
	r := &resvGeom{
		bs: bs, ss: int64(g.opts.SectorSize), isize: int64(g.opts.InodeSize),
		dirBlkSize: int64(g.opts.DirBlockSize), dirFsbCount: 1 << g.dirBlkLog,
		allocMaxLevels: int64(g.allocMaxLevels), logSUnit: int64(g.logSUnit),
		reflink: g.reflink(), refcMaxLevels: int64(g.refcMaxLevels),
	}
	allocMxr := (bs - 56) / 8
	r.maxContig = allocMxr - allocMxr/2

	// Bmap btree: the tallest tree over the most extents a fork may
	// hold, with minimally full blocks and the smallest possible root in
	// the inode (3 pointers for the data fork, 2 for the attr fork).
	bmbtMnr := (bs - resvLongBtreeHdr) / 16 / 2
	bmLevels := func(maxExtents uint64, rootPtrs int64) int64 {
		rootRecs := uint64(rootPtrs)
		blocks := (maxExtents + uint64(bmbtMnr) - 1) / uint64(bmbtMnr)
		level := int64(1)
		for ; blocks > 1; level++ {
			if blocks <= rootRecs {
				blocks = 1
			} else {
				blocks = (blocks + uint64(bmbtMnr) - 1) / uint64(bmbtMnr)
			}
		}
		return level
	}
	r.bmMaxData = bmLevels(1<<31-1, 3)
	r.bmMaxAttr = bmLevels(1<<15-1, 2)

	// Inode btree over every possible chunk of an AG.
	inobtLeafMnr := int((bs - 56) / 16 / 2)
	inobtNodeMnr := int((bs - 56) / 8 / 2)
	aginoLog := g.agblklog + g.blockLog - g.inodeLog
	r.inobtMaxLevels = int64(btreeMaxLevels(inobtLeafMnr, inobtNodeMnr, (uint64(1)<<aginoLog)>>6))

	inopblock := bs / r.isize
	r.iallocBlocks = max(inodesPerChunk, inopblock) / inopblock

	// Inode cluster buffers scale with the inode size on v5 when the
	// chunk alignment allows it.
	raw := int64(inodeClusterSize)
	if scaled := raw * r.isize / 256; int64(g.inoAlignMt) >= scaled>>g.blockLog {
		raw = scaled
	}
	perCluster := int64(1)
	if raw > bs {
		perCluster = raw >> g.blockLog
	}
	r.clusterSize = perCluster * bs
	return r
}

func (r *resvGeom) buf(n, size int64) int64 { return n * (size + resvBufOverhead) }

func (r *resvGeom) inode(n int64) int64 {
	return n * (4*resvOpHeader + resvInodeLogFmt + r.isize + 2*resvLongBtreeHdr)
}

// allocFree is the number of free space btree blocks n extent allocations
// or frees can dirty: two trees, each splitting all the way up.
func (r *resvGeom) allocFree(n int64) int64 { return n * 2 * (2*r.allocMaxLevels - 1) }

// refcountSplits is the number of refcount btree blocks n refcount updates
// can dirty, one tree splitting all the way up for each; none without
// reflink.
func (r *resvGeom) refcountSplits(n int64) int64 {
	if !r.reflink {
		return 0
	}
	return n * (2*r.refcMaxLevels - 1)
}

// extentAdd is the number of bmap btree blocks adding b extents can need.
func (r *resvGeom) extentAdd(b, bmLevels int64) int64 {
	return (b + r.maxContig - 1) / r.maxContig * (bmLevels - 1)
}

// Directory/attr operation sizing (the DAENTER family).
func (r *resvGeom) daEnter1B(data bool) int64 {
	if data {
		return r.dirFsbCount
	}
	return 1
}

func (r *resvGeom) daEnterDBs(data bool) int64 {
	if data {
		return resvDaMaxDepth + 2
	}
	return resvDaMaxDepth
}

func (r *resvGeom) bmLevels(data bool) int64 {
	if data {
		return r.bmMaxData
	}
	return r.bmMaxAttr
}

func (r *resvGeom) daEnterBlocks(data bool) int64 { return r.daEnter1B(data) * r.daEnterDBs(data) }
func (r *resvGeom) daEnterBmap1B(data bool) int64 {
	return r.extentAdd(r.daEnter1B(data), r.bmLevels(data))
}
func (r *resvGeom) daEnterBmaps(data bool) int64 { return r.daEnterDBs(data) * r.daEnterBmap1B(data) }

// dirOpLogCount is the number of blocks a directory change may log.
func (r *resvGeom) dirOpLogCount() int64 {
	return r.daEnterBlocks(true) + r.daEnterBmaps(true) + 1
}

func (r *resvGeom) inobt() int64 {
	return r.buf(r.inobtMaxLevels, r.bs) + r.buf(r.allocFree(1), r.bs)
}

// finobt is the same as inobt: the feature is always on here.
func (r *resvGeom) finobt() int64 { return r.inobt() }

func (r *resvGeom) inodeChunk(alloc bool) int64 {
	res := r.buf(r.allocFree(1), r.bs)
	if alloc {
		return res // v5 initialises new chunks with ordered buffers
	}
	return res + r.buf(r.iallocBlocks, 0)
}

func (r *resvGeom) iunlinkRemove() int64 { return r.buf(1, r.ss) + 2*r.clusterSize }
func (r *resvGeom) iunlinkAdd() int64    { return r.buf(1, r.ss) + r.clusterSize }

// write and itruncate (and qmDqAlloc, built on write) are the variants for
// the minimum log size: with reflink they include two (write) or four
// (truncate) refcount btree splits in the same transaction, as the first
// reflink kernels did.
func (r *resvGeom) write() int64 {
	refc := r.buf(r.refcountSplits(2), r.bs)
	t1 := r.inode(1) + r.buf(r.bmMaxData, r.bs) + r.buf(3, r.ss) + r.buf(r.allocFree(2), r.bs) + refc
	t3 := r.buf(5, r.ss) + r.buf(r.allocFree(2), r.bs) + refc
	return resvDquot + max(t1, t3)
}

func (r *resvGeom) itruncate() int64 {
	t1 := r.inode(1) + r.buf(r.bmMaxData+1, r.bs)
	t2 := r.buf(9, r.ss) + r.buf(r.allocFree(4), r.bs) + r.buf(r.refcountSplits(4), r.bs)
	return resvDquot + max(t1, t2)
}

func (r *resvGeom) rename() int64 {
	return resvDquot + max(r.inode(5)+r.buf(2*r.dirOpLogCount(), r.bs),
		r.buf(7, r.ss)+r.buf(r.allocFree(3), r.bs))
}

func (r *resvGeom) link() int64 {
	return resvDquot + r.iunlinkRemove() + max(r.inode(2)+r.buf(r.dirOpLogCount(), r.bs),
		r.buf(3, r.ss)+r.buf(r.allocFree(1), r.bs))
}

func (r *resvGeom) remove() int64 {
	return resvDquot + r.iunlinkAdd() + max(r.inode(2)+r.buf(r.dirOpLogCount(), r.bs),
		r.buf(4, r.ss)+r.buf(r.allocFree(2), r.bs))
}

func (r *resvGeom) createModify() int64 {
	return r.inode(2) + r.buf(1, r.ss) + r.bs + r.buf(r.dirOpLogCount(), r.bs) + r.finobt()
}

func (r *resvGeom) icreateAlloc() int64 {
	return r.buf(2, r.ss) + r.ss + r.inodeChunk(true) + r.inobt() + r.finobt()
}

func (r *resvGeom) icreate() int64 { return resvDquot + max(r.icreateAlloc(), r.createModify()) }

func (r *resvGeom) tmpfile() int64 { return resvDquot + r.icreateAlloc() + r.iunlinkAdd() }

func (r *resvGeom) symlink() int64 { return r.icreate() + r.buf(1, resvSymlinkMax) }

func (r *resvGeom) ifree() int64 {
	return resvDquot + r.inode(1) + r.buf(3, r.ss) + r.iunlinkRemove() + r.inodeChunk(false) +
		r.inobt() + r.finobt()
}

func (r *resvGeom) ichange() int64 { return resvDquot + r.inode(1) + r.buf(1, r.ss) }

func (r *resvGeom) growData() int64 { return r.buf(3, r.ss) + r.buf(r.allocFree(1), r.bs) }

func (r *resvGeom) addAFork() int64 {
	return resvDquot + r.inode(1) + r.buf(2, r.ss) + r.buf(1, r.dirBlkSize) +
		r.buf(r.daEnterBmap1B(true)+1, r.bs) + r.buf(r.allocFree(1), r.bs)
}

func (r *resvGeom) attrInval() int64 {
	return max(r.inode(1)+r.buf(r.bmMaxAttr, r.bs), r.buf(9, r.ss)+r.buf(r.allocFree(4), r.bs))
}

func (r *resvGeom) attrSetM() int64 {
	return resvDquot + r.inode(1) + r.buf(1, r.ss) + r.buf(resvDaMaxDepth, r.bs)
}

func (r *resvGeom) attrSetRT() int64 { return r.buf(1, r.ss) + r.buf(r.bmMaxAttr, r.bs) }

func (r *resvGeom) attrRm() int64 {
	return resvDquot + max(r.inode(1)+r.buf(resvDaMaxDepth, r.bs)+r.bs*r.bmMaxAttr+r.buf(r.bmMaxData, 0),
		r.buf(5, r.ss)+r.buf(r.allocFree(2), r.bs))
}

func (r *resvGeom) growRTAlloc() int64 {
	return r.buf(2, r.ss) + r.buf(r.bmMaxData, r.bs) + r.inode(1) + r.buf(r.allocFree(1), r.bs)
}

// growRTFree has no summary file to log without a realtime device.
func (r *resvGeom) growRTFree() int64 {
	return r.buf(1, r.ss) + r.inode(2) + r.buf(1, r.bs) + r.buf(1, 0)
}

func (r *resvGeom) qmDqAlloc() int64 { return r.write() + r.buf(1, r.bs-1) }

// resv is one transaction type: bytes per roll and how many rolls a
// permanent reservation holds (0 or 1 = not permanent).
type resv struct {
	logres, logcount int64
}

// table lists the reservations in the order of struct xfs_trans_resv;
// the order decides ties when picking the largest.
func (r *resvGeom) table() []resv {
	// The log count of the transactions that may update refcounts: the
	// old reflink value (XFS_*_LOG_COUNT_REFLINK) with reflink.
	refcCount := int64(2)
	if r.reflink {
		refcCount = 8
	}
	return []resv{
		{r.write(), refcCount},     // write
		{r.itruncate(), refcCount}, // itruncate
		{r.rename(), 2},            // rename
		{r.link(), 2},              // link
		{r.remove(), 2},            // remove
		{r.symlink(), 3},           // symlink
		{r.icreate(), 2},           // create
		{r.tmpfile(), 2},           // create_tmpfile
		{r.icreate(), 3},           // mkdir
		{r.ifree(), 2},             // ifree
		{r.ichange(), 0},           // ichange
		{r.growData(), 2},          // growdata
		{r.addAFork(), 2},          // addafork
		{r.inode(1), 0},            // writeid
		{r.attrInval(), 1},         // attrinval
		{r.attrSetM(), 3},          // attrsetm
		{r.attrSetRT(), 0},         // attrsetrt
		{r.attrRm(), 3},            // attrrm
		{r.buf(1, r.ss), 0},        // clearagi
		{r.growRTAlloc(), 2},       // growrtalloc
		{r.buf(1, r.bs), 0},        // growrtzero
		{r.growRTFree(), 0},        // growrtfree
		{r.buf(1, 104), 1},         // qm_setqlim: one on-disk dquot
		{r.qmDqAlloc(), refcCount}, // qm_dqalloc
		{r.buf(1, r.ss), 1},        // sb
		{r.inode(1), 0},            // fsyncts
	}
}

// maxAttrSetM is the attribute-set reservation for the largest attribute
// value that is still logged (stored inside a leaf block).
func (r *resvGeom) maxAttrSetM() int64 {
	size := r.bs>>1 + r.bs>>2 - resvMaxNameLen - 1
	nblks := r.daEnterBlocks(false) + r.daEnterBmaps(false)
	nblks += (size + r.bs - 1) / r.bs
	nblks += r.extentAdd(size, r.bmMaxAttr)
	return r.attrSetM() + r.attrSetRT()*nblks
}

// maxTransRes returns the reservation that needs the most log space.
func (r *resvGeom) maxTransRes() resv {
	var best resv
	var space int64
	for _, t := range r.table() {
		s := t.logres
		if t.logcount > 1 {
			s *= t.logcount
		}
		if space < s {
			space, best = s, t
		}
	}
	if a := r.maxAttrSetM(); a > space {
		best = resv{a, 3}
	}
	return best
}

// unitRes adds to a transaction's payload the log record overheads it can
// incur: transaction and op headers, a record header per 256 KiB in-core
// log buffer (plus op headers where the payload is split), the commit
// record's header and padding to the log stripe unit.
func (r *resvGeom) unitRes(unit int64) int64 {
	unit += resvOpHeader + resvTransHeader // transaction header
	unit += resvOpHeader                   // start record
	space := int64(resvIclogSize - resvIclogHdr)
	headers := (unit + space - 1) / space
	unit += resvOpHeader * headers
	for headers == 0 || (unit+space-1)/space > headers {
		unit += resvOpHeader
		headers++
	}
	unit += resvIclogHdr * headers
	unit += resvIclogHdr // commit record
	if r.logSUnit > 1 {
		unit += 2 * r.logSUnit
	} else {
		unit += 2 * 512
	}
	return unit
}

// minimumLogBlocks is xfs_log_calc_minimum_size for the geometry.
func (g *geometry) minimumLogBlocks() uint32 {
	r := newResvGeom(g)
	t := r.maxTransRes()
	logres := r.unitRes(t.logres)
	if t.logcount > 1 {
		logres *= t.logcount
	}
	bbs := (logres + 511) >> 9
	if r.logSUnit > 1 {
		su := r.logSUnit >> 9
		bbs = (bbs+su-1)/su*su + 2*su
	} else {
		// The kernel adds two BBSIZE here, counted in basic blocks.
		bbs += 2 * 512
	}
	bbs *= resvMinLogFactor
	bbPerBlock := int64(1) << (g.blockLog - 9)
	return uint32((bbs + bbPerBlock - 1) / bbPerBlock)
}
