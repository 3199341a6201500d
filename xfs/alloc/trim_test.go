package alloc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/trans"
)

func rec(start, n uint32) format.AllocRec {
	return format.AllocRec{StartBlock: format.AgBlock(start), BlockCount: n}
}

// batchWant is one batch a walk should gather: its extents as start+len
// pairs, the records it examined and its restart cursor.
type batchWant struct {
	exts    [][2]uint32
	records int
	next    uint32
}

func gotBatch(b TrimBatch) batchWant {
	w := batchWant{records: b.Records, next: uint32(b.Next)}
	for _, e := range b.Extents {
		w.exts = append(w.exts, [2]uint32{uint32(e.Start), e.Len})
	}
	return w
}

// TestTrimGather pins what the sub-AG walk gathers from a known set of
// free and busy extents: clipping to the range, MinLen, busy extents cut
// out, the restart cursor across batches, a full and an empty AG.
func TestTrimGather(t *testing.T) {
	const ag = 1
	free := []format.AllocRec{rec(100, 10), rec(200, 50), rec(1000, 8), rec(2000, 100)}
	five := []format.AllocRec{rec(100, 1), rec(110, 2), rec(120, 3), rec(130, 4), rec(140, 5)}
	for _, c := range []struct {
		name       string
		free, busy []format.AllocRec
		start, end uint32 // 0, 0: the whole AG
		minLen     uint32
		batch      int
		blocks     uint64 // BatchBlocks
		only       [][2]format.AgBlock
		want       []batchWant
		// blocks examined, skipped as busy, skipped as short (all batches)
		examined, busyBlocks, short uint64
	}{
		{name: "every extent of the AG", free: free,
			want:     []batchWant{{exts: [][2]uint32{{100, 10}, {200, 50}, {1000, 8}, {2000, 100}}, records: 4}},
			examined: 168},
		{name: "clipped at both ends", free: free, start: 205, end: 2050,
			want:     []batchWant{{exts: [][2]uint32{{205, 45}, {1000, 8}, {2000, 50}}, records: 3, next: 2050}},
			examined: 103},
		{name: "a range inside one free extent", free: free, start: 2010, end: 2020,
			want:     []batchWant{{exts: [][2]uint32{{2010, 10}}, records: 1, next: 2020}},
			examined: 10},
		{name: "a range with no free space", free: free, start: 300, end: 900,
			want: []batchWant{{next: 900}}},
		{name: "minlen skips short extents", free: free, minLen: 10,
			want:     []batchWant{{exts: [][2]uint32{{100, 10}, {200, 50}, {2000, 100}}, records: 4}},
			examined: 168, short: 8},
		{name: "minlen applies after clipping", free: free, start: 105, end: 3000, minLen: 10,
			want:     []batchWant{{exts: [][2]uint32{{200, 50}, {2000, 100}}, records: 4, next: 3000}},
			examined: 163, short: 13},
		{name: "busy extents are skipped", free: []format.AllocRec{rec(100, 10), rec(1000, 8)},
			busy:     []format.AllocRec{rec(200, 50)},
			want:     []batchWant{{exts: [][2]uint32{{100, 10}, {1000, 8}}, records: 3}},
			examined: 68, busyBlocks: 50},
		{name: "a busy middle is cut out", free: []format.AllocRec{rec(300, 4), rec(316, 4)},
			busy:     []format.AllocRec{rec(304, 12)},
			want:     []batchWant{{exts: [][2]uint32{{300, 4}, {316, 4}}, records: 1}},
			examined: 20, busyBlocks: 12},
		{name: "pieces around a busy middle fall under minlen", free: []format.AllocRec{rec(300, 4), rec(316, 4)},
			busy: []format.AllocRec{rec(304, 12)}, minLen: 5,
			want:     []batchWant{{records: 1}},
			examined: 20, busyBlocks: 12, short: 8},
		{name: "restart cursor across batches", free: five, batch: 2,
			want: []batchWant{
				{exts: [][2]uint32{{100, 1}, {110, 2}}, records: 2, next: 112},
				{exts: [][2]uint32{{120, 3}, {130, 4}}, records: 2, next: 134},
				{exts: [][2]uint32{{140, 5}}, records: 1},
			},
			examined: 15},
		{name: "restart cursor inside a clipped extent", free: five, batch: 2, start: 121, end: 142,
			want: []batchWant{
				{exts: [][2]uint32{{121, 2}, {130, 4}}, records: 2, next: 134},
				{exts: [][2]uint32{{140, 2}}, records: 1, next: 142},
			},
			examined: 8},
		{name: "a block bound cuts large extents, the next batch resumes inside", free: free, blocks: 40,
			want: []batchWant{
				{exts: [][2]uint32{{100, 10}, {200, 30}}, records: 2, next: 230},
				{exts: [][2]uint32{{230, 20}, {1000, 8}, {2000, 12}}, records: 3, next: 2012},
				{exts: [][2]uint32{{2012, 40}}, records: 1, next: 2052},
				{exts: [][2]uint32{{2052, 40}}, records: 1, next: 2092},
				{exts: [][2]uint32{{2092, 8}}, records: 1},
			},
			examined: 168},
		{name: "a block bound met at a record's end", free: five, blocks: 3,
			want: []batchWant{
				{exts: [][2]uint32{{100, 1}, {110, 2}}, records: 2, next: 112},
				{exts: [][2]uint32{{120, 3}}, records: 1, next: 123},
				{exts: [][2]uint32{{130, 3}}, records: 1, next: 133},
				{exts: [][2]uint32{{133, 1}, {140, 2}}, records: 2, next: 142},
				{exts: [][2]uint32{{142, 3}}, records: 1},
			},
			examined: 15},
		{name: "a block bound counts free space walked, inside runs or not", free: free, blocks: 20,
			only: [][2]format.AgBlock{{105, 108}, {240, 1004}, {2099, 2100}},
			want: []batchWant{
				{exts: [][2]uint32{{105, 3}}, records: 2, next: 210},
				{records: 1, next: 230},
				{exts: [][2]uint32{{240, 10}}, records: 1, next: 250},
				{exts: [][2]uint32{{1000, 4}}, records: 2, next: 2012},
				{records: 1, next: 2032},
				{records: 1, next: 2052},
				{records: 1, next: 2072},
				{records: 1, next: 2092},
				{exts: [][2]uint32{{2099, 1}}, records: 1},
			},
			examined: 18},
		{name: "only inside runs", free: free, only: [][2]format.AgBlock{{105, 108}, {240, 1004}, {2099, 2100}},
			want:     []batchWant{{exts: [][2]uint32{{105, 3}, {240, 10}, {1000, 4}, {2099, 1}}, records: 4}},
			examined: 18},
		{name: "runs past every free extent", free: free, only: [][2]format.AgBlock{{0, 100}, {150, 200}, {3000, 4000}},
			want: []batchWant{{records: 4}}},
		{name: "runs with minlen and a batch boundary", free: five, batch: 2, minLen: 2,
			only: [][2]format.AgBlock{{100, 111}, {121, 134}},
			want: []batchWant{
				{exts: nil, records: 2, next: 112},
				{exts: [][2]uint32{{121, 2}, {130, 4}}, records: 2, next: 134},
				{records: 1},
			},
			examined: 8, short: 2},
		{name: "full AG", want: []batchWant{{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2, NoReflink: true})
			shapeAG(t, h, ag, c.free, c.busy)
			end := c.end
			if end == 0 {
				end = h.geo.AgSize(ag)
			}
			for i := range c.want {
				if c.want[i].next == 0 {
					c.want[i].next = end
				}
			}
			r := TrimRange{AG: ag, Start: format.AgBlock(c.start), End: format.AgBlock(end), MinLen: c.minLen, BatchRecords: c.batch, BatchBlocks: c.blocks, Only: c.only}
			var got []batchWant
			var examined, busy, short uint64
			for from, done := r.Start, false; !done; {
				b, err := h.space.GatherTrim(h.Cache, r, from)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, gotBatch(b))
				examined, busy, short = examined+b.Examined, busy+b.Busy, short+b.Short
				if b.Blocks()+b.Busy+b.Short != b.Examined {
					t.Fatalf("batch %+v: extents, busy and short do not add up to what it examined", b)
				}
				h.space.TrimDone(b)
				from, done = b.Next, b.Done
				if len(got) > 10 {
					t.Fatal("the walk does not end")
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("batches\n%v\nwant\n%v", got, c.want)
			}
			if examined != c.examined || busy != c.busyBlocks || short != c.short {
				t.Fatalf("examined %d, busy %d, short %d; want %d, %d, %d", examined, busy, short, c.examined, c.busyBlocks, c.short)
			}
			if n := h.Cache.Busy().Discarding(); n != 0 {
				t.Fatalf("%d extents still marked discarding", n)
			}
		})
	}
}

// TestTrimEmptyAG: an AG as mkfs leaves it (one free extent after the
// headers and the free list) is one extent, in one batch.
func TestTrimEmptyAG(t *testing.T) {
	h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2, NoReflink: true})
	recs := checkAG(t, h, 1)
	if len(recs) != 1 {
		t.Fatalf("a fresh AG has free extents %v", recs)
	}
	b, err := h.space.GatherTrim(h.Cache, TrimRange{AG: 1, End: format.AgBlock(h.geo.AgSize(1))}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.space.TrimDone(b)
	want := []trans.Extent{{AG: 1, Start: recs[0].StartBlock, Len: recs[0].BlockCount}}
	if !b.Done || !slices.Equal(b.Extents, want) {
		t.Fatalf("gathered %+v, want %v in one batch", b, want)
	}
}

// TestTrimMarksDiscarding: extents a batch gathered are busy until
// TrimDone: allocations avoid them (an AG with nothing else fails with
// ErrBusyOnly), another walk skips them, and afterwards they are
// allocatable again.
func TestTrimMarksDiscarding(t *testing.T) {
	const ag = 1
	h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2, NoReflink: true})
	shapeAG(t, h, ag, []format.AllocRec{rec(100, 10)}, nil)
	r := TrimRange{AG: ag, End: 1000}
	b, err := h.space.GatherTrim(h.Cache, r, 0)
	if err != nil || len(b.Extents) != 1 {
		t.Fatalf("gathered %+v, %v", b, err)
	}
	again, err := h.space.GatherTrim(h.Cache, r, 0)
	if err != nil || len(again.Extents) != 0 || again.Busy != 10 {
		t.Fatalf("a second walk while the first discards: %+v, %v", again, err)
	}
	a := h.lock(ag)
	if _, _, err := a.Alloc(Request{MinLen: 1, MaxLen: 4}); !errors.Is(err, ErrBusyOnly) {
		t.Fatalf("allocation from an extent being discarded: %v", err)
	}
	a.t.Cancel()
	h.sync() // durability does not end a discard
	a = h.lock(ag)
	if _, _, err := a.Alloc(Request{MinLen: 1, MaxLen: 4}); !errors.Is(err, ErrBusyOnly) {
		t.Fatalf("allocation after a sync, discard still running: %v", err)
	}
	a.t.Cancel()
	h.space.TrimDone(b)
	a = h.lock(ag)
	defer a.t.Cancel()
	if bno, n, err := a.Alloc(Request{MinLen: 1, MaxLen: 4}); err != nil || bno < 100 || bno+format.AgBlock(n) > 110 {
		t.Fatalf("allocation after the discard: %d+%d, %v", bno, n, err)
	}
}

// TestTrimRefusesNeverFree: a free-space record over the log is
// corruption; the walk reports it and discards nothing.
func TestTrimRefusesNeverFree(t *testing.T) {
	h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2, NoReflink: true})
	shapeAG(t, h, 1, []format.AllocRec{rec(100, 10), rec(200, 50)}, nil)
	h.space.SetNeverFree(trans.Extent{AG: 1, Start: 240, Len: 100})
	_, err := h.space.GatherTrim(h.Cache, TrimRange{AG: 1, End: 1000}, 0)
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("walk over a record covering the log: %v", err)
	}
	if n := h.Cache.Busy().Discarding(); n != 0 {
		t.Fatalf("a failed walk left %d extents marked", n)
	}
}

// TestTrimPipeline runs whole walks: every batch is discarded once and
// in order, discards overlap the next gather, a caller reporting a batch
// holds at most the batch being discarded busy, a discard error stops the
// walk at the first batch not discarded, and cancellation between batches
// leaves nothing marked.
func TestTrimPipeline(t *testing.T) {
	const ag = 1
	h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2, NoReflink: true})
	var free []format.AllocRec
	for i := uint32(0); i < 50; i++ {
		free = append(free, rec(100+4*i, 2))
	}
	shapeAG(t, h, ag, free, nil)
	r := TrimRange{AG: ag, End: 1000, BatchRecords: 7}

	var mu sync.Mutex
	var discarded []trans.Extent
	record := func(exts []trans.Extent) error {
		mu.Lock()
		defer mu.Unlock()
		discarded = append(discarded, exts...)
		return nil
	}
	batches, most := 0, 0
	next, err := h.space.Trim(context.Background(), h.Cache, r, record, func(TrimBatch) {
		batches++
		most = max(most, h.Cache.Busy().Discarding())
	})
	if err != nil || next != r.End {
		t.Fatalf("walk: next %d, %v", next, err)
	}
	if len(discarded) != 50 || batches != 8 {
		t.Fatalf("%d extents in %d batches, want 50 in 8", len(discarded), batches)
	}
	if most > r.BatchRecords {
		t.Fatalf("%d extents marked while a batch was reported: more than the one batch being discarded", most)
	}
	for i, e := range discarded {
		if e.Start != free[i].StartBlock || e.Len != free[i].BlockCount {
			t.Fatalf("extent %d discarded as %+v, want %v", i, e, free[i])
		}
	}

	// The third discard fails: the walk resumes where that batch began,
	// the end of the second batch's last record.
	calls := 0
	stop := errors.New("unsupported")
	failing := func(exts []trans.Extent) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	}
	next, err = h.space.Trim(context.Background(), h.Cache, r, failing, nil)
	if resume := free[13].StartBlock + 2; !errors.Is(err, stop) || next != resume {
		t.Fatalf("failed discard: next %d, %v; want %d", next, err, resume)
	}
	if n := h.Cache.Busy().Discarding(); n != 0 {
		t.Fatalf("%d extents left marked after a failed walk", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	next, err = h.space.Trim(ctx, h.Cache, r, record, func(b TrimBatch) {
		if b.Next > 150 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || next <= 150 || next >= r.End {
		t.Fatalf("cancelled walk: next %d, %v", next, err)
	}
	if n := h.Cache.Busy().Discarding(); n != 0 {
		t.Fatalf("%d extents left marked after a cancelled walk", n)
	}
}

// TestUntrimmed: every granule is untrimmed at open; taking a range
// forgets the granules wholly inside it, frees mark theirs again, and so
// does a walk for the busy extents it skips. Granules of 16 blocks (an
// AG of 4 GiB of 4 KiB blocks has them) show partly covered ones.
func TestUntrimmed(t *testing.T) {
	const ag = 1
	h := newHarness(t, 64<<20, mkfs.Options{AgCount: 2, NoReflink: true})
	s := h.space
	if s.untrimmed.shift != 0 {
		t.Fatalf("granules of %d blocks on an AG of %d blocks", 1<<s.untrimmed.shift, h.geo.AgBlocks)
	}
	s.untrimmed = newUntrimmedShift(h.geo, 4)
	gran := format.AgBlock(1) << s.untrimmed.shift
	size := format.AgBlock(h.geo.AgSize(ag))
	if got := s.Untrimmed(ag); got < uint64(size) {
		t.Fatalf("untrimmed at open: %d blocks of %d", got, size)
	}
	if runs := s.TakeUntrimmed(ag, 0, size); len(runs) != 1 || runs[0] != [2]format.AgBlock{0, size} {
		t.Fatalf("first take: %v", runs)
	}
	if got := s.Untrimmed(ag); got != 0 {
		t.Fatalf("%d blocks untrimmed after taking all", got)
	}
	s.MarkUntrimmed(ag, 3*gran+1, 3*gran+2)
	s.MarkUntrimmed(ag, 5*gran, 7*gran)
	want := [][2]format.AgBlock{{3 * gran, 4 * gran}, {5 * gran, 7 * gran}}
	if runs := s.TakeUntrimmed(ag, 0, size); !slices.Equal(runs, want) {
		t.Fatalf("take %v, want %v", runs, want)
	}
	// A take of part of a granule returns that part and keeps the mark.
	s.MarkUntrimmed(ag, 8*gran, 8*gran+1)
	if runs := s.TakeUntrimmed(ag, 8*gran+2, 8*gran+5); !slices.Equal(runs, [][2]format.AgBlock{{8*gran + 2, 8*gran + 5}}) {
		t.Fatalf("partial take %v", runs)
	}
	if got := s.Untrimmed(ag); got != uint64(gran) {
		t.Fatalf("a partly taken granule is forgotten: %d untrimmed", got)
	}
	s.TakeUntrimmed(ag, 0, size)

	// Frees mark; busy extents a walk skips are marked again.
	shapeAG(t, h, ag, []format.AllocRec{rec(10*uint32(gran), 4)}, []format.AllocRec{rec(20*uint32(gran), 4)})
	s.TakeUntrimmed(ag, 0, size)
	b, err := s.GatherTrim(h.Cache, TrimRange{AG: ag, End: size}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.TrimDone(b)
	if runs := s.TakeUntrimmed(ag, 0, size); !slices.Equal(runs, [][2]format.AgBlock{{20 * gran, 21 * gran}}) {
		t.Fatalf("after a walk that skipped a busy extent: %v", runs)
	}
	a := h.lock(ag)
	if err := a.Free(30*gran, 1); err != nil {
		t.Fatal(err)
	}
	a.t.Cancel() // a cancelled free marks too: harmless, trim finds nothing
	if runs := s.TakeUntrimmed(ag, 0, size); !slices.Equal(runs, [][2]format.AgBlock{{30 * gran, 31 * gran}}) {
		t.Fatalf("after a free: %v", runs)
	}
}
