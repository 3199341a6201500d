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
//	go test -run '^$' -bench CacheRead -cpu 1,2 ./xfs/trans/
func BenchmarkCacheRead(b *testing.B) {
	const blocks = 4096
	d := &memDev{b: make([]byte, blocks*512)}
	for i := 0; i < blocks; i++ {
		stamped.Finish(d.b[i*512 : i*512+512])
	}
	c := NewCache(d, 2*blocks*512)
	for i := 0; i < blocks; i++ {
		if _, err := c.Read(format.Daddr(i), 512, stamped); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewSource(rand.Int63()))
		for pb.Next() {
			if _, err := c.Read(format.Daddr(rng.Intn(blocks)), 512, stamped); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCacheMiss reads blocks from parallel goroutines through a
// cache that holds a sixteenth of them: a miss, and the reclaim that
// makes room for it.
func BenchmarkCacheMiss(b *testing.B) {
	const blocks = 4096
	d := &memDev{b: make([]byte, blocks*512)}
	for i := 0; i < blocks; i++ {
		stamped.Finish(d.b[i*512 : i*512+512])
	}
	c := NewCache(d, blocks/16*512)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewSource(rand.Int63()))
		for pb.Next() {
			if _, err := c.Read(format.Daddr(rng.Intn(blocks)), 512, stamped); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
