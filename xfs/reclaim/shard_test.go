package reclaim

import (
	"math/rand"
	"slices"
	"testing"
)

// entry is a test cache entry: a size and whether it is held.
type entry struct {
	size int64
	held bool
}

func entryHeld(e *entry) bool  { return e.held }
func entrySize(e *entry) int64 { return e.size }
func keysOf(s *Shard[int, entry]) []int {
	var keys []int
	s.Each(func(k int, _ *entry) { keys = append(keys, k) })
	return keys
}

// TestShardAgainstModel runs random gets, adds, removes and evictions on
// a shard and on a model (a slice, most recently used first); seeded.
func TestShardAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		shards := make([]Shard[int, entry], 1)
		s := &shards[0]
		var order []int // the model: most recently used first
		vals := map[int]*entry{}
		toFront := func(k int) {
			order = slices.DeleteFunc(order, func(x int) bool { return x == k })
			order = append([]int{k}, order...)
		}
		var hits, misses uint64
		for op := 0; op < 2000; op++ {
			k := rng.Intn(40)
			switch r := rng.Intn(10); {
			case r < 5:
				if _, ok := s.Get(k); ok != (vals[k] != nil) {
					t.Fatalf("seed %d op %d: Get(%d) found %v", seed, op, k, ok)
				} else if ok {
					hits++
					toFront(k)
				} else {
					e := s.Add(k)
					e.size, e.held = int64(1+rng.Intn(8)), rng.Intn(4) == 0
					misses++
					vals[k] = e
					toFront(k)
				}
			case r < 6:
				s.Remove(k)
				delete(vals, k)
				order = slices.DeleteFunc(order, func(x int) bool { return x == k })
			case r < 7:
				if e := vals[k]; e != nil {
					e.held = !e.held
				}
			default:
				want := int64(rng.Intn(20))
				n, bytes := s.Evict(want, entryHeld, entrySize)
				// The model: from the least recent, free unheld entries
				// until want is reached; held ones passed go to the front
				// in the order met.
				var freed int64
				var wantN int
				var passed []int
				kept := slices.Clone(order)
				for i := len(order) - 1; i >= 0 && freed < want; i-- {
					key := order[i]
					kept = slices.DeleteFunc(kept, func(x int) bool { return x == key })
					if vals[key].held {
						passed = append(passed, key)
						continue
					}
					freed += vals[key].size
					wantN++
					delete(vals, key)
				}
				slices.Reverse(passed)
				order = append(passed, kept...)
				if n != wantN || bytes != freed {
					t.Fatalf("seed %d op %d: Evict(%d) freed %d entries, %d bytes; model %d, %d", seed, op, want, n, bytes, wantN, freed)
				}
			}
			if got := keysOf(s); !slices.Equal(got, order) {
				t.Fatalf("seed %d op %d: order %v, model %v", seed, op, got, order)
			}
		}
		if s.Hits != hits || s.Misses != misses || s.Len() != len(vals) {
			t.Fatalf("seed %d: hits %d misses %d len %d; model %d %d %d", seed, s.Hits, s.Misses, s.Len(), hits, misses, len(vals))
		}
		if n, h, m := Sum(shards); n != int64(len(vals)) || h != hits || m != misses {
			t.Fatalf("seed %d: Sum %d %d %d", seed, n, h, m)
		}
	}
}

// TestEvictWalksEachEntryOnce: with every entry held, an eviction visits
// each once and frees nothing.
func TestEvictWalksEachEntryOnce(t *testing.T) {
	var s Shard[int, entry]
	for k := 0; k < 5; k++ {
		*s.Add(k) = entry{size: 1, held: true}
	}
	calls := 0
	n, bytes := s.Evict(100, func(e *entry) bool { calls++; return e.held }, entrySize)
	if n != 0 || bytes != 0 || calls != 5 {
		t.Fatalf("freed %d entries, %d bytes in %d looks", n, bytes, calls)
	}
	if got := keysOf(&s); !slices.Equal(got, []int{4, 3, 2, 1, 0}) {
		t.Fatalf("order after a full rotation: %v, want it unchanged", got)
	}
}
