package xfs

import (
	"fmt"
	"math"

	"github.com/xfs3/xfs3/xfs/format"
)

// maxMovePerTx bounds the extents one AppendExtents transaction moves, so
// a transaction stays small however fragmented the source is.
const maxMovePerTx = 512

// AppendExtents moves the content of regular file src onto the end of
// regular file dst without copying data: src's extents (written and
// unwritten; holes stay holes) are remapped to follow dst's last block,
// dst grows by src's size and src is left with size 0 and no blocks.
// dst's size must be a multiple of the block size (else ErrUnaligned).
// Blocks either file holds past its end are freed first, so they neither
// collide with the moved extents nor appear inside dst.
//
// Each transaction holds both inodes, so every block belongs to exactly
// one of them at every commit; a very fragmented src is moved in several
// transactions, front first, dst growing over what has been moved while
// src keeps its size over a leading hole.
func (v Files) AppendExtents(dst, src format.Ino) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if dst == src {
		return fmt.Errorf("append inode %d to itself: %w", dst, ErrInvalid)
	}
	hd, hs, unlock := v.lockInodesInOrder(dst, src)
	defer unlock()
	m := &extentMove{dst: dst, src: src, hd: hd, hs: hs}
	for done := false; !done; m.batches++ {
		err := v.runTx(v.moveReserve(), false, func(t *txn) error {
			var err error
			done, err = v.moveBatchTx(t, m)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// extentMove is the state of one AppendExtents between its transactions.
type extentMove struct {
	dst, src format.Ino
	hd, hs   *inodeHandle
	batches  int
	// base and srcSize are the sizes the move started from.
	base, srcSize int64
}

// moveReserve covers one batch: dst's bmbt growing by maxMovePerTx
// records (half-full leaves after splits) plus a split of every level.
func (v Files) moveReserve() int64 {
	perLeaf := format.BmbtShape.MaxRecs(v.geo.BlockSize, true) / 2
	return int64(2*(maxMovePerTx/perLeaf+1)) + v.bmbtReserve()
}

// moveBatchTx moves up to maxMovePerTx extents; done reports that src is
// now empty.
func (v Files) moveBatchTx(t *txn, m *extentMove) (done bool, err error) {
	cd, err := t.modify(m.hd, m.dst)
	if err != nil {
		return false, err
	}
	cs, err := t.modify(m.hs, m.src)
	if err != nil {
		return false, err
	}
	for _, c := range []*inodeChange{cd, cs} {
		if c.core.Mode&format.SIFMT != format.SIFREG {
			return false, fmt.Errorf("inode %d is a %s, not a regular file: %w", c.ino, format.FileType(c.core.Mode), ErrInvalid)
		}
	}
	g := &v.geo
	bs := int64(g.BlockSize)
	if m.batches == 0 {
		m.base, m.srcSize = cd.core.Size, cs.core.Size
		if m.base%bs != 0 {
			return false, fmt.Errorf("inode %d has %d bytes: %w", m.dst, m.base, ErrUnaligned)
		}
		if m.srcSize > math.MaxInt64-m.base {
			return false, fmt.Errorf("append %d bytes to %d: %w", m.srcSize, m.base, ErrInvalid)
		}
	}
	baseBlk := format.FileOff(m.base >> g.BlockLog)
	srcEnd := format.FileOff((m.srcSize + bs - 1) >> g.BlockLog)
	dstExt, err := cd.mapping(DataFork)
	if err != nil {
		return false, err
	}
	srcExt, err := cs.mapping(DataFork)
	if err != nil {
		return false, err
	}
	if m.batches == 0 {
		if dstExt, err = cd.freePastBlock(dstExt, baseBlk); err != nil {
			return false, err
		}
		if srcExt, err = cs.freePastBlock(srcExt, srcEnd); err != nil {
			return false, err
		}
	}
	n := min(len(srcExt), maxMovePerTx)
	var moved uint64
	for _, e := range srcExt[:n] {
		moved += e.BlockCount
		if e.Unwritten {
			cd.core.Flags |= format.DiflagPrealloc
		}
		e.StartOff += baseBlk
		dstExt = v.extentsInsert(dstExt, e)
	}
	rest := srcExt[n:]
	// src first: shrinking its bmbt frees blocks dst's may then use.
	if err := cs.setMapping(DataFork, rest); err != nil {
		return false, err
	}
	if err := cd.setMapping(DataFork, dstExt); err != nil {
		return false, err
	}
	cs.core.NBlocks -= moved
	cd.core.NBlocks += moved
	if isReflink(&cs.core) {
		cd.core.Flags2 |= format.Diflag2Reflink // the extents may be shared
	}
	if len(rest) == 0 {
		cd.core.Size = m.base + m.srcSize
		cs.core.Size = 0
		cs.core.Flags &^= format.DiflagPrealloc
		done = true
	} else {
		// dst covers what has moved so far; src keeps its size.
		cd.core.Size = m.base + int64(rest[0].StartOff)<<g.BlockLog
	}
	cd.touch(true)
	cs.touch(true)
	return done, nil
}

// freePastBlock unmaps and frees every block of the data fork at or past
// file block end and returns the remaining list (the fork is rewritten
// by the caller's setMapping).
func (c *inodeChange) freePastBlock(ext []format.Extent, end format.FileOff) ([]format.Extent, error) {
	rest, removed := extentsRemove(ext, end, uint64(maxFileOff-end))
	if len(removed) == 0 {
		return ext, nil
	}
	for _, e := range removed {
		c.core.NBlocks -= e.BlockCount
	}
	if err := c.releaseData(removed); err != nil {
		return nil, err
	}
	return rest, nil
}

// maxFileOff is one past the largest file block an extent record can
// address (54-bit startoff).
const maxFileOff = format.FileOff(1) << 54
