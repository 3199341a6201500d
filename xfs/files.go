package xfs

import (
	"fmt"
	"io"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// Files is the data of regular files and the extents that hold it:
// reading and writing bytes, truncating, punching holes, preallocating,
// moving extents from one file to another without copying them, handles
// that keep an inode readable after its last name is gone, and the
// immutable flag that freezes a file (SetImmutable).
//
// Data is written straight to its blocks before the transaction that
// maps them commits (ordered data), so neither a reader nor recovery
// after a crash can reach blocks that hold another file's old bytes. A
// change allocates in transactions of bounded size (maxWriteChunk) and
// holds the file's lock from its first to its last. The extent map
// switches between in-inode extents and a bmbt where the kernel would
// (bmap.go). A Files comes from Volume.Files and is safe for many
// goroutines.
type Files struct{ *mount }

// Files returns the volume's file data and extents.
func (v *Volume) Files() Files { return Files{v.mount} }

func (m *mount) files() Files { return Files{m} }

// ReadAt reads file data at byte offset off. Holes and unwritten extents
// read as zeros. It returns io.EOF when off+len(p) passes the end of file,
// like io.ReaderAt.
func (v Files) ReadAt(ino format.Ino, p []byte, off int64) (int, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return 0, err
	}
	if ip.isDir() {
		return 0, fmt.Errorf("inode %d: %w", ino, ErrIsDir)
	}
	if !ip.isReg() {
		return 0, fmt.Errorf("inode %d is a %s: %w", ino, format.FileType(ip.core.Mode), ErrInvalid)
	}
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d: %w", off, ErrInvalid)
	}
	size := ip.core.Size
	if off >= size {
		return 0, io.EOF
	}
	want := p
	if int64(len(p)) > size-off {
		want = p[:size-off]
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return 0, err
	}
	if err := v.readMapped(ext, want, off); err != nil {
		return 0, fmt.Errorf("inode %d: %w", ino, err)
	}
	if len(want) < len(p) {
		return len(want), io.EOF
	}
	return len(p), nil
}

// Readlink returns a symlink's target.
func (v Files) Readlink(ino format.Ino) (string, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return "", err
	}
	if !ip.isLink() {
		return "", fmt.Errorf("inode %d is not a symlink: %w", ino, ErrInvalid)
	}
	size := ip.core.Size
	where := fmt.Sprintf("inode %d", ino)
	if size <= 0 || size > format.MaxSymlinkLen {
		return "", format.Corrupt("symlink", where, "bad length %d", size)
	}
	if ip.core.Format == format.FmtLocal {
		fork := ip.fork(DataFork)
		if size > int64(len(fork)) {
			return "", format.Corrupt("symlink", where, "inline target of %d bytes overruns the fork", size)
		}
		return string(fork[:size]), nil
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return "", err
	}
	target, err := v.readSymlinkBlocks(ext, int(size), ino)
	if err != nil {
		return "", format.Located(err, where)
	}
	return string(target), nil
}

// File data changes. Data is written straight to its blocks before the
// transaction that maps them commits (ordered data), so a reader can never
// reach blocks that hold another file's old bytes.

// maxWriteChunk bounds the blocks one transaction allocates.
const maxWriteChunk = 64 << 20

// WriteAt writes p at byte offset off of regular file ino, allocating
// blocks for holes, and extends the file when it writes past the end.
func (v Files) WriteAt(ino format.Ino, p []byte, off int64) (written int, err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return 0, err
	}
	if off < 0 || off+int64(len(p)) < off {
		return 0, fmt.Errorf("write of %d bytes at %d: %w", len(p), off, ErrInvalid)
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	done := 0
	for done < len(p) {
		n := min(len(p)-done, maxWriteChunk)
		err := v.writeChunk(h, ino, p[done:done+n], off+int64(done))
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

func (v Files) writeChunk(h *inodeHandle, ino format.Ino, p []byte, off int64) error {
	g := &v.geo
	first := format.FileOff(off >> g.BlockLog)
	last := format.FileOff((off + int64(len(p)) - 1) >> g.BlockLog)
	return v.runTx(int64(last-first)+1+v.bmbtReserve(), false, func(t *txn) error {
		return v.writeChunkTx(t, h, ino, p, off, first, last)
	})
}

// bmbtReserve is the blocks a mapping change may need for bmbt splits.
func (v *mount) bmbtReserve() int64 { return 2 * format.MaxBtreeLevels }

func (v Files) writeChunkTx(t *txn, h *inodeHandle, ino format.Ino, p []byte, off int64, first, last format.FileOff) error {
	c, err := t.modify(h, ino)
	if err != nil {
		return err
	}
	if c.core.Mode&format.SIFMT != format.SIFREG {
		if c.core.Mode&format.SIFMT == format.SIFDIR {
			return fmt.Errorf("inode %d: %w", ino, ErrIsDir)
		}
		return fmt.Errorf("inode %d is a %s: %w", ino, format.FileType(c.core.Mode), ErrInvalid)
	}
	ext, err := c.mapping(DataFork)
	if err != nil {
		return err
	}
	if err := c.refuseShared(ext, first, last); err != nil {
		return err
	}
	// fresh marks blocks whose old content must not show: new allocations
	// and unwritten blocks being written for the first time.
	var fresh []format.Extent
	for fb := first; fb <= last; {
		i := lookupExtent(ext, fb)
		switch {
		case i < len(ext) && ext[i].StartOff <= fb && !ext[i].Unwritten:
			fb = min(ext[i].End(), last+1)
		case i < len(ext) && ext[i].StartOff <= fb:
			// Unwritten: the written range becomes a written extent.
			end := min(ext[i].End(), last+1)
			e := ext[i]
			d := uint64(fb - e.StartOff)
			piece := format.Extent{StartOff: fb, StartBlock: e.StartBlock + format.FsBlock(d), BlockCount: uint64(end - fb)}
			ext, _ = extentsRemove(ext, fb, piece.BlockCount)
			ext = v.extentsInsert(ext, piece)
			fresh = append(fresh, piece)
			fb = end
		default:
			end := last + 1
			if i < len(ext) && ext[i].StartOff < end {
				end = ext[i].StartOff
			}
			goal := c.inodeGoal()
			if j := lookupExtent(ext, fb); j > 0 {
				prev := ext[j-1]
				goal = prev.StartBlock + format.FsBlock(prev.BlockCount) + format.FsBlock(fb-prev.End())
			}
			want := min(uint64(end-fb), format.MaxExtentLen)
			fsb, n, err := t.alloc.AllocBlocks(goal, 1, uint32(want), 0)
			if err != nil {
				return err
			}
			piece := format.Extent{StartOff: fb, StartBlock: fsb, BlockCount: uint64(n)}
			ext = v.extentsInsert(ext, piece)
			fresh = append(fresh, piece)
			c.core.NBlocks += uint64(n)
			fb += format.FileOff(n)
		}
	}
	if err := v.writeData(ext, fresh, p, off); err != nil {
		return err
	}
	if err := c.setMapping(DataFork, ext); err != nil {
		return err
	}
	if end := off + int64(len(p)); end > c.core.Size {
		c.core.Size = end
	}
	c.touch(true)
	return nil
}

// touch updates ctime, and mtime with data changes, and the change count.
func (c *inodeChange) touch(data bool) {
	now := format.TimestampOf(time.Now())
	c.core.Ctime = now
	if data {
		c.core.Mtime = now
	}
	c.core.ChangeCount++
}

// writeData writes p at byte off into mapped blocks. Partial blocks are
// completed from disk, or with zeros when the block is fresh.
func (v Files) writeData(ext, fresh []format.Extent, p []byte, off int64) error {
	g := &v.geo
	bs := int64(g.BlockSize)
	start := off &^ (bs - 1)
	end := (off + int64(len(p)) + bs - 1) &^ (bs - 1)
	for pos := start; pos < end; {
		fb := format.FileOff(pos >> g.BlockLog)
		fsb, run, ok, _ := mapBlock(ext, fb)
		if !ok {
			return fmt.Errorf("xfs: internal error: file block %d unmapped during a write", fb)
		}
		n := min(int64(run)<<g.BlockLog, end-pos)
		disk := format.DaddrToByte(g.FsbToDaddr(fsb))
		lo, hi := max(pos, off), min(pos+n, off+int64(len(p)))
		// Where p fills the blocks whole they are written from p.
		data := p[lo-off : hi-off]
		if lo != pos || hi != pos+n {
			buf := make([]byte, n)
			// Complete partial head and tail blocks.
			for _, edge := range []int64{pos, pos + n - bs} {
				if edge >= pos && (edge < off || edge+bs > off+int64(len(p))) {
					if !isFresh(fresh, format.FileOff(edge>>g.BlockLog)) {
						if _, err := v.dev.ReadAt(buf[edge-pos:edge-pos+bs], disk+edge-pos); err != nil {
							return err
						}
					}
				}
			}
			copy(buf[lo-pos:hi-pos], data)
			data = buf
		}
		if err := v.writeFileData(data, disk); err != nil {
			return fmt.Errorf("write data: %w", err)
		}
		pos += n
	}
	return nil
}

func isFresh(fresh []format.Extent, fb format.FileOff) bool {
	for _, e := range fresh {
		if fb >= e.StartOff && fb < e.End() {
			return true
		}
	}
	return false
}

// Truncate sets a regular file's size, freeing blocks past the new end.
func (v Files) Truncate(ino format.Ino, size int64) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("truncate to %d: %w", size, ErrInvalid)
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	return v.runTx(v.bmbtReserve(), true, func(t *txn) error { return v.truncateTx(t, h, ino, size) })
}

func (v Files) truncateTx(t *txn, h *inodeHandle, ino format.Ino, size int64) error {
	c, err := t.modifyFile(h, ino)
	if err != nil {
		return err
	}
	g := &v.geo
	if size < c.core.Size {
		ext, err := c.mapping(DataFork)
		if err != nil {
			return err
		}
		// Zero the tail of the new last block so a later extension reads zeros.
		if size&int64(g.BlockSize-1) != 0 {
			if err := v.zeroRange(c, ext, size, (size|int64(g.BlockSize-1))+1); err != nil {
				return err
			}
		}
		keep := format.FileOff((size + int64(g.BlockSize) - 1) >> g.BlockLog)
		if err := c.unmap(ext, keep, ^uint64(0)>>12-uint64(keep)); err != nil {
			return err
		}
	}
	c.core.Size = size
	c.touch(true)
	return nil
}

// unmap removes [off, off+n) from the data fork and frees the blocks.
func (c *inodeChange) unmap(ext []format.Extent, off format.FileOff, n uint64) error {
	rest, removed := extentsRemove(ext, off, n)
	if len(removed) == 0 {
		return nil
	}
	var blocks uint64
	for _, e := range removed {
		blocks += e.BlockCount
	}
	c.core.NBlocks -= blocks
	// Free first: AGFs are then taken in ascending order, and bmbt
	// allocations that follow only wait for AGs above those.
	if err := c.releaseData(removed); err != nil {
		return err
	}
	return c.setMapping(DataFork, rest)
}

// writeFileData writes file data in place. The log flushes it before it
// writes the next records, so a transaction mapping these blocks never
// reaches the disk before their content (ordered data).
func (v Files) writeFileData(p []byte, off int64) error {
	if _, err := v.dev.WriteAt(p, off); err != nil {
		return err
	}
	v.cache.Log().DataWritten()
	return nil
}

// zeroRange writes zeros over c's written blocks of [from, to), which
// must not be shared (ErrShared).
func (v Files) zeroRange(c *inodeChange, ext []format.Extent, from, to int64) error {
	g := &v.geo
	if from >= to {
		return nil
	}
	if err := c.refuseShared(ext, format.FileOff(from>>g.BlockLog), format.FileOff((to-1)>>g.BlockLog)); err != nil {
		return err
	}
	for pos := from; pos < to; {
		fb := format.FileOff(pos >> g.BlockLog)
		blockEnd := int64(fb+1) << g.BlockLog
		n := min(blockEnd, to) - pos
		if fsb, _, ok, unwritten := mapBlock(ext, fb); ok && !unwritten {
			disk := format.DaddrToByte(g.FsbToDaddr(fsb)) + pos - int64(fb)<<g.BlockLog
			if err := v.writeFileData(make([]byte, n), disk); err != nil {
				return err
			}
		}
		pos += n
	}
	return nil
}

// PunchHole frees the blocks of [off, off+length) of a regular file and
// zeroes the partial blocks at its edges; the size does not change.
func (v Files) PunchHole(ino format.Ino, off, length int64) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if off < 0 || length <= 0 || off+length < off {
		return fmt.Errorf("punch %d+%d: %w", off, length, ErrInvalid)
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	return v.runTx(v.bmbtReserve(), true, func(t *txn) error { return v.punchTx(t, h, ino, off, length) })
}

func (v Files) punchTx(t *txn, h *inodeHandle, ino format.Ino, off, length int64) error {
	c, err := t.modifyFile(h, ino)
	if err != nil {
		return err
	}
	g := &v.geo
	ext, err := c.mapping(DataFork)
	if err != nil {
		return err
	}
	end := off + length
	firstWhole := format.FileOff((off + int64(g.BlockSize) - 1) >> g.BlockLog)
	lastWhole := format.FileOff(end >> g.BlockLog) // exclusive
	head := [2]int64{off, min(end, int64(firstWhole)<<g.BlockLog)}
	tail := [2]int64{max(off, int64(lastWhole)<<g.BlockLog), end}
	if lastWhole < firstWhole {
		tail = head
	}
	// Both edges are checked before either is zeroed: a refusal
	// (ErrShared) must change nothing.
	for _, r := range [][2]int64{head, tail} {
		if r[0] < r[1] {
			if err := c.refuseShared(ext, format.FileOff(r[0]>>g.BlockLog), format.FileOff((r[1]-1)>>g.BlockLog)); err != nil {
				return err
			}
		}
	}
	if err := v.zeroRange(c, ext, head[0], head[1]); err != nil {
		return err
	}
	if lastWhole >= firstWhole {
		if err := v.zeroRange(c, ext, tail[0], tail[1]); err != nil {
			return err
		}
	}
	if lastWhole > firstWhole {
		if err := c.unmap(ext, firstWhole, uint64(lastWhole-firstWhole)); err != nil {
			return err
		}
	}
	c.touch(true)
	return nil
}

// Preallocate reserves blocks for [0, size) of a regular file as
// unwritten extents (reading as zeros) without changing its size, so that
// writes of an object whose final size is known land in one extent where
// free space allows (like fallocate with FALLOC_FL_KEEP_SIZE).
func (v Files) Preallocate(ino format.Ino, size int64) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if size <= 0 {
		return nil
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	g := &v.geo
	last := format.FileOff((size - 1) >> g.BlockLog)
	for first := format.FileOff(0); first <= last; {
		end := min(last, first+format.FileOff(maxWriteChunk>>g.BlockLog)-1)
		err := v.runTx(int64(end-first+1)+v.bmbtReserve(), false, func(t *txn) error {
			return v.preallocTx(t, h, ino, first, end)
		})
		if err != nil {
			return err
		}
		first = end + 1
	}
	return nil
}

func (v Files) preallocTx(t *txn, h *inodeHandle, ino format.Ino, first, last format.FileOff) error {
	c, err := t.modifyFile(h, ino)
	if err != nil {
		return err
	}
	ext, err := c.mapping(DataFork)
	if err != nil {
		return err
	}
	for fb := first; fb <= last; {
		i := lookupExtent(ext, fb)
		if i < len(ext) && ext[i].StartOff <= fb {
			fb = ext[i].End()
			continue
		}
		end := last + 1
		if i < len(ext) && ext[i].StartOff < end {
			end = ext[i].StartOff
		}
		goal := c.inodeGoal()
		if i > 0 {
			prev := ext[i-1]
			goal = prev.StartBlock + format.FsBlock(prev.BlockCount) + format.FsBlock(fb-prev.End())
		}
		fsb, n, err := t.alloc.AllocBlocks(goal, 1, uint32(min(uint64(end-fb), format.MaxExtentLen)), 0)
		if err != nil {
			return err
		}
		ext = v.extentsInsert(ext, format.Extent{StartOff: fb, StartBlock: fsb, BlockCount: uint64(n), Unwritten: true})
		c.core.NBlocks += uint64(n)
		fb += format.FileOff(n)
	}
	if err := c.setMapping(DataFork, ext); err != nil {
		return err
	}
	c.core.Flags |= format.DiflagPrealloc
	c.touch(false)
	return nil
}
