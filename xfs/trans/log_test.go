package trans

import (
	"encoding/binary"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// newLoggedCache returns a cache whose commits go through a log kept in
// blocks [logStart, logStart+logBlocks) of the device.
func newLoggedCache(t *testing.T) (*Cache, *xlog.Log) {
	const blocks, logStart, logBlocks = 2048, 1024, 1024
	c, d := newCache(t, blocks)
	for bb := logStart; bb < blocks; bb++ {
		clear(d.b[bb*512 : bb*512+512])
	}
	rec, err := format.UnmountRecord([16]byte{1}, 1, 0, format.MakeLSN(1, 0), 0, format.LogMkfsUnmountTid)
	if err != nil {
		t.Fatal(err)
	}
	copy(d.b[logStart*512:], rec)
	l := &xlog.Log{R: d, Start: logStart * 512, Blocks: logBlocks}
	c.SetLog(xlog.NewWriter(d, l, [16]byte{1}, 1, 2, 0))
	return c, l
}

// TestFreedAndReusedInOneTx: a block freed and then taken again as new
// metadata by the same transaction is logged, and not cancelled (a cancel
// would make recovery skip the item); a block only freed is cancelled.
func TestFreedAndReusedInOneTx(t *testing.T) {
	c, l := newLoggedCache(t)
	tx, _ := c.Begin()
	for _, a := range []format.Daddr{3, 4} {
		b, _ := tx.Get(a, 512, stamped)
		b[7] = 1
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	tx, _ = c.Begin()
	tx.Forget(3)
	tx.Forget(4)
	b, _ := tx.Get(3, 512, stamped)
	b[7] = 2
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	s, err := l.Scan()
	if err != nil || len(s.Trans) != 2 {
		t.Fatalf("scan: %v, %d transactions", err, len(s.Trans))
	}
	got := map[int64]string{}
	for _, it := range s.Trans[1].Items {
		f, err := format.DecodeBufLogFormat(it.Regions[0])
		if err != nil || binary.LittleEndian.Uint16(it.Regions[0]) != format.LogItemBuf {
			t.Fatalf("item: %v", err)
		}
		if f.Flags&format.BlfCancel != 0 {
			got[f.Blkno] += "cancel "
		} else {
			got[f.Blkno] += "buf "
		}
	}
	if got[3] != "buf " || got[4] != "cancel " {
		t.Fatalf("second transaction logs %v", got)
	}
}
