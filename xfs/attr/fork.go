package attr

import (
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// Fork is the attribute fork of one inode inside one transaction: a
// fork.Writer plus the few inode-level operations that only attribute
// forks need, because their size moves (di_forkoff).
//
// The fork.Writer part, for an attribute fork:
//   - Format is di_aformat. An inode without an attribute fork reports
//     format.FmtExtents and maps no blocks.
//   - Inline returns the bytes of a local (short-form) fork, at least the
//     header's totsize of them; SetInline(b) makes the fork local holding
//     exactly b (the kernel's if_bytes = len(b)); it never touches di_size.
//     ToBlocks turns a local fork into an empty extents fork.
//   - Read, Alloc, Free and Mapped work in attribute-fork blocks. This
//     package only ever reads, allocates and frees one block per call, so
//     the daddr returned always belongs to that single block. Repeated
//     Reads of one block in one transaction may return the same private
//     copy or a fresh one: this package never reads a block twice in a
//     transaction.
//   - Size, SetSize, InlineSpace and MaxInlineSpace are not used: the
//     space rules come from ForkOff and DataFork below.
type Fork interface {
	fork.Writer

	// ForkOff is di_forkoff: where the attribute fork starts in the
	// inode's literal area, in 8-byte units. 0 means the inode has no
	// attribute fork.
	ForkOff() int

	// SetForkOff moves the start of an existing attribute fork to off
	// (1 ≤ off, off×8 ≤ literal area). This package only passes values
	// from the kernel's rules (xfs_attr_shortform_bytesfit,
	// xfs_bmap_forkoff_reset), which keep the data fork's current
	// contents fitting; a B+tree data fork root must be laid out again for
	// its new size by the engine (bmdr pointers start after maxrecs keys).
	SetForkOff(off int) error

	// DataFork describes the data fork as xfs_attr_shortform_bytesfit sees
	// it: di_format, and its in-core size in bytes: local: the bytes of
	// inline data; extents: 16 × the number of extent records; btree:
	// 4 + 16 × the number of records in the root (xfs_bmap_bmdr_space);
	// dev: 0.
	DataFork() (dataFmt int8, bytes int)

	// AddFork creates an empty attribute fork at off: di_forkoff = off,
	// di_aformat = extents, no extents (xfs_bmap_add_attrfork). When the
	// data fork no longer fits in off×8 bytes the engine converts it first,
	// as the kernel does: extents → btree, local directory → block form,
	// local symlink → extents; a btree root is laid out again. It may fail
	// for lack of space, wrapping the engine's no-space error.
	AddFork(off int) error

	// RemoveFork deletes the attribute fork, local or extents:
	// di_forkoff = 0, di_aformat = extents, no attribute extents, the
	// whole literal area back to the data fork (xfs_attr_fork_remove). It
	// is only called when the fork maps no blocks.
	RemoveFork() error
}

// Shape constants of the inode literal area (xfs_types.h, xfs_bmap_btree.h).
const (
	minDataBtreePtrs = 3 // MINDBTPTRS: a data fork btree root must hold this many pairs
	minAttrBtreePtrs = 2 // MINABTPTRS: likewise for an attribute fork root
)

// bmdrSpace is XFS_BMDR_SPACE_CALC: bytes of an in-inode btree root with n
// key/pointer pairs.
func bmdrSpace(n int) int { return format.BmdrHdrSize + 16*n }

// literalSize is XFS_LITINO: bytes shared by the two forks.
func literalSize(g *format.Geometry) int { return format.LiteralSize(g.InodeSize) }

// defaultAttrOffset is xfs_default_attroffset in bytes: where a new
// attribute fork starts when the short-form rules give no answer, and the
// smallest offset a non-local attribute fork keeps. It is not a multiple
// of 8 (196 for every inode size but 256).
func defaultAttrOffset(g *format.Geometry, dataFmt int8) int {
	if dataFmt == format.FmtDev {
		return 8 // roundup(sizeof(xfs_dev_t), 8)
	}
	if g.InodeSize == 256 {
		return literalSize(g) - bmdrSpace(minAttrBtreePtrs)
	}
	return bmdrSpace(6 * minAttrBtreePtrs)
}

// ShortformFit is xfs_attr_shortform_bytesfit: the di_forkoff (8-byte
// units) at which an attribute fork of bytes bytes fits in the inode next
// to the data fork, or 0 when it does not fit. forkOff is the current
// di_forkoff (0: no attribute fork yet); dataFmt and dataBytes describe
// the data fork as Fork.DataFork does.
func ShortformFit(g *format.Geometry, forkOff int, dataFmt int8, dataBytes, bytes int) int {
	lit := literalSize(g)
	if bytes > lit {
		return 0
	}
	offset := (lit - bytes) >> 3 // rounded down
	if dataFmt == format.FmtDev {
		const devOff = 1 // roundup(sizeof(xfs_dev_t), 8) >> 3
		if offset >= devOff {
			return devOff
		}
		return 0
	}
	// What already fits in the current attribute fork always fits.
	if forkOff != 0 && bytes <= lit-forkOff<<3 {
		return forkOff
	}
	dsize := dataBytes
	switch dataFmt {
	case format.FmtExtents:
		// A new default-sized attribute fork would push the extents into a
		// btree anyway; then only a minimal root needs room.
		if forkOff == 0 && dataBytes > defaultAttrOffset(g, dataFmt) {
			dsize = bmdrSpace(minDataBtreePtrs)
		}
	case format.FmtBtree:
		// A data btree keeps an existing fork offset.
		if forkOff != 0 {
			if offset < forkOff {
				return 0
			}
			return forkOff
		}
	}
	minOff := (max(dsize, bmdrSpace(minDataBtreePtrs)) + 7) >> 3
	maxOff := (lit - bmdrSpace(minAttrBtreePtrs)) >> 3
	switch {
	case offset >= maxOff:
		return maxOff
	case offset >= minOff:
		return offset
	}
	return 0
}

// newForkOff is xfs_bmap_set_attrforkoff for a fork about to hold its
// first attribute: the short-form fit of size bytes, else the default.
func newForkOff(g *format.Geometry, dataFmt int8, dataBytes, size int) int {
	if dataFmt == format.FmtDev {
		return defaultAttrOffset(g, dataFmt) >> 3
	}
	if off := ShortformFit(g, 0, dataFmt, dataBytes, size); off != 0 {
		return off
	}
	return defaultAttrOffset(g, dataFmt) >> 3
}

// resetForkOff is xfs_bmap_forkoff_reset, applied when a local attribute
// fork becomes an extents fork: the fork offset moves up to the default
// (giving the data fork room for inline extents) unless the data fork is a
// device or a btree.
func resetForkOff(g *format.Geometry, forkOff int, dataFmt int8) int {
	if dataFmt == format.FmtDev || dataFmt == format.FmtBtree {
		return forkOff
	}
	if dfl := defaultAttrOffset(g, dataFmt) >> 3; dfl > forkOff {
		return dfl
	}
	return forkOff
}
