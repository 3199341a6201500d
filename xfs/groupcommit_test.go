package xfs_test

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// gatedDevice holds every flush, once armed, until the gate opens; a
// durable log write counts as a flush.
type gatedDevice struct {
	*dev.Fault
	armed   atomic.Bool
	entered chan struct{} // a flush is waiting
	gate    chan struct{}
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
		select {
		case d.entered <- struct{}{}:
		default:
		}
		<-d.gate
	}
}

// TestNoLockAcrossFlush: while one create in a directory waits for its
// log flush, a second create in the same directory still commits and
// queues its transaction, so both share the next flushes. An engine that
// held the directory's lock (or the buffers') across the flush would keep
// the second one out until the first was durable.
func TestNoLockAcrossFlush(t *testing.T) {
	img := filepath.Join(t.TempDir(), "g.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	f, closeBase, err := dev.OpenFault(img)
	if err != nil {
		t.Fatal(err)
	}
	defer closeBase()
	d := &gatedDevice{Fault: f, entered: make(chan struct{}, 1), gate: make(chan struct{})}
	v, err := xfs.OpenDevice(d, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	done := make(chan error, 2)
	create := func(name string) { _, err := v.Create(v.Root(), name, xfs.Attrs{Mode: 0o644}); done <- err }
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
		if _, err := v.Lookup(v.Root(), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
