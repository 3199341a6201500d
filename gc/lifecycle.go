package gc

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Expirer is what the lifecycle scanner needs of a store: bounded
// batches of a pass over the buckets that have lifecycle rules, and a
// place to keep where a pass stands across restarts.
type Expirer interface {
	// ExpireBatch does one batch of a pass from cursor ("" starts a
	// pass) judged at now, and returns the cursor of the next batch (""
	// when the pass has ended) and what the batch did. A batch looks at
	// a bounded number of versions and uploads.
	ExpireBatch(ctx context.Context, cursor string, now time.Time) (next string, c LifecycleCounts, err error)
	// SaveCursor records cursor durably; LoadCursor returns the last
	// one saved ("" when none, or when the last pass ended).
	SaveCursor(cursor string) error
	LoadCursor() (string, error)
}

// LifecycleCounts is what lifecycle passes did.
type LifecycleCounts struct {
	Scanned  int64 // versions and uploads looked at
	Expired  int64 // current objects expired: deleted, or a delete marker put on top
	Versions int64 // noncurrent versions (and noncurrent markers) deleted
	Markers  int64 // expired delete markers (nothing left below) removed
	Uploads  int64 // abandoned multipart uploads aborted
	// Locked counts expiries object lock refused: the version stays.
	Locked     int64
	BytesFreed int64 // bytes of the objects and versions deleted
	Errors     int64 // expiries that failed otherwise (the pass goes on)
}

// Add adds o to c.
func (c *LifecycleCounts) Add(o LifecycleCounts) {
	c.Scanned += o.Scanned
	c.Expired += o.Expired
	c.Versions += o.Versions
	c.Markers += o.Markers
	c.Uploads += o.Uploads
	c.Locked += o.Locked
	c.BytesFreed += o.BytesFreed
	c.Errors += o.Errors
}

// Lifecycle scanner defaults.
const (
	// DefaultLifecycleBackoffRatio: while the foreground changes things,
	// a pass pauses 39 times as long as each batch took, so it works a
	// fortieth of the time. A batch costs the writers more than its own
	// time (its deletes' inode frees run on the gc workers, its listing
	// and cursor save contend for the same locks and log): at 9, 14 and
	// 24, 8 PUT writers lost a median around 10%, with rounds past 20%
	// (docs/benchmarks.md, Lifecycle); at 39 a median of 3.8%. With no
	// writers a pass does not pause at all.
	DefaultLifecycleBackoffRatio = 39
	DefaultLifecycleBackoffMin   = 5 * time.Millisecond
	DefaultLifecycleBackoffMax   = 2 * time.Second
)

// LifecycleOptions configure a Lifecycle scanner; zero values take the
// defaults.
type LifecycleOptions struct {
	// Interval between the starts of scheduled passes; 0 runs none
	// (passes on demand only).
	Interval time.Duration
	// Busy counts the foreground's changes, as TrimOptions.Busy; the
	// pass pauses after each batch BackoffRatio times the batch's time
	// while it moves (within BusyWindow), kept in [BackoffMin,
	// BackoffMax].
	Busy                   func() uint64
	BackoffRatio           float64
	BackoffMin, BackoffMax time.Duration
	BusyWindow             time.Duration
	// PassDone, when set, is called after every pass (for the log).
	PassDone func(LifecyclePass)
	// Now is the clock rules are judged by and passes timed with
	// (time.Now when nil).
	Now func() time.Time
}

// LifecyclePass is one pass, running or done.
type LifecyclePass struct {
	ID       uint64
	OnDemand bool
	// Resumed: the pass went on from where one stopped before a restart.
	Resumed  bool
	Started  time.Time
	Ended    time.Time // zero while running
	Running  bool
	Batches  int64
	Counts   LifecycleCounts
	Backoffs int64
	Backoff  time.Duration
	Err      string
}

// LifecycleStatus is the pass under way, the last one that ended, and
// the totals since the scanner started.
type LifecycleStatus struct {
	Interval       time.Duration
	Current, Last  *LifecyclePass
	Passes, Failed uint64
	Totals         LifecycleCounts
}

// ErrLifecycleClosed: the scanner (its store) is closing.
var ErrLifecycleClosed = errors.New("the lifecycle scanner is closed")

// Lifecycle runs lifecycle passes one at a time: every Interval, and on
// demand (Start). A pass resumes from the cursor its Expirer saved, so a
// restart in the middle of a pass goes on where it stopped. Close stops
// the pass under way (its cursor is saved after each batch) and waits.
type Lifecycle struct {
	exp  Expirer
	opt  LifecycleOptions
	pace *pacer
	base context.Context
	stop context.CancelFunc
	wake chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex // guards below
	closed   bool
	cur      *LifecyclePass
	last     *LifecyclePass
	status   LifecycleStatus
	nextID   uint64
	onDemand bool // the next pass was asked for
}

// NewLifecycle starts a scanner over e; Close it before the store.
func NewLifecycle(e Expirer, opt LifecycleOptions) *Lifecycle {
	if opt.BackoffRatio <= 0 {
		opt.BackoffRatio = DefaultLifecycleBackoffRatio
	}
	if opt.BackoffMin <= 0 {
		opt.BackoffMin = DefaultLifecycleBackoffMin
	}
	if opt.BackoffMax <= 0 {
		opt.BackoffMax = DefaultLifecycleBackoffMax
	}
	if opt.BusyWindow <= 0 {
		opt.BusyWindow = DefaultTrimBusyWindow
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	l := &Lifecycle{exp: e, opt: opt, wake: make(chan struct{}, 1)}
	l.pace = newPacer(pacing{opt.Busy, opt.BackoffRatio, opt.BackoffMin, opt.BackoffMax, opt.BusyWindow, opt.Now})
	l.base, l.stop = context.WithCancel(context.Background())
	l.status.Interval = opt.Interval
	l.wg.Add(1)
	go l.loop()
	return l
}

// Start asks for a pass now: it starts one, or, when one is under way,
// lets it be. It returns the pass under way or about to start.
func (l *Lifecycle) Start() (LifecyclePass, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return LifecyclePass{}, ErrLifecycleClosed
	}
	if l.cur != nil {
		return *l.cur, nil
	}
	l.onDemand = true
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return LifecyclePass{ID: l.nextID + 1, OnDemand: true, Running: true}, nil
}

// loop runs a pass every Interval, or when asked, until Close. With
// scheduled passes, a pass a restart interrupted goes on at once; with
// none (a tool that opened the store), nothing runs until asked.
func (l *Lifecycle) loop() {
	defer l.wg.Done()
	var tick <-chan time.Time
	if l.opt.Interval > 0 {
		t := time.NewTicker(l.opt.Interval)
		defer t.Stop()
		tick = t.C
		if cursor, err := l.exp.LoadCursor(); err == nil && cursor != "" {
			l.pass()
		}
	}
	for {
		select {
		case <-l.base.Done():
			return
		case <-tick:
		case <-l.wake:
		}
		l.pass()
	}
}

// pass runs one pass: on from the saved cursor when a pass was
// interrupted, else from the start.
func (l *Lifecycle) pass() {
	cursor, lerr := l.exp.LoadCursor()
	if lerr != nil {
		cursor = "" // an unreadable cursor: start over
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.nextID++
	p := &LifecyclePass{ID: l.nextID, OnDemand: l.onDemand, Resumed: cursor != "", Started: l.opt.Now(), Running: true}
	l.onDemand = false
	l.cur = p
	l.mu.Unlock()

	err := l.run(p, cursor)

	l.mu.Lock()
	p.Running, p.Ended = false, l.opt.Now()
	if err != nil && !errors.Is(err, context.Canceled) {
		p.Err = err.Error()
		l.status.Failed++
	}
	l.status.Passes++
	l.status.Totals.Add(p.Counts)
	l.cur, l.last = nil, p
	out := *p
	l.mu.Unlock()
	if l.opt.PassDone != nil {
		l.opt.PassDone(out)
	}
}

func (l *Lifecycle) run(p *LifecyclePass, cursor string) error {
	for {
		start := time.Now()
		next, c, err := l.exp.ExpireBatch(l.base, cursor, l.opt.Now())
		l.mu.Lock()
		p.Batches++
		p.Counts.Add(c)
		l.mu.Unlock()
		if err != nil {
			return err
		}
		if err := l.exp.SaveCursor(next); err != nil {
			return err
		}
		took := time.Since(start) // the batch's whole work, its save included
		if next == "" {
			return nil
		}
		cursor = next
		if d := l.pace.pause(l.base, took); d > 0 {
			l.mu.Lock()
			p.Backoffs++
			p.Backoff += d
			l.mu.Unlock()
		}
		if err := l.base.Err(); err != nil {
			return err
		}
	}
}

// Status returns the pass under way, the last one and the totals.
func (l *Lifecycle) Status() LifecycleStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.status
	if l.cur != nil {
		c := *l.cur
		st.Current = &c
	}
	if l.last != nil {
		c := *l.last
		st.Last = &c
	}
	return st
}

// Close stops the pass under way after its batch and waits; the cursor
// saved lets the next start resume it. It is idempotent.
func (l *Lifecycle) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.stop()
	l.wg.Wait()
}
