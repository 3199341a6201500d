package fork

import (
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

var _ Writer = (*Mem)(nil)

func TestMemCommitAndCancel(t *testing.T) {
	g := format.Geometry{BlockSize: 4096, BlockLog: 12}
	m := NewMem(g, 131, 100)
	m.Begin()
	if err := m.ToBlocks(); err != nil {
		t.Fatal(err)
	}
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
