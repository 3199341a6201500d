package trans

// CacheStats describe the metadata buffer cache, for operators.
type CacheStats struct {
	Buffers int // blocks held
	Bytes   int // their size
	Budget  int // the memory budget Bytes is kept near
	// Hits and Misses count lookups that found a block's data in the
	// cache or had to read it.
	Hits, Misses uint64
}

// Stats returns the cache's counters now.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Buffers: len(c.bufs), Bytes: c.bytes, Budget: c.budget, Hits: c.hits, Misses: c.misses}
}

// countLookupLocked counts a lookup as a hit or a miss; c.mu is held.
func (c *Cache) countLookupLocked(hit bool) {
	if hit {
		c.hits++
	} else {
		c.misses++
	}
}
