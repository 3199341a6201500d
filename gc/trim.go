package gc

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/xfs3/xfs3/xfs"
)

// Trimmable is what the trim scheduler needs of the engine: passes over
// byte ranges, the per-AG backlog of space freed since it was trimmed,
// and where each AG lies in bytes (the last one may be shorter).
type Trimmable interface {
	Trim(ctx context.Context, o xfs.TrimOptions) (xfs.TrimStats, error)
	TrimBacklog() []int64
	AGRange(ag int) (off, length int64)
}

// Trim scheduler defaults.
const (
	// DefaultTrimPassBytes bounds what one scheduled pass discards, so a
	// pass after a large delete (or the first after open, when the whole
	// volume counts as freed) ends within seconds and the next interval
	// carries on where it stopped.
	DefaultTrimPassBytes = 4 << 30
	// DefaultTrimBackoffRatio: while the foreground changes things, a
	// pass pauses nine times as long as each discard request took, so it
	// keeps the storage at most a tenth of the time. A discard is a
	// metadata change of the storage underneath (a punched hole is a
	// journalled change of the host file system that holds the volume
	// file's inode lock) and stalls the volume's writes and flushes while
	// it runs: pacing by the time requests take bounds that share
	// whatever a discard costs on the storage at hand, and pausing after
	// every request (not after a batch of up to 100) keeps any one write
	// from waiting behind more than one request.
	DefaultTrimBackoffRatio = 9
	// DefaultTrimBackoffMin is the shortest pause after a request while
	// the foreground is busy.
	DefaultTrimBackoffMin = 2 * time.Millisecond
	// DefaultTrimBackoffMax bounds the pause after one request, so a pass
	// still progresses under a writer that never stops.
	DefaultTrimBackoffMax = time.Second
	// DefaultTrimBusyWindow: the foreground counts as busy until its
	// change counter has stood still this long. Group commit finishes
	// writers in bursts some 20 ms apart, so a look between two requests
	// a few milliseconds apart often sees nothing move under a busy
	// foreground.
	DefaultTrimBusyWindow = 100 * time.Millisecond
)

// TrimOptions configure a Trimmer; zero values take the defaults.
type TrimOptions struct {
	// Interval between scheduled passes; 0 runs none (passes on demand
	// only).
	Interval time.Duration
	// PassBytes bounds the bytes a scheduled pass discards.
	PassBytes int64
	// MinLen is the scheduled passes' minimum extent length in bytes.
	MinLen int64
	// RequestBytes and BatchBytes shape every pass's discards (0: the
	// engine's defaults, xfs.DefaultTrimRequestBytes, 4 MiB, and
	// xfs.DefaultTrimBatchBytes, 16 MiB): the longest a write waits
	// behind one request, and the free space one batch holds busy.
	RequestBytes, BatchBytes int64
	// Busy counts the foreground's changes (monotonic; nil: never busy).
	// When it moved within BusyWindow, the pass pauses after each discard
	// request BackoffRatio times the request's time, kept within
	// [BackoffMin, BackoffMax]. Scheduled and on-demand passes are paced
	// alike: a pass an operator starts on a busy server must not stall
	// its writers either, and at full speed whenever they rest.
	Busy                   func() uint64
	BackoffRatio           float64
	BackoffMin, BackoffMax time.Duration
	BusyWindow             time.Duration
	// PassDone, when set, is called after every pass (for the log).
	PassDone func(TrimPass)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// TrimRequest is an on-demand pass: a byte range of the volume (Length 0:
// to the end) and the shortest free extent worth discarding.
type TrimRequest struct {
	Offset, Length, MinLen int64
}

// TrimPass is one pass, running or done.
type TrimPass struct {
	ID        uint64
	Scheduled bool // else on demand
	Request   TrimRequest
	Started   time.Time
	Ended     time.Time // zero while running
	Running   bool
	Canceled  bool
	// AG and Offset are where the walk is (or stopped); From and To the
	// range of the engine call under way.
	AG               int
	Offset, From, To int64
	// Stats add up the pass's engine calls (a scheduled pass makes one
	// per AG); LockHoldP99 is the largest of their p99s.
	Stats xfs.TrimStats
	// Backoffs count the pauses for foreground changes (one at most per
	// discard request), Backoff their total length.
	Backoffs int64
	Backoff  time.Duration
	Err      string
}

// TrimCounters are the scheduler's totals since it started.
type TrimCounters struct {
	Interval  time.Duration
	PassBytes int64
	// Passes ended (scheduled and on demand), those cancelled and those
	// that failed.
	Passes, OnDemand, Canceled, Failed uint64
	ExaminedBytes, DiscardedBytes      int64
	DiscardedExtents, Batches, Errors  int64
	LockHoldMax, LockHoldP99           time.Duration
	Backoffs                           int64
	Backoff                            time.Duration
	// Unsupported: the device cannot discard; scheduled passes stopped.
	Unsupported bool
	// Backlog is the bytes freed since last trimmed (all AGs).
	Backlog int64
}

// TrimStatus is what GET shows: the pass under way (if any), the last
// one that ended, the last on-demand one that ended (scheduled passes,
// which may end every second, would soon hide it from Last), and the
// counters.
type TrimStatus struct {
	Current      *TrimPass
	Last         *TrimPass
	LastOnDemand *TrimPass
	Counters     TrimCounters
}

// Trim scheduler errors.
var (
	// ErrTrimRunning: an on-demand pass is already running.
	ErrTrimRunning = errors.New("a trim pass on demand is already running")
	// ErrTrimClosed: the scheduler (its store) is closing.
	ErrTrimClosed = errors.New("the trim scheduler is closed")
)

// Trimmer runs trim passes: every Interval a scheduled pass, and passes on
// demand (Start, Run). Passes run one at a time: an on-demand pass
// cancels a scheduled one, which resumes at the next interval where it
// stopped. Close cancels the pass under way and waits for it.
type Trimmer struct {
	vol  Trimmable
	opt  TrimOptions
	base context.Context // cancelled by Close
	stop context.CancelFunc
	wake chan struct{} // capacity 1: the loop looks at its state again
	wg   sync.WaitGroup
	pace *pacer // shared by the passes, which run one at a time

	// mu guards everything below.
	mu           sync.Mutex
	closed       bool
	cur          *TrimPass          // the pass under way, nil when none
	cancel       context.CancelFunc // cancels cur
	manual       bool               // an on-demand pass is running or starting
	last         *TrimPass
	lastOnDemand *TrimPass
	counters     TrimCounters
	nextID       uint64
	// The round-robin cursor: the AG the next scheduled pass starts in,
	// and the byte offset in it where the last one stopped (0: none).
	nextAG    int
	resumeOff int64
}

// NewTrimmer starts a scheduler over v (its loop runs only when Interval
// is set); Close it before the volume.
func NewTrimmer(v Trimmable, opt TrimOptions) *Trimmer {
	if opt.PassBytes <= 0 {
		opt.PassBytes = DefaultTrimPassBytes
	}
	if opt.BackoffRatio <= 0 {
		opt.BackoffRatio = DefaultTrimBackoffRatio
	}
	if opt.BackoffMin <= 0 {
		opt.BackoffMin = DefaultTrimBackoffMin
	}
	if opt.BackoffMax <= 0 {
		opt.BackoffMax = DefaultTrimBackoffMax
	}
	if opt.BusyWindow <= 0 {
		opt.BusyWindow = DefaultTrimBusyWindow
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	t := &Trimmer{vol: v, opt: opt, wake: make(chan struct{}, 1)}
	t.pace = newPacer(pacing{opt.Busy, opt.BackoffRatio, opt.BackoffMin, opt.BackoffMax, opt.BusyWindow, opt.Now})
	t.base, t.stop = context.WithCancel(context.Background())
	t.counters.Interval, t.counters.PassBytes = opt.Interval, opt.PassBytes
	if opt.Interval > 0 {
		t.wg.Add(1)
		go t.loop()
	}
	return t
}

// StartTrimmer runs a scheduler over an engine volume.
func StartTrimmer(v *xfs.Volume, opt TrimOptions) *Trimmer {
	return NewTrimmer(Volume{v}, opt)
}

// Kick runs a scheduled pass now rather than at the next interval.
func (t *Trimmer) Kick() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// loop runs a scheduled pass every Interval (or when kicked) until Close.
func (t *Trimmer) loop() {
	defer t.wg.Done()
	timer := time.NewTimer(t.opt.Interval)
	defer timer.Stop()
	for {
		select {
		case <-t.base.Done():
			return
		case <-timer.C:
		case <-t.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		t.scheduled()
		timer.Reset(t.opt.Interval)
	}
}

// Close cancels the pass under way, stops the scheduler and waits for
// every pass to end. It is idempotent.
func (t *Trimmer) Close() {
	t.mu.Lock()
	t.closed = true
	if t.cancel != nil {
		t.cancel()
	}
	t.mu.Unlock()
	t.stop()
	t.wg.Wait()
}

// Status returns the pass under way, the last one and the counters
// (after Close, without the backlog: the volume may be closed).
func (t *Trimmer) Status() TrimStatus {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	var backlog []int64
	if !closed {
		backlog = t.vol.TrimBacklog()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := TrimStatus{Counters: t.counters}
	if t.cur != nil {
		c := *t.cur
		st.Current = &c
	}
	if t.last != nil {
		l := *t.last
		st.Last = &l
	}
	if t.lastOnDemand != nil {
		l := *t.lastOnDemand
		st.LastOnDemand = &l
	}
	for _, b := range backlog {
		st.Counters.Backlog += b
	}
	return st
}

// Cancel cancels the pass under way and reports whether there was one.
func (t *Trimmer) Cancel() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return false
	}
	t.cur.Canceled = true
	t.cancel()
	return true
}

// begin claims the pass slot for a new pass: an on-demand pass cancels a
// scheduled one under way and waits for it to end (the engine runs passes
// one at a time); a scheduled pass gives way to anything under way.
func (t *Trimmer) begin(ctx context.Context, scheduled bool, req TrimRequest) (*TrimPass, context.Context, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return nil, nil, ErrTrimClosed
	case t.manual:
		return nil, nil, ErrTrimRunning
	case scheduled && t.cur != nil:
		return nil, nil, nil
	}
	if !scheduled {
		t.manual = true
		for t.cur != nil { // a scheduled pass: make way
			t.cancel()
			t.mu.Unlock()
			time.Sleep(time.Millisecond)
			t.mu.Lock()
		}
		if t.closed {
			t.manual = false
			return nil, nil, ErrTrimClosed
		}
	}
	t.nextID++
	p := &TrimPass{ID: t.nextID, Scheduled: scheduled, Request: req, Started: t.opt.Now(), Running: true}
	ctx, cancel := context.WithCancel(ctx)
	stopWithClose := context.AfterFunc(t.base, cancel)
	t.cur, t.cancel = p, func() { cancel(); stopWithClose() }
	return p, ctx, nil
}

// end records a pass that ended and adds it to the counters.
func (t *Trimmer) end(p *TrimPass, err error) TrimPass {
	t.mu.Lock()
	p.Running = false
	p.Ended = t.opt.Now()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			p.Canceled = true
		} else {
			p.Err = err.Error()
		}
	}
	c := &t.counters
	c.Passes++
	if !p.Scheduled {
		c.OnDemand++
		t.manual = false
	}
	if p.Canceled {
		c.Canceled++
	}
	if p.Err != "" {
		c.Failed++
	}
	if p.Stats.Unsupported {
		c.Unsupported = true
	}
	c.ExaminedBytes += p.Stats.ExaminedBytes
	c.DiscardedBytes += p.Stats.DiscardedBytes
	c.DiscardedExtents += p.Stats.DiscardedExtents
	c.Batches += p.Stats.Batches
	c.Errors += p.Stats.Errors
	c.LockHoldMax = max(c.LockHoldMax, p.Stats.LockHoldMax)
	c.LockHoldP99 = max(c.LockHoldP99, p.Stats.LockHoldP99)
	c.Backoffs += p.Backoffs
	c.Backoff += p.Backoff
	t.cancel()
	t.cur, t.cancel, t.last = nil, nil, p
	if !p.Scheduled {
		t.lastOnDemand = p
	}
	out := *p
	t.mu.Unlock()
	if t.opt.PassDone != nil {
		t.opt.PassDone(out)
	}
	return out
}

// Run runs an on-demand pass in the caller's goroutine and returns it;
// progress, when set, is called after every batch. ErrTrimRunning when
// another on-demand pass runs.
func (t *Trimmer) Run(ctx context.Context, req TrimRequest, progress func(TrimPass)) (TrimPass, error) {
	p, ctx, err := t.begin(ctx, false, req)
	if err != nil {
		return TrimPass{}, err
	}
	err = t.runManual(ctx, p, progress, nil)
	return t.end(p, err), err
}

// Start starts an on-demand pass in the background and returns it as it
// is after its first batch or its first discard request that succeeded,
// whichever comes first (a paced pass may pause within its first batch),
// or its error if it failed sooner (a range outside the volume, a device
// that cannot discard). Cancel stops it; Status
// follows it.
func (t *Trimmer) Start(req TrimRequest) (TrimPass, error) {
	p, ctx, err := t.begin(t.base, false, req)
	if err != nil {
		return TrimPass{}, err
	}
	first := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(first) }) }
	var res error
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		err := t.runManual(ctx, p, func(TrimPass) { signal() }, signal)
		res = err
		t.end(p, err)
		signal()
	}()
	<-first
	t.mu.Lock()
	defer t.mu.Unlock()
	if !p.Running && res != nil && !errors.Is(res, context.Canceled) {
		return *p, res
	}
	return *p, nil
}

// runManual is an on-demand pass: one engine call over the request;
// discarded, when set, is called after every discard request that
// succeeded.
func (t *Trimmer) runManual(ctx context.Context, p *TrimPass, progress func(TrimPass), discarded func()) error {
	req := p.Request
	st, err := t.vol.Trim(ctx, xfs.TrimOptions{Offset: req.Offset, Length: req.Length, MinLen: req.MinLen,
		RequestBytes: t.opt.RequestBytes, BatchBytes: t.opt.BatchBytes,
		Progress: t.progress(p, xfs.TrimStats{}, progress), AfterRequest: t.afterRequest(ctx, p, discarded)})
	t.mu.Lock()
	p.Stats = st
	p.Offset = st.Next
	t.mu.Unlock()
	return err
}

// progress returns the engine's Progress callback for pass p: it records
// where the pass is (its stats added to done, what earlier engine calls
// of the pass did) and reports it. It runs with no engine lock held.
func (t *Trimmer) progress(p *TrimPass, done xfs.TrimStats, report func(TrimPass)) func(xfs.TrimProgress) {
	return func(pr xfs.TrimProgress) {
		t.mu.Lock()
		p.AG, p.Offset, p.From, p.To = int(pr.AG), pr.Offset, pr.From, pr.To
		p.Stats = addTrimStats(done, pr.Stats)
		snap := *p
		t.mu.Unlock()
		if report != nil {
			report(snap)
		}
	}
}

// afterRequest returns the engine's AfterRequest callback for pass p: it
// calls discarded (when set) after a request that succeeded, then paces
// the pass while the foreground is busy and counts the pauses. It runs on
// the engine's discard goroutine, with no engine lock held.
func (t *Trimmer) afterRequest(ctx context.Context, p *TrimPass, discarded func()) func(int64, time.Duration, error) {
	return func(_ int64, took time.Duration, err error) {
		if err == nil && discarded != nil {
			discarded()
		}
		if d := t.pace.pause(ctx, took); d > 0 {
			t.mu.Lock()
			p.Backoffs++
			p.Backoff += d
			t.mu.Unlock()
		}
	}
}

// pacing is how a background pass gives way to the foreground: with
// the change counter busy moved within window, pause ratio times as long
// as each piece of work took, within [lo, hi] (backoffPause).
type pacing struct {
	busy           func() uint64
	ratio          float64
	lo, hi, window time.Duration
	now            func() time.Time
}

// pacer watches the foreground's change counter between pieces of a
// background pass (trim's discard requests, lifecycle's batches).
type pacer struct {
	opt pacing

	mu    sync.Mutex // guards below: requests of one pass follow each other on changing goroutines
	busy  uint64     // the change counter when last looked at
	moved time.Time  // when it was last seen to move; zero: never
}

func newPacer(opt pacing) *pacer {
	pc := &pacer{opt: opt}
	if opt.busy != nil {
		pc.busy = opt.busy()
	}
	return pc
}

// observe notes the change counter at now and says whether the
// foreground is busy: it moved within the busy window.
func (pc *pacer) observe(now time.Time, busy uint64) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if busy != pc.busy {
		pc.busy, pc.moved = busy, now
	}
	return !pc.moved.IsZero() && now.Sub(pc.moved) < pc.opt.window
}

// pause sleeps after a request that took took as backoffPause says (until
// ctx is done) and returns how long it slept.
func (pc *pacer) pause(ctx context.Context, took time.Duration) time.Duration {
	o := pc.opt
	if o.busy == nil {
		return 0
	}
	d := backoffPause(took, pc.observe(o.now(), o.busy()), o.ratio, o.lo, o.hi)
	if d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
	return d
}

// backoffPause is the pacing policy: after a discard request, with the
// foreground busy, pause ratio times as long as the request took, within
// [lo, hi]; with the foreground still, do not pause. A request's time
// stands for what it cost the storage, so a pass under a busy foreground
// keeps at most 1/(1+ratio) of the time; hi bounds the pause so the pass
// still advances.
func backoffPause(work time.Duration, busy bool, ratio float64, lo, hi time.Duration) time.Duration {
	if !busy {
		return 0
	}
	return min(max(time.Duration(float64(work)*ratio), lo), hi)
}

// scheduled runs one scheduled pass, unless something else runs, the
// device cannot discard or nothing was freed since the last.
func (t *Trimmer) scheduled() {
	t.mu.Lock()
	skip := t.counters.Unsupported
	t.mu.Unlock()
	backlog := t.vol.TrimBacklog()
	var total int64
	for _, b := range backlog {
		total += b
	}
	if skip || total == 0 {
		return
	}
	p, ctx, err := t.begin(t.base, true, TrimRequest{MinLen: t.opt.MinLen})
	if p == nil || err != nil {
		return
	}
	err = t.runScheduled(ctx, p, backlog)
	t.end(p, err)
}

// runScheduled walks the AGs round-robin from the cursor, each with
// backlog over what was freed since last trimmed, until PassBytes are
// discarded; where it stops is where the next pass starts.
func (t *Trimmer) runScheduled(ctx context.Context, p *TrimPass, backlog []int64) error {
	n := len(backlog)
	t.mu.Lock()
	start, resume := t.nextAG%n, t.resumeOff
	t.mu.Unlock()
	budget := t.opt.PassBytes
	var done xfs.TrimStats
	for i := 0; i < n && budget > 0; i++ {
		ag := (start + i) % n
		if backlog[ag] == 0 {
			continue
		}
		off, length := t.vol.AGRange(ag)
		end := off + length
		if i == 0 && resume > off && resume < end {
			off = resume
		}
		st, err := t.vol.Trim(ctx, xfs.TrimOptions{Offset: off, Length: end - off, MinLen: t.opt.MinLen,
			OnlyFreed: true, MaxBytes: budget, RequestBytes: t.opt.RequestBytes, BatchBytes: t.opt.BatchBytes,
			Progress: t.progress(p, done, nil), AfterRequest: t.afterRequest(ctx, p, nil)})
		done = addTrimStats(done, st)
		t.mu.Lock()
		p.Stats = done
		if st.Next < end || err != nil {
			t.nextAG, t.resumeOff = ag, st.Next
		} else {
			t.nextAG, t.resumeOff = (ag+1)%n, 0
		}
		t.mu.Unlock()
		if err != nil {
			return err
		}
		budget -= st.DiscardedBytes
	}
	return nil
}

// addTrimStats adds b's counts to a's; maxima and p99s take the larger.
func addTrimStats(a, b xfs.TrimStats) xfs.TrimStats {
	a.ExaminedBytes += b.ExaminedBytes
	a.ExaminedExtents += b.ExaminedExtents
	a.BusyBytes += b.BusyBytes
	a.ShortBytes += b.ShortBytes
	a.DiscardedBytes += b.DiscardedBytes
	a.DiscardedExtents += b.DiscardedExtents
	a.UnalignedBytes += b.UnalignedBytes
	a.Requests += b.Requests
	a.Errors += b.Errors
	a.RequestMax = max(a.RequestMax, b.RequestMax)
	if a.FirstError == "" {
		a.FirstError = b.FirstError
	}
	a.Unsupported = a.Unsupported || b.Unsupported
	a.Batches += b.Batches
	a.LockHoldMax = max(a.LockHoldMax, b.LockHoldMax)
	a.LockHoldP99 = max(a.LockHoldP99, b.LockHoldP99)
	a.Elapsed += b.Elapsed
	a.Next = b.Next
	return a
}
