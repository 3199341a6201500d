package trans

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// memDev is an in-memory device that can fail writes after a count.
type memDev struct {
	mu         sync.Mutex
	b          []byte
	failWrites int // fail once this many writes succeeded (0: never)
	writes     int
	writesAt   map[int64]int // writes by offset
}

func (d *memDev) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off+int64(len(p)) > int64(len(d.b)) {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, d.b[off:]), nil
}

func (d *memDev) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failWrites > 0 && d.writes >= d.failWrites {
		return 0, errors.New("injected write error")
	}
	d.writes++
	if d.writesAt == nil {
		d.writesAt = make(map[int64]int)
	}
	d.writesAt[off]++
	return copy(d.b[off:], p), nil
}

func (d *memDev) Size() int64  { return int64(len(d.b)) }
func (d *memDev) Sync() error  { return nil }
func (d *memDev) Close() error { return nil }

// stamped is a block type whose first byte must be 0xAB and whose last
// byte is a checksum of the rest, to exercise Verify and Finish.
var stamped = &Ops{
	Name: "stamped",
	Verify: func(b []byte, _ format.Daddr) error {
		if b[0] != 0xAB || b[len(b)-1] != sum(b[:len(b)-1]) {
			return format.Corrupt("stamped", "", "bad stamp")
		}
		return nil
	},
	Finish: func(b []byte) { b[0] = 0xAB; b[len(b)-1] = sum(b[:len(b)-1]) },
}

func sum(b []byte) byte {
	var s byte
	for _, c := range b {
		s += c
	}
	return s
}

func newCache(t *testing.T, blocks int) (*Cache, *memDev) {
	d := &memDev{b: make([]byte, blocks*512)}
	for i := 0; i < blocks; i++ {
		stamped.Finish(d.b[i*512 : i*512+512])
	}
	return NewCache(d, 64*512), d
}

func TestCommitWritesAndPublishes(t *testing.T) {
	c, d := newCache(t, 16)
	tx, _ := c.Begin()
	b, err := tx.Read(3, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	b[10] = 42
	tx.Dirty(3)
	if got, _ := c.Read(3, 512, stamped); got[10] != 0 {
		t.Fatal("uncommitted change visible to readers")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := c.Read(3, 512, stamped)
	if got[10] != 42 || d.b[3*512+10] != 42 {
		t.Fatal("commit not visible in cache and on disk")
	}
	if stamped.Verify(d.b[3*512:4*512], 3) != nil {
		t.Fatal("Finish did not run before the write")
	}
}

// TestManyBlocksInOneTx: a transaction past its inline blocks (where it
// starts to index them in a map) still finds each block it holds, by
// address, whichever way it took it, and commits every change.
func TestManyBlocksInOneTx(t *testing.T) {
	const n = 3 * heldInline
	c, d := newCache(t, n+1)
	tx, _ := c.Begin()
	for i := 0; i < n; i++ {
		var b []byte
		var err error
		if i%3 == 2 {
			b, err = tx.Get(format.Daddr(i), 512, stamped)
		} else {
			b, err = tx.Read(format.Daddr(i), 512, stamped)
		}
		if err != nil {
			t.Fatal(err)
		}
		b[10] = byte(i + 1)
		tx.Dirty(format.Daddr(i))
		// Every block taken so far is found again: the same copy.
		for j := 0; j <= i; j++ {
			held, ok := tx.Held(format.Daddr(j))
			if !ok || held[10] != byte(j+1) {
				t.Fatalf("after %d blocks: block %d not found as held (ok %v)", i+1, j, ok)
			}
			again, err := tx.Read(format.Daddr(j), 512, stamped)
			if err != nil || &again[0] != &held[0] {
				t.Fatalf("after %d blocks: Read of block %d gave another copy (%v)", i+1, j, err)
			}
		}
		if _, ok := tx.Held(format.Daddr(n)); ok {
			t.Fatalf("after %d blocks: a block never taken is held", i+1)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if got := d.b[i*512+10]; got != byte(i+1) {
			t.Fatalf("block %d: byte %d on disk, want %d", i, got, i+1)
		}
	}
}

// TestViewSharesUntilRead: View hands out the published version itself;
// a Read in the same transaction gives a private copy that the commit
// publishes; Dirty of a view, or a write through one, is a bug caught
// at once or when the transaction ends.
func TestViewSharesUntilRead(t *testing.T) {
	c, _ := newCache(t, 16)
	published, _ := c.Read(4, 512, stamped)
	tx, _ := c.Begin()
	v, err := tx.View(4, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	if &v[0] != &published[0] {
		t.Error("View copied the block")
	}
	if again, _ := tx.View(4, 512, stamped); &again[0] != &v[0] {
		t.Error("a second View gave other bytes")
	}
	w, err := tx.Read(4, 512, stamped)
	if err != nil {
		t.Fatal(err)
	}
	if &w[0] == &v[0] {
		t.Fatal("Read of a viewed block gave the shared bytes")
	}
	if again, _ := tx.View(4, 512, stamped); &again[0] != &w[0] {
		t.Error("View after Read did not give the private copy")
	}
	w[9] = 7
	tx.Dirty(4)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Read(4, 512, stamped); got[9] != 7 || published[9] != 0 {
		t.Fatal("the change was not published, or it changed the old version")
	}

	mustPanic := func(what string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", what)
			}
		}()
		fn()
	}
	tx, _ = c.Begin()
	tx.View(5, 512, stamped)
	mustPanic("Dirty of a view", func() { tx.Dirty(5) })
	tx.Cancel()
	tx, _ = c.Begin()
	v, _ = tx.View(6, 512, stamped)
	v[3]++
	mustPanic("a commit after a write through a view", func() { tx.Commit() })
	v[3]--
}

func TestCancelLeavesNothing(t *testing.T) {
	c, d := newCache(t, 16)
	before := append([]byte(nil), d.b...)
	tx, _ := c.Begin()
	b, _ := tx.Read(2, 512, stamped)
	b[5] = 1
	tx.Dirty(2)
	n, _ := tx.Get(7, 512, stamped)
	n[1] = 9
	cancelled := false
	tx.OnCancel(func() { cancelled = true })
	tx.Cancel()
	if !cancelled || !bytes.Equal(before, d.b) {
		t.Fatal("cancel changed the device or skipped its hook")
	}
	if got, _ := c.Read(2, 512, stamped); got[5] != 0 {
		t.Fatal("cancelled change visible")
	}
}

func TestVerifyErrorIsLocated(t *testing.T) {
	c, d := newCache(t, 16)
	d.b[4*512] = 0
	tx, _ := c.Begin()
	defer tx.Cancel()
	_, err := tx.Read(4, 512, stamped)
	var ce *format.CorruptError
	if !errors.As(err, &ce) || ce.Where != "daddr 4" {
		t.Fatalf("want located corrupt error, got %v", err)
	}
}

func TestFailedWriteShutsDown(t *testing.T) {
	c, d := newCache(t, 16)
	d.failWrites = 1
	tx, _ := c.Begin()
	for _, a := range []format.Daddr{1, 2} {
		b, _ := tx.Read(a, 512, stamped)
		b[3] = 1
		tx.Dirty(a)
	}
	if err := tx.Commit(); !errors.Is(err, ErrShutdown) {
		t.Fatalf("commit: %v", err)
	}
	if _, err := c.Begin(); !errors.Is(err, ErrShutdown) {
		t.Fatalf("begin after shutdown: %v", err)
	}
}

func TestBusyUntilSync(t *testing.T) {
	c, _ := newCache(t, 16)
	tx, _ := c.Begin()
	tx.FreeExtent(Extent{AG: 1, Start: 100, Len: 10})
	tx.Commit()
	if got := c.Busy().Overlap(1, 105, 1); len(got) != 1 {
		t.Fatalf("freed extent not busy: %v", got)
	}
	if got := c.Busy().Overlap(1, 110, 5); len(got) != 0 {
		t.Fatalf("neighbour reported busy: %v", got)
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	if c.Busy().Len() != 0 {
		t.Fatal("busy extents survive a sync")
	}
}

// TestBusyDiscarding: extents trim marks are busy to allocators until
// trim clears them; a sync (freed extents becoming durable) leaves them,
// and WaitDiscards waits for the clear.
func TestBusyDiscarding(t *testing.T) {
	c, _ := newCache(t, 16)
	b := c.Busy()
	tx, _ := c.Begin()
	tx.FreeExtent(Extent{AG: 1, Start: 100, Len: 10})
	tx.Commit()
	marked := []Extent{{AG: 1, Start: 200, Len: 5}, {AG: 1, Start: 50, Len: 5}, {AG: 2, Start: 7, Len: 1}}
	b.MarkDiscarding(marked)
	if got := b.Overlap(1, 0, 1000); len(got) != 3 || got[0].Start != 50 || got[2].Start != 200 {
		t.Fatalf("overlap %v: want the three extents of AG 1 in block order", got)
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 3 || b.Discarding() != 3 {
		t.Fatalf("after a sync %d busy, %d discarding: only the freed extent goes", b.Len(), b.Discarding())
	}
	waited := make(chan struct{})
	go func() {
		b.WaitDiscards()
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("WaitDiscards returned before any discard completed")
	case <-time.After(20 * time.Millisecond):
	}
	b.ClearDiscarding(marked[:2])
	<-waited // one completed: the space it held is usable
	b.ClearDiscarding(marked[2:])
	b.WaitDiscards() // none left: returns at once
	if b.Len() != 0 {
		t.Fatalf("%d busy extents left", b.Len())
	}
}

func TestQuotaDeltas(t *testing.T) {
	c, _ := newCache(t, 4)
	tx, _ := c.Begin()
	d, first := tx.Quota(7)
	d.Blocks += 8
	if !first {
		t.Fatal("first quota change not reported as first")
	}
	d, first = tx.Quota(7)
	d.Blocks -= 2
	if first || *tx.QuotaDeltaOf(7) != (QuotaDelta{Project: 7, Blocks: 6}) {
		t.Fatalf("delta %+v, first %v", *tx.QuotaDeltaOf(7), first)
	}
	// Past the deltas kept inline, earlier ones stay where they were.
	for id := uint32(1); id <= 4; id++ {
		d, _ := tx.Quota(id)
		d.Inodes = int64(id)
	}
	if got := len(tx.QuotaDeltas()); got != 5 || tx.QuotaDeltaOf(9) != nil || d != tx.QuotaDeltaOf(7) {
		t.Fatalf("%d deltas, project 9 %v, project 7 moved: %v", got, tx.QuotaDeltaOf(9), d != tx.QuotaDeltaOf(7))
	}
	for id := uint32(1); id <= 4; id++ {
		if got := tx.QuotaDeltaOf(id); got.Inodes != int64(id) || got.Project != id {
			t.Fatalf("project %d: %+v", id, got)
		}
	}
	var order []string
	tx.OnPrepared(func() error { order = append(order, "prepared"); return nil })
	tx.OnPrepare(func() error { order = append(order, "prepare"); return nil })
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[prepare prepared]" {
		t.Fatalf("hooks ran in order %v, want OnPrepare hooks before OnPrepared ones", order)
	}
}

// orderOwner records the phases it hears of.
type orderOwner struct {
	order   *[]string
	prepare error
}

func (o orderOwner) Prepare() error { *o.order = append(*o.order, "owner prepare"); return o.prepare }
func (o orderOwner) Committed()     { *o.order = append(*o.order, "owner committed") }
func (o orderOwner) Cancelled()     { *o.order = append(*o.order, "owner cancelled") }

// TestOwner checks that a transaction's owner hears of each phase before
// the hooks of that phase, and that its failed Prepare cancels.
func TestOwner(t *testing.T) {
	c, _ := newCache(t, 4)
	for _, fail := range []bool{false, true} {
		tx, err := c.Begin()
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		o := orderOwner{order: &order}
		if fail {
			o.prepare = errors.New("refused")
		}
		tx.OnPrepare(func() error { order = append(order, "prepare"); return nil })
		tx.OnCommit(func() { order = append(order, "committed") })
		tx.OnCancel(func() { order = append(order, "cancelled") })
		tx.SetOwner(o)
		err = tx.Commit()
		want := "[owner prepare prepare owner committed committed]"
		if fail {
			want = "[owner prepare owner cancelled cancelled]"
		}
		if (err != nil) != fail || fmt.Sprint(order) != want {
			t.Errorf("fail %v: error %v, order %v, want %s", fail, err, order, want)
		}
	}
}

// TestConcurrentTransactions increments counters in shared blocks from
// many goroutines; buffer locks must serialise them (run with -race).
func TestConcurrentTransactions(t *testing.T) {
	c, _ := newCache(t, 8)
	var wg sync.WaitGroup
	const workers, rounds = 8, 200
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				tx, err := c.Begin()
				if err != nil {
					t.Error(err)
					return
				}
				// Always lock in ascending order, as the lock order says.
				for _, a := range []format.Daddr{1, format.Daddr(2 + w%3)} {
					b, err := tx.Read(a, 512, stamped)
					if err != nil {
						t.Error(err)
						tx.Cancel()
						return
					}
					b[8]++
					tx.Dirty(a)
				}
				if r%7 == 0 {
					tx.Cancel()
					continue
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
				_, _ = c.Read(format.Daddr(1), 512, stamped)
			}
		}(w)
	}
	wg.Wait()
	got, _ := c.Read(1, 512, stamped)
	committed := workers * (rounds - (rounds+6)/7)
	if int(got[8]) != committed%256 {
		t.Fatalf("counter %d, want %d", got[8], committed%256)
	}
}

func TestEvictionKeepsHeldBuffers(t *testing.T) {
	d := &memDev{b: make([]byte, 256*512)}
	for i := 0; i < 256; i++ {
		stamped.Finish(d.b[i*512 : i*512+512])
	}
	c := NewCache(d, 4*512)
	tx, _ := c.Begin()
	held, _ := tx.Read(0, 512, stamped)
	held[9] = 1
	tx.Dirty(0)
	for i := 1; i < 256; i++ {
		if _, err := c.Read(format.Daddr(i), 512, stamped); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Read(0, 512, stamped); got[9] != 1 {
		t.Fatal("held buffer lost to eviction")
	}
	if n := c.Stats().Entries; n > 5 {
		t.Fatalf("%d buffers cached with a budget of 4", n)
	}
}

// TestReusedBlockTakesNewKind: a block freed and taken again in the same
// transaction as another kind of metadata is finished as that kind (the
// engine once wrote a free-space btree block reused for a bmbt with the
// short-form CRC).
func TestReusedBlockTakesNewKind(t *testing.T) {
	c, d := newCache(t, 16)
	other := &Ops{Name: "other", Finish: func(b []byte) { b[0] = 0xCD }}
	tx, _ := c.Begin()
	if _, err := tx.Read(5, 512, stamped); err != nil {
		t.Fatal(err)
	}
	tx.Forget(5)
	b, err := tx.Get(5, 512, other)
	if err != nil {
		t.Fatal(err)
	}
	b[1] = 7
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if d.b[5*512] != 0xCD || d.b[5*512+1] != 7 {
		t.Fatalf("reused block written as %#x %d, want the new kind's finish", d.b[5*512], d.b[5*512+1])
	}
}
