package dir

import "github.com/xfs3/xfs3/xfs/format"

// geom holds the directory numbers derived from the filesystem geometry
// (struct xfs_da_geometry for the data fork).
type geom struct {
	blk       int    // directory block size in bytes
	blkLog    uint   // log2 of blk
	fsbs      int    // filesystem blocks per directory block
	dirLog    uint   // log2 of fsbs
	leafBlk   uint32 // fork offset of the first leaf-space block (32 GiB)
	freeBlk   uint32 // fork offset of the first free-index block (64 GiB)
	leafDB    uint32 // directory block number of leafBlk
	freeDB    uint32 // directory block number of freeBlk
	leafMax   int    // entries a leaf block may hold (leaf_max_ents)
	freeMax   int    // bests a free-index block holds (free_max_bests)
	magicPct  int    // 37% of a block: leafn blocks below it are joined
	firstOff  int    // offset of the first real entry (after "." and "..")
	emptyFree int    // longest free region of an empty data block
}

func newGeom(g *format.Geometry) geom {
	blk := g.DirBlkSize
	if blk == 0 {
		blk = g.BlockSize << g.DirBlkLog
	}
	d := geom{
		blk:      blk,
		blkLog:   g.BlockLog + g.DirBlkLog,
		fsbs:     1 << g.DirBlkLog,
		dirLog:   g.DirBlkLog,
		leafBlk:  uint32(uint64(format.DirLeafOffset) >> g.BlockLog),
		freeBlk:  uint32(uint64(format.DirFreeOffset) >> g.BlockLog),
		leafMax:  (blk - leafHdrSize) / 8,
		freeMax:  format.DirFreeMaxBests(blk),
		magicPct: blk * 37 / 100,
	}
	d.leafDB = uint32(uint64(format.DirLeafOffset) >> d.blkLog)
	d.freeDB = uint32(uint64(format.DirFreeOffset) >> d.blkLog)
	d.firstOff = dataHdrSize + d.entSize(1) + d.entSize(2)
	d.emptyFree = blk - dataHdrSize
	return d
}

const (
	dataHdrSize = format.Dir3DataHdrSize // 64
	leafHdrSize = format.Dir3LeafHdrSize // 64
	freeHdrSize = format.Dir3FreeHdrSize // 64
	nullOff     = format.NullDirBest     // NULLDATAOFF: no such data block
	freeTag     = format.DirDataFreeTag
	dataAlign   = 8      // of every entry and free region in a data block
	hashDot     = 0x2e   // xfs_da_hashname(".")
	hashDotDot  = 0x172e // xfs_da_hashname("..")
)

// entSize is the size of a data entry with an n-byte name (v5 entries
// always carry the file type byte).
func (d *geom) entSize(n int) int { return entSize(n) }

func entSize(n int) int { return (8 + 1 + n + 1 + 2 + dataAlign - 1) &^ (dataAlign - 1) }

// daOf converts a directory block number to a fork offset.
func (d *geom) daOf(db uint32) uint32 { return db << d.dirLog }

// dbOf converts a fork offset to a directory block number.
func (d *geom) dbOf(da uint32) uint32 { return da >> d.dirLog }

// ptr packs a data block number and offset into a dataptr (byte address / 8).
func (d *geom) ptr(db uint32, off int) uint32 {
	return uint32((uint64(db)<<d.blkLog | uint64(off)) >> 3)
}

// unptr splits a dataptr into data block number and offset.
func (d *geom) unptr(p uint32) (uint32, int) {
	a := uint64(p) << 3
	return uint32(a >> d.blkLog), int(a & uint64(d.blk-1))
}

// fdbOf returns the free-index block number covering data block db and
// its index there.
func (d *geom) fdbOf(db uint32) (uint32, int) {
	return d.freeDB + db/uint32(d.freeMax), int(db % uint32(d.freeMax))
}
