package format

import "fmt"

// Geometry holds the numbers derived from a verified superblock that every
// address computation needs. It is immutable after NewGeometry.
type Geometry struct {
	BlockSize    int
	BlockLog     uint
	SectSize     int
	InodeSize    int
	InodeLog     uint
	InoPBlock    int
	InoPBLog     uint
	AgBlocks     uint32
	AgBlkLog     uint
	AgCount      uint32
	DBlocks      uint64
	DirBlkSize   int      // directory block size in bytes
	DirBlkLog    uint     // log2 of filesystem blocks per directory block
	UUID         [16]byte // the metadata UUID stamped into v5 headers
	Bigtime      bool
	Nrext64      bool
	FType        bool
	Finobt       bool
	InobtCount   bool
	SparseInodes bool
	Reflink      bool
	Rmapbt       bool
}

// NewGeometry derives a Geometry from a superblock that passed Verify.
func NewGeometry(sb *Superblock) Geometry {
	return Geometry{
		BlockSize: int(sb.BlockSize), BlockLog: uint(sb.BlockLog),
		SectSize: int(sb.SectSize), InodeSize: int(sb.InodeSize), InodeLog: uint(sb.InodeLog),
		InoPBlock: int(sb.InoPBlock), InoPBLog: uint(sb.InoPBLog),
		AgBlocks: sb.AgBlocks, AgBlkLog: uint(sb.AgBlkLog), AgCount: sb.AgCount, DBlocks: sb.DBlocks,
		DirBlkSize: int(sb.BlockSize) << sb.DirBlkLog, DirBlkLog: uint(sb.DirBlkLog),
		UUID: sb.MetadataUUID(), Bigtime: sb.HasBigtime(), Nrext64: sb.HasNrext64(), FType: sb.HasFType(),
		Finobt: sb.HasFinobt(), InobtCount: sb.HasInobtCount(), SparseInodes: sb.HasSparseInodes(),
		Reflink: sb.HasReflink(), Rmapbt: sb.HasRmapbt(),
	}
}

// AgInoBits is the width of an AG-relative inode number.
func (g *Geometry) AgInoBits() uint { return g.AgBlkLog + g.InoPBLog }

// InoToAg splits an inode number into its AG and AG-relative inode.
func (g *Geometry) InoToAg(ino Ino) (AgNumber, AgIno) {
	bits := g.AgInoBits()
	return AgNumber(uint64(ino) >> bits), AgIno(uint64(ino) & (1<<bits - 1))
}

// AgInoToIno joins an AG and an AG-relative inode number.
func (g *Geometry) AgInoToIno(ag AgNumber, agino AgIno) Ino {
	return Ino(uint64(ag)<<g.AgInoBits() | uint64(agino))
}

// AgInoToAgBlock returns the AG block holding an inode and its slot in it.
func (g *Geometry) AgInoToAgBlock(agino AgIno) (AgBlock, int) {
	return AgBlock(uint32(agino) >> g.InoPBLog), int(uint32(agino) & (1<<g.InoPBLog - 1))
}

// AgBlockToAgIno returns the first inode number of an AG block.
func (g *Geometry) AgBlockToAgIno(bno AgBlock) AgIno { return AgIno(uint32(bno) << g.InoPBLog) }

// ValidIno reports whether ino addresses an inode inside the data device.
func (g *Geometry) ValidIno(ino Ino) bool {
	ag, agino := g.InoToAg(ino)
	if ag >= AgNumber(g.AgCount) {
		return false
	}
	bno, _ := g.AgInoToAgBlock(agino)
	return g.ValidAgBlock(ag, bno) && bno != 0
}

// AgSize returns the number of blocks in an AG (the last one may be short).
func (g *Geometry) AgSize(ag AgNumber) uint32 {
	if uint32(ag) == g.AgCount-1 {
		return uint32(g.DBlocks - uint64(g.AgCount-1)*uint64(g.AgBlocks))
	}
	return g.AgBlocks
}

// ValidAgBlock reports whether bno lies inside AG ag.
func (g *Geometry) ValidAgBlock(ag AgNumber, bno AgBlock) bool {
	return uint32(ag) < g.AgCount && uint32(bno) < g.AgSize(ag)
}

// FsbToAg splits a filesystem block number.
func (g *Geometry) FsbToAg(fsb FsBlock) (AgNumber, AgBlock) {
	return AgNumber(uint64(fsb) >> g.AgBlkLog), AgBlock(uint64(fsb) & (1<<g.AgBlkLog - 1))
}

// AgToFsb joins an AG and AG block into a filesystem block number.
func (g *Geometry) AgToFsb(ag AgNumber, bno AgBlock) FsBlock {
	return FsBlock(uint64(ag)<<g.AgBlkLog | uint64(bno))
}

// ValidFsb reports whether a filesystem block lies inside the data device.
func (g *Geometry) ValidFsb(fsb FsBlock) bool {
	ag, bno := g.FsbToAg(fsb)
	return g.ValidAgBlock(ag, bno)
}

// ValidExtent reports whether len blocks from fsb stay inside one AG.
func (g *Geometry) ValidExtent(fsb FsBlock, length uint64) bool {
	ag, bno := g.FsbToAg(fsb)
	return length > 0 && g.ValidAgBlock(ag, bno) && uint64(bno)+length <= uint64(g.AgSize(ag))
}

// FsbToDaddr returns the disk address of a filesystem block.
func (g *Geometry) FsbToDaddr(fsb FsBlock) Daddr {
	ag, bno := g.FsbToAg(fsb)
	return g.AgbToDaddr(ag, bno)
}

// AgbToDaddr returns the disk address of an AG block.
func (g *Geometry) AgbToDaddr(ag AgNumber, bno AgBlock) Daddr {
	return Daddr((uint64(ag)*uint64(g.AgBlocks) + uint64(bno)) << (g.BlockLog - BBShift))
}

// DaddrToAg returns the AG that holds disk address d (AG headers and
// blocks alike: AGs are laid out back to back, AgBlocks apart).
func (g *Geometry) DaddrToAg(d Daddr) AgNumber {
	return AgNumber((uint64(d) >> (g.BlockLog - BBShift)) / uint64(g.AgBlocks))
}

// DaddrToByte converts a disk address to a byte offset on the device.
func DaddrToByte(d Daddr) int64 { return int64(d) << BBShift }

// AgHeaderDaddr returns the disk address of AG header sector n (0 sb, 1 AGF,
// 2 AGI, 3 AGFL) of AG ag.
func (g *Geometry) AgHeaderDaddr(ag AgNumber, n int) Daddr {
	return g.AgbToDaddr(ag, 0) + Daddr(n*g.SectSize>>BBShift)
}

// InoLocation returns the byte offset of an inode on the device.
func (g *Geometry) InoLocation(ino Ino) (int64, error) {
	if !g.ValidIno(ino) {
		return 0, fmt.Errorf("inode %d: %w", ino, Corrupt("inode number", fmt.Sprint(ino), "outside the filesystem"))
	}
	ag, agino := g.InoToAg(ino)
	bno, slot := g.AgInoToAgBlock(agino)
	return DaddrToByte(g.AgbToDaddr(ag, bno)) + int64(slot*g.InodeSize), nil
}

// DirBlockFsbs is the number of filesystem blocks per directory block.
func (g *Geometry) DirBlockFsbs() int { return 1 << g.DirBlkLog }
