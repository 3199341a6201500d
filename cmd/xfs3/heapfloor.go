package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The server keeps Go's collector from running before the heap reaches a
// floor: the metadata cache budget. Go collects each time the heap has
// grown by GOGC percent (100) of what is live; while the cache is far
// from full, what is live is small, and the engine, which allocates a
// block's copy for every block a transaction changes, then pays a
// collection every few thousand operations. Once the cache is half full
// Go's own goal is past the floor anyway, so the floor never lets the
// heap grow beyond half of what the default allows a server with a full
// cache.
//
// Go has no hook for "a collection ended", so a sentinel object with a
// cleanup stands in for one: each cycle frees the sentinel, its cleanup
// sets GOGC for the next cycle from the heap just measured and arms a new
// sentinel.

const (
	// defaultGOGC is Go's own GOGC, the least the floor ever sets.
	defaultGOGC = 100
	// maxFloor bounds the floor so that GOGC stays well within the
	// runtime's int32 (a huge cache size would overflow it into a negative
	// GOGC: collection off); past it Go's own goal takes over sooner.
	maxFloor = 40 << 30
	// goHeapMinimum is the least heap goal Go sets at GOGC=100; it scales
	// with GOGC, so in a small heap it, not the live heap, sets the goal.
	goHeapMinimum = 4 << 20
)

// gogcForFloor is the GOGC that makes the next heap goal about floor when
// live bytes survived the last collection and roots bytes of stacks and
// globals were scanned. Go's goal is the larger of live plus GOGC percent
// of live and roots together, and GOGC percent of its heap minimum; both
// must stay within the floor, or a small heap would be let grow to
// several times it. It is never below Go's default.
func gogcForFloor(live, roots, floor uint64) int {
	floor = min(floor, maxFloor)
	p := floor * 100 / goHeapMinimum
	if work := live + roots; work > 0 {
		if floor <= live {
			return defaultGOGC
		}
		p = min(p, (floor-live)*100/work)
	}
	return int(max(p, defaultGOGC))
}

// heapFloor is the process's one floor; serve may run more than once in a
// process (tests), and every run shares it.
var heapFloor struct {
	mu    sync.Mutex
	users int
	floor uint64
	gen   uint64 // bumped by each start and the last stop; stale sentinels stop re-arming
	prior int    // GOGC before the first start, restored by the last stop
}

// startHeapFloor keeps the heap goal at least floor bytes until the returned
// stop is called, and says whether it does: not when the operator set
// GOGC, whose value wins.
func startHeapFloor(floor uint64) (stop func(), held bool) {
	if _, set := os.LookupEnv("GOGC"); set || floor == 0 {
		return func() {}, false
	}
	return holdHeapFloor(floor), true
}

// holdHeapFloor is startHeapFloor whatever the environment says.
func holdHeapFloor(floor uint64) (stop func()) {
	h := &heapFloor
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.users == 0 {
		h.prior = currentGOGC()
	}
	h.users++
	h.floor = max(h.floor, floor)
	h.gen++
	armSentinel(h.gen)
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.users--; h.users == 0 {
				h.gen++
				h.floor = 0
				debug.SetGCPercent(h.prior)
			}
		})
	}
}

// armSentinel allocates an object that only the collector can free and
// whose finalizer retunes GOGC and arms the next one, as long as gen is
// still the floor's generation.
func armSentinel(gen uint64) {
	// A pointer keeps the sentinel out of Go's tiny-object allocator,
	// whose blocks are freed together and so maybe never.
	s := &struct{ _ *byte }{}
	runtime.AddCleanup(s, func(gen uint64) {
		h := &heapFloor
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.gen != gen || h.users == 0 {
			return
		}
		debug.SetGCPercent(gogcForFloor(liveHeap(), gcRoots(), h.floor))
		armSentinel(gen)
	}, gen)
}

// currentGOGC is the collector's GOGC now.
func currentGOGC() int {
	return int(readMetric("/gc/gogc:percent"))
}

// liveHeap is the heap the last collection found live, by Go's own count.
func liveHeap() uint64 {
	return readMetric("/gc/heap/live:bytes")
}

// gcRoots is what the collector scans besides the heap: goroutine stacks
// and globals, as the last collection measured them.
func gcRoots() uint64 {
	return readMetric("/gc/scan/stack:bytes") + readMetric("/gc/scan/globals:bytes")
}

// readMetric reads one of the runtime's unsigned metrics, 0 if it has none.
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
