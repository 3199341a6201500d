package btree

import (
	"cmp"
	"encoding/binary"

	"github.com/xfs3/xfs3/xfs/format"
)

// Kind describes one sort of XFS B+tree: the block format (magic, form,
// record/key/pointer sizes) and how records become keys and are ordered.
// All the kinds here are non-overlapping trees: the key of a record is a
// prefix-like projection of it, and the key of a child in a node is the
// key of the lowest record in the child's subtree, copied byte for byte.
type Kind struct {
	Shape format.BtreeShape

	// Key writes the key of record rec into key (Shape.KeyLen bytes), as the
	// kernel's init_key_from_rec does. Keys stored in nodes are exactly these
	// bytes, so they also carry fields the order ignores (the bnobt key keeps
	// the block count of the lowest record).
	Key func(key, rec []byte)

	// Compare orders two keys (negative, zero, positive), like key_diff.
	Compare func(a, b []byte) int

	// RecsInOrder reports whether record a may come before record b in the
	// tree (recs_inorder): strictly ordered and, for records that describe
	// ranges of blocks or inodes, not overlapping.
	RecsInOrder func(a, b []byte) bool
}

var be = binary.BigEndian

// The kinds the engine reads and writes.
var (
	// Bnobt indexes free extents by start block; key = the 8-byte record.
	Bnobt = &Kind{
		Shape:   format.BnobtShape,
		Key:     copyKey8,
		Compare: func(a, b []byte) int { return cmp.Compare(be.Uint32(a), be.Uint32(b)) },
		RecsInOrder: func(a, b []byte) bool {
			return uint64(be.Uint32(a))+uint64(be.Uint32(a[4:])) <= uint64(be.Uint32(b))
		},
	}

	// Cntbt indexes free extents by (block count, start block); key = the
	// 8-byte record.
	Cntbt = &Kind{
		Shape:   format.CntbtShape,
		Key:     copyKey8,
		Compare: compareCnt,
		RecsInOrder: func(a, b []byte) bool {
			return compareCnt(a, b) < 0
		},
	}

	// Inobt indexes inode chunks by start inode; key = startino.
	Inobt = &Kind{
		Shape:       format.InobtShape,
		Key:         copyKey4,
		Compare:     compareBE32,
		RecsInOrder: inoRecsInOrder,
	}

	// Finobt is the inobt restricted to chunks with free inodes.
	Finobt = &Kind{
		Shape:       format.FinobtShape,
		Key:         copyKey4,
		Compare:     compareBE32,
		RecsInOrder: inoRecsInOrder,
	}

	// Refcountbt indexes shared (and CoW staging, bit 31) extents by start
	// block; key = startblock.
	Refcountbt = &Kind{
		Shape:   format.RefcountShape,
		Key:     copyKey4,
		Compare: compareBE32,
		RecsInOrder: func(a, b []byte) bool {
			return uint64(be.Uint32(a))+uint64(be.Uint32(a[4:])) <= uint64(be.Uint32(b))
		},
	}

	// Bmbt maps file offsets to blocks in an inode fork; key = startoff
	// (be64), taken from bits 62..9 of the packed record.
	Bmbt = &Kind{
		Shape: format.BmbtShape,
		Key: func(key, rec []byte) {
			be.PutUint64(key, bmbtStartOff(rec))
		},
		Compare: func(a, b []byte) int { return cmp.Compare(be.Uint64(a), be.Uint64(b)) },
		RecsInOrder: func(a, b []byte) bool {
			ea, eb := format.DecodeExtent(a), format.DecodeExtent(b)
			return uint64(ea.StartOff)+ea.BlockCount <= uint64(eb.StartOff)
		},
	}
)

func copyKey8(key, rec []byte) { copy(key[:8], rec[:8]) }
func copyKey4(key, rec []byte) { copy(key[:4], rec[:4]) }

func compareBE32(a, b []byte) int { return cmp.Compare(be.Uint32(a), be.Uint32(b)) }

// compareCnt orders cntbt keys by block count, then start block.
func compareCnt(a, b []byte) int {
	if c := cmp.Compare(be.Uint32(a[4:]), be.Uint32(b[4:])); c != 0 {
		return c
	}
	return cmp.Compare(be.Uint32(a), be.Uint32(b))
}

func inoRecsInOrder(a, b []byte) bool {
	return uint64(be.Uint32(a))+format.InodesPerChunk <= uint64(be.Uint32(b))
}

// bmbtStartOff extracts br_startoff from a packed extent record.
func bmbtStartOff(rec []byte) uint64 { return (be.Uint64(rec) >> 9) & (1<<54 - 1) }

// KeyOf returns the key of a record as a new slice.
func (k *Kind) KeyOf(rec []byte) []byte {
	key := make([]byte, k.Shape.KeyLen)
	k.Key(key, rec)
	return key
}

// inodeRooted reports whether the tree's root lives in an inode fork.
// Every long-form tree the engine knows (the bmbt) is inode-rooted.
func (k *Kind) inodeRooted() bool { return k.Shape.Long }

// hdrLen is the size of the block header.
func (k *Kind) hdrLen() int {
	if k.Shape.Long {
		return format.LongBlockHdrSize
	}
	return format.ShortBlockHdrSize
}

// crcOff is where the block CRC lives.
func (k *Kind) crcOff() int {
	if k.Shape.Long {
		return format.LongBlockCRCOff
	}
	return format.ShortBlockCRCOff
}

// nullPtr is the "no block" value of sibling pointers, widened to 64 bits
// the way format.BtreeBlock widens them.
func (k *Kind) nullPtr() uint64 {
	if k.Shape.Long {
		return uint64(format.NullFsBlock)
	}
	return uint64(format.NullAgBlock)
}

// Finalize prepares a block of this kind for writing: it stamps lsn into
// the header and sets the CRC. The transaction's write path calls it on
// every dirty block before the block goes to the log or the disk.
func (k *Kind) Finalize(b []byte, lsn format.LSN) {
	if k.Shape.Long {
		be.PutUint64(b[32:], uint64(lsn))
	} else {
		be.PutUint64(b[24:], uint64(lsn))
	}
	format.SetCRC(b, k.crcOff())
}
