package dabtree_test

import (
	"strings"
	"testing"
)

// TestLookupViewsNodes: a lookup copies only the leaf it ends at; the
// nodes above stay views until a change of the path needs them, and a
// write through a view is caught when the transaction ends.
func TestLookupViewsNodes(t *testing.T) {
	tt := newToy(t, 1<<20)
	for i := uint32(0); i < 400; i++ {
		tt.m.Begin()
		if err := tt.insert(i*1000, i); err != nil {
			t.Fatal(err)
		}
		tt.m.Commit()
		tt.model[[2]uint32{i * 1000, i}] = true
	}
	if s := tt.check(); s.Levels != 2 {
		t.Fatalf("%d levels, want 2", s.Levels)
	}

	// Removing an entry inside a leaf leaves the node's hash alone.
	tt.m.Begin()
	if err := tt.remove(5000, 5); err != nil {
		t.Fatal(err)
	}
	tr := tt.tree()
	p, err := tr.Lookup(7000)
	if err != nil {
		t.Fatal(err)
	}
	if !p[0].Buf.Viewed() || p.Bottom().Buf.Viewed() {
		t.Fatalf("after a lookup: node viewed %v, leaf viewed %v; want the node only", p[0].Buf.Viewed(), p.Bottom().Buf.Viewed())
	}
	if err := tr.FixHash(p); err != nil || !p[0].Buf.Viewed() {
		t.Fatalf("FixHash with nothing to fix: %v, node viewed %v", err, p[0].Buf.Viewed())
	}
	// A join of a leaf more than half full changes nothing (attribute
	// forks try one after every removal below a node).
	if toRoot, err := tr.Join(p); err != nil || toRoot || !p[0].Buf.Viewed() {
		t.Fatalf("Join with nothing to join: %v, %v, node viewed %v", toRoot, err, p[0].Buf.Viewed())
	}
	tt.m.Commit()
	delete(tt.model, [2]uint32{5000, 5})

	// Removing a leaf's last entry changes the hash its node records:
	// FixHash turns the node into a private copy first.
	tt.m.Begin()
	tr = tt.tree()
	p, err = tr.Lookup(0)
	if err != nil {
		t.Fatal(err)
	}
	b := p.Bottom().Buf.B
	n := count(b)
	last := [2]uint32{hashAt(b, n-1), be.Uint32(ent(b, n-1)[4:])}
	setCount(b, n-1)
	tr.C.Dirty(p.Bottom().Buf)
	if err := tr.FixHash(p); err != nil || p[0].Buf.Viewed() {
		t.Fatalf("FixHash of a changed hash: %v, node still viewed %v", err, p[0].Buf.Viewed())
	}
	tr.C.Flush()
	tt.m.Commit()
	delete(tt.model, last)
	tt.check()

	// A write through a view is a bug the transaction reports.
	tt.m.Begin()
	p, err = tt.tree().Lookup(0)
	if err != nil {
		t.Fatal(err)
	}
	p[0].Buf.B[100] ^= 1
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "changed through a view") {
			t.Fatalf("a write through a view was not caught: %v", r)
		}
	}()
	tt.m.Commit()
}
