package gc

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs"
)

// Inactivator frees what an inode that is unlinked and no longer
// referenced still holds: its extents, its attribute fork, its inode and
// its place on the unlinked list. The engine implements it; it must be
// safe for concurrent use by the workers and must commit its changes
// without waiting for them to be durable (the log batches them).
type Inactivator interface {
	Inactivate(ino uint64) (extentsFreed uint64, err error)
}

// BatchInactivator is an Inactivator that can also inactivate several
// inodes at once, sharing transactions among them; errs[i] is inos[i]'s
// outcome. PerCPU workers hand it up to batchMax inodes at a time.
type BatchInactivator interface {
	InactivateBatch(inos []uint64) (extentsFreed uint64, errs []error)
}

// batchMax bounds the inodes a worker hands a BatchInactivator at once,
// and so how long a producer waiting on the queue waits for a count.
const batchMax = 32

// Mode chooses when inodes are inactivated.
type Mode string

const (
	// PerCPU queues each inode on the queue of the P that released it; a
	// worker per queue inactivates them in the background.
	PerCPU Mode = "percpu"
	// Sync inactivates inside the call that released the inode.
	Sync Mode = "sync"
	// Sweep leaves released inodes on their unlinked lists, where one
	// walker per AG finds and frees them in inode order.
	Sweep Mode = "sweep"
)

// ParseMode checks a configured mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case PerCPU, Sync, Sweep:
		return m, nil
	}
	return "", fmt.Errorf("gc mode %q: want %s, %s or %s", s, PerCPU, Sync, Sweep)
}

// Defaults, the kernel's numbers (xfs-facts.md section 8).
const (
	// DefaultBatch: a queue's worker is kicked at once when this many
	// inodes wait (the kernel: more than an inode cluster's worth).
	DefaultBatch = 32
	// DefaultBacklog: a producer that finds more than this many inodes
	// waiting on its queue waits until no more than this many are ahead
	// of its own (XFS_INODEGC_MAX_BACKLOG; the kernel's producer waits
	// for the worker's whole run instead).
	DefaultBacklog = 256
	// DefaultDelay lets stragglers join a batch before a worker runs (the
	// kernel waits one jiffy, 4 ms at HZ=250). Each of our inactivation
	// transactions costs more than the kernel's, so batches pay: 5 ms
	// against 1 ms meant fewer log commits and less server CPU per DELETE
	// (docs/benchmarks.md).
	DefaultDelay = 5 * time.Millisecond
)

// Options configure an InodeGC; zero values take the defaults.
type Options struct {
	Mode    Mode
	Queues  int // PerCPU: number of queues; GOMAXPROCS when 0
	Batch   int
	Backlog int
	Delay   time.Duration
	// SlowDrain, when set, is called (from a worker) when a queue took
	// longer than SlowDrainAfter to drain a backlog, for the server log.
	SlowDrain      func(queue int, took time.Duration, inodes uint64)
	SlowDrainAfter time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// ErrClosed: Queue after Close.
var ErrClosed = errors.New("inode gc is closed")

// InodeGC inactivates released inodes, in the background in PerCPU mode.
type InodeGC struct {
	inact  Inactivator
	opt    Options
	queues []*queue
	// pick hands each producer a queue; sync.Pool keeps a private item
	// per P, so a producer almost always gets the queue its P last used
	// and producers on different Ps touch different queues (package doc).
	pick     sync.Pool
	nextPick atomic.Uint32
	closed   atomic.Bool
	stop     chan struct{}
	workers  sync.WaitGroup

	throttleWaits atomic.Uint64
	syncQueued    atomic.Uint64 // Sync mode's counters
	syncStats     queueStats
	firstErr      atomic.Pointer[error]

	sweep       Sweepable  // Sweep mode: the engine's lists
	sweepers    []*sweeper // one per AG
	sweepQueued atomic.Uint64
}

// New starts an InodeGC over inact (which must be Sweepable for Sweep).
func New(inact Inactivator, opt Options) (*InodeGC, error) {
	if opt.Mode == "" {
		opt.Mode = PerCPU
	}
	if _, err := ParseMode(string(opt.Mode)); err != nil {
		return nil, err
	}
	if opt.Queues <= 0 {
		opt.Queues = runtime.GOMAXPROCS(0)
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultBatch
	}
	if opt.Backlog <= 0 {
		opt.Backlog = DefaultBacklog
	}
	if opt.Delay <= 0 {
		opt.Delay = DefaultDelay
	}
	if opt.SlowDrainAfter <= 0 {
		opt.SlowDrainAfter = 5 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	g := &InodeGC{inact: inact, opt: opt, stop: make(chan struct{})}
	switch opt.Mode {
	case Sync:
		return g, nil
	case Sweep:
		s, err := sweepable(inact)
		if err != nil {
			return nil, err
		}
		g.startSweepers(s)
		return g, nil
	}
	g.queues = make([]*queue, opt.Queues)
	for i := range g.queues {
		q := &queue{id: i, kick: make(chan struct{}, 1)}
		q.cond = sync.NewCond(&q.mu)
		q.delayed = time.AfterFunc(time.Hour, q.kickNow)
		q.delayed.Stop()
		g.queues[i] = q
	}
	g.pick.New = func() any {
		return g.queues[int(g.nextPick.Add(1)-1)%len(g.queues)]
	}
	for _, q := range g.queues {
		g.workers.Add(1)
		go g.work(q)
	}
	return g, nil
}

// Mode reports the mode g runs in.
func (g *InodeGC) Mode() Mode { return g.opt.Mode }

// Queue hands over an inode whose last link and last reference are gone.
// In PerCPU mode it returns at once unless the producer's queue is past
// its backlog, when it waits until the backlog ahead of its inode is back
// to the limit; in Sweep mode it
// wakes the inode's AG's sweeper; in Sync mode it inactivates the inode.
func (g *InodeGC) Queue(ino uint64) error {
	if g.closed.Load() {
		return ErrClosed
	}
	switch g.opt.Mode {
	case Sync:
		g.syncQueued.Add(1)
		g.inactivate(&g.syncStats, ino)
		return nil
	case Sweep:
		g.queueSweep(ino)
		return nil
	}
	q := g.pick.Get().(*queue)
	g.pick.Put(q)
	g.admit(q, q.push(ino))
	return nil
}

// admit kicks q's worker or throttles the producer that just pushed the
// inode numbered seq, by the backlog ahead of it.
func (g *InodeGC) admit(q *queue, seq uint64) {
	pending := q.pendingAt(seq)
	q.noteBacklog(pending)
	switch {
	case pending > uint64(g.opt.Backlog):
		// Wait until the backlog ahead of this inode is back to the
		// limit, not until the queue is empty: the worker wakes
		// producers inode by inode, so a throttled DELETE waits for a
		// few inactivations rather than for hundreds.
		g.throttleWaits.Add(1)
		q.kickNow()
		q.waitDone(seq - uint64(g.opt.Backlog))
	case pending >= uint64(g.opt.Batch):
		q.kickNow()
	case !q.armed.Swap(true):
		// The first of a batch: wake the worker after a short delay, so
		// that stragglers share its run.
		q.delayed.Reset(g.opt.Delay)
	}
}

// Flush returns once every inode queued before it was called has been
// inactivated (space reports and ENOSPC retries call it).
func (g *InodeGC) Flush() {
	g.flushSweep()
	for _, q := range g.queues {
		target := q.queued.Load()
		if q.done.Load() >= target {
			continue
		}
		q.kickNow()
		q.waitDone(target)
	}
}

// Close drains every queue and stops the workers. Queue fails afterwards.
func (g *InodeGC) Close() error {
	if g.closed.Swap(true) {
		return nil
	}
	g.Flush()
	close(g.stop)
	g.workers.Wait()
	for _, q := range g.queues {
		q.delayed.Stop()
	}
	if err := g.Err(); err != nil {
		return fmt.Errorf("inode gc: %w", err)
	}
	return nil
}

// Err is the first inactivation error, if any. The inode stays on the
// unlinked list on disk and is freed by the next recovery.
func (g *InodeGC) Err() error {
	if p := g.firstErr.Load(); p != nil {
		return *p
	}
	return nil
}

// work is the worker of queue q: it runs when kicked, takes everything
// queued and inactivates it in queue order.
func (g *InodeGC) work(q *queue) {
	defer g.workers.Done()
	for {
		select {
		case <-q.kick:
		case <-g.stop:
			g.drain(q) // Close flushed; anything later is drained too
			return
		}
		g.drain(q)
	}
}

// drain inactivates what q holds until it is empty.
func (g *InodeGC) drain(q *queue) {
	start := g.opt.Now()
	var total uint64
	for {
		q.armed.Store(false)
		batch := q.take()
		if len(batch) == 0 {
			break
		}
		total += uint64(len(batch))
		if b, ok := g.inact.(BatchInactivator); ok {
			// Oldest first, batchMax at a time, each counted as done
			// once all of it is: done stays a count in queue order.
			for len(batch) > 0 {
				n := min(len(batch), batchMax)
				g.inactivateBatch(&q.queueStats, b, batch[:n])
				q.finished(uint64(n))
				batch = batch[n:]
			}
			continue
		}
		// Inodes are counted as done a batch at a time, or one by one
		// while producers wait (throttled, or flushing), so that they
		// go on as soon as the backlog ahead of them allows.
		var n uint64
		for _, ino := range batch {
			g.inactivate(&q.queueStats, ino)
			if n++; q.waiters.Load() > 0 {
				q.finished(n)
				n = 0
			}
		}
		q.finished(n)
	}
	if took := g.opt.Now().Sub(start); g.opt.SlowDrain != nil && took > g.opt.SlowDrainAfter {
		g.opt.SlowDrain(q.id, took, total)
	}
}

func (g *InodeGC) inactivate(st *queueStats, ino uint64) {
	n, err := g.inact.Inactivate(ino)
	st.extents.Add(n)
	g.count(st, err)
}

func (g *InodeGC) inactivateBatch(st *queueStats, b BatchInactivator, inos []uint64) {
	n, errs := b.InactivateBatch(inos)
	st.extents.Add(n)
	for _, err := range errs {
		g.count(st, err)
	}
}

// count records one inode's inactivation outcome.
func (g *InodeGC) count(st *queueStats, err error) {
	if errors.Is(err, xfs.ErrSick) {
		// Damage in the inode or its AG: the inode stays on its
		// unlinked list for xfs_repair, and the volume's health
		// reports the damage; it is counted, but does not fail Close.
		st.errors.Add(1)
		return
	}
	if err != nil {
		st.errors.Add(1)
		first := err // taking err's own address would move every call's err to the heap
		g.firstErr.CompareAndSwap(nil, &first)
		return
	}
	st.inactivated.Add(1)
}
