package trans

import (
	"math/rand/v2"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestCacheStatsCountLookups reads random blocks through a cache too
// small for all of them and checks the counters against a model of an
// LRU of that many blocks: every read is a hit or a miss, exactly as
// the model says, and the size never passes the budget.
func TestCacheStatsCountLookups(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	const blocks, budgetBlocks = 32, 8
	d := &memDev{b: make([]byte, blocks*512)}
	for i := 0; i < blocks; i++ {
		stamped.Finish(d.b[i*512 : i*512+512])
	}
	c := NewCache(d, budgetBlocks*512)
	var lru []format.Daddr // most recent last
	var hits, misses uint64
	for i := 0; i < 2000; i++ {
		daddr := format.Daddr(rng.IntN(blocks))
		found := -1
		for j, x := range lru {
			if x == daddr {
				found = j
			}
		}
		if found >= 0 {
			hits++
			lru = append(lru[:found], lru[found+1:]...)
		} else {
			misses++
			if len(lru) == budgetBlocks {
				lru = lru[1:]
			}
		}
		lru = append(lru, daddr)
		if _, err := c.Read(daddr, 512, stamped); err != nil {
			t.Fatal(err)
		}
	}
	st := c.Stats()
	if st.Hits != hits || st.Misses != misses {
		t.Errorf("hits %d, misses %d; an LRU of %d blocks has %d and %d", st.Hits, st.Misses, budgetBlocks, hits, misses)
	}
	if st.Budget != budgetBlocks*512 || st.Bytes > st.Budget || st.Bytes != st.Buffers*512 || st.Buffers == 0 {
		t.Errorf("size: %+v", st)
	}
}
