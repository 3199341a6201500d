package trans

import (
	"encoding/binary"
	"errors"
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

// TestWriteBackAfterDurability: a committed block reaches its place only
// after the log is forced; until then ReadAt (the path of readers that
// bypass the cache) shows it. Of several versions made durable together
// only the newest is written, and a block freed in the same batch is not
// written at all.
func TestWriteBackAfterDurability(t *testing.T) {
	c, _ := newLoggedCache(t)
	d := c.Device().(*memDev)
	onDisk := func(daddr int) []byte {
		d.mu.Lock()
		defer d.mu.Unlock()
		return append([]byte(nil), d.b[daddr*512:daddr*512+512]...)
	}
	commitTx(t, c, func(tx *Tx) { b, _ := tx.Get(10, 512, stamped); b[7] = 1 })
	if onDisk(10)[7] != 0 {
		t.Fatal("a block was written in place before its commit was durable")
	}
	span := make([]byte, 3*512)
	if err := c.ReadAt(span, 9*512); err != nil {
		t.Fatal(err)
	}
	if span[512] != 0xAB || span[512+7] != 1 {
		t.Fatalf("ReadAt misses the unwritten block: % x", span[512:520])
	}
	commitTx(t, c, func(tx *Tx) { b, _ := tx.Read(10, 512, stamped); b[7] = 2; tx.Dirty(10) })
	commitTx(t, c, func(tx *Tx) { b, _ := tx.Get(12, 512, stamped); b[7] = 4 })
	commitTx(t, c, func(tx *Tx) { tx.Forget(12) })
	writes := d.writes
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(10); got[7] != 2 {
		t.Fatalf("block 10 on disk holds version %d, want 2", got[7])
	}
	if got := onDisk(12); got[7] != 0 {
		t.Fatal("a block freed in the same batch was written in place")
	}
	// One log write and one in-place write: block 10 once, block 12 never.
	if n := d.writes - writes; n != 2 {
		t.Fatalf("%d device writes, want a log write and one block write", n)
	}
	if n := c.unwritten.n.Load(); n != 0 {
		t.Fatalf("%d blocks still recorded as unwritten after Sync", n)
	}
}

// TestNoCancelPastTail: freeing a block whose last logging the log tail
// has passed logs no cancel (no recovery can replay that item any more),
// and the block is no longer tracked; one still in the log gets a cancel.
func TestNoCancelPastTail(t *testing.T) {
	c, l := newLoggedCache(t)
	commitTx(t, c, func(tx *Tx) { b, _ := tx.Get(5, 512, stamped); b[7] = 1 })
	if err := c.Sync(); err != nil { // written back and retired
		t.Fatal(err)
	}
	commitTx(t, c, func(tx *Tx) { b, _ := tx.Get(6, 512, stamped); b[7] = 1 })
	commitTx(t, c, func(tx *Tx) {
		tx.Forget(5)
		tx.Forget(6)
		b, _ := tx.Get(7, 512, stamped)
		b[7] = 1
	})
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	s, err := l.Scan()
	if err != nil || len(s.Trans) == 0 {
		t.Fatalf("scan: %v, %d transactions", err, len(s.Trans))
	}
	got := map[int64]string{}
	for _, it := range s.Trans[len(s.Trans)-1].Items {
		f, err := format.DecodeBufLogFormat(it.Regions[0])
		if err != nil {
			t.Fatal(err)
		}
		if f.Flags&format.BlfCancel != 0 {
			got[f.Blkno] += "cancel "
		} else {
			got[f.Blkno] += "buf "
		}
	}
	if got[5] != "" || got[6] != "cancel " || got[7] != "buf " {
		t.Fatalf("freeing transaction logs %v", got)
	}
	c.loggedMu.Lock()
	defer c.loggedMu.Unlock()
	if _, ok := c.logged[5]; ok {
		t.Fatal("a freed block is still tracked")
	}
}

// commitTx runs fn in a transaction of c and commits it.
func commitTx(t *testing.T, c *Cache, fn func(tx *Tx)) {
	t.Helper()
	tx, err := c.Begin()
	if err != nil {
		t.Fatal(err)
	}
	fn(tx)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestBusyUntilDurable: with a log, blocks a commit frees stay busy until
// that commit is durable (its write-back ran), and no longer: a Force is
// enough, no Sync needed.
func TestBusyUntilDurable(t *testing.T) {
	c, _ := newLoggedCache(t)
	commitTx(t, c, func(tx *Tx) {
		b, _ := tx.Get(9, 512, stamped) // something to log
		b[7] = 1
		tx.FreeExtent(Extent{AG: 1, Start: 100, Len: 10})
	})
	if got := c.Busy().Overlap(1, 105, 1); len(got) != 1 {
		t.Fatalf("an extent freed by a commit not yet durable is not busy: %v", got)
	}
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	if n := c.Busy().Len(); n != 0 {
		t.Fatalf("%d busy extents after the freeing commit is durable", n)
	}
}

// TestWriteBackBacklogWritesHotBlocksOnce: with a backlog, a block that
// every commit changes (as an AG header is) reaches its place once for
// many durable commits, not once per commit; blocks freed by a commit
// become reusable as soon as it is durable, with its write-back still
// waiting; and Sync leaves the newest version of everything in place.
func TestWriteBackBacklogWritesHotBlocksOnce(t *testing.T) {
	c, d := newBacklogCache(t)
	onDisk := func(daddr int) byte {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.b[daddr*512+7]
	}
	const commits = 12 // within the backlog limit of this small log (an eighth)
	for i := 1; i <= commits; i++ {
		commitTx(t, c, func(tx *Tx) {
			b, err := tx.Read(10, 512, stamped)
			if err != nil {
				t.Fatal(err)
			}
			b[7] = byte(i)
			tx.Dirty(10)
			nb, _ := tx.Get(format.Daddr(20+i), 512, stamped)
			nb[7] = byte(i)
			tx.FreeExtent(Extent{AG: 1, Start: format.AgBlock(100 * i), Len: 1})
		})
		writes := d.writes
		if err := c.Force(); err != nil {
			t.Fatal(err)
		}
		if n := d.writes - writes; n != 1 {
			t.Fatalf("commit %d: %d device writes on force, want the log write alone", i, n)
		}
		if got := c.Busy().Overlap(1, format.AgBlock(100*i), 1); len(got) != 0 {
			t.Fatalf("commit %d: its freed extent is still busy once durable", i)
		}
	}
	if got := onDisk(10); got != 0 {
		t.Fatalf("block 10 holds version %d before any write-back ran", got)
	}
	writes := d.writes
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	// Block 10 once, and the new blocks, adjacent, in one write.
	if n := d.writes - writes; n != 2 {
		t.Fatalf("Sync made %d writes, want 2 (block 10, then blocks 21-%d merged)", n, 20+commits)
	}
	if got := onDisk(10); got != commits {
		t.Fatalf("block 10 on disk holds version %d, want %d", got, commits)
	}
	for i := 1; i <= commits; i++ {
		if got := onDisk(20 + i); got != byte(i) {
			t.Fatalf("block %d on disk holds %d", 20+i, got)
		}
	}
	if n := c.unwritten.n.Load(); n != 0 {
		t.Fatalf("%d blocks still recorded as unwritten after Sync", n)
	}
}

// TestWriteBackLeavesBlockToLaterDurableCommit: of three commits that
// change one block, the first two durable and the third only queued, a
// pass over the backlog writes the block once, with the second's version
// (the first leaves it to the second; the third is not durable and writes
// its own later).
func TestWriteBackLeavesBlockToLaterDurableCommit(t *testing.T) {
	c, d := newBacklogCache(t)
	version := func(v byte) {
		commitTx(t, c, func(tx *Tx) {
			b, err := tx.Read(10, 512, stamped)
			if err != nil {
				t.Fatal(err)
			}
			b[7] = v
			tx.Dirty(10)
		})
	}
	onDisk := func() (byte, int) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.b[10*512+7], d.writesAt[10*512]
	}
	version(1)
	version(2)
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	version(3)
	if err := c.Log().WriteBackNow(); err != nil {
		t.Fatal(err)
	}
	if v, n := onDisk(); v != 2 || n != 1 {
		t.Fatalf("after the pass block 10 holds version %d, written %d times; want 2, once", v, n)
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	if v, n := onDisk(); v != 3 || n != 2 {
		t.Fatalf("after Sync block 10 holds version %d, written %d times; want 3, twice", v, n)
	}
}

// newBacklogCache is newLoggedCache whose write-backs wait in a backlog
// of 64 KiB of log, run only when a test says so (no idle timer).
func newBacklogCache(t *testing.T) (*Cache, *memDev) {
	c, _ := newLoggedCache(t)
	c.Log().SetBacklogLimit(64 << 10)
	c.Log().SetIdleWriteBack(0)
	return c, c.Device().(*memDev)
}

// TestPushMakesDurableInBackground: Push returns at once and the commits
// queued before it become durable in its own goroutine (Sync waits for
// it); a push whose write fails shuts the cache down, so the next change
// sees the failure.
func TestPushMakesDurableInBackground(t *testing.T) {
	c, _ := newLoggedCache(t)
	commitTx(t, c, func(tx *Tx) {
		b, _ := tx.Get(9, 512, stamped)
		b[7] = 1
		tx.FreeExtent(Extent{AG: 1, Start: 100, Len: 10})
	})
	if c.Log().Durable() != 0 {
		t.Fatal("a lazy commit was durable before any force")
	}
	c.Push()
	c.waitPush()
	if d := c.Log().Durable(); d != 1 {
		t.Fatalf("durable ticket %d after a push, want 1", d)
	}
	if n := c.Busy().Len(); n != 0 {
		t.Fatalf("%d busy extents after the push made their commit durable", n)
	}

	d := c.dev.(*memDev)
	d.mu.Lock()
	d.failWrites = d.writes
	d.mu.Unlock()
	commitTx(t, c, func(tx *Tx) {
		b, _ := tx.Read(9, 512, stamped)
		b[7] = 2
		tx.Dirty(9)
	})
	c.Push()
	c.waitPush()
	if _, err := c.Begin(); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Begin after a failed push: %v, want ErrShutdown", err)
	}
	if err := c.Sync(); err == nil {
		t.Fatal("Sync after a failed push succeeded")
	}
}
