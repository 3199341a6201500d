// Package fork is the contract between an inode fork and the formats
// stored in it (directories, extended attributes, symlinks): the code that
// knows a directory's blocks never allocates, maps or locks anything
// itself; it asks a Fork.
//
//	dir / attr code ──Fork──> inode (literal area, size, format)
//	                    └──> block map (bmap) ──> allocator, transaction
//
// A Fork is bound to one inode, one fork (data or attr) and, for changes,
// one transaction. The engine provides the real implementation; Mem is an
// in-memory one for testing format code in isolation.
package fork

import (
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Reader is the read side of a fork.
type Reader interface {
	// Geometry of the filesystem (block sizes, directory block size, UUID).
	Geometry() *format.Geometry
	// Owner is the inode number stamped into v5 block headers.
	Owner() format.Ino
	// Format is the fork format: format.FmtLocal, FmtExtents or FmtBtree.
	Format() int8
	// Inline returns the bytes of a local fork (for a directory, exactly
	// di_size bytes; for an attribute fork, the whole attr fork area).
	// Callers must not modify it.
	Inline() []byte
	// Size is di_size (directories: bytes of the data space in use).
	Size() int64
	// Read returns count filesystem blocks at fork offset off, verified
	// with ops, and the disk address of the first (v5 headers record it).
	// Every block must be mapped. In a Writer the slice is the
	// transaction's private copy and may be modified, then marked Dirty.
	Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error)
	// Mapped reports the mapped ranges of the fork as [start, end) file
	// block pairs in ascending order.
	Mapped() ([][2]format.FileOff, error)
}

// Viewer is a Reader that can also give blocks without copying them, for
// lookups that only pass through a block (the nodes of a da-btree above
// the leaf an operation changes).
type Viewer interface {
	// View returns what Read would, but as the transaction's shared
	// version, which must not be changed: a Read of the same block later
	// in the transaction returns a private copy to change instead.
	View(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error)
}

// Writer changes a fork inside a transaction.
type Writer interface {
	Reader
	// InlineSpace is how many bytes a local fork may hold right now
	// (the data fork's share of the literal area, or the attr fork's).
	InlineSpace() int
	// MaxInlineSpace is how many bytes a local fork could hold if the
	// other fork gave up what it may (attribute forks move di_forkoff;
	// see xfs_attr_shortform_bytesfit). Directory code uses InlineSpace.
	MaxInlineSpace() int
	// SetInline replaces the local fork's bytes (and makes the fork local).
	// For directories it also sets di_size to len(b).
	SetInline(b []byte) error
	// SetSize sets di_size (directory data space in use).
	SetSize(size int64)
	// Alloc maps count new contiguous-if-possible blocks at off, returning
	// a zeroed private copy to initialise (already dirty) and its daddr.
	// It fails with an error wrapping the engine's no-space error when the
	// volume is full; the caller cancels the transaction.
	Alloc(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error)
	// Free unmaps and frees count blocks at off.
	Free(off format.FileOff, count int) error
	// Dirty marks a block returned by Read or Alloc as modified.
	Dirty(daddr format.Daddr)
	// ToBlocks turns a local fork into an empty extents fork (before the
	// first Alloc of a short-form to block conversion).
	ToBlocks() error
}
