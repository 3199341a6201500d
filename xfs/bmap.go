package xfs

import (
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

// extents returns the verified, sorted extent map of an inode's fork.
// Extent and btree forks only; callers handle local forks themselves.
func (v *Volume) extents(ip *inode, f Fork) ([]format.Extent, error) {
	m := &ip.maps[f]
	m.once.Do(func() {
		m.ext, m.err = v.loadExtents(ip, f)
		if m.err != nil {
			m.err = format.Located(m.err, fmt.Sprintf("inode %d %v", ip.ino, f))
		}
	})
	return m.ext, m.err
}

func (v *Volume) loadExtents(ip *inode, f Fork) ([]format.Extent, error) {
	fork := ip.fork(f)
	n := ip.nextents(f)
	var ext []format.Extent
	switch ip.format(f) {
	case format.FmtExtents:
		if n > uint64(len(fork))/format.ExtentRecSize { // n*16 could overflow (nrext64)
			return nil, format.Corrupt("extent list", "", "%d extents do not fit a %d-byte fork", n, len(fork))
		}
		ext = make([]format.Extent, n)
		for i := range ext {
			ext[i] = format.DecodeExtent(fork[i*format.ExtentRecSize:])
		}
	case format.FmtBtree:
		var err error
		if ext, err = v.readBmbt(ip, fork); err != nil {
			return nil, err
		}
		if uint64(len(ext)) != n {
			return nil, format.Corrupt("bmbt", "", "tree holds %d extents, inode says %d", len(ext), n)
		}
	case format.FmtLocal:
		return nil, nil
	default:
		return nil, format.Corrupt("inode", "", "%v has format %d", f, ip.format(f))
	}
	return ext, v.checkExtents(ext)
}

// checkExtents enforces what the kernel's bmap verifier enforces: every
// extent inside one AG, non-empty, and the list sorted without overlap.
func (v *Volume) checkExtents(ext []format.Extent) error {
	var next format.FileOff
	for i, e := range ext {
		if e.BlockCount == 0 || !v.geo.ValidExtent(e.StartBlock, e.BlockCount) {
			return format.Corrupt("extent", "", "extent %d (%d blocks at fsb %d) lies outside the filesystem", i, e.BlockCount, e.StartBlock)
		}
		if i > 0 && e.StartOff < next {
			return format.Corrupt("extent", "", "extent %d at file block %d overlaps or is out of order", i, e.StartOff)
		}
		if e.StartOff+format.FileOff(e.BlockCount) < e.StartOff {
			return format.Corrupt("extent", "", "extent %d wraps the file offset space", i)
		}
		next = e.End()
	}
	return nil
}

// readBmbt collects the records of a bmap btree rooted in the fork, in
// key order, through package btree's whole-tree check (siblings, levels,
// key order, loops), reading committed blocks.
func (v *Volume) readBmbt(ip *inode, fork []byte) ([]format.Extent, error) {
	root, err := format.DecodeBmdrRoot(fork)
	if err != nil {
		return nil, err
	}
	tr := &btree.Tree{Kind: btree.Bmbt, Geo: &v.geo, Ino: ip.ino, ForkSize: len(fork), IRoot: root}
	tr.Store = &btree.ReadOnly{Tree: tr, Fetch: func(ptr uint64) ([]byte, error) {
		return v.readFsb(format.FsBlock(ptr), 1)
	}}
	var out []format.Extent
	_, err = tr.Check(func(rec []byte) error {
		out = append(out, format.DecodeExtent(rec))
		return nil
	})
	return out, err
}

// lookupExtent returns the index of the extent containing file block off,
// or of the first extent after it (len(ext) when none).
func lookupExtent(ext []format.Extent, off format.FileOff) int {
	return sort.Search(len(ext), func(i int) bool { return ext[i].End() > off })
}

// mapBlocks returns the filesystem block holding file block off of a fork,
// and how many following file blocks are contiguous with it; ok is false
// for a hole, and unwritten reports preallocated blocks that read as zeros.
func mapBlock(ext []format.Extent, off format.FileOff) (fsb format.FsBlock, run uint64, ok, unwritten bool) {
	i := lookupExtent(ext, off)
	if i == len(ext) || ext[i].StartOff > off {
		return 0, 0, false, false
	}
	e := ext[i]
	d := uint64(off - e.StartOff)
	return e.StartBlock + format.FsBlock(d), e.BlockCount - d, true, e.Unwritten
}
