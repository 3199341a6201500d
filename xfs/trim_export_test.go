package xfs

import "github.com/xfs3/xfs3/xfs/format"

// BusyIn reports whether a busy extent (freed and not durable, or being
// discarded by trim) overlaps the device bytes [off, off+n), inside one AG.
func BusyIn(v *Volume, off, n int64) bool {
	lin := uint64(off) >> v.geo.BlockLog
	ag, bno := format.AgNumber(lin/uint64(v.geo.AgBlocks)), format.AgBlock(lin%uint64(v.geo.AgBlocks))
	blocks := uint32((uint64(n) + uint64(v.geo.BlockSize) - 1) >> v.geo.BlockLog)
	return len(v.cache.Busy().Overlap(ag, bno, blocks)) > 0
}
