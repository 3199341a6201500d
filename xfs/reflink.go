package xfs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/refcount"
)

// Shared extents (reflink). A file whose di_flags2 carries
// XFS_DIFLAG2_REFLINK may map blocks that other files map too; the AG's
// refcount btree counts the mappings of every block mapped more than
// once (package refcount). The engine shares blocks only by cloning
// (Files.CloneRange) and never writes a shared block in place: writes,
// and the zeroing of partial blocks that truncate and punch do, into a
// shared block are refused with ErrShared (the kernel would copy on
// write; S3 objects are never changed in place, so the store never
// asks). Unmapping a reflink file's data blocks takes one count off each
// (refcount.Tree.Adjust) and frees only the blocks nobody maps any more;
// unmapping a file without the flag frees its blocks straight away (it
// cannot map shared ones: xfs_repair checks that).
//
// Every change here is one transaction: a clone of a few extents maps
// them into the destination and counts them in the same commit, so a
// crash leaves the counts equal to the mappings (the kernel splits the
// same work into deferred items tied by log intents).

// ErrShared: the change would write in place into blocks shared with
// another file (see CloneRange).
var ErrShared = errors.New("the blocks are shared with another file (reflink): writing them in place is not supported")

// isReflink reports whether the inode may map shared data blocks.
func isReflink(d *format.Dinode) bool { return d.Flags2&format.Diflag2Reflink != 0 }

// refcountTree returns the transaction's refcount btree of AG ag, opened
// (its AGF locked) on first use: a transaction keeps one Tree per AG.
func (t *txn) refcountTree(ag format.AgNumber) (*refcount.Tree, error) {
	if tr := t.refcounts[ag]; tr != nil {
		return tr, nil
	}
	tr, err := refcount.Open(t.alloc, ag)
	if err != nil {
		return nil, err
	}
	if t.refcounts == nil {
		t.refcounts = map[format.AgNumber]*refcount.Tree{}
	}
	t.refcounts[ag] = tr
	return tr, nil
}

// adjustShared changes the mapping count of every block of exts by delta
// (+1 a new mapping, -1 one gone) in ascending AG order (lock order) and
// returns the extents whose count reached zero, which the caller frees.
func (t *txn) adjustShared(exts []format.Extent, delta int) ([]format.Extent, error) {
	exts = slices.Clone(exts)
	slices.SortFunc(exts, func(a, b format.Extent) int { return cmp.Compare(a.StartBlock, b.StartBlock) })
	g := &t.v.geo
	var gone []format.Extent
	for _, e := range exts {
		ag, bno := g.FsbToAg(e.StartBlock)
		tr, err := t.refcountTree(ag)
		if err != nil {
			return nil, err
		}
		freed, err := tr.Adjust(bno, uint32(e.BlockCount), delta)
		if err != nil {
			return nil, fmt.Errorf("refcount of extent %d+%d: %w", e.StartBlock, e.BlockCount, err)
		}
		for _, f := range freed {
			gone = append(gone, format.Extent{StartBlock: g.AgToFsb(ag, f.Start), BlockCount: uint64(f.Len)})
		}
	}
	return gone, nil
}

// releaseData gives back the data-fork extents removed from c's mapping:
// through the refcount btrees for a reflink file, straight to free space
// otherwise. The caller has taken them out of the mapping and NBlocks.
func (c *inodeChange) releaseData(removed []format.Extent) error {
	if isReflink(&c.core) {
		return c.t.release(unmapped{shared: removed})
	}
	return c.t.release(unmapped{plain: removed})
}

// unmapped is what a change took out of forks: plain extents go back to
// free space, shared ones (a reflink file's data) lose one count first.
type unmapped struct{ plain, shared []format.Extent }

// add takes fork f's extents ext of c.
func (u *unmapped) add(c *inodeChange, f Fork, ext []format.Extent) {
	if f == DataFork && isReflink(&c.core) {
		u.shared = append(u.shared, ext...)
	} else {
		u.plain = append(u.plain, ext...)
	}
}

func (u unmapped) extents() int { return len(u.plain) + len(u.shared) }

// release frees what u holds: the plain extents, and the blocks of the
// shared ones that no file maps any more.
func (t *txn) release(u unmapped) error {
	free := u.plain
	if len(u.shared) > 0 {
		gone, err := t.adjustShared(u.shared, -1)
		if err != nil {
			return err
		}
		free = append(slices.Clip(free), gone...)
	}
	if len(free) == 0 {
		return nil
	}
	return t.alloc.FreeExtents(free)
}

// sharedIn returns the extents of ext's mapped blocks in file blocks
// [first, last] that another file maps too: writing them in place would
// change that file. Files without the reflink flag have none.
func (c *inodeChange) sharedIn(ext []format.Extent, first, last format.FileOff) ([]refcount.Rec, error) {
	if !isReflink(&c.core) {
		return nil, nil
	}
	g := &c.t.v.geo
	var out []refcount.Rec
	for i := lookupExtent(ext, first); i < len(ext) && ext[i].StartOff <= last; i++ {
		e := ext[i]
		from, to := max(e.StartOff, first), min(e.End()-1, last)
		ag, bno := g.FsbToAg(e.StartBlock + format.FsBlock(from-e.StartOff))
		tr, err := c.t.refcountTree(ag)
		if err != nil {
			return nil, err
		}
		recs, err := tr.Shared(bno, uint32(to-from+1))
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// refuseShared fails with ErrShared when any block of file blocks
// [first, last] is shared.
func (c *inodeChange) refuseShared(ext []format.Extent, first, last format.FileOff) error {
	recs, err := c.sharedIn(ext, first, last)
	if err != nil {
		return err
	}
	if len(recs) > 0 {
		return fmt.Errorf("inode %d, file blocks %d to %d: %w", c.ino, first, last, ErrShared)
	}
	return nil
}

// SharedStats sums up the refcount btrees of a volume.
type SharedStats struct {
	Records      int    // shared extent records
	SharedBlocks uint64 // blocks mapped by two files or more
	// SavedBlocks is what sharing saves: the blocks the mappings beyond
	// the first would take if every file had its own copy.
	SavedBlocks uint64
	CoWBlocks   uint64 // blocks staged for copy-on-write (left by the kernel)
}

// Shared reports the volume's shared blocks (zero on a volume without
// reflink). On a writable volume it reads each AG's tree under its AGF
// lock, one AG at a time.
func (v Space) Shared() (SharedStats, error) {
	var st SharedStats
	if !v.geo.Reflink {
		return st, nil
	}
	add := func(s refcount.Stats) {
		st.Records += s.Records
		st.SharedBlocks += s.Shared
		st.SavedBlocks += s.Saved
		st.CoWBlocks += s.CoW
	}
	for ag := format.AgNumber(0); ag < format.AgNumber(v.geo.AgCount); ag++ {
		if v.w == nil {
			tr, err := refcount.Committed(v.readCommitted, &v.geo, ag)
			if err != nil {
				return st, err
			}
			s, err := tr.Stats()
			if err != nil {
				return st, err
			}
			add(s)
			continue
		}
		t, err := v.begin(0)
		if err != nil {
			return st, err
		}
		tr, err := t.refcountTree(ag)
		var s refcount.Stats
		if err == nil {
			s, err = tr.Stats()
		}
		t.Cancel()
		if err != nil {
			return st, err
		}
		add(s)
	}
	return st, nil
}

// SharedExtent is a run of a file's blocks that other files map too.
type SharedExtent struct {
	FileBlock format.FileOff // first file block
	Block     format.FsBlock // first filesystem block
	Blocks    uint64
	Refcount  uint32 // files mapping these blocks (the record's count)
}

// SharedExtents lists the runs of regular file ino's data blocks that
// are shared, in file order (none for a file without the reflink flag).
func (v Files) SharedExtents(ino format.Ino) ([]SharedExtent, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return nil, err
	}
	if !isReflink(&ip.core) || !v.geo.Reflink {
		return nil, nil
	}
	ext, err := v.extents(ip, DataFork)
	if err != nil {
		return nil, err
	}
	var t *txn
	if v.w != nil {
		if t, err = v.begin(0); err != nil {
			return nil, err
		}
		defer t.Cancel()
	}
	trees := map[format.AgNumber]*refcount.Tree{}
	tree := func(ag format.AgNumber) (*refcount.Tree, error) {
		if t != nil {
			return t.refcountTree(ag) // under the AGF lock
		}
		if trees[ag] == nil {
			tr, err := refcount.Committed(v.readCommitted, &v.geo, ag)
			if err != nil {
				return nil, err
			}
			trees[ag] = tr
		}
		return trees[ag], nil
	}
	// By block, so that AGFs are taken in ascending order.
	ext = slices.Clone(ext)
	slices.SortFunc(ext, func(a, b format.Extent) int { return cmp.Compare(a.StartBlock, b.StartBlock) })
	var out []SharedExtent
	for _, e := range ext {
		if e.Unwritten {
			continue
		}
		ag, bno := v.geo.FsbToAg(e.StartBlock)
		tr, err := tree(ag)
		if err != nil {
			return nil, err
		}
		recs, err := tr.Shared(bno, uint32(e.BlockCount))
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			d := uint64(r.Start - bno)
			out = append(out, SharedExtent{FileBlock: e.StartOff + format.FileOff(d), Block: e.StartBlock + format.FsBlock(d), Blocks: uint64(r.Len), Refcount: r.Count})
		}
	}
	slices.SortFunc(out, func(a, b SharedExtent) int { return cmp.Compare(a.FileBlock, b.FileBlock) })
	return out, nil
}
