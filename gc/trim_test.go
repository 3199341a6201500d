package gc

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
)

// fakeTrim is a volume of equal AGs whose freed-but-untrimmed bytes sit
// at the start of each AG; a pass discards them batch by batch.
type fakeTrim struct {
	agBytes, batch int64
	took           time.Duration // what each batch's one request reports
	// gate, when set, is received from before every batch (tests hold a
	// pass in place with it).
	gate chan struct{}

	mu      sync.Mutex
	backlog []int64
	calls   []xfs.TrimOptions
	unsupp  bool
}

func newFakeTrim(ags int, agBytes, batch int64) *fakeTrim {
	return &fakeTrim{agBytes: agBytes, batch: batch, backlog: make([]int64, ags)}
}

func (f *fakeTrim) free(ag int, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.backlog[ag] += n
}

func (f *fakeTrim) TrimBacklog() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.backlog...)
}

func (f *fakeTrim) AGRange(ag int) (int64, int64) { return int64(ag) * f.agBytes, f.agBytes }

func (f *fakeTrim) Trim(ctx context.Context, o xfs.TrimOptions) (xfs.TrimStats, error) {
	f.mu.Lock()
	f.calls = append(f.calls, o)
	f.mu.Unlock()
	st := xfs.TrimStats{Next: o.Offset}
	if f.unsupp {
		st.Unsupported = true
		return st, xfs.ErrDiscardUnsupported
	}
	end := o.Offset + o.Length
	if o.Length == 0 {
		end = int64(len(f.backlog)) * f.agBytes
	}
	for ag := int(o.Offset / f.agBytes); int64(ag)*f.agBytes < end; ag++ {
		for {
			if f.gate != nil {
				select {
				case <-f.gate:
				case <-ctx.Done():
					return st, ctx.Err()
				}
			}
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if o.MaxBytes > 0 && st.DiscardedBytes >= o.MaxBytes {
				return st, nil
			}
			f.mu.Lock()
			n := min(f.batch, f.backlog[ag])
			f.backlog[ag] -= n
			f.mu.Unlock()
			if n == 0 {
				break
			}
			st.DiscardedBytes += n
			st.DiscardedExtents++
			st.Batches++
			st.Next = int64(ag)*f.agBytes + 1 // somewhere inside the AG
			st.Requests++
			if o.AfterRequest != nil {
				o.AfterRequest(n, f.took, nil)
			}
			if o.Progress != nil {
				o.Progress(xfs.TrimProgress{AG: 0, Offset: st.Next, From: o.Offset, To: end, Stats: st})
			}
		}
	}
	st.Next = end
	return st, nil
}

func (f *fakeTrim) callsSoFar() []xfs.TrimOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]xfs.TrimOptions(nil), f.calls...)
}

func TestTrimIntervalRunsPasses(t *testing.T) {
	f := newFakeTrim(4, 1<<20, 4096)
	f.free(2, 64<<10)
	passes := make(chan TrimPass, 16)
	tr := NewTrimmer(f, TrimOptions{Interval: 10 * time.Millisecond, PassDone: func(p TrimPass) { passes <- p }})
	defer tr.Close()
	p := <-passes
	if !p.Scheduled || p.Stats.DiscardedBytes != 64<<10 || p.Running || p.Err != "" {
		t.Fatalf("first pass %+v", p)
	}
	// Nothing freed since: the next intervals run no pass.
	time.Sleep(50 * time.Millisecond)
	if n := len(passes); n != 0 {
		t.Fatalf("%d passes with an empty backlog", n)
	}
	f.free(0, 8192)
	if p := <-passes; p.Stats.DiscardedBytes != 8192 {
		t.Fatalf("second pass %+v", p)
	}
	c := tr.Status().Counters
	if c.Passes != 2 || c.DiscardedBytes != 72<<10 || c.Interval != 10*time.Millisecond {
		t.Fatalf("counters %+v", c)
	}
}

func TestTrimIntervalZeroRunsNoPass(t *testing.T) {
	f := newFakeTrim(2, 1<<20, 4096)
	f.free(0, 4096)
	tr := NewTrimmer(f, TrimOptions{})
	tr.Kick() // no loop: nothing happens
	time.Sleep(20 * time.Millisecond)
	tr.Close()
	if n := len(f.callsSoFar()); n != 0 {
		t.Fatalf("%d engine calls with no interval", n)
	}
}

// TestTrimBudgetRoundRobin: a pass stops at its budget, and the next
// starts where it stopped, then goes on to the following AGs in turn.
func TestTrimBudgetRoundRobin(t *testing.T) {
	f := newFakeTrim(4, 1<<20, 4096)
	for ag := range 4 {
		f.free(ag, 16384)
	}
	tr := NewTrimmer(f, TrimOptions{PassBytes: 3 * 4096})
	defer tr.Close()
	steps := []struct {
		discarded int64
		firstCall int64 // Offset of the pass's first engine call
	}{
		{12288, 0},          // AG 0: 3 of 4 batches
		{12288, 1},          // resumes in AG 0 (fake's Next), then AG 1: 2
		{12288, 1<<20 + 1},  // resumes in AG 1, then AG 2: 1
		{12288, 2<<20 + 1},  // AG 2's last 3
		{4096 * 4, 3 << 20}, // AG 3 whole... budget 3: 3 of 4
	}
	steps[4].discarded = 12288
	for i, s := range steps {
		before := len(f.callsSoFar())
		tr.scheduled()
		st := tr.Status()
		if st.Last == nil || st.Last.Stats.DiscardedBytes != s.discarded {
			t.Fatalf("pass %d: %+v", i, st.Last)
		}
		if c := f.callsSoFar()[before]; c.Offset != s.firstCall || !c.OnlyFreed {
			t.Fatalf("pass %d: first call %+v, want offset %d", i, c, s.firstCall)
		}
	}
	if b := tr.Status().Counters.Backlog; b != 4096 {
		t.Fatalf("backlog %d after 60 KiB of 64 KiB", b)
	}
}

func TestTrimBackOffPolicy(t *testing.T) {
	const lo, hi = 2 * time.Millisecond, time.Second
	for _, c := range []struct {
		work time.Duration
		busy bool
		want time.Duration
	}{
		{10 * time.Millisecond, false, 0},                    // foreground still: no pause
		{time.Second, false, 0},                              // however long the request took
		{10 * time.Millisecond, true, 90 * time.Millisecond}, // nine times the request
		{100 * time.Microsecond, true, lo},                   // at least lo
		{0, true, lo},
		{200 * time.Millisecond, true, hi}, // at most hi
	} {
		if got := backoffPause(c.work, c.busy, 9, lo, hi); got != c.want {
			t.Errorf("backoffPause(%v, busy %v) = %v, want %v", c.work, c.busy, got, c.want)
		}
	}
}

// TestTrimBacksOffWhileBusy: while the foreground counter moves, a pass
// pauses after each discard request (at least BackoffMin); when it is
// still, it does not pause at all.
func TestTrimBacksOffWhileBusy(t *testing.T) {
	f := newFakeTrim(1, 1<<20, 4096)
	f.free(0, 4*4096)
	var changes atomic.Uint64
	busy := func() uint64 { return changes.Add(1) } // a writer that never stops
	tr := NewTrimmer(f, TrimOptions{Busy: busy, BackoffMin: 5 * time.Millisecond, BackoffMax: 5 * time.Millisecond})
	p, err := tr.Run(context.Background(), TrimRequest{}, nil)
	tr.Close()
	if err != nil || p.Backoffs != 4 || p.Backoff != 4*5*time.Millisecond {
		t.Fatalf("busy: %+v %v", p, err)
	}

	f.free(0, 4*4096)
	tr = NewTrimmer(f, TrimOptions{Busy: func() uint64 { return 7 }})
	defer tr.Close()
	p, err = tr.Run(context.Background(), TrimRequest{}, nil)
	if err != nil || p.Backoffs != 0 || p.Stats.Batches != 4 {
		t.Fatalf("idle: %+v %v", p, err)
	}
}

// TestTrimBackOffScalesWithRequests: under a busy foreground, each pause
// is BackoffRatio times what its request took.
func TestTrimBackOffScalesWithRequests(t *testing.T) {
	f := newFakeTrim(1, 1<<20, 4096)
	f.free(0, 3*4096)
	f.took = 3 * time.Millisecond
	var changes atomic.Uint64
	tr := NewTrimmer(f, TrimOptions{Busy: func() uint64 { return changes.Add(1) },
		BackoffRatio: 2, BackoffMin: time.Microsecond, BackoffMax: time.Second})
	defer tr.Close()
	p, err := tr.Run(context.Background(), TrimRequest{}, nil)
	if err != nil || p.Backoffs != 3 || p.Backoff != 3*6*time.Millisecond || p.Stats.Requests != 3 {
		t.Fatalf("%+v %v", p, err)
	}
}

// TestTrimBusyWindow: the foreground counts as busy from the moment its
// counter is seen to move until it has stood still for BusyWindow, on the
// injected clock.
func TestTrimBusyWindow(t *testing.T) {
	pc := newPacer(pacing{window: 100 * time.Millisecond})
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	for i, c := range []struct {
		ms      int
		counter uint64
		busy    bool
	}{
		{0, 0, false},  // nothing moved yet
		{5, 0, false},  // still nothing
		{10, 3, true},  // moved
		{50, 3, true},  // within the window since
		{109, 3, true}, // just within
		{110, 3, false},
		{300, 3, false}, // long still
		{301, 4, true},  // moves again
		{399, 4, true},
		{401, 4, false},
	} {
		if got := pc.observe(at(c.ms), c.counter); got != c.busy {
			t.Fatalf("step %d (%d ms, counter %d): busy %v, want %v", i, c.ms, c.counter, got, c.busy)
		}
	}
}

// TestTrimCloseCancels: Close cancels a pass held mid-way and waits.
func TestTrimCloseCancels(t *testing.T) {
	f := newFakeTrim(1, 1<<20, 4096)
	f.free(0, 1<<20)
	f.gate = make(chan struct{})
	tr := NewTrimmer(f, TrimOptions{Interval: time.Millisecond})
	f.gate <- struct{}{} // the scheduled pass is in its first batch
	waitFor(t, func() bool { return tr.Status().Current != nil })
	done := make(chan struct{})
	go func() { tr.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	st := tr.Status()
	if st.Current != nil || st.Last == nil || !st.Last.Canceled || st.Counters.Canceled != 1 {
		t.Fatalf("after Close: %+v %+v", st.Current, st.Last)
	}
	if _, err := tr.Start(TrimRequest{}); !errors.Is(err, ErrTrimClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}

// TestTrimOnDemand: Start runs in the background, a second Start is
// refused while it runs, Cancel stops it; an on-demand pass preempts a
// scheduled one.
func TestTrimOnDemand(t *testing.T) {
	f := newFakeTrim(2, 1<<20, 4096)
	f.free(0, 1<<20)
	f.gate = make(chan struct{}, 1)
	tr := NewTrimmer(f, TrimOptions{})
	defer tr.Close()
	f.gate <- struct{}{}
	p, err := tr.Start(TrimRequest{Offset: 0, Length: 1 << 20})
	if err != nil || !p.Running || p.Scheduled {
		t.Fatalf("Start: %+v %v", p, err)
	}
	if _, err := tr.Start(TrimRequest{}); !errors.Is(err, ErrTrimRunning) {
		t.Fatalf("second Start: %v", err)
	}
	if !tr.Cancel() {
		t.Fatal("Cancel found no pass")
	}
	waitFor(t, func() bool { return tr.Status().Current == nil })
	if l := tr.Status().Last; !l.Canceled || l.Stats.DiscardedBytes != 4096 {
		t.Fatalf("cancelled pass %+v", l)
	}
	if tr.Cancel() {
		t.Fatal("Cancel with no pass under way")
	}

	// A scheduled pass held in its batch gives way to one on demand.
	f.gate = make(chan struct{})
	go tr.scheduled()
	waitFor(t, func() bool { c := tr.Status().Current; return c != nil && c.Scheduled })
	close(f.gate)
	p, err = tr.Run(context.Background(), TrimRequest{}, nil)
	if err != nil || p.Scheduled || p.Canceled {
		t.Fatalf("on demand after preempting: %+v %v", p, err)
	}
	if c := tr.Status().Counters; c.OnDemand != 2 || c.Canceled < 1 {
		t.Fatalf("counters %+v", c)
	}

	// A scheduled pass ending after it takes Last, not LastOnDemand.
	f.free(1, 1<<20)
	tr.scheduled()
	st := tr.Status()
	if st.Last == nil || !st.Last.Scheduled || st.LastOnDemand == nil || st.LastOnDemand.ID != p.ID {
		t.Fatalf("after a scheduled pass: last %+v, last on demand %+v (want pass %d)", st.Last, st.LastOnDemand, p.ID)
	}
}

func TestTrimUnsupportedStopsSchedule(t *testing.T) {
	f := newFakeTrim(1, 1<<20, 4096)
	f.free(0, 4096)
	f.unsupp = true
	tr := NewTrimmer(f, TrimOptions{})
	defer tr.Close()
	if _, err := tr.Start(TrimRequest{}); !errors.Is(err, xfs.ErrDiscardUnsupported) {
		t.Fatalf("Start on a device without discard: %v", err)
	}
	tr.scheduled()
	if n := len(f.callsSoFar()); n != 1 {
		t.Fatalf("%d engine calls: the scheduler should stop after unsupported", n)
	}
	if !tr.Status().Counters.Unsupported {
		t.Fatal("counters do not say unsupported")
	}
}

// TestTrimPassesRequestShape: the request and batch bounds reach every
// engine call, scheduled and on demand, with a pacing callback.
func TestTrimPassesRequestShape(t *testing.T) {
	f := newFakeTrim(2, 1<<20, 4096)
	f.free(0, 4096)
	f.free(1, 4096)
	tr := NewTrimmer(f, TrimOptions{RequestBytes: 1 << 20, BatchBytes: 3 << 20})
	defer tr.Close()
	if _, err := tr.Run(context.Background(), TrimRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	f.free(1, 4096)
	tr.scheduled()
	calls := f.callsSoFar()
	if len(calls) != 2 || !calls[1].OnlyFreed {
		t.Fatalf("calls %+v: want one on demand, one scheduled", calls)
	}
	for i, c := range calls {
		if c.RequestBytes != 1<<20 || c.BatchBytes != 3<<20 || c.AfterRequest == nil {
			t.Fatalf("call %d: %+v", i, c)
		}
	}
}

// TestTrimStartReturnsDuringPause: under a busy foreground Start answers
// once the first request succeeded, not after the pause that follows it,
// and Cancel cuts the pause short.
func TestTrimStartReturnsDuringPause(t *testing.T) {
	f := newFakeTrim(1, 1<<20, 4096)
	f.free(0, 4*4096)
	var changes atomic.Uint64
	tr := NewTrimmer(f, TrimOptions{Busy: func() uint64 { return changes.Add(1) }, BackoffMin: time.Hour, BackoffMax: time.Hour})
	defer tr.Close()
	began := time.Now()
	p, err := tr.Start(TrimRequest{})
	if err != nil || !p.Running || time.Since(began) > time.Minute {
		t.Fatalf("Start: %+v %v after %v", p, err, time.Since(began))
	}
	if !tr.Cancel() {
		t.Fatal("no pass to cancel")
	}
	for deadline := time.Now().Add(10 * time.Second); tr.Status().Current != nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled pass did not end")
		}
	}
	if l := tr.Status().Last; l == nil || !l.Canceled || l.Backoffs != 1 {
		t.Fatalf("last pass %+v", l)
	}
}
