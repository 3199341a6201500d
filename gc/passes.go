package gc

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The lifecycle scanner and the scrubber share one shape: passes made of
// bounded batches over a store, one pass at a time, every interval and on
// demand, each resuming from the cursor its store saved after the last
// batch, paced between batches by the shared pacer. passes is that shape,
// over the counts C a batch returns.

// Pass is one pass of a paced worker, running or done.
type Pass[C any] struct {
	ID       uint64
	OnDemand bool
	// Resumed: the pass went on from where one stopped before a restart.
	Resumed  bool
	Started  time.Time
	Ended    time.Time // zero while running
	Running  bool
	Batches  int64
	Counts   C
	Backoffs int64
	Backoff  time.Duration
	// Cursor is where the pass stands (the store's, opaque).
	Cursor string
	Err    string
}

// PassOptions configure a paced worker (LifecycleOptions, ScrubOptions);
// zero values take the worker's defaults.
type PassOptions[C any] struct {
	// Interval between the starts of scheduled passes; 0 runs none
	// (passes on demand only).
	Interval time.Duration
	// Busy counts the foreground's changes, as TrimOptions.Busy; a pass
	// pauses after each batch BackoffRatio times the batch's time while
	// it moves (within BusyWindow), kept in [BackoffMin, BackoffMax].
	Busy                   func() uint64
	BackoffRatio           float64
	BackoffMin, BackoffMax time.Duration
	BusyWindow             time.Duration
	// PassDone, when set, is called after every pass (for the log).
	PassDone func(Pass[C])
	// Now is the clock passes are timed with (and lifecycle rules judged
	// by); time.Now when nil.
	Now func() time.Time
}

// withDefaults fills the zero fields of o: the worker's pacing defaults,
// trim's busy window, time.Now.
func (o PassOptions[C]) withDefaults(ratio float64, lo, hi time.Duration) PassOptions[C] {
	if o.BackoffRatio <= 0 {
		o.BackoffRatio = ratio
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = lo
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = hi
	}
	if o.BusyWindow <= 0 {
		o.BusyWindow = DefaultTrimBusyWindow
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func (o PassOptions[C]) pacing() pacing {
	return pacing{o.Busy, o.BackoffRatio, o.BackoffMin, o.BackoffMax, o.BusyWindow, o.Now}
}

// Status is the pass under way, the last one that ended, and the totals
// since the worker started.
type Status[C any] struct {
	Interval       time.Duration
	Current, Last  *Pass[C]
	Passes, Failed uint64
	Totals         C
}

// counts is what a batch counts: a value that sums.
type counts[C any] interface {
	*C
	Add(C)
}

// batches is what passes need of a store.
type batches[C any] struct {
	batch func(ctx context.Context, cursor string) (next string, c C, err error)
	save  func(cursor string) error
	load  func() (string, error)
}

// passes runs the passes of one worker.
type passes[C any, PC counts[C]] struct {
	src      batches[C]
	interval time.Duration
	now      func() time.Time
	passDone func(Pass[C])
	closedEr error // what Start answers once closed
	pace     *pacer
	base     context.Context
	stop     context.CancelFunc
	wake     chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex // guards below
	closed   bool
	cur      *Pass[C]
	last     *Pass[C]
	status   Status[C]
	nextID   uint64
	onDemand bool // the next pass was asked for
}

// startPasses starts the worker's loop (opt has its defaults).
func startPasses[C any, PC counts[C]](src batches[C], opt PassOptions[C], closedErr error) *passes[C, PC] {
	p := &passes[C, PC]{src: src, interval: opt.Interval, now: opt.Now, passDone: opt.PassDone, closedEr: closedErr,
		pace: newPacer(opt.pacing()), wake: make(chan struct{}, 1)}
	p.base, p.stop = context.WithCancel(context.Background())
	p.status.Interval = opt.Interval
	p.wg.Add(1)
	go p.loop()
	return p
}

// Start asks for a pass now: it starts one, or, when one is under way,
// lets it be. It returns the pass under way or about to start.
func (p *passes[C, PC]) Start() (Pass[C], error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Pass[C]{}, p.closedEr
	}
	if p.cur != nil {
		return *p.cur, nil
	}
	p.onDemand = true
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return Pass[C]{ID: p.nextID + 1, OnDemand: true, Running: true}, nil
}

// loop runs a pass every interval, or when asked, until Close. With
// scheduled passes, a pass a restart interrupted goes on at once; with
// none (a tool that opened the store), nothing runs until asked.
func (p *passes[C, PC]) loop() {
	defer p.wg.Done()
	var tick <-chan time.Time
	if p.interval > 0 {
		t := time.NewTicker(p.interval)
		defer t.Stop()
		tick = t.C
		if cursor, err := p.src.load(); err == nil && cursor != "" {
			p.pass()
		}
	}
	for {
		select {
		case <-p.base.Done():
			return
		case <-tick:
		case <-p.wake:
		}
		p.pass()
	}
}

// pass runs one pass: on from the saved cursor when a pass was
// interrupted, else from the start.
func (p *passes[C, PC]) pass() {
	cursor, lerr := p.src.load()
	if lerr != nil {
		cursor = "" // an unreadable cursor: start over
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.nextID++
	ps := &Pass[C]{ID: p.nextID, OnDemand: p.onDemand, Resumed: cursor != "", Started: p.now(), Running: true, Cursor: cursor}
	p.onDemand = false
	p.cur = ps
	p.mu.Unlock()

	err := p.run(ps, cursor)

	p.mu.Lock()
	ps.Running, ps.Ended = false, p.now()
	if err != nil && !errors.Is(err, context.Canceled) {
		ps.Err = err.Error()
		p.status.Failed++
	}
	p.status.Passes++
	PC(&p.status.Totals).Add(ps.Counts)
	p.cur, p.last = nil, ps
	out := *ps
	p.mu.Unlock()
	if p.passDone != nil {
		p.passDone(out)
	}
}

func (p *passes[C, PC]) run(ps *Pass[C], cursor string) error {
	for {
		start := time.Now()
		next, c, err := p.src.batch(p.base, cursor)
		p.mu.Lock()
		ps.Batches++
		PC(&ps.Counts).Add(c)
		if err == nil {
			ps.Cursor = next
		}
		p.mu.Unlock()
		if err != nil {
			return err
		}
		if err := p.src.save(next); err != nil {
			return err
		}
		took := time.Since(start) // the batch's whole work, its save included
		if next == "" {
			return nil
		}
		cursor = next
		if d := p.pace.pause(p.base, took); d > 0 {
			p.mu.Lock()
			ps.Backoffs++
			ps.Backoff += d
			p.mu.Unlock()
		}
		if err := p.base.Err(); err != nil {
			return err
		}
	}
}

// Status returns the pass under way, the last one and the totals.
func (p *passes[C, PC]) Status() Status[C] {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.status
	if p.cur != nil {
		c := *p.cur
		st.Current = &c
	}
	if p.last != nil {
		c := *p.last
		st.Last = &c
	}
	return st
}

// Close stops the pass under way after its batch and waits; the cursor
// saved lets the next start resume it. It is idempotent.
func (p *passes[C, PC]) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.stop()
	p.wg.Wait()
}
