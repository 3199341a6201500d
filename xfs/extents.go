package xfs

import (
	"sort"

	"github.com/xfs3/xfs3/xfs/format"
)

// Pure operations on a sorted, non-overlapping extent list: the in-memory
// form of a fork mapping that the bmap code stores either in the inode
// (extents format) or in a bmbt.

// extentsInsert adds e, which must not overlap any extent, merging it with
// neighbours that continue it in both file and disk space with the same
// written state, as long as the result stays within one record and one AG.
func (v *Volume) extentsInsert(ext []format.Extent, e format.Extent) []format.Extent {
	i := sort.Search(len(ext), func(i int) bool { return ext[i].StartOff > e.StartOff })
	if i > 0 && v.contiguous(ext[i-1], e) {
		ext[i-1].BlockCount += e.BlockCount
		if i < len(ext) && v.contiguous(ext[i-1], ext[i]) {
			ext[i-1].BlockCount += ext[i].BlockCount
			ext = append(ext[:i], ext[i+1:]...)
		}
		return ext
	}
	if i < len(ext) && v.contiguous(e, ext[i]) {
		ext[i].StartOff, ext[i].StartBlock = e.StartOff, e.StartBlock
		ext[i].BlockCount += e.BlockCount
		return ext
	}
	ext = append(ext, format.Extent{})
	copy(ext[i+1:], ext[i:])
	ext[i] = e
	return ext
}

// contiguous reports whether b directly continues a.
func (v *Volume) contiguous(a, b format.Extent) bool {
	if a.Unwritten != b.Unwritten || a.End() != b.StartOff ||
		a.StartBlock+format.FsBlock(a.BlockCount) != b.StartBlock ||
		a.BlockCount+b.BlockCount > format.MaxExtentLen {
		return false
	}
	agA, _ := v.geo.FsbToAg(a.StartBlock)
	agB, _ := v.geo.FsbToAg(b.StartBlock)
	return agA == agB
}

// extentsRemove unmaps file blocks [off, off+n) and returns the remaining
// list and the removed pieces (whose disk blocks the caller frees).
func extentsRemove(ext []format.Extent, off format.FileOff, n uint64) (rest, removed []format.Extent) {
	if n == 0 {
		return ext, nil
	}
	end := off + format.FileOff(n)
	rest = make([]format.Extent, 0, len(ext)+1)
	for _, e := range ext {
		if e.End() <= off || e.StartOff >= end {
			rest = append(rest, e)
			continue
		}
		if e.StartOff < off {
			head := e
			head.BlockCount = uint64(off - e.StartOff)
			rest = append(rest, head)
		}
		cutStart := max(e.StartOff, off)
		cutEnd := min(e.End(), end)
		cut := format.Extent{StartOff: cutStart, StartBlock: e.StartBlock + format.FsBlock(cutStart-e.StartOff),
			BlockCount: uint64(cutEnd - cutStart), Unwritten: e.Unwritten}
		removed = append(removed, cut)
		if e.End() > end {
			tail := format.Extent{StartOff: end, StartBlock: e.StartBlock + format.FsBlock(end-e.StartOff),
				BlockCount: uint64(e.End() - end), Unwritten: e.Unwritten}
			rest = append(rest, tail)
		}
	}
	return rest, removed
}

// mergeRanges merges an extent list into [start, end) ranges of mapped
// file blocks.
func mergeRanges(ext []format.Extent) [][2]format.FileOff {
	var out [][2]format.FileOff
	for _, e := range ext {
		if n := len(out); n > 0 && out[n-1][1] == e.StartOff {
			out[n-1][1] = e.End()
		} else {
			out = append(out, [2]format.FileOff{e.StartOff, e.End()})
		}
	}
	return out
}
