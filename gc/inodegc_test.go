package gc

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// recorder is an Inactivator that records what it was given. It is also
// Sweepable: released inodes wait in pending (by AG: ino % recorderAGs)
// until inactivated.
type recorder struct {
	mu      sync.Mutex
	seen    map[uint64]int
	order   []uint64
	pending map[uint64]bool
	delay   time.Duration
	fail    uint64 // inactivating this inode fails
	busy    atomic.Int32
	maxPar  atomic.Int32
}

func newRecorder() *recorder { return &recorder{seen: map[uint64]int{}, pending: map[uint64]bool{}} }

const recorderAGs = 4

func (r *recorder) AGs() int            { return recorderAGs }
func (r *recorder) AGOf(ino uint64) int { return int(ino % recorderAGs) }

func (r *recorder) Releasable(ag int) []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []uint64
	for ino := range r.pending {
		if r.AGOf(ino) == ag {
			out = append(out, ino)
		}
	}
	slices.Sort(out)
	return out
}

// release puts ino where a sweeper finds it, as an unlink does, and
// queues it.
func (r *recorder) release(g *InodeGC, ino uint64) error {
	r.mu.Lock()
	r.pending[ino] = true
	r.mu.Unlock()
	return g.Queue(ino)
}

func (r *recorder) Inactivate(ino uint64) (uint64, error) {
	n := r.busy.Add(1)
	for {
		m := r.maxPar.Load()
		if n <= m || r.maxPar.CompareAndSwap(m, n) {
			break
		}
	}
	defer r.busy.Add(-1)
	time.Sleep(r.delay)
	if ino == r.fail && r.fail != 0 {
		return 0, errors.New("injected")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[ino]++
	r.order = append(r.order, ino)
	delete(r.pending, ino)
	return ino % 7, nil
}

func (r *recorder) has(ino uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[ino] > 0
}

// TestEveryInodeOnce: inodes queued from many goroutines are each
// inactivated exactly once, Flush waits for them, and the counters agree.
func TestEveryInodeOnce(t *testing.T) {
	for _, mode := range []Mode{PerCPU, Sync, Sweep} {
		t.Run(string(mode), func(t *testing.T) {
			r := newRecorder()
			g := mustNew(t, r, Options{Mode: mode, Queues: 4})
			const producers, each = 16, 500
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						if err := r.release(g, uint64(p*each+i+1)); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			g.Flush()
			if len(r.seen) != producers*each {
				t.Fatalf("%d inodes inactivated after Flush, want %d", len(r.seen), producers*each)
			}
			for ino, n := range r.seen {
				if n != 1 {
					t.Errorf("inode %d inactivated %d times", ino, n)
				}
			}
			st := g.Stats()
			var extents uint64
			for ino := range r.seen {
				extents += ino % 7
			}
			if st.Queued != producers*each || st.Inactivated != producers*each || st.ExtentsFreed != extents || st.Errors != 0 {
				t.Errorf("stats %+v", st)
			}
			for _, q := range st.Queues {
				if q.Depth != 0 {
					t.Errorf("queue depth %d after Flush", q.Depth)
				}
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			if err := g.Queue(1); !errors.Is(err, ErrClosed) {
				t.Errorf("Queue after Close: %v", err)
			}
		})
	}
}

// TestFlushCoversWhatReturned: whatever Queue returned before Flush began
// is inactivated when Flush returns, while other producers keep queueing
// (a producer pushed ahead of another's counted item must not end a
// Flush early).
func TestFlushCoversWhatReturned(t *testing.T) {
	r := newRecorder()
	g := mustNew(t, r, Options{Queues: 2, Delay: time.Hour}) // only kicks and flushes run workers
	defer g.Close()
	var next atomic.Uint64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				ino := next.Add(1)
				g.Queue(ino)
				g.Flush()
				if !r.has(ino) {
					t.Errorf("inode %d not inactivated when Flush returned", ino)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestBacklogWhenWorkerIsAhead: a producer whose inode the worker has
// already inactivated, with later ones, sees no backlog and goes on.
// Computed as seq-done it wrapped around to a huge one, and the throttle
// then waited for a sequence number the queue never reaches: a DELETE
// hung for good (seen once in CI, in TestFlushCoversWhatReturned, where
// flushes let the worker get ahead of a producer).
func TestBacklogWhenWorkerIsAhead(t *testing.T) {
	q := &queue{}
	for _, c := range []struct{ seq, done, want uint64 }{{5, 0, 5}, {5, 3, 2}, {5, 5, 0}, {5, 9, 0}} {
		q.done.Store(c.done)
		if got := q.pendingAt(c.seq); got != c.want {
			t.Errorf("inode %d with %d done: backlog %d, want %d", c.seq, c.done, got, c.want)
		}
	}

	g := mustNew(t, newRecorder(), Options{Queues: 1, Backlog: 2, Delay: time.Hour})
	defer g.Close()
	q = g.queues[0]
	q.done.Store(3) // the producer of inode 1 looks after the worker did 3
	admitted := make(chan struct{})
	go func() {
		g.admit(q, 1)
		close(admitted)
	}()
	select {
	case <-admitted:
	case <-time.After(time.Minute):
		t.Fatal("a producer behind the worker was throttled for good")
	}
	if w := g.Stats().ThrottleWaits; w != 0 {
		t.Errorf("%d throttle waits with nothing pending", w)
	}
}

// TestKicks: a batch of DefaultBatch inodes wakes the worker at once; a
// lone inode waits for the delay; Close drains what is left.
func TestKicks(t *testing.T) {
	r := newRecorder()
	g := mustNew(t, r, Options{Queues: 1, Delay: time.Hour})
	for i := range DefaultBatch - 1 {
		g.Queue(uint64(i + 1))
	}
	time.Sleep(20 * time.Millisecond)
	if r.has(1) {
		t.Fatal("the worker ran before a batch was complete or the delay had passed")
	}
	g.Queue(DefaultBatch)
	waitFor(t, func() bool { return r.has(DefaultBatch) })
	g.Queue(1000)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if !r.has(1000) {
		t.Error("Close did not drain the queue")
	}

	r = newRecorder()
	g = mustNew(t, r, Options{Queues: 1, Delay: 5 * time.Millisecond})
	defer g.Close()
	g.Queue(7)
	waitFor(t, func() bool { return r.has(7) })
}

// TestThrottle: producers that outrun a slow worker wait once their queue
// is past the backlog, so the backlog stays bounded.
func TestThrottle(t *testing.T) {
	r := newRecorder()
	r.delay = 20 * time.Microsecond
	const backlog = 64
	g := mustNew(t, r, Options{Queues: 1, Backlog: backlog})
	defer g.Close()
	const producers = 4
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				g.Queue(uint64(p*10000 + i + 1))
			}
		}()
	}
	wg.Wait()
	st := g.Stats()
	if st.ThrottleWaits == 0 {
		t.Error("no producer was throttled")
	}
	if st.BacklogHighWater > backlog+producers {
		t.Errorf("backlog reached %d, past %d + %d producers", st.BacklogHighWater, backlog, producers)
	}

	// A throttled producer waits only until the backlog ahead of its
	// inode is back to the limit, not for the queue to drain: right after
	// its Queue returns, about a backlog's worth still waits.
	g2 := mustNew(t, r, Options{Queues: 1, Backlog: backlog})
	defer g2.Close()
	q := g2.queues[0]
	throttled := 0
	for i := range 1000 {
		before := g2.throttleWaits.Load()
		g2.Queue(uint64(50000 + i))
		if g2.throttleWaits.Load() == before {
			continue
		}
		throttled++
		if pending := q.queued.Load() - q.done.Load(); pending < backlog/2 {
			t.Fatalf("a throttled producer returned with %d inodes waiting: it waited for the queue to drain, not to the backlog of %d", pending, backlog)
		}
	}
	if throttled == 0 {
		t.Error("the lone producer was never throttled")
	}
}

// TestErrorKept: a failed inactivation is counted and reported by Close;
// the others go on.
func TestErrorKept(t *testing.T) {
	r := newRecorder()
	r.fail = 3
	g := mustNew(t, r, Options{Queues: 1})
	for i := range 5 {
		g.Queue(uint64(i + 1))
	}
	err := g.Close()
	if err == nil || g.Stats().Errors != 1 || len(r.seen) != 4 {
		t.Errorf("Close: %v, stats %+v, %d inactivated", err, g.Stats(), len(r.seen))
	}
}

// TestSlowDrainReported: a drain longer than SlowDrainAfter is reported.
func TestSlowDrainReported(t *testing.T) {
	r := newRecorder()
	r.delay = 2 * time.Millisecond
	var reported atomic.Uint64
	g := mustNew(t, r, Options{Queues: 1, SlowDrainAfter: time.Millisecond,
		SlowDrain: func(q int, took time.Duration, n uint64) { reported.Add(n) }})
	for i := range 3 {
		g.Queue(uint64(i + 1))
	}
	g.Close()
	if reported.Load() == 0 {
		t.Error("a slow drain was not reported")
	}
}

// TestQueueLayout: what producers write, what the worker writes and the
// next queue's fields lie on different cache lines.
func TestQueueLayout(t *testing.T) {
	var q queue
	if off := unsafe.Offsetof(q.done); off < cacheLine {
		t.Errorf("done at %d shares a cache line with the producers' fields", off)
	}
	if off := unsafe.Offsetof(q.id); off < 2*cacheLine {
		t.Errorf("id at %d shares a cache line with the worker's counters", off)
	}
	if unsafe.Offsetof(q.armed)+unsafe.Sizeof(q.armed) > cacheLine {
		t.Error("the producers' fields span two cache lines")
	}
}

// TestProducersSpread: producers running on different Ps mostly find
// different queues: the compare-and-swap retries on the queues' lists stay
// a small fraction of the pushes.
func TestProducersSpread(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("needs 2 Ps")
	}
	g := mustNew(t, newRecorder(), Options{})
	defer g.Close()
	const each = 20000
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				g.Queue(uint64(p*each + i + 1))
			}
		}()
	}
	wg.Wait()
	var retries, pushes uint64
	used := 0
	for _, q := range g.Stats().Queues {
		retries += q.PushRetries
		pushes += q.Queued
		if q.Queued > 0 {
			used++
		}
	}
	t.Logf("%d producers on %d queues: %d pushes, %d CAS retries", procs, used, pushes, retries)
	if retries*100 > pushes {
		t.Errorf("%d CAS retries in %d pushes: producers share queues", retries, pushes)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// nop inactivates nothing, to measure the queues alone.
type nop struct{}

func (nop) Inactivate(uint64) (uint64, error) { return 0, nil }

// BenchmarkQueue: parallel producers on per-P queues against all on one
// queue; retries/op shows how often producers collided on a list.
func BenchmarkQueue(b *testing.B) {
	for _, queues := range []int{0, 1} {
		name := "percpu"
		if queues == 1 {
			name = "one-queue"
		}
		b.Run(name, func(b *testing.B) {
			g := mustNew(b, nop{}, Options{Queues: queues})
			b.RunParallel(func(pb *testing.PB) {
				var ino uint64 // per producer: no shared counter to contend on
				for pb.Next() {
					ino++
					g.Queue(ino)
				}
			})
			b.StopTimer()
			g.Close()
			var retries uint64
			for _, q := range g.Stats().Queues {
				retries += q.PushRetries
			}
			b.ReportMetric(float64(retries)/float64(b.N), "retries/op")
		})
	}
}

func mustNew(t testing.TB, inact Inactivator, opt Options) *InodeGC {
	t.Helper()
	g, err := New(inact, opt)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSweepFindsWhatIsListed: a sweeper frees what its AG lists even when
// nothing queued it (inodes a crash or an earlier run left), at the latest
// on its next periodic pass or a Flush, in inode order.
func TestSweepFindsWhatIsListed(t *testing.T) {
	r := newRecorder()
	for _, ino := range []uint64{12, 8, 4} {
		r.pending[ino] = true
	}
	g := mustNew(t, r, Options{Mode: Sweep})
	defer g.Close()
	g.Flush()
	if len(r.pending) != 0 || !slices.Equal(r.order, []uint64{4, 8, 12}) {
		t.Errorf("swept %v, %d left", r.order, len(r.pending))
	}
	if _, err := New(nop{}, Options{Mode: Sweep}); err == nil {
		t.Error("Sweep mode over an Inactivator that cannot list inodes")
	}
	if _, err := ParseMode("lazy"); err == nil {
		t.Error("an unknown mode parsed")
	}
}
