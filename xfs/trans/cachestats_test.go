package trans

import (
	"math/rand/v2"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestCacheStatsCountLookups reads random blocks and checks the hit and
// miss counters against what must be true of any cache: every read is
// counted once, a block never read before is a miss, and while every
// block fits in the budget nothing is read twice from the device. A
// cache of a budget far below the blocks read must miss and reclaim.
func TestCacheStatsCountLookups(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	const blocks = 64
	c, _ := newCache(t, blocks)
	c.setBudget(2 * blocks * 512)
	seen := map[format.Daddr]bool{}
	var reads uint64
	for i := 0; i < 2000; i++ {
		d := format.Daddr(rng.IntN(blocks))
		seen[d] = true
		reads++
		if _, err := c.Read(d, 512, stamped); err != nil {
			t.Fatal(err)
		}
	}
	st := c.Stats()
	if st.Hits+st.Misses != reads || st.Misses != uint64(len(seen)) {
		t.Errorf("%d reads of %d blocks in a cache that holds them all: %d hits, %d misses; want %d misses",
			reads, len(seen), st.Hits, st.Misses, len(seen))
	}
	if st.Entries != int64(len(seen)) || st.Bytes != st.Entries*512 || st.Budget != 2*blocks*512 {
		t.Errorf("size: %+v", st)
	}

	small, _ := newCache(t, blocks)
	small.setBudget(8 * 512)
	for i := 0; i < 2000; i++ {
		if _, err := small.Read(format.Daddr(rng.IntN(blocks)), 512, stamped); err != nil {
			t.Fatal(err)
		}
	}
	st = small.Stats()
	hits, misses := st.Hits, st.Misses
	if hits+misses != 2000 || misses < 2000/2 {
		t.Errorf("2000 random reads of %d blocks through a cache of 8: %d hits, %d misses", blocks, hits, misses)
	}
	if st.Evictions == 0 || st.Runs == 0 {
		t.Errorf("no reclaim counted: %+v", st)
	}
}
