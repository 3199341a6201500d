package trans

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// cached returns the buffer the cache holds for daddr, if any.
func (c *Cache) cached(daddr format.Daddr) *Buf {
	s := c.shard(daddr)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	b, _ := s.Peek(daddr)
	return b
}

// checkShards checks that every buffer is in the shard of its address
// with sane references, and the cache's byte count against the buffers.
func (c *Cache) checkShards(t *testing.T) {
	t.Helper()
	var bytes int64
	for i := range c.shards {
		s := &c.shards[i]
		s.Mu.Lock()
		n := 0
		s.Each(func(d format.Daddr, b *Buf) {
			if b.daddr != d || c.shard(d) != s {
				t.Errorf("shard %d: daddr %d holds the buffer of %d", i, d, b.daddr)
			}
			if b.refs < b.wbRefs || b.wbRefs < 0 {
				t.Errorf("daddr %d: refs %d, write-back refs %d", d, b.refs, b.wbRefs)
			}
			bytes += int64(b.size)
			n++
		})
		if n != s.Len() {
			t.Errorf("shard %d: %d buffers in use order, %d by address", i, n, s.Len())
		}
		s.Mu.Unlock()
	}
	if got := c.bytes.Load(); got != bytes {
		t.Errorf("cache counts %d bytes, its buffers hold %d", got, bytes)
	}
}

// TestShardLRU: within a shard, the least recently used buffer goes
// first; one used again stays.
func TestShardLRU(t *testing.T) {
	c, _ := newCache(t, 4096)
	c.setBudget(4 * 512)
	// Blocks that all hash to one shard.
	var same []format.Daddr
	for d := format.Daddr(0); len(same) < 6; d++ {
		if c.shard(d) == c.shard(0) {
			same = append(same, d)
		}
	}
	read := func(d format.Daddr) {
		t.Helper()
		if _, err := c.Read(d, 512, stamped); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range same[:4] {
		read(d)
	}
	read(same[0]) // used again: now the most recent
	read(same[4]) // over budget: the least recent go, then the next
	if c.cached(same[1]) != nil {
		t.Errorf("least recently used daddr %d still cached", same[1])
	}
	for _, d := range []format.Daddr{same[0], same[3], same[4]} {
		if c.cached(d) == nil {
			t.Errorf("daddr %d evicted before the least recently used", d)
		}
	}
	c.checkShards(t)
}

// TestBudgetAfterEveryRead: read alone, a cache is within its budget
// whenever a read returns, whatever the block sizes; seeded.
func TestBudgetAfterEveryRead(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		c, _ := newCache(t, 8192)
		c.setBudget(int64(1+seed) * 4096)
		rng := rand.New(rand.NewSource(seed))
		sizes := map[format.Daddr]int{}
		for i := 0; i < 5000; i++ {
			// Blocks of 1 to 8 sectors at addresses aligned to their
			// size, so that no two sizes ever overlap.
			sectors := 1 << rng.Intn(4)
			d := format.Daddr(rng.Intn(8192/8) * 8)
			if s, ok := sizes[d]; ok {
				sectors = s
			}
			sizes[d] = sectors
			if _, err := c.Read(d, sectors*512, nil); err != nil {
				t.Fatal(err)
			}
			if got := c.bytes.Load(); got > c.budget {
				t.Fatalf("seed %d read %d: %d bytes cached, budget %d", seed, i, got, c.budget)
			}
		}
		st := c.Stats()
		if st.Hits+st.Misses != 5000 || st.Evictions == 0 || st.Runs == 0 {
			t.Errorf("seed %d: stats %+v", seed, st)
		}
		c.checkShards(t)
	}
}

// TestHeldAndUnwrittenNeverEvicted: buffers a transaction holds, and
// committed ones not yet written in place, stay cached however far a
// flood of reads pushes the cache over budget; once written in place
// they go like any other.
func TestHeldAndUnwrittenNeverEvicted(t *testing.T) {
	c, _ := newLoggedCache(t) // budget: 64 blocks; the log from block 1024
	c.setBudget(8 * 512)
	committed, _ := c.Begin()
	for _, d := range []format.Daddr{3, 5} {
		b, err := committed.Read(d, 512, stamped)
		if err != nil {
			t.Fatal(err)
		}
		b[8] = 0x77
		committed.Dirty(d)
	}
	if err := committed.Commit(); err != nil { // queued, not forced: unwritten
		t.Fatal(err)
	}
	unwritten := []*Buf{c.cached(3), c.cached(5)}
	holder, _ := c.Begin()
	if _, err := holder.Read(7, 512, stamped); err != nil {
		t.Fatal(err)
	}
	held := c.cached(7)
	flood := func() {
		for d := format.Daddr(100); d < 600; d++ {
			if _, err := c.Read(d, 512, stamped); err != nil {
				t.Fatal(err)
			}
		}
	}
	flood()
	if c.cached(7) != held {
		t.Fatal("a held buffer was evicted")
	}
	for i, d := range []format.Daddr{3, 5} {
		if c.cached(d) != unwritten[i] {
			t.Fatalf("daddr %d was evicted before its write-back", d)
		}
	}
	if got := c.bytes.Load(); got > c.budget {
		t.Errorf("%d bytes cached with three held, budget %d", got, c.budget)
	}
	holder.Cancel()
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	flood()
	for _, d := range []format.Daddr{3, 5, 7} {
		if c.cached(d) != nil {
			t.Errorf("daddr %d still cached once written back and released", d)
		}
	}
	if got, err := c.Read(3, 512, stamped); err != nil || got[8] != 0x77 {
		t.Fatalf("daddr 3 read back %v, %v", got[8], err)
	}
	c.checkShards(t)
}

// TestCacheStress: many goroutines read blocks and change counters in
// them through a tiny cache, committing through the log; the cache stays
// near its budget throughout, its shards stay consistent, and every
// committed increment is there at the end. Run with -race; with
// parallel reclaim too.
func TestCacheStress(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) {
			stress(t, parallel, 1)
		})
	}
}

func stress(t *testing.T, parallel bool, seed int64) {
	const (
		workers = 16
		blocks  = 256 // below the log
		rounds  = 400
		maxHeld = 3
	)
	c, _ := newLoggedCache(t)
	c.setBudget(8 * 512)
	c.SetParallelReclaim(parallel)
	// Held, pinned and in-flight buffers can each keep a worker's blocks
	// over budget, beyond the slack a run may leave.
	bound := c.budget + c.budget/8 + workers*(2*maxHeld+2)*512
	stop := make(chan struct{})
	var peak atomic.Int64
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b := c.bytes.Load(); b > peak.Load() {
				peak.Store(b)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	var increments [blocks]atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed*1000 + int64(w)))
			for r := 0; r < rounds; r++ {
				if rng.Intn(2) == 0 {
					if _, err := c.Read(format.Daddr(rng.Intn(blocks)), 512, stamped); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				if err := incrementSome(c, rng, blocks, maxHeld, &increments); err != nil {
					t.Error(err)
					return
				}
				// Durable on return, as the store's changes are: this
				// bounds the blocks waiting for write-back.
				if err := c.Force(); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > bound {
		t.Errorf("peak %d bytes cached, bound %d (budget %d)", p, bound, c.budget)
	}
	c.reclaimIfOver()
	if got := c.bytes.Load(); got > c.budget {
		t.Errorf("idle cache holds %d bytes, budget %d", got, c.budget)
	}
	for d := 0; d < blocks; d++ {
		b, err := c.Read(format.Daddr(d), 512, stamped)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := binary.BigEndian.Uint32(b[8:]), uint32(increments[d].Load()); got != want {
			t.Errorf("daddr %d: counter %d, want %d", d, got, want)
		}
	}
	c.checkShards(t)
	st := c.Stats()
	t.Logf("peak %d bytes (bound %d); stats %+v", peak.Load(), bound, st)
	if st.Evictions == 0 || st.Runs == 0 {
		t.Errorf("a tiny budget never reclaimed: %+v", st)
	}
}

// incrementSome increments the counters of up to maxHeld random blocks in
// one transaction, locked in ascending order; one in eight is cancelled.
func incrementSome(c *Cache, rng *rand.Rand, blocks, maxHeld int, increments *[256]atomic.Int64) error {
	tx, err := c.Begin()
	if err != nil {
		return err
	}
	first := rng.Intn(blocks)
	var ds []format.Daddr
	for d := first; d < blocks && len(ds) < 1+rng.Intn(maxHeld); d += 1 + rng.Intn(16) {
		ds = append(ds, format.Daddr(d))
	}
	for _, d := range ds {
		b, err := tx.Read(d, 512, stamped)
		if err != nil {
			tx.Cancel()
			return err
		}
		binary.BigEndian.PutUint32(b[8:], binary.BigEndian.Uint32(b[8:])+1)
		tx.Dirty(d)
	}
	if rng.Intn(8) == 0 {
		tx.Cancel()
		return nil
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, d := range ds {
		increments[d].Add(1)
	}
	return nil
}
