package xfs

import (
	"github.com/xfs3/xfs3/xfs/format"
)

// LogSpace returns the log space recovery may still need and the log's
// size, in bytes (both 0 on a read-only volume, which has no log writer).
func (v *Volume) LogSpace() (used, size int64) {
	if v.w == nil {
		return 0, 0
	}
	u, s := v.cache.Log().Space()
	return int64(u) * format.BBSize, int64(s) * format.BBSize
}
