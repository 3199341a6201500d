package refcount

import (
	"errors"
	"slices"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

func sh(start, n, count uint32) Rec {
	return Rec{Start: format.AgBlock(start), Len: n, Count: count, Domain: Shared}
}

func cw(start, n uint32) Rec { return Rec{Start: format.AgBlock(start), Len: n, Count: 1, Domain: CoW} }

func ext(start, n uint32) Extent { return Extent{format.AgBlock(start), n} }

// op is one change a table case makes.
type op struct {
	kind  string // "adj", "stage", "unstage", "clean"
	start uint32
	n     uint32
	delta int
}

func adj(start, n uint32, delta int) op { return op{kind: "adj", start: start, n: n, delta: delta} }
func stage(start, n uint32) op          { return op{kind: "stage", start: start, n: n} }
func unstage(start, n uint32) op        { return op{kind: "unstage", start: start, n: n} }

func (o op) run(tr *Tree) ([]Extent, error) {
	switch o.kind {
	case "adj":
		return tr.Adjust(format.AgBlock(o.start), o.n, o.delta)
	case "stage":
		return nil, tr.AddCoWStaging(format.AgBlock(o.start), o.n)
	case "unstage":
		return nil, tr.RemoveCoWStaging(format.AgBlock(o.start), o.n)
	case "clean":
		return tr.CleanCoWStaging()
	}
	panic(o.kind)
}

// TestAdjustCases runs one change on a tree holding the given records
// and checks the records and the freed extents it leaves, case by case
// through split, merge (left, right, center, with records and holes) and
// adjust, in both domains.
func TestAdjustCases(t *testing.T) {
	const pinned = MaxRefcount
	cases := []struct {
		name    string
		before  []Rec
		op      op
		after   []Rec
		free    []Extent
		wantErr error
	}{
		{"increment a hole", nil, adj(100, 10, 1), []Rec{sh(100, 10, 2)}, nil, nil},
		{"decrement a hole frees it", nil, adj(100, 10, -1), nil, []Extent{ext(100, 10)}, nil},
		{"increment around a record", []Rec{sh(100, 10, 2)}, adj(95, 20, 1),
			[]Rec{sh(95, 5, 2), sh(100, 10, 3), sh(110, 5, 2)}, nil, nil},
		{"decrement to one removes the record", []Rec{sh(100, 10, 2)}, adj(100, 10, -1), nil, nil, nil},
		{"split at both ends", []Rec{sh(100, 10, 2)}, adj(103, 4, 1),
			[]Rec{sh(100, 3, 2), sh(103, 4, 3), sh(107, 3, 2)}, nil, nil},
		{"split and drop the middle", []Rec{sh(100, 10, 2)}, adj(103, 4, -1),
			[]Rec{sh(100, 3, 2), sh(107, 3, 2)}, nil, nil},
		{"merge left", []Rec{sh(100, 10, 3), sh(110, 10, 2)}, adj(110, 5, 1),
			[]Rec{sh(100, 15, 3), sh(115, 5, 2)}, nil, nil},
		{"merge left with a hole", []Rec{sh(100, 10, 2)}, adj(110, 5, 1), []Rec{sh(100, 15, 2)}, nil, nil},
		{"merge right", []Rec{sh(100, 10, 2), sh(110, 10, 3)}, adj(105, 5, 1),
			[]Rec{sh(100, 5, 2), sh(105, 15, 3)}, nil, nil},
		{"merge right with a hole", []Rec{sh(110, 10, 2)}, adj(105, 5, 1), []Rec{sh(105, 15, 2)}, nil, nil},
		{"merge center record", []Rec{sh(100, 10, 3), sh(110, 5, 2), sh(115, 10, 3)}, adj(110, 5, 1),
			[]Rec{sh(100, 25, 3)}, nil, nil},
		{"merge center hole", []Rec{sh(100, 10, 2), sh(115, 10, 2)}, adj(110, 5, 1),
			[]Rec{sh(100, 25, 2)}, nil, nil},
		{"merge center on decrement", []Rec{sh(100, 10, 2), sh(110, 5, 3), sh(115, 10, 2)}, adj(110, 5, -1),
			[]Rec{sh(100, 25, 2)}, nil, nil},
		{"merge both ends, adjust between", []Rec{sh(100, 10, 3), sh(110, 5, 2), sh(120, 5, 2), sh(125, 5, 3)},
			adj(110, 15, 1), []Rec{sh(100, 15, 3), sh(115, 5, 2), sh(120, 10, 3)}, nil, nil},
		{"decrement frees the holes only", []Rec{sh(100, 5, 2), sh(110, 5, 3)}, adj(98, 20, -1),
			[]Rec{sh(110, 5, 2)}, []Extent{ext(98, 2), ext(105, 5), ext(115, 3)}, nil},
		{"pinned count stays on increment", []Rec{sh(100, 5, pinned)}, adj(100, 5, 1),
			[]Rec{sh(100, 5, pinned)}, nil, nil},
		{"pinned count stays on decrement, nothing freed", []Rec{sh(100, 5, pinned)}, adj(98, 9, -1),
			[]Rec{sh(100, 5, pinned)}, []Extent{ext(98, 2), ext(105, 2)}, nil},
		{"shared change leaves staging alone", []Rec{cw(110, 5)}, adj(100, 15, 1),
			[]Rec{sh(100, 15, 2), cw(110, 5)}, nil, nil},

		{"stage", nil, stage(200, 10), []Rec{cw(200, 10)}, nil, nil},
		{"stage merges left", []Rec{cw(200, 10)}, stage(210, 5), []Rec{cw(200, 15)}, nil, nil},
		{"stage merges right", []Rec{cw(200, 10)}, stage(190, 10), []Rec{cw(190, 20)}, nil, nil},
		{"stage merges center", []Rec{cw(300, 5), cw(310, 5)}, stage(305, 5), []Rec{cw(300, 15)}, nil, nil},
		{"stage next to shared does not merge", []Rec{sh(100, 10, 2)}, stage(110, 5),
			[]Rec{sh(100, 10, 2), cw(110, 5)}, nil, nil},
		{"unstage the middle", []Rec{cw(200, 15)}, unstage(205, 5), []Rec{cw(200, 5), cw(210, 5)}, nil, nil},
		{"unstage all", []Rec{cw(200, 15)}, unstage(200, 15), nil, nil, nil},
		{"clean", []Rec{sh(100, 10, 2), cw(200, 5), cw(300, 7)}, op{kind: "clean"},
			[]Rec{sh(100, 10, 2)}, []Extent{ext(200, 5), ext(300, 7)}, nil},

		{"unstage what is not staged", []Rec{cw(200, 5)}, unstage(210, 5), nil, nil, format.ErrCorrupt},
		{"unstage across two records", []Rec{cw(200, 5), cw(210, 5)}, unstage(200, 15), nil, nil, format.ErrCorrupt},
		{"stage over staging", []Rec{cw(200, 10)}, stage(205, 10), nil, nil, format.ErrCorrupt},
		{"delta 2", nil, adj(100, 1, 2), nil, nil, format.ErrInvalid},
		{"empty range", nil, adj(100, 0, 1), nil, nil, format.ErrInvalid},
		{"range past the AG", nil, adj(65530, 10, 1), nil, nil, format.ErrInvalid},
		{"range in the AG headers", nil, adj(3, 2, 1), nil, nil, format.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, s := newMemTree(t, 512)
			for _, r := range c.before {
				if err := tr.insert(r); err != nil {
					t.Fatal(err)
				}
			}
			s.commit()
			free, err := c.op.run(tr)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("error %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s.commit()
			if got := records(t, tr); !slices.Equal(got, c.after) {
				t.Errorf("records %v, want %v", got, c.after)
			}
			if !slices.Equal(free, c.free) {
				t.Errorf("freed %v, want %v", free, c.free)
			}
			if _, err := tr.Check(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestShared(t *testing.T) {
	tr, s := newMemTree(t, 512)
	for _, r := range []Rec{sh(100, 10, 2), sh(110, 5, 3), sh(130, 5, 2), cw(140, 10)} {
		if err := tr.insert(r); err != nil {
			t.Fatal(err)
		}
	}
	s.commit()
	cases := []struct {
		start, n uint32
		want     []Rec
	}{
		{105, 30, []Rec{sh(105, 5, 2), sh(110, 5, 3), sh(130, 5, 2)}},
		{50, 10, nil},
		{112, 1, []Rec{sh(112, 1, 3)}},
		{115, 15, nil},
		{90, 100, []Rec{sh(100, 10, 2), sh(110, 5, 3), sh(130, 5, 2)}},
		{134, 20, []Rec{sh(134, 1, 2)}},
		{140, 10, nil}, // staged, not shared
	}
	for _, c := range cases {
		got, err := tr.Shared(format.AgBlock(c.start), c.n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Shared(%d, %d) = %v, want %v", c.start, c.n, got, c.want)
		}
	}
	st, err := tr.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stats{Records: 3, Shared: 20, Saved: 10 + 10 + 5, CoWRecords: 1, CoW: 10}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

// TestCheckFindsUnmerged: two touching shared records of equal count are
// what xfs_repair reports; Check does too.
func TestCheckFindsUnmerged(t *testing.T) {
	tr, s := newMemTree(t, 512)
	for _, r := range []Rec{sh(100, 10, 2), sh(110, 5, 2)} {
		if err := tr.insert(r); err != nil {
			t.Fatal(err)
		}
	}
	s.commit()
	if _, err := tr.Check(); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("Check: %v, want corruption", err)
	}
}
