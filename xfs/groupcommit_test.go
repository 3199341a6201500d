package xfs_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// gatedDevice holds every flush, once armed, until the gate opens; a
// durable log write counts as a flush.
type gatedDevice struct {
	*dev.Fault
	armed   atomic.Bool
	entered chan struct{} // a flush is waiting
	gate    chan struct{}
	onHold  func() // if set, runs as a flush starts to wait
}

func (d *gatedDevice) Sync() error {
	d.hold()
	return d.Fault.Sync()
}

func (d *gatedDevice) WriteAtDurable(p []byte, off int64) (int, error) {
	d.hold()
	return d.Fault.WriteAtDurable(p, off)
}

func (d *gatedDevice) hold() {
	if d.armed.Load() {
		if d.onHold != nil {
			d.onHold()
		}
		select {
		case d.entered <- struct{}{}:
		default:
		}
		<-d.gate
	}
}

// newGatedImage formats an image of size bytes and returns it with a
// gated device over it; the gate starts disarmed.
func newGatedImage(t *testing.T, size int64) (string, *gatedDevice) {
	img := filepath.Join(t.TempDir(), "g.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: size}); err != nil {
		t.Fatal(err)
	}
	f, closeBase, err := dev.OpenFault(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBase() })
	return img, &gatedDevice{Fault: f, entered: make(chan struct{}, 1), gate: make(chan struct{})}
}

// TestNoLockAcrossFlush: while one create in a directory waits for its
// log flush, a second create in the same directory still commits and
// queues its transaction, so both share the next flushes. An engine that
// held the directory's lock (or the buffers') across the flush would keep
// the second one out until the first was durable.
func TestNoLockAcrossFlush(t *testing.T) {
	_, d := newGatedImage(t, 64<<20)
	v, err := xfs.OpenDevice(d, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	done := make(chan error, 2)
	create := func(name string) { _, err := v.Names().Create(v.Root(), name, xfs.Attrs{Mode: 0o644}); done <- err }
	d.armed.Store(true)
	go create("first")
	select {
	case <-d.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first create never reached a flush")
	}
	go create("second")
	deadline := time.Now().Add(10 * time.Second)
	for v.LogStats().Pending < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	pending := v.LogStats().Pending
	d.armed.Store(false)
	close(d.gate)
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if pending < 2 {
		t.Fatalf("while the first create's flush was held, %d transactions were queued: the second create could not commit", pending)
	}
	for _, name := range []string{"first", "second"} {
		if _, err := v.Names().Lookup(v.Root(), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestLazyCommitsPushInBackground: with lazy commits, the change that
// finds enough log queued starts the log write and goes on, as do the
// changes after it while that write waits, until twice as much is queued;
// then they wait for it. An engine whose committers wrote the log
// themselves would stop at the first create that reached a flush, in
// every attempt; one attempt in three may stop there when a loaded
// machine runs the push's goroutine only after the creates have queued
// twice the threshold, so the test takes the best of three.
func TestLazyCommitsPushInBackground(t *testing.T) {
	for attempt := 1; ; attempt++ {
		first, stalled := lazyPushAttempt(t)
		t.Logf("attempt %d: first log write at %d creates; creates stalled at %d while it waited", attempt, first, stalled)
		if stalled >= first+first/2 {
			return
		}
		if attempt == 3 {
			t.Fatalf("creates stopped at %d while the first log write (at %d) waited: committers wait for it instead of going on", stalled, first)
		}
	}
}

// lazyPushAttempt runs 8,000 lazy creates with the log's writes held at
// a gate, and returns how many creates had returned when the first write
// reached the gate, and when they stalled behind it.
func lazyPushAttempt(t *testing.T) (first, stalled int64) {
	img, d := newGatedImage(t, 256<<20)
	v, err := xfs.OpenDevice(d, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	opened := true
	defer func() {
		if opened {
			v.Close()
		}
	}()
	dir, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	const total = 8000
	var created, atFirst atomic.Int64
	atFirst.Store(-1)
	d.onHold = func() { atFirst.CompareAndSwap(-1, created.Load()) }
	done := make(chan error, 1)
	d.armed.Store(true)
	gateOpen := false
	openGate := func() {
		if !gateOpen {
			gateOpen = true
			d.armed.Store(false)
			close(d.gate)
		}
	}
	defer openGate()
	go func() {
		for i := range total {
			if _, err := v.Names().Create(dir, fmt.Sprintf("file-%05d", i), xfs.Attrs{Mode: 0o644}); err != nil {
				done <- err
				return
			}
			created.Add(1)
		}
		done <- nil
	}()
	select {
	case <-d.entered:
	case err := <-done:
		t.Fatalf("%d creates never reached a log write (%v)", total, err)
	case <-time.After(30 * time.Second):
		t.Fatal("no create reached a log write in 30 seconds")
	}
	// The creates stall once the queue is backlogged: the count stops.
	stalled = created.Load()
	for still := time.Duration(0); still < time.Second; {
		time.Sleep(50 * time.Millisecond)
		if n := created.Load(); n != stalled {
			stalled, still = n, 0
		} else {
			still += 50 * time.Millisecond
		}
		if stalled == total {
			t.Fatalf("all %d creates returned while the log write waited: the queue is unbounded", total)
		}
	}
	first = atFirst.Load()
	openGate()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	opened = false
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Image(img, dev.Crash{}); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
	return first, stalled
}
