package trans

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestPassKeepsFreedSpaceBusyUntilItsWrites: a commit that becomes
// durable while a write-back pass is open keeps the extents it freed busy
// until the pass's writes are issued. The pass may still write a block
// that commit freed (it was not durable when the pass began); reused as
// file data first, the block would get old metadata over its contents.
func TestPassKeepsFreedSpaceBusyUntilItsWrites(t *testing.T) {
	c, _ := newBacklogCache(t)
	busy := func() bool { return len(c.Busy().Overlap(1, 100, 1)) > 0 }
	free := func(tx *Tx) {
		b, _ := tx.Get(9, 512, stamped)
		b[7]++
		tx.FreeExtent(Extent{AG: 1, Start: 100, Len: 1})
	}
	c.passStart(c.Log().Durable()) // as xlog does when a pass takes its durable ticket
	commitTx(t, c, free)
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	if !busy() {
		t.Fatal("an extent freed by a commit made durable during a pass was reusable before the pass's writes")
	}
	if err := c.passEnd(); err != nil {
		t.Fatal(err)
	}
	if busy() {
		t.Fatal("the extent is still busy after the pass ended")
	}

	// With no pass open, durability frees it at once.
	commitTx(t, c, free)
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	if busy() {
		t.Fatal("the extent stayed busy once durable with no pass open")
	}
}

// TestPassWritesMergedAndInOrder: a pass writes each run of adjacent
// blocks once, a block gathered twice once with its newest contents,
// and blocks that overlap (one freed and reused with another size)
// alone, in the order they were gathered, newest last.
func TestPassWritesMergedAndInOrder(t *testing.T) {
	fill := func(n int, v byte) []byte { return bytes.Repeat([]byte{v}, n) }
	cases := []struct {
		name   string
		writes []gatheredWrite // off in sectors, seq ignored
		device string          // one letter per sector from 10 on, '.' untouched
		calls  int
	}{
		{"adjacent merge", []gatheredWrite{{off: 12, data: fill(512, 'c')}, {off: 10, data: fill(1024, 'a')}, {off: 14, data: fill(512, 'e')}}, "aac.e", 2},
		{"newest of a block", []gatheredWrite{{off: 10, data: fill(512, 'a')}, {off: 10, data: fill(512, 'b')}, {off: 11, data: fill(512, 'c')}}, "bc", 1},
		{"overlap in order", []gatheredWrite{{off: 10, data: fill(1024, 'a')}, {off: 11, data: fill(512, 'b')}}, "ab", 2},
		{"overlap, newest last", []gatheredWrite{{off: 10, data: fill(1024, 'a')}, {off: 11, data: fill(512, 'b')}, {off: 10, data: fill(1024, 'c')}}, "cc", 2},
	}
	for _, tc := range cases {
		for _, vectored := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/vectored=%v", tc.name, vectored), func(t *testing.T) {
				c, d := newCache(t, 64)
				if vectored {
					c.dev = vectorDev{d}
				}
				c.passStart(0)
				for _, w := range tc.writes {
					c.pass.gather(format.Daddr(w.off), w.data)
				}
				if err := c.passEnd(); err != nil {
					t.Fatal(err)
				}
				if d.writes != tc.calls {
					t.Errorf("%d device writes, want %d", d.writes, tc.calls)
				}
				for i, want := range []byte(tc.device) {
					if want == '.' {
						want = 0xAB // as newCache stamped it
					}
					if got := d.b[(10+i)*512]; got != want {
						t.Errorf("sector %d holds %q, want %q", 10+i, got, want)
					}
				}
			})
		}
	}
}

// vectorDev is a memDev with vectored writes, each counted as one write.
type vectorDev struct{ *memDev }

func (d vectorDev) WriteVAt(bufs [][]byte, off int64) (int, error) {
	return d.WriteAt(bytes.Join(bufs, nil), off)
}

// TestWriteInPlaceJoinsThePass: a late item's in-place write during a
// pass (a dquot copied into its block) replaces the pass's earlier write
// of the same block, so the newer record is what reaches the device, and
// the block stays cached until then.
func TestWriteInPlaceJoinsThePass(t *testing.T) {
	c, d := newCache(t, 64)
	old := make([]byte, 512)
	stamped.Finish(old)
	c.passStart(0)
	c.pass.gather(5, old)
	if err := c.WriteInPlace(5, 512, stamped, func(b []byte) { b[7] = 9; stamped.Finish(b) }); err != nil {
		t.Fatal(err)
	}
	if d.writes != 0 {
		t.Fatalf("%d device writes before the pass ended", d.writes)
	}
	if err := c.passEnd(); err != nil {
		t.Fatal(err)
	}
	if d.writes != 1 || d.b[5*512+7] != 9 {
		t.Fatalf("%d writes, byte 7 on disk %d: want one write of the in-place change", d.writes, d.b[5*512+7])
	}
	// Outside a pass it writes at once.
	if err := c.WriteInPlace(5, 512, stamped, func(b []byte) { b[7] = 10; stamped.Finish(b) }); err != nil {
		t.Fatal(err)
	}
	if d.writes != 2 || d.b[5*512+7] != 10 {
		t.Fatalf("%d writes, byte 7 on disk %d after a write outside a pass", d.writes, d.b[5*512+7])
	}
}

// TestDurableToldDuringAPass: while a pass is open, extents freed by
// commits up to the pass's durable ticket become reusable at once (the
// pass never writes their blocks: an ENOSPC retry after a Sync finds
// them), those freed by later commits only at the pass's end.
func TestDurableToldDuringAPass(t *testing.T) {
	c, _ := newCache(t, 16)
	early, late := Extent{AG: 0, Start: 10, Len: 1}, Extent{AG: 0, Start: 20, Len: 1}
	c.busy.add([]Extent{early}, 4)
	c.busy.add([]Extent{late}, 6)
	busy := func(e Extent) bool { return len(c.Busy().Overlap(e.AG, e.Start, e.Len)) > 0 }
	c.passStart(5)
	c.durableTold(6)
	if busy(early) || !busy(late) {
		t.Fatalf("during the pass: early busy %v (want false), late busy %v (want true)", busy(early), busy(late))
	}
	if err := c.passEnd(); err != nil {
		t.Fatal(err)
	}
	if busy(late) {
		t.Fatal("the late extent is still busy after the pass")
	}
}

// TestPassWriteFailureShutsDown: an in-place write of a pass that fails
// shuts the cache down, and the block stays unwritten: readers that
// bypass the cache still see the committed version, not the stale disk.
func TestPassWriteFailureShutsDown(t *testing.T) {
	c, d := newBacklogCache(t)
	commitTx(t, c, func(tx *Tx) {
		b, err := tx.Read(10, 512, stamped)
		if err != nil {
			t.Fatal(err)
		}
		b[7] = 42
		tx.Dirty(10)
	})
	if err := c.Force(); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.failWrites = d.writes // the next write, the pass's, fails
	d.mu.Unlock()
	if err := c.Sync(); err == nil {
		t.Fatal("Sync succeeded though the pass's write failed")
	}
	if !errors.Is(c.Err(), ErrShutdown) {
		t.Fatalf("cache error after the failed write: %v", c.Err())
	}
	got := make([]byte, 512)
	if err := c.ReadAt(got, 10*512); err != nil || got[7] != 42 {
		t.Fatalf("read past the cache: byte 7 %d, %v; want the committed 42", got[7], err)
	}
	if d.b[10*512+7] == 42 {
		t.Fatal("the failed write reached the disk")
	}
	if _, err := c.Begin(); err == nil {
		t.Fatal("a transaction began on a shut-down cache")
	}
}
