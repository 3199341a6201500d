package alloc

import (
	"errors"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// TestLockBelowHeldAGF: a transaction holding AGF 2 that needs AGF 1,
// held by another, gets a LockOrderError at once instead of waiting (the
// other may be waiting for AGF 2: a deadlock); run again with AG 1
// prelocked, it takes AGF 1 before AGF 2 and waits only in order.
func TestLockBelowHeldAGF(t *testing.T) {
	h := newHarness(t, 256<<20, mkfs.Options{})
	if h.geo.AgCount < 3 {
		t.Fatalf("%d AGs, want 3 or more", h.geo.AgCount)
	}
	other := h.begin()
	if _, err := other.Lock(1); err != nil {
		t.Fatal(err)
	}
	tx := h.begin()
	if _, err := tx.Lock(2); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := tx.Lock(1); done <- err }()
	select {
	case err := <-done:
		var order *LockOrderError
		if !errors.As(err, &order) || order.AG != 1 {
			t.Fatalf("lock of AGF 1 below a held AGF 2: %v, want a LockOrderError for AG 1", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lock below a held AGF waited")
	}
	// A try-lock below a held AGF still just reports it missed.
	if _, got, err := tx.TryLock(1); err != nil || got {
		t.Fatalf("TryLock of a held AGF below: got %v, %v", got, err)
	}
	tx.Cancel()

	// Again, with AG 1 prelocked: locking AGF 2 first waits for AGF 1.
	tx = h.begin()
	tx.Prelock([]format.AgNumber{1})
	go func() { _, err := tx.Lock(2); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("AGF 2 locked (%v) while the prelocked AGF 1 is another's", err)
	case <-time.After(100 * time.Millisecond):
	}
	other.Cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if tx.heldAGF(1) == nil {
		t.Fatal("the prelocked AGF 1 is not held")
	}
	if _, err := tx.Lock(1); err != nil {
		t.Fatal(err)
	}
	tx.Cancel()
}
