package gc

import (
	"sync"
	"sync/atomic"
	"time"
)

// node is one queued inode on a queue's lock-free list.
type node struct {
	ino  uint64
	next *node
}

// cacheLine separates the fields producers write from those of the next
// queue and from the worker's, so producers on different Ps never share a
// cache line (128 bytes: adjacent-line prefetch pairs 64-byte lines).
const cacheLine = 128

// queue is one P's inodes waiting for inactivation: a lock-free
// multi-producer list (producers push with a compare-and-swap), drained
// whole by its single worker.
type queue struct {
	// Written by producers.
	head    atomic.Pointer[node] // newest first
	queued  atomic.Uint64        // inodes ever pushed; counted before the push
	retries atomic.Uint64        // failed compare-and-swaps: producer contention
	armed   atomic.Bool          // a delayed kick is pending
	_       [cacheLine - 3*8 - 4]byte

	// Written by the worker.
	done atomic.Uint64 // inodes inactivated
	queueStats
	_ [cacheLine - 8 - 4*8]byte

	// Read-mostly.
	id   int
	kick chan struct{} // capacity 1: a pending kick is never lost
	// delayed kicks the worker a little after the first inode of a
	// batch, reused so that arming it allocates nothing.
	delayed *time.Timer
	// mu and cond let producers past the backlog and flushers wait for
	// done; the fast path never takes mu.
	mu      sync.Mutex
	cond    *sync.Cond
	waiters atomic.Int32 // goroutines in waitDone: the worker wakes them per inode
}

// queueStats are the counters of one queue (or of Sync mode).
type queueStats struct {
	inactivated atomic.Uint64
	extents     atomic.Uint64
	errors      atomic.Uint64
	highWater   atomic.Uint64 // the largest backlog seen
}

// push adds ino and returns its sequence number (1 for the first).
func (q *queue) push(ino uint64) uint64 {
	seq := q.queued.Add(1)
	n := &node{ino: ino}
	for {
		old := q.head.Load()
		n.next = old
		if q.head.CompareAndSwap(old, n) {
			return seq
		}
		q.retries.Add(1)
	}
}

// pendingAt is how many inodes up to sequence number seq are not yet
// inactivated. The worker takes whole lists, so by the time a producer
// looks, it may have inactivated its inode and later ones too: then
// nothing is pending (done - seq would wrap around to a huge backlog,
// and the throttle would wait for a sequence number never reached).
func (q *queue) pendingAt(seq uint64) uint64 {
	if done := q.done.Load(); done < seq {
		return seq - done
	}
	return 0
}

// take removes everything queued and returns it oldest first.
func (q *queue) take() []uint64 {
	n := q.head.Swap(nil)
	var out []uint64
	for ; n != nil; n = n.next {
		out = append(out, n.ino)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// kickNow wakes the worker unless a wake-up is already pending.
func (q *queue) kickNow() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// waitDone waits until seq inodes have been inactivated.
func (q *queue) waitDone(seq uint64) {
	if q.done.Load() >= seq {
		return
	}
	q.mu.Lock()
	q.waiters.Add(1)
	for q.done.Load() < seq {
		q.cond.Wait()
	}
	q.waiters.Add(-1)
	q.mu.Unlock()
}

// finished counts n more inodes inactivated and wakes any waiter. A
// waiter registers before it checks done, and the worker counts before
// it looks for waiters, so a wake-up is never lost.
func (q *queue) finished(n uint64) {
	q.done.Add(n)
	if q.waiters.Load() > 0 {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}

// noteBacklog raises the high-water mark to n.
func (st *queueStats) noteBacklog(n uint64) {
	for {
		hw := st.highWater.Load()
		if n <= hw || st.highWater.CompareAndSwap(hw, n) {
			return
		}
	}
}
