package fork

import (
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

var _ Writer = (*Mem)(nil)

// newExtentsMem returns a Mem of 4 KiB blocks, in a transaction that has
// turned it into an extents fork.
func newExtentsMem(t *testing.T) *Mem {
	m := NewMem(format.Geometry{BlockSize: 4096, BlockLog: 12}, 131, 100)
	m.Begin()
	if err := m.ToBlocks(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMemCommitAndCancel(t *testing.T) {
	m := newExtentsMem(t)
	b, d, err := m.Alloc(0, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	b[5000] = 7
	m.Dirty(d)
	m.Commit()
	got, _, err := m.Read(0, 2, nil)
	if err != nil || got[5000] != 7 {
		t.Fatalf("committed byte lost: %v", err)
	}
	m.Begin()
	got[5000] = 9
	m.Dirty(d)
	m.Free(1, 1)
	m.Cancel()
	again, _, err := m.Read(0, 2, nil)
	if err != nil || again[5000] != 7 {
		t.Fatalf("cancel did not restore: %v", err)
	}
	if r, _ := m.Mapped(); len(r) != 1 || r[0] != [2]format.FileOff{0, 2} {
		t.Fatalf("mapped %v", r)
	}
}

// TestMemCopyOutlivesAFree: a Free of another block leaves the
// transaction's private copies in place; reading a changed block again
// hands out the same copy, so the change is neither hidden nor lost.
func TestMemCopyOutlivesAFree(t *testing.T) {
	m := newExtentsMem(t)
	for off := format.FileOff(0); off < 2; off++ {
		if _, _, err := m.Alloc(off, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	m.Commit()
	m.Begin()
	b, d, err := m.Read(0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	b[10] = 7
	m.Dirty(d)
	if err := m.Free(1, 1); err != nil {
		t.Fatal(err)
	}
	for _, get := range []func(format.FileOff, int, *trans.Ops) ([]byte, format.Daddr, error){m.View, m.Read} {
		if again, _, err := get(0, 1, nil); err != nil || again[10] != 7 {
			t.Fatalf("after a Free, block 0 reads without its change: %v", err)
		}
	}
	m.Commit()
	if got, _, ok := m.Block(0); !ok || got[10] != 7 {
		t.Fatal("the change was lost at Commit")
	}
}
