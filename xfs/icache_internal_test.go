package xfs

import (
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestInodeCacheStress: goroutines hold, re-hold and release random
// inodes through an inode cache of a few entries. A held inode keeps its
// one handle (its lock must never exist twice), and the cache is back
// within its budget once nothing is held. Run with -race; with parallel
// reclaim too.
func TestInodeCacheStress(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		var c inodeCache
		c.init(16*(512+inodeOverhead), 512)
		c.reclaim.SetParallel(parallel)
		var wg sync.WaitGroup
		var twins atomic.Int64
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed))
				var held []*inodeHandle
				var inos []format.Ino
				for op := 0; op < 3000; op++ {
					if len(held) < 3 && rng.Intn(2) == 0 {
						ino := format.Ino(rng.Intn(400))
						held = append(held, c.hold(ino))
						inos = append(inos, ino)
						continue
					}
					if len(held) == 0 {
						continue
					}
					i := rng.Intn(len(held))
					// Still the same handle while held, however much
					// was evicted meanwhile.
					again := c.hold(inos[i])
					if again != held[i] {
						twins.Add(1)
					}
					c.release(again)
					c.release(held[i])
					held = append(held[:i], held[i+1:]...)
					inos = append(inos[:i], inos[i+1:]...)
				}
				for _, h := range held {
					c.release(h)
				}
			}(int64(w))
		}
		wg.Wait()
		// A release during the last run's end leaves its excess to the
		// next caller: be that caller.
		c.release(c.hold(0))
		if n := twins.Load(); n > 0 {
			t.Errorf("parallel %v: %d held inodes got a second handle", parallel, n)
		}
		st := c.stats()
		if st.Bytes > st.Budget || st.Bytes != st.Entries*c.entry {
			t.Errorf("parallel %v: idle cache at %d bytes for %d entries, budget %d", parallel, st.Bytes, st.Entries, st.Budget)
		}
		if st.Evictions == 0 || st.Hits == 0 {
			t.Errorf("parallel %v: stats %+v", parallel, st)
		}
		for i := range c.shards {
			c.shards[i].Each(func(ino format.Ino, h *inodeHandle) {
				if h.refs != 0 || h.shard != c.shard(ino) {
					t.Errorf("inode %d: %d references left, shard %p of %p", ino, h.refs, h.shard, c.shard(ino))
				}
			})
		}
	}
}
