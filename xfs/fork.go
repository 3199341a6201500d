package xfs

import (
	"fmt"
	"math"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// readFork is a fork.Reader over a committed inode version, for lookups and
// listings outside transactions. Blocks come from the metadata buffer
// cache (on a writable volume, the committed ones), under lease when the
// reader keeps nothing of them past its call (see trans.Lease).
type readFork struct {
	v     *mount
	ip    *inode
	lease *trans.Lease
}

// attrReadFork is the same for the attribute fork.
type attrReadFork struct{ readFork }

var (
	_ fork.Reader = readFork{}
	_ fork.Reader = attrReadFork{}
)

func (r readFork) Geometry() *format.Geometry { return &r.v.geo }
func (r readFork) Owner() format.Ino          { return r.ip.ino }
func (r readFork) Format() int8               { return r.ip.core.Format }
func (r readFork) Size() int64                { return r.ip.core.Size }

func (r readFork) Inline() []byte {
	b := r.ip.fork(DataFork)
	if r.ip.core.Format != format.FmtLocal || r.ip.core.Size < 0 || r.ip.core.Size > int64(len(b)) {
		return nil
	}
	return b[:r.ip.core.Size]
}

func (r readFork) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return r.v.readForkRun(r.ip, DataFork, off, count, ops, r.lease)
}

func (r readFork) Mapped() ([][2]format.FileOff, error) { return r.v.mappedRanges(r.ip, DataFork) }

func (r attrReadFork) Format() int8 {
	if r.ip.core.ForkOff == 0 {
		return format.FmtExtents
	}
	return r.ip.core.AFormat
}
func (r attrReadFork) Size() int64    { return 0 }
func (r attrReadFork) Inline() []byte { return r.ip.fork(AttrFork) }

func (r attrReadFork) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return r.v.readForkRun(r.ip, AttrFork, off, count, ops, r.lease)
}

func (r attrReadFork) Mapped() ([][2]format.FileOff, error) {
	if r.ip.core.ForkOff == 0 {
		return nil, nil
	}
	return r.v.mappedRanges(r.ip, AttrFork)
}

func (v *mount) mappedRanges(ip *inode, f Fork) ([][2]format.FileOff, error) {
	if ip.format(f) != format.FmtExtents && ip.format(f) != format.FmtBtree {
		return nil, nil
	}
	ext, err := v.extents(ip, f)
	if err != nil {
		return nil, err
	}
	return mergeRanges(ext), nil
}

// readForkRun reads count blocks of a committed fork and verifies them,
// under lease if l is not nil.
func (v *mount) readForkRun(ip *inode, f Fork, off format.FileOff, count int, ops *trans.Ops, l *trans.Lease) ([]byte, format.Daddr, error) {
	ext, err := v.extents(ip, f)
	if err != nil {
		return nil, 0, err
	}
	if fsb, run, ok, _ := mapBlock(ext, off); ok && run >= uint64(count) {
		d := v.geo.FsbToDaddr(fsb)
		var b []byte
		var err error
		if l != nil {
			b, err = v.cache.ReadLeased(l, d, count*v.geo.BlockSize, ops)
		} else {
			b, err = v.cache.Read(d, count*v.geo.BlockSize, ops)
		}
		if err != nil {
			return nil, 0, v.markSick(format.Located(err, fmt.Sprintf("inode %d %v block %d", ip.ino, f, off)), ip.ino)
		}
		return b, d, nil
	}
	// A directory block larger than a filesystem block split across
	// extents, or a hole: read piecewise (or refused), verified on every
	// read.
	b, d, err := v.readForkBlocks(ext, off, count)
	if err != nil {
		return nil, 0, err
	}
	if ops != nil && ops.Verify != nil {
		if err := ops.Verify(b, d); err != nil {
			return nil, 0, v.markSick(format.Located(err, fmt.Sprintf("inode %d %v block %d (daddr %d)", ip.ino, f, off, d)), ip.ino)
		}
	}
	return b, d, nil
}

// dataFork is the engine's fork.Writer for an inode's data fork inside a
// transaction: directories and symlinks are written through it.
type dataFork struct {
	c *inodeChange
}

var _ fork.Writer = dataFork{}

func (d dataFork) Geometry() *format.Geometry { return &d.c.t.v.geo }
func (d dataFork) Owner() format.Ino          { return d.c.ino }
func (d dataFork) Format() int8               { return d.c.core.Format }
func (d dataFork) Size() int64                { return d.c.core.Size }
func (d dataFork) SetSize(size int64)         { d.c.core.Size = size }
func (d dataFork) InlineSpace() int           { return len(d.c.forkBytes(DataFork)) }
func (d dataFork) MaxInlineSpace() int        { return len(d.c.forkBytes(DataFork)) }
func (d dataFork) Dirty(daddr format.Daddr)   { d.c.t.Dirty(daddr) }

func (d dataFork) Inline() []byte {
	fork := d.c.forkBytes(DataFork)
	if d.c.core.Format != format.FmtLocal || d.c.core.Size > int64(len(fork)) || d.c.core.Size < 0 {
		return nil
	}
	// A copy: callers keep decoded names while they convert the fork.
	return append([]byte(nil), fork[:d.c.core.Size]...)
}

func (d dataFork) SetInline(b []byte) error {
	fork := d.c.forkBytes(DataFork)
	if len(b) > len(fork) {
		return fmt.Errorf("xfs: internal error: %d inline bytes in a %d-byte fork", len(b), len(fork))
	}
	if ext, err := d.c.extentsOf(DataFork); err != nil {
		return err
	} else if len(ext) > 0 {
		return fmt.Errorf("xfs: internal error: local fork with %d extents still mapped", len(ext))
	}
	clear(fork)
	copy(fork, b)
	d.c.core.Format = format.FmtLocal
	d.c.core.Size = int64(len(b))
	d.c.setNextents(DataFork, 0)
	d.c.ext[DataFork], d.c.extLoaded[DataFork] = nil, true
	return nil
}

func (d dataFork) ToBlocks() error {
	if d.c.core.Format != format.FmtLocal {
		return fmt.Errorf("xfs: internal error: ToBlocks of a %s fork", format.FormatName(d.c.core.Format))
	}
	clear(d.c.forkBytes(DataFork))
	d.c.core.Format = format.FmtExtents
	d.c.core.Size = 0
	d.c.setNextents(DataFork, 0)
	d.c.ext[DataFork], d.c.extLoaded[DataFork] = nil, true
	return nil
}

func (d dataFork) Mapped() ([][2]format.FileOff, error) { return d.c.mapped(DataFork) }

func (d dataFork) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return d.c.readBlocks(DataFork, off, count, ops)
}

func (d dataFork) Alloc(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return d.c.allocBlocks(DataFork, off, count, ops)
}

func (d dataFork) Free(off format.FileOff, count int) error {
	return d.c.freeForkBlocks(DataFork, off, count)
}

// mapped lists the mapped ranges of fork f.
func (c *inodeChange) mapped(f Fork) ([][2]format.FileOff, error) {
	ext, err := c.extentsOf(f)
	if err != nil {
		return nil, err
	}
	return mergeRanges(ext), nil
}

// diskRun returns the disk address of count fork blocks from off, which
// must be mapped to consecutive disk blocks (metadata buffers are one
// contiguous run).
func (c *inodeChange) diskRun(f Fork, off format.FileOff, count int) (format.Daddr, error) {
	ext, err := c.extentsOf(f)
	if err != nil {
		return 0, err
	}
	fsb, run, ok, _ := mapBlock(ext, off)
	if !ok {
		return 0, format.Corrupt("fork", fmt.Sprintf("inode %d %v", c.ino, f), "metadata block %d is a hole", off)
	}
	for run < uint64(count) {
		next, more, ok, _ := mapBlock(ext, off+format.FileOff(run))
		if !ok || next != fsb+format.FsBlock(run) {
			return 0, fmt.Errorf("%w: inode %d has a multi-block metadata block at %d split across extents", ErrUnsupported, c.ino, off)
		}
		run += more
	}
	return c.t.v.geo.FsbToDaddr(fsb), nil
}

func (d dataFork) View(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return d.c.viewBlocks(DataFork, off, count, ops)
}

func (c *inodeChange) readBlocks(f Fork, off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return c.takeBlocks(c.t.Read, f, off, count, ops)
}

// viewBlocks is readBlocks giving the transaction's shared version (see
// fork.Viewer).
func (c *inodeChange) viewBlocks(f Fork, off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return c.takeBlocks(c.t.View, f, off, count, ops)
}

func (c *inodeChange) takeBlocks(take func(format.Daddr, int, *trans.Ops) ([]byte, error), f Fork, off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	d, err := c.diskRun(f, off, count)
	if err != nil {
		return nil, 0, err
	}
	b, err := take(d, count*c.t.v.geo.BlockSize, ops)
	if err != nil {
		return nil, 0, c.t.v.markSick(format.Located(err, fmt.Sprintf("inode %d %v block %d", c.ino, f, off)), c.ino)
	}
	return b, d, nil
}

// allocBlocks maps count new contiguous blocks at fork offset off.
func (c *inodeChange) allocBlocks(f Fork, off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	ext, err := c.mapping(f)
	if err != nil {
		return nil, 0, err
	}
	goal := c.inodeGoal()
	if i := lookupExtent(ext, off); i > 0 {
		goal = ext[i-1].StartBlock + format.FsBlock(ext[i-1].BlockCount)
	}
	fsb, _, err := c.t.alloc.AllocBlocks(goal, uint32(count), uint32(count), 0)
	if err != nil {
		return nil, 0, err
	}
	c.core.NBlocks += uint64(count)
	ext = c.t.v.extentsInsert(ext, format.Extent{StartOff: off, StartBlock: fsb, BlockCount: uint64(count)})
	if err := c.setMapping(f, ext); err != nil {
		return nil, 0, err
	}
	d := c.t.v.geo.FsbToDaddr(fsb)
	b, err := c.t.Get(d, count*c.t.v.geo.BlockSize, ops)
	return b, d, err
}

// freeForkBlocks unmaps and frees count blocks at fork offset off.
func (c *inodeChange) freeForkBlocks(f Fork, off format.FileOff, count int) error {
	d, err := c.diskRun(f, off, count)
	if err != nil {
		return err
	}
	ext, err := c.mapping(f)
	if err != nil {
		return err
	}
	rest, removed := extentsRemove(ext, off, uint64(count))
	c.t.Forget(d)
	c.core.NBlocks -= uint64(count)
	var u unmapped
	u.add(c, f, removed)
	if err := c.t.release(u); err != nil {
		return err
	}
	return c.setMapping(f, rest)
}

// readMapped fills p with the bytes at byte offset off of a mapped fork,
// reading each contiguous run of blocks with one device read.
func (v *mount) readMapped(ext []format.Extent, p []byte, off int64) error {
	bs := int64(v.geo.BlockSize)
	for len(p) > 0 {
		fb := format.FileOff(off >> v.geo.BlockLog)
		inBlock := off & (bs - 1)
		fsb, run, ok, unwritten := mapBlock(ext, fb)
		if !ok {
			// A hole: zeros up to the next extent.
			n := int64(len(p))
			// The next extent starts after off; one starting beyond
			// the largest byte offset cannot end the hole early (and
			// its byte offset would overflow).
			if i := lookupExtent(ext, fb); i < len(ext) && uint64(ext[i].StartOff) <= math.MaxInt64>>v.geo.BlockLog {
				if gap := int64(ext[i].StartOff)<<v.geo.BlockLog - off; gap < n {
					n = gap
				}
			}
			clear(p[:n])
			p, off = p[n:], off+n
			continue
		}
		n := int64(run)<<v.geo.BlockLog - inBlock
		if n > int64(len(p)) {
			n = int64(len(p))
		}
		if unwritten {
			clear(p[:n])
		} else if _, err := v.dev.ReadAt(p[:n], format.DaddrToByte(v.geo.FsbToDaddr(fsb))+inBlock); err != nil {
			return err
		}
		p, off = p[n:], off+n
	}
	return nil
}

// readForkBlocks reads count consecutive fork blocks starting at file block
// off into one buffer; every block must be mapped (metadata has no holes).
// It also returns the disk address of the first block, which v5 headers
// record as their own location.
func (v *mount) readForkBlocks(ext []format.Extent, off format.FileOff, count int) ([]byte, format.Daddr, error) {
	b := make([]byte, count<<v.geo.BlockLog)
	var first format.Daddr
	for done := 0; done < count; {
		fsb, run, ok, _ := mapBlock(ext, off+format.FileOff(done))
		if !ok {
			return nil, 0, format.Corrupt("fork", "", "metadata block %d is a hole", uint64(off)+uint64(done))
		}
		if done == 0 {
			first = v.geo.FsbToDaddr(fsb)
		}
		n := int(min(run, uint64(count-done)))
		if err := v.readAt(b[done<<v.geo.BlockLog:(done+n)<<v.geo.BlockLog], v.geo.FsbToDaddr(fsb)); err != nil {
			return nil, 0, err
		}
		done += n
	}
	return b, first, nil
}

// readSymlinkBlocks reads a remote symlink target. Unlike remote xattr
// values, a symlink has one header per extent (the kernel writes each
// mapped extent as one buffer), with the CRC over the whole extent.
func (v *mount) readSymlinkBlocks(ext []format.Extent, length int, owner format.Ino) ([]byte, error) {
	out := make([]byte, 0, length)
	for _, e := range ext {
		if len(out) >= length {
			break
		}
		if e.Unwritten {
			return nil, format.Corrupt("symlink block", "", "unwritten extent in a symlink")
		}
		if e.BlockCount > uint64(format.MaxSymlinkLen+format.RmtHdrSize)>>v.geo.BlockLog+1 {
			return nil, format.Corrupt("symlink block", "", "extent of %d blocks for a target of %d bytes", e.BlockCount, length)
		}
		b, daddr, err := v.readForkBlocks(ext, e.StartOff, int(e.BlockCount))
		if err != nil {
			return nil, err
		}
		payload, err := format.VerifyRmtBlock(&v.geo, "symlink block", format.SymlinkMagic, b, daddr, owner, uint32(len(out)))
		if err != nil {
			return nil, format.Located(err, fmt.Sprintf("daddr %d", daddr))
		}
		if want := min(len(b)-format.RmtHdrSize, length-len(out)); len(payload) != want {
			return nil, format.Corrupt("symlink block", fmt.Sprintf("daddr %d", daddr), "holds %d bytes, want %d", len(payload), want)
		}
		out = append(out, payload...)
	}
	if len(out) != length {
		return nil, format.Corrupt("symlink", "", "extents hold %d of %d bytes", len(out), length)
	}
	return out, nil
}
