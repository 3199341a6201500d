package dabtree

import (
	"errors"
	"fmt"
	"slices"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Buf is one block (Fsbs filesystem blocks) read or allocated by the
// current operation. B may be modified, unless the block was only viewed
// (Blocks.View): call Blocks.Dirty afterwards.
type Buf struct {
	Blkno uint32       // fork offset in filesystem blocks
	Daddr format.Daddr // disk address, recorded in v5 headers
	B     []byte
	dirty bool
	// view: B is the transaction's shared version, read-only until a
	// Read of the block replaces it with a private copy.
	view bool
}

// Blocks caches the blocks of one fork for the length of one operation, so
// that each block is read (and verified) once and every change is made to
// the same private copy. It is not safe for concurrent use; the caller
// holds the inode's lock.
type Blocks struct {
	R    fork.Reader
	W    fork.Writer // nil for read-only use
	Fsbs int         // filesystem blocks per block
	// bufs are the blocks read or allocated so far; index finds them once
	// there are more than a scan is worth. Most operations touch a few
	// blocks, whose state lives in first and dirtSpace without an
	// allocation each.
	bufs      []*Buf
	index     map[uint32]*Buf
	bufSpace  [4]*Buf
	first     [4]Buf
	firstUsed int
	dirt      []*Buf // dirty buffers in the order they were first dirtied
	dirtSpace [4]*Buf
	// mapping caches R.Mapped between this cache's own Allocs and Frees
	// (nil: ask the fork).
	mapping [][2]format.FileOff
}

// ErrReadOnly is returned by changes through a Blocks made over a Reader.
var ErrReadOnly = errors.New("dabtree: change through a read-only fork")

// NewBlocks returns a cache of fsbs-block units over r. Changes need r to
// be a fork.Writer.
func NewBlocks(r fork.Reader, fsbs int) *Blocks {
	c := new(Blocks)
	c.Init(r, fsbs)
	return c
}

// Init makes c an empty cache over r, as NewBlocks does, for a Blocks
// held inside another value. c must not be copied afterwards.
func (c *Blocks) Init(r fork.Reader, fsbs int) {
	*c = Blocks{R: r, Fsbs: fsbs}
	c.bufs, c.dirt = c.bufSpace[:0], c.dirtSpace[:0]
	if w, ok := r.(fork.Writer); ok {
		c.W = w
	}
}

// Read returns the block at fork offset blkno, verified by ops when it is
// first read, for the caller to change. A block viewed before becomes a
// private copy: the same Buf, with a new B.
func (c *Blocks) Read(blkno uint32, ops *trans.Ops) (*Buf, error) {
	b := c.find(blkno)
	if b != nil && !b.view {
		return b, nil
	}
	data, daddr, err := c.R.Read(format.FileOff(blkno), c.Fsbs, ops)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("fork block %d", blkno))
	}
	return c.keep(b, blkno, data, daddr, false)
}

// View returns the block at fork offset blkno like Read, but read-only:
// through a fork.Viewer it is the transaction's shared version, not a
// copy. Lookups view the nodes they only pass through; whatever changes a
// block must Read it first (Tree does so for the paths it changes).
func (c *Blocks) View(blkno uint32, ops *trans.Ops) (*Buf, error) {
	if b := c.find(blkno); b != nil {
		return b, nil
	}
	v, ok := c.R.(fork.Viewer)
	if !ok {
		return c.Read(blkno, ops)
	}
	data, daddr, err := v.View(format.FileOff(blkno), c.Fsbs, ops)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("fork block %d", blkno))
	}
	return c.keep(nil, blkno, data, daddr, true)
}

// keep caches data as the block at blkno, in b when the block was viewed.
func (c *Blocks) keep(b *Buf, blkno uint32, data []byte, daddr format.Daddr, view bool) (*Buf, error) {
	if want := c.Fsbs << c.R.Geometry().BlockLog; len(data) != want {
		return nil, fmt.Errorf("fork block %d: read %d bytes, want %d", blkno, len(data), want)
	}
	if b == nil {
		b = c.add(blkno)
	}
	b.Daddr, b.B, b.view = daddr, data, view
	return b, nil
}

// blocksScan is how many blocks a Blocks finds by a scan before it
// builds an index.
const blocksScan = 16

// find returns the state of the block at blkno, if c has it.
func (c *Blocks) find(blkno uint32) *Buf {
	if c.index != nil {
		return c.index[blkno]
	}
	for _, b := range c.bufs {
		if b.Blkno == blkno {
			return b
		}
	}
	return nil
}

// add returns a new state for the block at blkno.
func (c *Blocks) add(blkno uint32) *Buf {
	var b *Buf
	if c.firstUsed < len(c.first) {
		b = &c.first[c.firstUsed]
		c.firstUsed++
	} else {
		b = new(Buf)
	}
	b.Blkno = blkno
	c.bufs = append(c.bufs, b)
	switch {
	case c.index != nil:
		c.index[blkno] = b
	case len(c.bufs) > blocksScan:
		c.index = make(map[uint32]*Buf, 2*len(c.bufs))
		for _, b := range c.bufs {
			c.index[b.Blkno] = b
		}
	}
	return b
}

// drop forgets the block at blkno and returns its state, if c had it.
func (c *Blocks) drop(blkno uint32) *Buf {
	b := c.find(blkno)
	if b == nil {
		return nil
	}
	c.bufs = slices.DeleteFunc(c.bufs, func(x *Buf) bool { return x == b })
	delete(c.index, blkno)
	return b
}

// Alloc maps a new zeroed block at blkno. It fails with the fork's error
// (wrapping the engine's no-space error) when the volume is full.
func (c *Blocks) Alloc(blkno uint32, ops *trans.Ops) (*Buf, error) {
	if c.W == nil {
		return nil, ErrReadOnly
	}
	if c.find(blkno) != nil {
		return nil, format.Corrupt("fork", fmt.Sprintf("fork block %d", blkno), "allocating a block that is in use")
	}
	c.mapping = nil
	data, daddr, err := c.W.Alloc(format.FileOff(blkno), c.Fsbs, ops)
	if err != nil {
		return nil, err
	}
	b := c.add(blkno)
	b.Daddr, b.B = daddr, data
	c.Dirty(b)
	return b, nil
}

// Dirty records that b was changed; Flush hands it to the transaction.
// A viewed block must not have been changed.
func (c *Blocks) Dirty(b *Buf) {
	if b.view {
		panic(fmt.Sprintf("dabtree: fork block %d changed through a view", b.Blkno))
	}
	if !b.dirty {
		b.dirty = true
		c.dirt = append(c.dirt, b)
	}
}

// Free unmaps the block at blkno and forgets it, whether or not it was
// read through c.
func (c *Blocks) Free(blkno uint32) error {
	if c.W == nil {
		return ErrReadOnly
	}
	c.mapping = nil
	if err := c.W.Free(format.FileOff(blkno), c.Fsbs); err != nil {
		return err
	}
	if b := c.drop(blkno); b != nil && b.dirty {
		b.dirty = false
		c.dirt = slices.DeleteFunc(c.dirt, func(d *Buf) bool { return d == b })
	}
	return nil
}

// Flush marks every changed block dirty in the transaction. Call it once
// the operation has succeeded.
func (c *Blocks) Flush() {
	for _, b := range c.dirt {
		c.W.Dirty(b.Daddr)
		b.dirty = false
	}
	c.dirt = c.dirt[:0]
}

// Mapped returns the fork's mapped ranges of filesystem blocks, in
// order. The answer is kept until the next Alloc or Free through c, which
// must then be the only way the mapping changes. A local fork maps
// nothing.
func (c *Blocks) Mapped() ([][2]format.FileOff, error) {
	if c.R.Format() == format.FmtLocal {
		return nil, nil
	}
	if c.mapping == nil {
		m, err := c.R.Mapped()
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = [][2]format.FileOff{} // not nil once asked
		}
		c.mapping = m
	}
	return c.mapping, nil
}

// IsHole reports whether no filesystem block of the unit at blkno is
// mapped.
func (c *Blocks) IsHole(blkno uint32) (bool, error) {
	m, err := c.Mapped()
	if err != nil {
		return false, err
	}
	lo, hi := format.FileOff(blkno), format.FileOff(blkno)+format.FileOff(c.Fsbs)
	for _, r := range m {
		if r[0] < hi && r[1] > lo {
			return false, nil
		}
	}
	return true, nil
}

// FirstUnused returns the first unit-aligned offset at or after from where
// n units (n×Fsbs filesystem blocks) are unmapped (xfs_bmap_first_unused).
// from must be aligned.
func (c *Blocks) FirstUnused(from uint32, n int) (uint32, error) {
	m, err := c.Mapped()
	if err != nil {
		return 0, err
	}
	pos := format.FileOff(from)
	unit := format.FileOff(c.Fsbs)
	need := format.FileOff(n) * unit
	for _, r := range m {
		if r[1] <= pos {
			continue
		}
		if r[0] >= pos+need {
			break
		}
		// Overlap: continue after this range, rounded up to a unit.
		pos = (r[1] + unit - 1) / unit * unit
	}
	if pos > 1<<32-need {
		return 0, format.Corrupt("fork", "", "no unmapped block left below 2^32")
	}
	return uint32(pos), nil
}

// LastBefore returns the end of the last mapped range that starts below
// off (xfs_bmap_last_before), or 0 when nothing is mapped there.
func (c *Blocks) LastBefore(off uint32) (uint32, error) {
	m, err := c.Mapped()
	if err != nil {
		return 0, err
	}
	var end format.FileOff
	for _, r := range m {
		if r[0] >= format.FileOff(off) {
			break
		}
		end = min(r[1], format.FileOff(off))
	}
	return uint32(end), nil
}
