package format

// Directory format constants (dir2 with v5 "dir3" headers).
//
// A directory's data fork is one 32 GiB address space per kind of block:
//
//	[0, 32G)   data blocks (XDB3 for a single-block dir, XDD3 otherwise)
//	[32G,64G)  leaf blocks: one leaf1 (0x3DF1), or da nodes (0x3EBE) + leafn (0x3DFF)
//	[64G, ..)  free-index blocks (XDF3)
const (
	Dir3BlockMagic = 0x58444233 // "XDB3"
	Dir3DataMagic  = 0x58444433 // "XDD3"
	Dir3FreeMagic  = 0x58444633 // "XDF3"

	Dir3DataHdrSize = 64
	Dir3DataCRCOff  = 4
	Dir3LeafHdrSize = 64
	Dir3FreeHdrSize = 64
	DirDataFreeTag  = 0xFFFF

	DirSpaceSize  = 1 << 35
	DirLeafOffset = 1 * DirSpaceSize
	DirFreeOffset = 2 * DirSpaceSize

	// MaxNameLen bounds directory entry and xattr names.
	MaxNameLen = 255
)

// Directory entry file types (ftype).
const (
	FTUnknown = 0
	FTReg     = 1
	FTDir     = 2
	FTChrdev  = 3
	FTBlkdev  = 4
	FTFifo    = 5
	FTSock    = 6
	FTSymlink = 7
)

// FTypeOfMode maps an inode mode to a directory entry file type.
func FTypeOfMode(mode uint16) uint8 {
	switch mode & SIFMT {
	case SIFREG:
		return FTReg
	case SIFDIR:
		return FTDir
	case SIFCHR:
		return FTChrdev
	case SIFBLK:
		return FTBlkdev
	case SIFIFO:
		return FTFifo
	case SIFSOCK:
		return FTSock
	case SIFLNK:
		return FTSymlink
	}
	return FTUnknown
}

// NullDataptr marks a stale leaf entry.
const NullDataptr = 0

// NullDirBest marks a data block that no longer exists.
const NullDirBest = 0xFFFF

// DirFreeMaxBests is how many bests a free-index block holds.
func DirFreeMaxBests(dirBlkSize int) int { return (dirBlkSize - Dir3FreeHdrSize) / 2 }
