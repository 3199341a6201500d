// Package reclaim keeps a sharded cache within its memory budget with one
// reclaimer at a time: a single-runner shrinker.
//
//	insert ──> cache over budget? ── no ──> carry on
//	                 │ yes
//	               Need
//	                 │
//	   a runner already? ── yes ──> carry on: what it added is over the
//	                 │ no             budget, the runner's next round
//	                 │                frees it (wait for the run only
//	                 v                when over budget by Slack)
//	   this goroutine runs rounds: free what is over the budget plus
//	   Batch, visiting the shards round-robin from where the last round
//	   stopped, the coldest unheld entries of each first; again while
//	   callers put the cache over budget meanwhile (a few rounds at most)
//
// Reclaimers running in parallel fight over the same shard locks and
// advance in lockstep, each freeing what the others also set out to free
// (the kernel once lost three quarters of its unlink rate that way until
// its inode shrinker became single-runner). Parallel mode keeps that
// behaviour, for benchmarks to measure against.
//
// The package knows nothing of what is cached: the cache reports how far
// it is over budget and frees entries of one shard when asked. Shard is
// the part both of the engine's caches build on: entries by key in order
// of use under one lock, with hit and miss counters, and an eviction
// that passes over held entries.
package reclaim

import (
	"sync"
	"sync/atomic"
)

// Cache is what a reclaimer shrinks.
type Cache struct {
	// Shards is the number of shards, numbered from 0.
	Shards int
	// Over returns how many bytes the cache holds beyond its budget
	// (zero or less: within it).
	Over func() int64
	// Scan frees the coldest unheld entries of a shard, at least want
	// bytes of them if it has them, and returns how many entries and
	// bytes it freed. It must not wait for anything but the shard's own
	// lock.
	Scan func(shard int, want int64) (entries int, bytes int64)
	// Batch is how far below the budget a run frees, so that a cache
	// at its budget does not start a run for every entry it adds.
	Batch int64
	// Slack is how far over budget the cache may grow while a runner
	// works before callers wait for it instead of carrying on.
	Slack int64
}

// Reclaimer frees a Cache's entries when it is over budget, one runner
// at a time. It is safe for use by many goroutines.
type Reclaimer struct {
	c Cache

	running  atomic.Bool   // a runner is at work
	parallel atomic.Bool   // every caller reclaims by itself (the old behaviour)
	cursor   atomic.Uint64 // the next shard to visit

	mu    sync.Mutex // guards ended; held to end a run
	ended uint64     // runs ended so far
	end   sync.Cond  // broadcast when a run ends

	runs, evictions, waits atomic.Uint64
}

// New returns a reclaimer of c.
func New(c Cache) *Reclaimer {
	if c.Shards < 1 {
		c.Shards = 1
	}
	r := &Reclaimer{c: c}
	r.end.L = &r.mu
	return r
}

// SetParallel makes every caller that finds the cache over budget
// reclaim by itself, as if there were no runner: for benchmarks of what
// a single runner saves.
func (r *Reclaimer) SetParallel(on bool) { r.parallel.Store(on) }

// Need is called, with no shard lock held, by a caller that found the
// cache over budget after adding n bytes to it (0 after releasing an
// entry). It reclaims, or leaves the work to the runner at work and
// returns, waiting for that run to end only when the cache is past its
// slack.
func (r *Reclaimer) Need(n int64) {
	if r.parallel.Load() {
		r.runs.Add(1)
		r.sweep(max(n, r.c.Over()+r.c.Batch))
		return
	}
	if r.running.CompareAndSwap(false, true) {
		r.run()
		return
	}
	if r.c.Over() > r.c.Slack {
		r.wait()
	}
}

// maxRounds bounds the rounds of one run, so that the goroutine that
// runs it does not reclaim for others for ever while they keep adding;
// what is left is the next caller's.
const maxRounds = 8

// run frees what is over the budget, and what callers put over it
// meanwhile, until the cache is back within its budget less the batch or
// nothing more can be freed, then ends the run. Each round looks at the
// cache anew: what other callers added is its target too.
func (r *Reclaimer) run() {
	r.runs.Add(1)
	for round := 0; round < maxRounds; round++ {
		over := r.c.Over()
		if over <= 0 || r.sweep(over+r.c.Batch) == 0 {
			break
		}
	}
	r.mu.Lock()
	r.running.Store(false)
	r.ended++
	r.end.Broadcast()
	r.mu.Unlock()
}

// wait returns once the run at work, if any, has ended.
func (r *Reclaimer) wait() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running.Load() {
		return
	}
	r.waits.Add(1)
	// Only this run's end: another may start at once, and this caller
	// need not wait for it too.
	for seen := r.ended; r.ended == seen; {
		r.end.Wait()
	}
}

// sweep frees about want bytes, an even share from each shard in turn
// starting where the last sweep stopped, until it has them or a whole
// round of shards had nothing to give.
func (r *Reclaimer) sweep(want int64) (freed int64) {
	n := r.c.Shards
	share := max(want/int64(n), 1)
	for idle := 0; freed < want && idle < n; {
		shard := int((r.cursor.Add(1) - 1) % uint64(n))
		entries, bytes := r.c.Scan(shard, min(share, want-freed))
		if entries == 0 {
			idle++
			continue
		}
		idle = 0
		freed += bytes
		r.evictions.Add(uint64(entries))
	}
	return freed
}

// ForBudget returns the reclaimer of a cache of the given shards whose
// entries take used bytes against budget. A run frees a sixty-fourth of
// the budget beyond what is over it, so that a cache at its budget
// reclaims in batches, and the cache may grow an eighth past its budget
// while a run works before callers wait for it.
func ForBudget(shards int, budget int64, used *atomic.Int64, scan func(shard int, want int64) (int, int64)) *Reclaimer {
	return New(Cache{
		Shards: shards,
		Over:   func() int64 { return used.Load() - budget },
		Scan:   scan,
		Batch:  budget / 64,
		Slack:  budget / 8,
	})
}

// Counters are a reclaimer's totals.
type Counters struct {
	Runs      uint64 // reclaim runs (in parallel mode: every caller's)
	Evictions uint64 // entries freed by them
	Waits     uint64 // callers that waited for a run past the slack
}

// Counters returns the totals so far.
func (r *Reclaimer) Counters() Counters {
	return Counters{Runs: r.runs.Load(), Evictions: r.evictions.Load(), Waits: r.waits.Load()}
}

// Stats describe a cache's use of its budget, for monitoring.
type Stats struct {
	Bytes   int64 // held now (estimated for entries of no fixed size)
	Budget  int64
	Entries int64
	Hits    uint64 // lookups that found their entry
	Misses  uint64 // lookups that added it
	Counters
}
