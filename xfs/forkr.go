package xfs

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// readFork is a fork.Reader over a committed inode version, for lookups and
// listings outside transactions. Blocks come from the metadata cache of a
// writable volume (so they are the committed ones) or straight from the
// device when read-only.
type readFork struct {
	v  *Volume
	ip *inode
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
	return r.v.readForkRun(r.ip, DataFork, off, count, ops)
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
	return r.v.readForkRun(r.ip, AttrFork, off, count, ops)
}

func (r attrReadFork) Mapped() ([][2]format.FileOff, error) {
	if r.ip.core.ForkOff == 0 {
		return nil, nil
	}
	return r.v.mappedRanges(r.ip, AttrFork)
}

func (v *Volume) mappedRanges(ip *inode, f Fork) ([][2]format.FileOff, error) {
	if ip.format(f) != format.FmtExtents && ip.format(f) != format.FmtBtree {
		return nil, nil
	}
	ext, err := v.extents(ip, f)
	if err != nil {
		return nil, err
	}
	return mergeRanges(ext), nil
}

// readForkRun reads count blocks of a committed fork and verifies them.
func (v *Volume) readForkRun(ip *inode, f Fork, off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	ext, err := v.extents(ip, f)
	if err != nil {
		return nil, 0, err
	}
	if v.w != nil {
		fsb, run, ok, _ := mapBlock(ext, off)
		if ok && run >= uint64(count) {
			d := v.geo.FsbToDaddr(fsb)
			b, err := v.w.cache.Read(d, count*v.geo.BlockSize, ops)
			if err != nil {
				return nil, 0, format.Located(err, fmt.Sprintf("inode %d %v block %d", ip.ino, f, off))
			}
			return b, d, nil
		}
	}
	b, d, err := v.readForkBlocks(ext, off, count)
	if err != nil {
		return nil, 0, err
	}
	if ops != nil && ops.Verify != nil {
		if err := ops.Verify(b, d); err != nil {
			return nil, 0, format.Located(err, fmt.Sprintf("inode %d %v block %d (daddr %d)", ip.ino, f, off, d))
		}
	}
	return b, d, nil
}
