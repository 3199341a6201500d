package alloc

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/trans"
)

// BenchmarkTrimLockHold measures how long trim holds an AG's free-space
// lock (AGF) as free-space fragmentation grows (16k, 64k and 256k free
// single-block extents in one AG), for three walks side by side:
//
//   - bnobt-sub-AG: this package's walk by block number, 100 records per
//     hold, restart cursor a block number;
//   - cntbt-whole-AG: the by-size walk from the longest extent down with
//     the AGF held for the whole AG (what whole-AG trims did before
//     batching);
//   - cntbt-batched: the by-size walk in batches of 100, restarting from
//     the (length, block) key of the next record, as the kernel's whole-AG
//     FITRIM does today;
//
// and, for a sixteenth of the AG (a window of a periodic pass), the
// by-block walk against the batched by-size walk, which must examine
// every record of the AG to find those in the window.
//
// Discards are no-ops: only gathering holds the AGF. It reports the max,
// p99 and median hold, the batches, the records examined and the blocks
// gathered. Run with
//
//	go test ./xfs/alloc/ -run '^$' -bench TrimLockHold -benchtime 3x
func BenchmarkTrimLockHold(b *testing.B) {
	for _, n := range []int{16 << 10, 64 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("free=%dk", n>>10), func(b *testing.B) {
			h, ag := fragmentedAG(b, n)
			size := format.AgBlock(h.geo.AgSize(ag))
			for _, w := range []struct {
				name string
				walk func(h *harness, ag format.AgNumber) walkResult
			}{
				{"bnobt-sub-AG", func(h *harness, ag format.AgNumber) walkResult { return walkByBlock(h, ag, 0, size) }},
				{"cntbt-whole-AG", func(h *harness, ag format.AgNumber) walkResult { return walkBySize(h, ag, 0, 0, size) }},
				{"cntbt-batched", func(h *harness, ag format.AgNumber) walkResult {
					return walkBySize(h, ag, DefaultTrimBatch, 0, size)
				}},
				// A sixteenth of the AG, as a periodic pass walks it.
				{"window/bnobt-sub-AG", func(h *harness, ag format.AgNumber) walkResult { return walkByBlock(h, ag, size/2, size/2+size/16) }},
				{"window/cntbt-batched", func(h *harness, ag format.AgNumber) walkResult {
					return walkBySize(h, ag, DefaultTrimBatch, size/2, size/2+size/16)
				}},
			} {
				b.Run(w.name, func(b *testing.B) {
					var res walkResult
					for i := 0; i < b.N; i++ {
						res = w.walk(h, ag)
					}
					max := res.holds[len(res.holds)-1]
					b.ReportMetric(float64(max.Microseconds()), "max-hold-µs")
					b.ReportMetric(float64(res.quantile(0.99).Microseconds()), "p99-hold-µs")
					b.ReportMetric(float64(res.quantile(0.5).Microseconds()), "p50-hold-µs")
					b.ReportMetric(float64(len(res.holds)), "batches")
					b.ReportMetric(float64(res.examined), "records")
					b.ReportMetric(float64(res.blocks), "blocks")
				})
			}
		})
	}
}

// walkResult is one walk's sorted AGF hold times, the records it
// examined and the blocks it gathered.
type walkResult struct {
	holds    []time.Duration
	examined int
	blocks   uint64
}

// quantile returns the q-quantile of the holds (nearest rank).
func (r walkResult) quantile(q float64) time.Duration {
	i := min(max(int(float64(len(r.holds))*q+0.999999)-1, 0), len(r.holds)-1)
	return r.holds[i]
}

func (r *walkResult) done() { slices.Sort(r.holds) }

// walkByBlock runs Space.Trim over [start, end) of the AG with a discard
// that does nothing.
func walkByBlock(h *harness, ag format.AgNumber, start, end format.AgBlock) walkResult {
	var res walkResult
	r := TrimRange{AG: ag, Start: start, End: end}
	_, err := h.space.Trim(context.Background(), h.Cache, r, func([]trans.Extent) error { return nil }, func(b TrimBatch) {
		res.holds = append(res.holds, b.Held)
		res.examined += b.Records
		res.blocks += b.Blocks()
	})
	if err != nil {
		h.t.Fatal(err)
	}
	res.done()
	return res
}

// walkBySize walks the cntbt from the longest extent down, batch records
// per AGF hold (0: the whole AG in one hold), restarting each batch with
// an LE lookup of the (length, block) key of the record after the last
// one examined; it keeps what lies in [start, end), which it can only find by
// examining every record. Each batch's extents are marked and released
// as Space.Trim does.
func walkBySize(h *harness, ag format.AgNumber, batch int, start, end format.AgBlock) walkResult {
	var res walkResult
	var key *format.AllocRec
	for {
		tx := h.begin()
		a, err := tx.Lock(ag)
		if err != nil {
			h.t.Fatal(err)
		}
		locked := time.Now()
		cur := a.Tree(format.BtCnt).NewCursor()
		var ok bool
		if key == nil {
			ok, err = cur.Last()
		} else {
			ok, err = cur.Lookup(btree.LE, encodeRec(*key))
		}
		var exts []trans.Extent
		for n := 0; ok && err == nil && (batch == 0 || n < batch); n++ {
			rec := decodeRec(cur)
			res.examined++
			from, to := max(rec.StartBlock, start), min(rec.StartBlock+format.AgBlock(rec.BlockCount), end)
			if to > from {
				tb := TrimBatch{}
				h.space.gatherPiece(&tb, TrimRange{AG: ag, MinLen: 1}, from, to)
				exts = append(exts, tb.Extents...)
			}
			ok, err = cur.Decrement()
		}
		if err != nil {
			h.t.Fatal(err)
		}
		key = nil
		if ok {
			next := decodeRec(cur)
			key = &next
		}
		h.space.busy.MarkDiscarding(exts)
		tx.Cancel()
		res.holds = append(res.holds, time.Since(locked))
		h.space.busy.ClearDiscarding(exts)
		for _, e := range exts {
			res.blocks += uint64(e.Len)
		}
		if key == nil {
			break
		}
	}
	res.done()
	return res
}

// fragmentedAG returns a volume whose AG 0 holds exactly n free extents
// of one block, one allocated block apart; built once per size and kept
// for the benchmark's sub-benchmarks.
func fragmentedAG(b *testing.B, n int) (*harness, format.AgNumber) {
	b.Helper()
	const ag = 0
	const reserve = 4096 // allocated blocks that feed the AGFL
	agBlocks := uint32(2*n + reserve + 1024)
	h := newHarness(b, int64(agBlocks)*2*4096, mkfs.Options{AgCount: 2})
	a := h.lock(ag)
	// Take everything, then give back every other block of a run; tree
	// splits take their blocks from the AGFL, refilled from the reserve
	// so that no free extent is taken for it.
	var first format.AgBlock = 1<<32 - 1
	for {
		bno, _, err := a.allocFromTrees(Request{MinLen: 1, MaxLen: format.MaxExtentLen})
		if err != nil {
			break
		}
		first = min(first, bno)
	}
	spare := first
	start := first + reserve
	for i := 0; i < n; i++ {
		for a.h.FlCount < a.MinFreelist() {
			if err := a.agflPut(spare); err != nil {
				b.Fatal(err)
			}
			spare++
		}
		if spare >= first+reserve {
			b.Fatal("the reserve of AGFL blocks ran out")
		}
		if err := a.freeToTrees(start+format.AgBlock(2*i), 1, false); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.t.Commit(); err != nil {
		b.Fatal(err)
	}
	h.sync()
	if recs := checkAGCount(b, h, ag); recs != n {
		b.Fatalf("AG %d has %d free extents, want %d", ag, recs, n)
	}
	return h, ag
}

// checkAGCount counts the bnobt records of ag.
func checkAGCount(b *testing.B, h *harness, ag format.AgNumber) int {
	a := h.lock(ag)
	defer a.t.Cancel()
	n := 0
	if _, err := a.Tree(format.BtBno).Check(func([]byte) error { n++; return nil }); err != nil {
		b.Fatal(err)
	}
	return n
}
