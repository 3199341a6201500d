package gc

import (
	"context"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Volume adapts an engine volume to the collector: it inactivates the
// volume's inodes and, for Sweep mode, lists them.
type Volume struct{ V *xfs.Volume }

// Start runs a collector in the mode opt names over v and hands v's
// released inodes to it; Close the collector before the volume.
func Start(v *xfs.Volume, opt Options) (*InodeGC, error) {
	g, err := New(Volume{v}, opt)
	if err != nil {
		return nil, err
	}
	v.Space().SetInactiveQueue(g)
	return g, nil
}

func (a Volume) Inactivate(ino uint64) (uint64, error) {
	return a.V.Space().Inactivate(format.Ino(ino))
}

func (a Volume) InactivateBatch(inos []uint64) (uint64, []error) {
	v := make([]format.Ino, len(inos))
	for i, ino := range inos {
		v[i] = format.Ino(ino)
	}
	return a.V.Space().InactivateBatch(v)
}

func (a Volume) AGs() int { return int(a.V.Geometry().AgCount) }

func (a Volume) AGOf(ino uint64) int {
	g := a.V.Geometry()
	ag, _ := g.InoToAg(format.Ino(ino))
	return int(ag)
}

func (a Volume) Releasable(ag int) []uint64 {
	var out []uint64
	for _, ino := range a.V.Space().Releasable(format.AgNumber(ag)) {
		out = append(out, uint64(ino))
	}
	return out
}

func (a Volume) Trim(ctx context.Context, o xfs.TrimOptions) (xfs.TrimStats, error) {
	return a.V.Space().Trim(ctx, o)
}

func (a Volume) TrimBacklog() []int64 { return a.V.Space().TrimBacklog() }

func (a Volume) AGRange(ag int) (off, length int64) {
	g := a.V.Geometry()
	return int64(ag) * int64(g.AgBlocks) << g.BlockLog, int64(g.AgSize(format.AgNumber(ag))) << g.BlockLog
}
