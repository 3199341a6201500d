package refcount

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// blockModel is what the tree must describe, one entry per block of the
// region [lo, lo+len(count)): count is the number of file mappings of
// the block (0: free or staged), staged marks CoW staging.
type blockModel struct {
	lo     format.AgBlock
	count  []uint32
	staged []bool
}

func newBlockModel(lo format.AgBlock, n int) *blockModel {
	m := &blockModel{lo: lo, count: make([]uint32, n), staged: make([]bool, n)}
	for i := range m.count {
		m.count[i] = 1 // every block starts mapped once
	}
	return m
}

// records returns the canonical records: maximal runs of blocks with one
// count of 2 or more, then maximal runs of staged blocks.
func (m *blockModel) records() []Rec {
	var out []Rec
	for i := 0; i < len(m.count); {
		c := m.count[i]
		j := i + 1
		for j < len(m.count) && m.count[j] == c {
			j++
		}
		if c >= 2 {
			out = append(out, Rec{Start: m.lo + format.AgBlock(i), Len: uint32(j - i), Count: c, Domain: Shared})
		}
		i = j
	}
	for _, e := range m.runs(func(i int) bool { return m.staged[i] }, 0, len(m.count)) {
		out = append(out, Rec{Start: e.Start, Len: e.Len, Count: 1, Domain: CoW})
	}
	return out
}

// runs returns the maximal runs of blocks in [from, to) (indexes) for
// which in holds.
func (m *blockModel) runs(in func(i int) bool, from, to int) []Extent {
	var out []Extent
	for i := from; i < to; {
		if !in(i) {
			i++
			continue
		}
		j := i + 1
		for j < to && in(j) {
			j++
		}
		out = append(out, Extent{m.lo + format.AgBlock(i), uint32(j - i)})
		i = j
	}
	return out
}

func (m *blockModel) free(i int) bool { return m.count[i] == 0 && !m.staged[i] }

// pick returns a range of up to maxLen blocks all of which satisfy in,
// starting at a random block that does; ok is false when a few tries
// found none.
func (m *blockModel) pick(rng *rand.Rand, maxLen int, in func(i int) bool) (i, n int, ok bool) {
	for try := 0; try < 20; try++ {
		i = rng.Intn(len(m.count))
		if !in(i) {
			continue
		}
		want := 1 + rng.Intn(maxLen)
		n = 1
		for n < want && i+n < len(m.count) && in(i+n) {
			n++
		}
		return i, n, true
	}
	return 0, 0, false
}

// TestModel runs seeded random sequences of increments, decrements,
// allocations, staging, unstaging and cleanups over a region of an AG
// against a per-block model, with 512-byte blocks so that a few
// thousand records make a tree of three or four levels. After every
// step the tree's records must be the model's canonical ones, a
// decrement must return exactly the blocks whose count fell to 0, and
// the tree must pass Check (structure, records, agf_refcount_blocks).
// The first three fifths favour increments (the tree grows), the rest
// decrements; then every shared record is decremented until the tree is
// one empty leaf again.
func TestModel(t *testing.T) {
	seeds := []int64{1, 2}
	steps := 5000
	if testing.Short() {
		seeds, steps = seeds[:1], 1000
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runModel(t, seed, steps) })
	}
}

func runModel(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	tr, s := newMemTree(t, 512)
	m := newBlockModel(16, 40000)
	mapped := func(i int) bool { return m.count[i] > 0 }
	tallest, most := 0, 0
	for step := 0; step < steps; step++ {
		grow := step < steps*3/5
		var (
			what     string
			free     []Extent
			wantFree []Extent
			err      error
		)
		x := rng.Intn(100)
		switch {
		case x < 88 && grow || x < 5 && !grow:
			i, n, ok := m.pick(rng, 8, mapped)
			if !ok {
				continue
			}
			what = fmt.Sprintf("+1 %d+%d", m.lo+format.AgBlock(i), n)
			free, err = tr.Adjust(m.lo+format.AgBlock(i), uint32(n), 1)
			for k := i; k < i+n; k++ {
				m.count[k]++
			}
		case x < 85:
			in := mapped
			if rng.Intn(5) != 0 {
				in = func(k int) bool { return m.count[k] >= 2 }
			}
			i, n, ok := m.pick(rng, 12, in)
			if !ok {
				continue
			}
			what = fmt.Sprintf("-1 %d+%d", m.lo+format.AgBlock(i), n)
			wantFree = m.runs(func(k int) bool { return m.count[k] == 1 }, i, i+n)
			free, err = tr.Adjust(m.lo+format.AgBlock(i), uint32(n), -1)
			for k := i; k < i+n; k++ {
				m.count[k]--
			}
		case x < 90:
			// Allocate free blocks to a file: no tree change.
			i, n, ok := m.pick(rng, 20, m.free)
			if !ok {
				continue
			}
			for k := i; k < i+n; k++ {
				m.count[k] = 1
			}
			continue
		case x < 95:
			i, n, ok := m.pick(rng, 8, m.free)
			if !ok {
				continue
			}
			what = fmt.Sprintf("stage %d+%d", m.lo+format.AgBlock(i), n)
			err = tr.AddCoWStaging(m.lo+format.AgBlock(i), uint32(n))
			for k := i; k < i+n; k++ {
				m.staged[k] = true
			}
		case x < 99:
			i, n, ok := m.pick(rng, 8, func(k int) bool { return m.staged[k] })
			if !ok {
				continue
			}
			what = fmt.Sprintf("unstage %d+%d", m.lo+format.AgBlock(i), n)
			err = tr.RemoveCoWStaging(m.lo+format.AgBlock(i), uint32(n))
			remap := rng.Intn(2) == 0 // the write completed: a file maps them now
			for k := i; k < i+n; k++ {
				m.staged[k] = false
				if remap {
					m.count[k] = 1
				}
			}
		default:
			what = "clean"
			wantFree = m.runs(func(k int) bool { return m.staged[k] }, 0, len(m.count))
			free, err = tr.CleanCoWStaging()
			clear(m.staged)
		}
		if err != nil {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		s.commit()
		if !slices.Equal(free, wantFree) {
			t.Fatalf("step %d (%s): freed %v, want %v", step, what, free, wantFree)
		}
		got, want := records(t, tr), m.records()
		if !slices.Equal(got, want) {
			t.Fatalf("step %d (%s): %d records differ from the model's %d\n%s", step, what, len(got), len(want), firstDiff(got, want))
		}
		most = max(most, len(got))
		if _, err := tr.Check(); err != nil {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		tallest = max(tallest, tr.Levels())
	}
	// Drain: decrement every shared record of the model, in random
	// order, until none is left; the tree shrinks back to one leaf.
	drained := 0
	for recs := m.records(); len(recs) > 0; recs = m.records() {
		rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		for _, r := range recs {
			if r.Domain != Shared {
				continue
			}
			free, err := tr.Adjust(r.Start, r.Len, -1)
			if err != nil || len(free) > 0 {
				t.Fatalf("drain -1 %v: freed %v, %v", r, free, err)
			}
			s.commit()
			for k := range r.Len {
				m.count[int(r.Start-m.lo)+int(k)]--
			}
			if drained++; drained%8 == 0 {
				if got, want := records(t, tr), m.records(); !slices.Equal(got, want) {
					t.Fatalf("drain step %d (-1 %v): tree and model differ\n%s", drained, r, firstDiff(got, want))
				}
				if _, err := tr.Check(); err != nil {
					t.Fatalf("drain step %d: %v", drained, err)
				}
			}
		}
		if _, err := tr.CleanCoWStaging(); err != nil {
			t.Fatal(err)
		}
		clear(m.staged)
	}
	if got := records(t, tr); len(got) != 0 {
		t.Fatalf("drained tree holds %d records", len(got))
	}
	st, err := tr.Check()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: tallest tree %d levels (%d records), drained in %d decrements to %d level(s), %d block(s)",
		seed, tallest, most, drained, tr.Levels(), tr.hdr.RefcountBlocks)
	if st != (Stats{}) || tr.Levels() != 1 || tr.hdr.RefcountBlocks != 1 {
		t.Errorf("drained tree: %+v, %d levels, %d blocks; want empty, one leaf", st, tr.Levels(), tr.hdr.RefcountBlocks)
	}
	if !testing.Short() && tallest < 3 {
		t.Errorf("the tree grew to %d levels only: want 3 or more", tallest)
	}
}

// firstDiff describes where two record lists part.
func firstDiff(got, want []Rec) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i].String()
		}
		if i < len(want) {
			w = want[i].String()
		}
		if g != w {
			return fmt.Sprintf("record %d: tree %q, model %q", i, g, w)
		}
	}
	return "no difference"
}
