package trans

import (
	"errors"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// countingOps is a kind whose first byte must be want; it counts how
// often its verifier runs.
func countingOps(name string, want byte, calls *int) *Ops {
	return &Ops{
		Name: name,
		Verify: func(b []byte, _ format.Daddr) error {
			*calls++
			if b[0] != want {
				return format.Corrupt(name, "", "first byte %#x", b[0])
			}
			return nil
		},
		Finish: func(b []byte) { b[0] = want },
	}
}

// TestCachedBlockVerifiedPerKind: a cached block is verified once per
// kind and version, never handed unverified to a reader of another kind
// (on a corrupt volume one block can be reached as a directory block and
// as a bmbt block), and a block a commit finished is known as that kind.
func TestCachedBlockVerifiedPerKind(t *testing.T) {
	c, _ := newCache(t, 16) // every block starts with 0xAB
	var aCalls, a2Calls, bCalls int
	a := countingOps("a", 0xAB, &aCalls)
	a2 := countingOps("a", 0xAB, &a2Calls) // same kind, another owner
	b := countingOps("b", 0xCD, &bCalls)

	steps := []struct {
		what    string
		ops     *Ops
		corrupt bool
		a, a2   int // verifier calls so far
		b       int
	}{
		{"first read verifies", a, false, 1, 0, 0},
		{"cached read does not", a, false, 1, 0, 0},
		{"same kind, other ops: trusted", a2, false, 1, 0, 0},
		{"other kind: verified, and refused", b, true, 1, 0, 1},
		{"and again: nothing cached it as b", b, true, 1, 0, 2},
		{"still fine as a", a, false, 1, 0, 2},
	}
	for _, s := range steps {
		_, err := c.Read(3, 512, s.ops)
		if s.corrupt != errors.Is(err, format.ErrCorrupt) || !s.corrupt && err != nil {
			t.Fatalf("%s: err %v", s.what, err)
		}
		if aCalls != s.a || a2Calls != s.a2 || bCalls != s.b {
			t.Fatalf("%s: verifier calls a %d a2 %d b %d, want %d %d %d", s.what, aCalls, a2Calls, bCalls, s.a, s.a2, s.b)
		}
	}

	// A block read unverified (no ops) is verified by the first reader
	// that names a kind.
	if _, err := c.Read(4, 512, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(4, 512, b); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("block read without ops handed out as b: %v", err)
	}

	// A transaction holding the block as another kind is refused too.
	tx, _ := c.Begin()
	if _, err := tx.Read(3, 512, b); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("transaction read an a block as b: %v", err)
	}
	tx.Cancel()

	// A commit that rewrites the block as b makes it a b block: readers
	// of b trust it, readers of a verify the new version (and refuse it).
	tx, _ = c.Begin()
	buf, err := tx.Get(3, 512, b)
	if err != nil {
		t.Fatal(err)
	}
	buf[1] = 1
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	calls := bCalls
	if got, err := c.Read(3, 512, b); err != nil || got[0] != 0xCD {
		t.Fatalf("committed b block: %v", err)
	}
	if bCalls != calls {
		t.Fatal("a block finished as b was verified again as b")
	}
	if _, err := c.Read(3, 512, a); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("b block handed out as a: %v", err)
	}
}
