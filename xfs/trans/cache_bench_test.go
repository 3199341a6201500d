package trans

import (
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// BenchmarkCacheRead reads blocks of a warm cache from parallel
// goroutines: the cost of a hit, and how lookups of different blocks
// contend.
//
//	go test -run '^$' -bench 'Cache(Read|Miss)' -cpu 1,2 ./xfs/trans/
func BenchmarkCacheRead(b *testing.B) { benchRandomReads(b, 2*benchBlocks, true) }

// BenchmarkCacheMiss reads blocks from parallel goroutines through a
// cache that holds a sixteenth of them: a miss, and the reclaim that
// makes room for it.
func BenchmarkCacheMiss(b *testing.B) { benchRandomReads(b, benchBlocks/16, false) }

const benchBlocks = 4096

// benchRandomReads reads random blocks of 512 bytes through a cache of
// budget blocks, warmed first or not.
func benchRandomReads(b *testing.B, budget int, warm bool) {
	d := &memDev{b: make([]byte, benchBlocks*512)}
	for i := 0; i < benchBlocks; i++ {
		stamped.Finish(d.b[i*512 : i*512+512])
	}
	c := NewCache(d, budget*512)
	for i := 0; warm && i < benchBlocks; i++ {
		if _, err := c.Read(format.Daddr(i), 512, stamped); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewSource(rand.Int63()))
		for pb.Next() {
			if _, err := c.Read(format.Daddr(rng.Intn(benchBlocks)), 512, stamped); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
