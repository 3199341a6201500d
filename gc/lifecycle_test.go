package gc

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeExpirer has passes of n batches; a cursor is the next batch's
// number. It records the cursors saved and can block a batch.
type fakeExpirer struct {
	n int

	mu     sync.Mutex
	saved  []string
	stored string        // what LoadCursor answers
	starts []string      // the cursors batches were asked from
	gate   chan struct{} // when set, each batch waits for a value
}

func (f *fakeExpirer) ExpireBatch(ctx context.Context, cursor string, now time.Time) (string, LifecycleCounts, error) {
	f.mu.Lock()
	f.starts = append(f.starts, cursor)
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return cursor, LifecycleCounts{}, ctx.Err()
		}
	}
	i := 0
	if cursor != "" {
		i, _ = strconv.Atoi(cursor)
	}
	c := LifecycleCounts{Scanned: 10, Expired: 1, BytesFreed: 100}
	if i+1 >= f.n {
		return "", c, nil
	}
	return strconv.Itoa(i + 1), c, nil
}

func (f *fakeExpirer) SaveCursor(c string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saved = append(f.saved, c)
	f.stored = c
	return nil
}

func (f *fakeExpirer) LoadCursor() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stored, nil
}

func TestLifecycleOnDemandPass(t *testing.T) {
	f := &fakeExpirer{n: 4}
	l := NewLifecycle(f, LifecycleOptions{})
	defer l.Close()
	if _, err := l.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return l.Status().Passes == 1 })
	st := l.Status()
	if st.Last == nil || !st.Last.OnDemand || st.Last.Batches != 4 || st.Last.Counts.Scanned != 40 || st.Totals.BytesFreed != 400 || st.Last.Resumed {
		t.Fatalf("status after a pass of 4 batches: %+v last %+v", st, st.Last)
	}
	f.mu.Lock()
	saved := fmt.Sprint(f.saved)
	f.mu.Unlock()
	if saved != "[1 2 3 ]" {
		t.Fatalf("cursors saved %s, want each batch's and then none", saved)
	}
}

// TestLifecycleResumes: a scanner without scheduled passes runs nothing
// by itself, even over a saved cursor; the pass asked for goes on from
// that cursor; Close in the middle of a pass leaves the cursor of the
// batch it stopped at. With scheduled passes, a saved cursor is resumed
// at once.
func TestLifecycleResumes(t *testing.T) {
	f := &fakeExpirer{n: 5, stored: "3"}
	l := NewLifecycle(f, LifecycleOptions{})
	time.Sleep(20 * time.Millisecond)
	if st := l.Status(); st.Passes != 0 || st.Current != nil {
		t.Fatalf("a pass ran unasked: %+v", st)
	}
	l.Start()
	waitFor(t, func() bool { return l.Status().Passes == 1 })
	st := l.Status()
	if !st.Last.Resumed || st.Last.Batches != 2 || !st.Last.OnDemand {
		t.Fatalf("resumed pass: %+v", st.Last)
	}
	f.mu.Lock()
	if f.starts[0] != "3" {
		t.Fatalf("first batch from %q, want 3", f.starts[0])
	}
	f.gate = make(chan struct{})
	gate := f.gate
	f.mu.Unlock()
	l.Start()
	gate <- struct{}{} // the first batch of the new pass
	waitFor(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.starts) == 4 })
	l.Close()
	if got, _ := f.LoadCursor(); got != "1" {
		t.Fatalf("cursor after Close mid-pass: %q, want 1", got)
	}
	if _, err := l.Start(); err != ErrLifecycleClosed {
		t.Fatalf("Start after Close: %v", err)
	}

	f = &fakeExpirer{n: 5, stored: "2"}
	l = NewLifecycle(f, LifecycleOptions{Interval: time.Hour})
	defer l.Close()
	waitFor(t, func() bool { return l.Status().Passes == 1 })
	if st := l.Status(); !st.Last.Resumed || st.Last.Batches != 3 {
		t.Fatalf("pass resumed at start with scheduled passes: %+v", st.Last)
	}
}

func TestLifecycleInterval(t *testing.T) {
	f := &fakeExpirer{n: 1}
	l := NewLifecycle(f, LifecycleOptions{Interval: 20 * time.Millisecond})
	defer l.Close()
	waitFor(t, func() bool { return l.Status().Passes >= 3 })
	if st := l.Status(); st.Last.OnDemand || st.Interval != 20*time.Millisecond {
		t.Fatalf("scheduled passes: %+v", st)
	}
}

// TestLifecyclePacing: under a busy foreground a pass pauses after each
// batch.
func TestLifecyclePacing(t *testing.T) {
	f := &fakeExpirer{n: 3}
	var n uint64
	var mu sync.Mutex
	busy := func() uint64 { mu.Lock(); defer mu.Unlock(); n++; return n }
	l := NewLifecycle(f, LifecycleOptions{Busy: busy, BackoffMin: time.Millisecond, BackoffMax: 2 * time.Millisecond})
	defer l.Close()
	l.Start()
	waitFor(t, func() bool { return l.Status().Passes == 1 })
	if st := l.Status(); st.Last.Backoffs != 2 || st.Last.Backoff < 2*time.Millisecond {
		t.Fatalf("pauses of a paced pass of 3 batches: %d, %v", st.Last.Backoffs, st.Last.Backoff)
	}
}
