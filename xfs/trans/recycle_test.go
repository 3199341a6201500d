package trans

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// pooled is how many retired copies the cache's pool holds.
func (p *blockPool) pooled() int {
	n := 0
	for i := range p.classes {
		pc := &p.classes[i]
		pc.mu.Lock()
		n += len(pc.free)
		pc.mu.Unlock()
	}
	return n
}

// bump commits one more change to a stamped block: a counter at byte 8.
func bump(t *testing.T, c *Cache, d format.Daddr) {
	t.Helper()
	commitTx(t, c, func(tx *Tx) {
		b, err := tx.Read(d, 512, stamped)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(b[8:], binary.LittleEndian.Uint32(b[8:])+1)
		tx.Dirty(d)
	})
}

// syncAll is c.Sync, which runs every write-back.
func syncAll(t *testing.T, c *Cache) {
	t.Helper()
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
}

// wantPooled checks how many copies the pool holds.
func wantPooled(t *testing.T, c *Cache, want int, when string) {
	t.Helper()
	if n := c.blocks.pooled(); n != want {
		t.Fatalf("%d copies pooled %s, want %d", n, when, want)
	}
}

// wantCount checks the counter of block d's current version (bumped n
// times) and returns the version.
func wantCount(t *testing.T, c *Cache, d format.Daddr, n uint32) []byte {
	t.Helper()
	b, err := c.Read(d, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(b[8:]); got != n {
		t.Fatalf("block %d counts %d, want %d: a copy was recycled while current or unpublished", d, got, n)
	}
	return b
}

// TestRetiredVersionsAreRecycled: the copies of a block that later commits
// replaced come back to the pool once their write-backs ran, and the
// block's current version and its place on disk are the newest.
func TestRetiredVersionsAreRecycled(t *testing.T) {
	c, _ := newLoggedCache(t)
	d := c.Device().(*memDev)
	for range 20 {
		bump(t, c, 10)
	}
	syncAll(t, c)
	wantPooled(t, c, 19, "after 20 commits of one block (all but the current)")
	got := wantCount(t, c, 10, 20)
	if !bytes.Equal(d.b[10*512:11*512], got) {
		t.Fatal("the block on disk is not its current version")
	}
	// Reads from the disk and transactions take their copies from the
	// pool: block 11's read and its copy take two.
	bump(t, c, 11)
	wantPooled(t, c, 17, "after a miss and a copy")
}

// TestReaderKeepsItsVersion: a version a reader took without a lock is
// never recycled, however many commits replace it; one only copied from
// (ReadCopy) is, once the copy is done.
func TestReaderKeepsItsVersion(t *testing.T) {
	c, _ := newLoggedCache(t)
	bump(t, c, 10)
	kept, err := c.Read(10, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(kept)
	var part [4]byte
	bump(t, c, 11)
	if err := c.ReadCopy(11, 512, stamped, 8, part[:]); err != nil || binary.LittleEndian.Uint32(part[:]) != 1 {
		t.Fatalf("ReadCopy: %v, counter %d", err, binary.LittleEndian.Uint32(part[:]))
	}
	for range 10 {
		bump(t, c, 10)
		bump(t, c, 11)
	}
	syncAll(t, c)
	if !bytes.Equal(kept, want) {
		t.Fatal("a version a reader holds was recycled")
	}
	// Of block 10's 11 versions the first is the reader's and the last
	// current; all 11 of block 11 but the current come back.
	wantPooled(t, c, 9+10, "after ten more commits of each block")
}

// TestReadersBesideRecycling: readers that hold versions and readers that
// copy from them run beside transactions whose copies are recycled; each
// read must be a whole committed version (stamp and counter agree) and
// counters never go back (run with -race).
func TestReadersBesideRecycling(t *testing.T) {
	c, _ := newLoggedCache(t)
	c.Log().SetBacklogLimit(0) // a write-back pass for every batch
	const blocks, rounds = 4, 300
	var stop atomic.Bool
	var wg sync.WaitGroup
	check := func(b []byte, last *uint32) {
		if err := stamped.Verify(b, 0); err != nil {
			t.Error("a reader saw a torn or recycled version:", err)
			stop.Store(true)
			return
		}
		n := binary.LittleEndian.Uint32(b[8:])
		if n < *last {
			t.Errorf("counter went back from %d to %d", *last, n)
			stop.Store(true)
		}
		*last = n
	}
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last [blocks]uint32
			buf := make([]byte, 512)
			for i := 0; !stop.Load(); i++ {
				d := format.Daddr(20 + i%blocks)
				if r%2 == 0 {
					b, err := c.Read(d, 512, stamped)
					if err != nil {
						t.Error(err)
						return
					}
					check(b, &last[i%blocks])
					continue
				}
				if err := c.ReadCopy(d, 512, stamped, 0, buf); err != nil {
					t.Error(err)
					return
				}
				check(buf, &last[i%blocks])
			}
		}()
	}
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range rounds {
				d := format.Daddr(20 + (i+w)%blocks)
				tx, err := c.Begin()
				if err != nil {
					t.Error(err)
					return
				}
				b, err := tx.Read(d, 512, stamped)
				if err != nil {
					t.Error(err)
					tx.Cancel()
					return
				}
				binary.LittleEndian.PutUint32(b[8:], binary.LittleEndian.Uint32(b[8:])+1)
				tx.Dirty(d)
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
				if i%8 == 0 {
					c.Push()
				}
			}
		}()
	}
	writers.Wait()
	if err := c.Sync(); err != nil {
		t.Error(err)
	}
	stop.Store(true)
	wg.Wait()
	total := uint32(0)
	for d := format.Daddr(20); d < 20+blocks; d++ {
		b, _ := c.Read(d, 512, stamped)
		total += binary.LittleEndian.Uint32(b[8:])
	}
	if total != 2*rounds {
		t.Fatalf("counters add up to %d, want %d", total, 2*rounds)
	}
	if c.blocks.pooled() == 0 {
		t.Fatal("no copy was recycled")
	}
}

func TestPoolClassOf(t *testing.T) {
	for n, want := range map[int]int{511: -1, 512: 0, 1024: 1, 4096: 3, 65536: 7, 131072: -1, 1536: -1, 0: -1} {
		if got := poolClassOf(n); got != want {
			t.Errorf("poolClassOf(%d) = %d, want %d", n, got, want)
		}
	}
	var p blockPool
	b := p.get(4096)
	p.putAll([][]byte{b})
	if c := p.get(4096); &c[0] != &b[0] {
		t.Fatal("a pooled copy was not reused")
	}
	if c := p.get(4096); &c[0] == &b[0] {
		t.Fatal("a pooled copy was handed out twice")
	}
	for range 2 * poolClassBytes / 512 {
		p.putAll([][]byte{make([]byte, 512)})
	}
	if n := p.pooled(); n != poolClassBytes/512 {
		t.Fatalf("%d copies of 512 bytes pooled, want the bound %d", n, poolClassBytes/512)
	}
}

// TestCopyInProgressKeepsVersion: a version a ReadCopy is still borrowed
// from when its write-back ends is left to the collector.
func TestCopyInProgressKeepsVersion(t *testing.T) {
	c, _ := newLoggedCache(t)
	bump(t, c, 10)
	b, _, err := c.lookup(10, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	defer c.release(b)
	v := b.borrow() // a copier between its handshake and its copy
	want := bytes.Clone(v.b)
	bump(t, c, 10)
	syncAll(t, c)
	if !bytes.Equal(v.b, want) {
		t.Fatal("a version was recycled while a reader copied from it")
	}
	v.borrowed.Add(-1)
}

// TestWriteBackBeforePublish: a commit's write-back may end before the
// commit has published its blocks (its goroutine paused between the two);
// its copies are not current yet then, and must not be taken for retired.
func TestWriteBackBeforePublish(t *testing.T) {
	c, _ := newLoggedCache(t)
	c.Log().SetBacklogLimit(0)
	bump(t, c, 10)
	testAfterQueue = func(c *Cache) {
		if err := c.Sync(); err != nil {
			t.Error(err)
		}
	}
	bump(t, c, 10)
	testAfterQueue = nil
	wantCount(t, c, 10, 2)
}

// TestLease: versions read under a lease stay whole until Release, and
// are recycled if the lease is released before their write-backs end.
func TestLease(t *testing.T) {
	c, _ := newLoggedCache(t)
	bump(t, c, 10)
	bump(t, c, 11)
	var held, done Lease
	kept, err := c.ReadLeased(&held, 10, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(kept)
	if _, err := c.ReadLeased(&done, 11, 512, stamped); err != nil {
		t.Fatal(err)
	}
	done.Release()
	wantPooled(t, c, 0, "before any write-back")
	bump(t, c, 10)
	bump(t, c, 11)
	syncAll(t, c)
	if !bytes.Equal(kept, want) {
		t.Fatal("a version on lease was recycled")
	}
	held.Release()
	// Of the two versions the bumps replaced, only the one whose lease
	// was over comes back.
	wantPooled(t, c, 1, "after the leases")
}

// TestReplacedAfterWriteBack: a version still current when its write-back
// ended comes back at the write-back of the commit that replaced it, once.
func TestReplacedAfterWriteBack(t *testing.T) {
	c, _ := newLoggedCache(t)
	bump(t, c, 10)
	syncAll(t, c)
	wantPooled(t, c, 0, "while the only version is current")
	bump(t, c, 10)
	bump(t, c, 10)
	syncAll(t, c)
	// The first version (current at its write-back) and the second
	// (replaced before its own) come back; the third is current.
	wantPooled(t, c, 2, "after three commits")
	wantCount(t, c, 10, 3)
}

// TestDiffBaseKeptUntilLogged: the version a commit's log item diffs
// against (xlog.DiffItem) stays out of the pool until that commit's
// batch is written, even when the write-back of the commit that made the
// version ends first, with the version no longer current.
func TestDiffBaseKeptUntilLogged(t *testing.T) {
	c, _ := newLoggedCache(t)
	c.Log().SetBacklogLimit(1 << 20)
	bump(t, c, 10)
	if err := c.Force(); err != nil { // its write-back waits in the backlog
		t.Fatal(err)
	}
	bump(t, c, 10) // queued: its item diffs against the first commit's version
	if err := c.Log().WriteBackNow(); err != nil {
		t.Fatal(err)
	}
	wantPooled(t, c, 0, "while a queued commit still diffs against the replaced version")
	syncAll(t, c)
	wantPooled(t, c, 1, "once the commit that diffed against it was written back")
	wantCount(t, c, 10, 2)
}
