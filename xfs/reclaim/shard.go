package reclaim

import "sync"

// Shard is one part of a sharded cache: its entries by key in order of
// use, its lock and its counters. An entry V lives inside the shard's
// list node, so an entry costs one allocation and a lookup one pointer
// from the map; the cache hands out *V, which stays valid after the
// entry is evicted.
type Shard[K comparable, V any] struct {
	// Mu guards the shard, and whatever the cache keeps in its entries
	// under the shard's lock (their references).
	Mu           sync.Mutex
	m            map[K]*node[K, V]
	head         node[K, V] // sentinel: head.next is the most recently used
	Hits, Misses uint64     // lookups that found their entry, that added it
	_            [64]byte   // keeps neighbouring shards' locks off one cache line
}

type node[K comparable, V any] struct {
	prev, next *node[K, V]
	key        K
	val        V
}

// Get returns the entry of k and makes it the most recently used,
// counting a hit; the caller holds Mu.
func (s *Shard[K, V]) Get(k K) (*V, bool) {
	n, ok := s.m[k]
	if !ok {
		return nil, false
	}
	s.Hits++
	s.toFront(n)
	return &n.val, true
}

// Peek returns the entry of k without counting or reordering anything.
func (s *Shard[K, V]) Peek(k K) (*V, bool) {
	if n, ok := s.m[k]; ok {
		return &n.val, true
	}
	return nil, false
}

// Add adds a zero entry for k, the most recently used, for the caller to
// fill in, counting a miss. k must not be in the shard.
func (s *Shard[K, V]) Add(k K) *V {
	if s.m == nil {
		s.m = make(map[K]*node[K, V])
		s.head.next, s.head.prev = &s.head, &s.head
	}
	n := &node[K, V]{key: k}
	s.m[k] = n
	s.Misses++
	s.toFront(n)
	return &n.val
}

// Remove forgets the entry of k, if any.
func (s *Shard[K, V]) Remove(k K) {
	if n, ok := s.m[k]; ok {
		s.unlink(n)
	}
}

// Len is the number of entries.
func (s *Shard[K, V]) Len() int { return len(s.m) }

// Evict removes the least recently used entries that are not held until
// their sizes add up to want, and returns how many it removed and their
// size. Held entries it passes become the most recently used: they are
// in use, and the next eviction need not walk past them again.
func (s *Shard[K, V]) Evict(want int64, held func(*V) bool, size func(*V) int64) (entries int, bytes int64) {
	for n := len(s.m); n > 0 && bytes < want; n-- {
		e := s.head.prev
		if held(&e.val) {
			s.toFront(e)
			continue
		}
		s.unlink(e)
		entries++
		bytes += size(&e.val)
	}
	return entries, bytes
}

// Each calls fn for every entry, most recently used first.
func (s *Shard[K, V]) Each(fn func(K, *V)) {
	if s.m == nil {
		return
	}
	for n := s.head.next; n != &s.head; n = n.next {
		fn(n.key, &n.val)
	}
}

func (s *Shard[K, V]) toFront(n *node[K, V]) {
	if n.next != nil {
		n.prev.next, n.next.prev = n.next, n.prev
	}
	n.next, n.prev = s.head.next, &s.head
	s.head.next.prev, s.head.next = n, n
}

func (s *Shard[K, V]) unlink(n *node[K, V]) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.next, n.prev = nil, nil
	delete(s.m, n.key)
}

// Sum returns the entries and lookup counters of all the shards, taking
// each one's lock in turn.
func Sum[K comparable, V any](shards []Shard[K, V]) (entries int64, hits, misses uint64) {
	for i := range shards {
		s := &shards[i]
		s.Mu.Lock()
		entries += int64(len(s.m))
		hits += s.Hits
		misses += s.Misses
		s.Mu.Unlock()
	}
	return entries, hits, misses
}

// Index spreads keys over 1<<bits shards: a multiplicative hash, as
// cache keys (block addresses, inode numbers) often share their low bits.
func Index(key uint64, bits uint) int {
	return int((key * 0x9E3779B97F4A7C15) >> (64 - bits))
}
