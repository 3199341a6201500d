package xfs

import (
	"fmt"
	"io"

	"github.com/xfs3/xfs3/xfs/format"
)

// maxClonePerTx bounds the source extents one clone transaction maps, so
// a transaction stays small however fragmented the source is.
const maxClonePerTx = 128

// CloneStats says what CloneRange did.
type CloneStats struct {
	SharedBlocks int64 // blocks now mapped by both files
	CopiedBytes  int64 // bytes copied: the partial blocks at the edges
	Transactions int   // transactions that shared blocks
}

// CloneRange makes the n bytes of regular file dst from byte dstOff read
// as the n bytes of regular file src from srcOff (which must lie inside
// src), and extends dst when the range ends past it. The whole blocks of
// the range share src's blocks (both files get the reflink flag and the
// refcount btrees count the new mappings); the partial blocks at its
// edges are copied. A range that ends at src's end shares its last,
// partial block too when it also ends at or past dst's end, as the
// kernel's clone of a whole file does. Holes and unwritten extents of
// src leave holes in dst; what dst mapped in the range before is
// released.
//
// Sharing needs a reflink volume (else ErrUnsupported) and srcOff and
// dstOff at the same offset within a block (else ErrUnaligned): callers
// copy bytes instead. src and dst must differ. src may be immutable (it
// only gains the reflink flag); dst may not.
//
// CloneRange is not atomic as a whole: each transaction maps a batch of
// src's extents and counts them, so a crash leaves dst partly cloned but
// every count equal to the mappings. Callers clone into a file nobody
// sees yet (the store's staging files).
func (v Files) CloneRange(dst format.Ino, dstOff int64, src format.Ino, srcOff, n int64) (st CloneStats, err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return st, err
	}
	if !v.geo.Reflink {
		return st, fmt.Errorf("%w: the volume has no refcount btree (made without reflink)", ErrUnsupported)
	}
	if dst == src || n < 0 || dstOff < 0 || srcOff < 0 || dstOff+n < dstOff || srcOff+n < srcOff {
		return st, fmt.Errorf("clone %d bytes of inode %d at %d to inode %d at %d: %w", n, src, srcOff, dst, dstOff, ErrInvalid)
	}
	bs := int64(v.geo.BlockSize)
	if (srcOff-dstOff)%bs != 0 {
		return st, fmt.Errorf("clone from byte %d to byte %d: %w", srcOff, dstOff, ErrUnaligned)
	}
	if n == 0 {
		return st, nil
	}
	c := &cloneRange{dst: dst, src: src, dstOff: dstOff, srcOff: srcOff, n: n}
	if err := v.shareBlocks(c, &st); err != nil {
		return st, err
	}
	for _, e := range c.edges {
		if err := v.copyBytes(dst, e[0]-srcOff+dstOff, src, e[0], e[1]-e[0]); err != nil {
			return st, err
		}
		st.CopiedBytes += e[1] - e[0]
	}
	return st, nil
}

// cloneRange is a CloneRange between its transactions.
type cloneRange struct {
	dst, src       format.Ino
	dstOff, srcOff int64
	n              int64
	// The src blocks [first, end) are shared; next is the first not done
	// yet. edges are the src byte ranges left to copy.
	first, end, next format.FileOff
	edges            [][2]int64
}

// plan splits the range into the blocks to share and the edges to copy,
// with src's and dst's sizes as the first transaction sees them.
func (c *cloneRange) plan(g *format.Geometry, srcSize, dstSize int64) error {
	if c.srcOff+c.n > srcSize {
		return fmt.Errorf("clone bytes %d to %d of inode %d, which has %d: %w", c.srcOff, c.srcOff+c.n, c.src, srcSize, ErrInvalid)
	}
	bs := int64(g.BlockSize)
	lo := (c.srcOff + bs - 1) &^ (bs - 1)
	hi := (c.srcOff + c.n) &^ (bs - 1)
	if c.srcOff+c.n == srcSize && c.dstOff+c.n >= dstSize {
		hi = (srcSize + bs - 1) &^ (bs - 1) // the last, partial block shares too
	}
	if lo >= hi {
		c.edges = [][2]int64{{c.srcOff, c.srcOff + c.n}}
		return nil
	}
	if c.srcOff < lo {
		c.edges = append(c.edges, [2]int64{c.srcOff, lo})
	}
	if end := c.srcOff + c.n; hi < end {
		c.edges = append(c.edges, [2]int64{hi, end})
	}
	c.first, c.end = format.FileOff(lo>>g.BlockLog), format.FileOff(hi>>g.BlockLog)
	c.next = c.first
	return nil
}

// shareBlocks runs the transactions that share the whole blocks, with
// both inodes locked throughout (lower inode number first).
func (v Files) shareBlocks(cr *cloneRange, st *CloneStats) error {
	hd, hs, unlock := v.lockInodesInOrder(cr.dst, cr.src)
	defer unlock()
	planned := false
	for !planned || cr.next < cr.end {
		var shared int64
		var next format.FileOff
		err := v.runTx(v.cloneReserve(), false, func(t *txn) error {
			var err error
			shared, next, err = v.cloneBatchTx(t, cr, hd, hs, !planned)
			return err
		})
		if err != nil {
			return err
		}
		planned, cr.next = true, next
		st.SharedBlocks += shared
		if cr.first < cr.end {
			st.Transactions++
		}
	}
	return nil
}

// cloneReserve covers one batch: dst's bmbt growing by maxClonePerTx
// records, the release of what dst mapped there, and the refcount
// records each new mapping may add (two splits at most per extent).
func (v Files) cloneReserve() int64 {
	return v.moveReserve() + 4*maxClonePerTx
}

// cloneBatchTx shares up to maxClonePerTx of src's extents from cr.next
// on (planning the clone first when plan is set) and returns the blocks
// it shared and where the next batch starts (cr.next is the caller's to
// move once the transaction has committed).
func (v Files) cloneBatchTx(t *txn, cr *cloneRange, hd, hs *inodeHandle, plan bool) (shared int64, next format.FileOff, err error) {
	cd, err := t.modify(hd, cr.dst)
	if err != nil {
		return 0, 0, err
	}
	// Only the reflink flag changes in src: an immutable source may be
	// cloned.
	cs, err := t.modifyAny(hs, cr.src)
	if err != nil {
		return 0, 0, err
	}
	for _, c := range []*inodeChange{cd, cs} {
		if c.core.Mode&format.SIFMT != format.SIFREG {
			return 0, 0, fmt.Errorf("inode %d is a %s, not a regular file: %w", c.ino, format.FileType(c.core.Mode), ErrInvalid)
		}
	}
	g := &v.geo
	if plan {
		if err := cr.plan(g, cs.core.Size, cd.core.Size); err != nil {
			return 0, 0, err
		}
	}
	if cr.next >= cr.end {
		cd.core.Size = max(cd.core.Size, cr.dstOff+cr.n)
		cd.touch(true)
		return 0, cr.next, nil
	}
	srcExt, err := cs.mapping(DataFork)
	if err != nil {
		return 0, 0, err
	}
	dstExt, err := cd.mapping(DataFork)
	if err != nil {
		return 0, 0, err
	}
	delta := format.FileOff((cr.dstOff - cr.srcOff) >> g.BlockLog) // dst block = src block + delta
	if cr.dstOff < cr.srcOff {
		delta = -format.FileOff((cr.srcOff - cr.dstOff) >> g.BlockLog)
	}
	// The src pieces of this batch: written extents, clipped to the range.
	var pieces []format.Extent
	upto := cr.end
	for i := lookupExtent(srcExt, cr.next); i < len(srcExt) && srcExt[i].StartOff < cr.end; i++ {
		if len(pieces) == maxClonePerTx {
			upto = srcExt[i].StartOff
			break
		}
		e := srcExt[i]
		if e.Unwritten {
			continue
		}
		from, to := max(e.StartOff, cr.next), min(e.End(), cr.end)
		pieces = append(pieces, format.Extent{StartOff: from, StartBlock: e.StartBlock + format.FsBlock(from-e.StartOff), BlockCount: uint64(to - from)})
	}
	// What dst mapped over the batch's blocks goes first.
	dFrom := cr.next + delta
	rest, removed := extentsRemove(dstExt, dFrom, uint64(upto-cr.next))
	for _, e := range removed {
		cd.core.NBlocks -= e.BlockCount
	}
	if err := cd.releaseData(removed); err != nil {
		return 0, 0, err
	}
	for _, p := range pieces {
		shared += int64(p.BlockCount)
		q := p
		q.StartOff += delta
		rest = v.extentsInsert(rest, q)
	}
	if _, err := t.adjustShared(pieces, +1); err != nil {
		return 0, 0, err
	}
	cd.core.NBlocks += uint64(shared)
	cs.core.Flags2 |= format.Diflag2Reflink
	cd.core.Flags2 |= format.Diflag2Reflink
	if err := cd.setMapping(DataFork, rest); err != nil {
		return 0, 0, err
	}
	end := min(int64(upto+delta)<<g.BlockLog, cr.dstOff+cr.n)
	cd.core.Size = max(cd.core.Size, end)
	cd.touch(true)
	return shared, upto, nil
}

// copyBytes copies n bytes of src at srcOff to dst at dstOff through
// memory, in pieces.
func (v Files) copyBytes(dst format.Ino, dstOff int64, src format.Ino, srcOff, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for n > 0 {
		k := min(n, int64(len(buf)))
		got, err := v.ReadAt(src, buf[:k], srcOff)
		if err != nil && !(err == io.EOF && int64(got) == k) {
			return fmt.Errorf("clone: read inode %d at %d: %w", src, srcOff, err)
		}
		if _, err := v.WriteAt(dst, buf[:k], dstOff); err != nil {
			return err
		}
		srcOff, dstOff, n = srcOff+k, dstOff+k, n-k
	}
	return nil
}
