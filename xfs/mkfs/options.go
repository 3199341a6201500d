package mkfs

import (
	"errors"
	"fmt"
)

// Options chooses the geometry of a new filesystem. The zero value of every
// field except Size means "what mkfs.xfs would choose".
type Options struct {
	// Size is the filesystem size in bytes. It is required when the
	// target file does not exist yet; otherwise 0 means the whole file or
	// device. A size that is not a multiple of the block size is rounded
	// down.
	Size int64
	// BlockSize is the filesystem block size: a power of two from 1024
	// (the v5 minimum) to 65536. Default 4096.
	BlockSize int
	// InodeSize is the inode size: a power of two from 512 (the v5
	// minimum) to 2048, at most half the block size. Default 512.
	InodeSize int
	// AgCount forces the number of allocation groups (at least 2). 0 lets
	// the mkfs.xfs rules decide from the size.
	AgCount int
	// SectorSize is the sector size: a power of two from 512 to 32768, at
	// most the block size. Default 512.
	SectorSize int
	// DirBlockSize is the directory block size: a power of two from 4096
	// (and at least the block size) to 65536. 0 means the block size, but
	// at least 4096 (so 1 KiB and 2 KiB block filesystems get 4 KiB
	// directory blocks, as with mkfs.xfs).
	DirBlockSize int
	// UUID is the filesystem UUID; all zeros means a random one.
	UUID [16]byte
	// Label is the filesystem label, at most 12 bytes.
	Label string
	// NoReflink leaves out the reflink feature, as "mkfs.xfs -m
	// reflink=0" does: no refcount btree, no shared extents. By default
	// every AG gets an empty refcount btree, as with mkfs.xfs.
	NoReflink bool
}

// Limits of the options.
const (
	MinBlockSize = 1024 // smallest block size of a v5 (CRC) filesystem
	MaxBlockSize = 65536
	MinInodeSize = 512 // smallest inode size of a v5 filesystem
	MaxInodeSize = 2048
	MinSectSize  = 512
	MaxSectSize  = 32768
	MaxLabelLen  = 12
	// minDefaultDirBlockSize is the smallest directory block.
	minDefaultDirBlockSize = 4096
	// MinSize is the smallest filesystem this package formats.
	MinSize = 64 << 20
	// MaxAgCount bounds AgCount (NULLAGNUMBER - 1 AGs fit in a 32-bit
	// AG number).
	MaxAgCount = 1<<32 - 2
)

// ErrInvalid is the kind of every option, size or geometry error, for
// errors.Is. The errors themselves read as plain explanations.
var ErrInvalid = errors.New("invalid mkfs options")

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

func log2(n int) uint {
	var l uint
	for 1<<l < n {
		l++
	}
	return l
}

// withDefaults fills in the defaults and checks every option that does not
// depend on the device size.
func (o Options) withDefaults() (Options, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 4096
	}
	if o.InodeSize == 0 {
		o.InodeSize = 512
	}
	if o.SectorSize == 0 {
		o.SectorSize = 512
	}
	if o.DirBlockSize == 0 {
		// Like mkfs.xfs: directory blocks are never smaller than 4 KiB
		// unless asked for.
		o.DirBlockSize = max(o.BlockSize, minDefaultDirBlockSize)
	}
	switch {
	case !isPow2(o.BlockSize) || o.BlockSize < MinBlockSize || o.BlockSize > MaxBlockSize:
		return o, invalid("block size %d: must be a power of two from %d (the minimum for v5 filesystems) to %d",
			o.BlockSize, MinBlockSize, MaxBlockSize)
	case !isPow2(o.SectorSize) || o.SectorSize < MinSectSize || o.SectorSize > MaxSectSize:
		return o, invalid("sector size %d: must be a power of two from %d to %d", o.SectorSize, MinSectSize, MaxSectSize)
	case o.SectorSize > o.BlockSize:
		return o, invalid("sector size %d is larger than the block size %d", o.SectorSize, o.BlockSize)
	case !isPow2(o.InodeSize) || o.InodeSize < MinInodeSize || o.InodeSize > MaxInodeSize:
		return o, invalid("inode size %d: must be a power of two from %d (the minimum for v5 filesystems) to %d",
			o.InodeSize, MinInodeSize, MaxInodeSize)
	case o.InodeSize > o.BlockSize/2:
		return o, invalid("inode size %d: with %d-byte blocks the inode size can be at most %d (two inodes per block)",
			o.InodeSize, o.BlockSize, o.BlockSize/2)
	case !isPow2(o.DirBlockSize) || o.DirBlockSize < max(o.BlockSize, minDefaultDirBlockSize) || o.DirBlockSize > MaxBlockSize:
		return o, invalid("directory block size %d: must be a power of two from %d (and at least the block size %d) to %d",
			o.DirBlockSize, minDefaultDirBlockSize, o.BlockSize, MaxBlockSize)
	case o.AgCount < 0 || o.AgCount == 1 || o.AgCount > MaxAgCount:
		return o, invalid("AG count %d: need at least 2 allocation groups (for redundant superblocks) and at most %d",
			o.AgCount, MaxAgCount)
	case len(o.Label) > MaxLabelLen:
		return o, invalid("label %q is %d bytes long, at most %d are allowed", o.Label, len(o.Label), MaxLabelLen)
	case o.Size < 0:
		return o, invalid("negative size %d", o.Size)
	}
	return o, nil
}
