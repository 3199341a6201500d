package btree

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// bnoRec is a bnobt record of one block at start.
func bnoRec(start uint32) []byte { return u32s(start, 1) }

// buildBnobt makes a bnobt in 512-byte blocks holding one-block records
// at the given starts, inserted in order.
func buildBnobt(t testing.TB, starts []uint32) (*Tree, *memStore) {
	t.Helper()
	tr, s := newAGTree(t, Bnobt, testGeo(512), rand.New(rand.NewSource(1)))
	c := tr.NewCursor()
	for _, st := range starts {
		if found, err := c.Lookup(EQ, bnoRec(st)); err != nil || found {
			t.Fatalf("lookup %d: %v %v", st, found, err)
		}
		if err := c.Insert(bnoRec(st)); err != nil {
			t.Fatalf("insert %d: %v", st, err)
		}
		s.commit()
	}
	return tr, s
}

func seq(from, step uint32, n int) []uint32 {
	v := make([]uint32, n)
	for i := range v {
		v[i] = from + step*uint32(i)
	}
	return v
}

// leafEdges returns the (last, first) start pairs of adjacent leaves.
func leafEdges(t *testing.T, tr *Tree) [][2]uint32 {
	t.Helper()
	c := tr.NewCursor()
	var edges [][2]uint32
	ok, err := c.First()
	var prev uint32
	var leaf uint64
	for ; ok && err == nil; ok, err = c.Increment() {
		r, _ := c.Get()
		if c.lv[0].n.ptr != leaf && leaf != 0 {
			edges = append(edges, [2]uint32{prev, be.Uint32(r)})
		}
		leaf, prev = c.lv[0].n.ptr, be.Uint32(r)
	}
	if err != nil {
		t.Fatal(err)
	}
	return edges
}

func TestLookupSemantics(t *testing.T) {
	tr, _ := buildBnobt(t, seq(10, 10, 400)) // 10, 20, ... 4000
	if tr.Levels < 2 {
		t.Fatalf("want several leaves, have %d levels", tr.Levels)
	}
	type row struct {
		dir   Dir
		key   uint32
		found uint32 // 0: nothing
	}
	rows := []row{
		{LE, 5, 0}, {EQ, 5, 0}, {GE, 5, 10},
		{LE, 10, 10}, {EQ, 10, 10}, {GE, 10, 10},
		{LE, 15, 10}, {EQ, 15, 0}, {GE, 15, 20},
		{LE, 2000, 2000}, {EQ, 2000, 2000}, {GE, 2000, 2000},
		{LE, 4000, 4000}, {EQ, 4000, 4000}, {GE, 4000, 4000},
		{LE, 4005, 4000}, {EQ, 4005, 0}, {GE, 4005, 0},
		{LE, 1 << 31, 4000}, {GE, 0, 10},
	}
	edges := leafEdges(t, tr)
	if len(edges) < 3 {
		t.Fatalf("only %d leaf edges", len(edges))
	}
	for _, e := range edges {
		// Between two leaves: GE must step into the next leaf, LE stays.
		rows = append(rows, row{GE, e[0] + 1, e[1]}, row{LE, e[1] - 1, e[0]}, row{EQ, e[0] + 1, 0},
			row{GE, e[1], e[1]}, row{LE, e[0], e[0]})
	}
	c := tr.NewCursor()
	for _, r := range rows {
		found, err := c.Lookup(r.dir, bnoRec(r.key))
		if err != nil {
			t.Fatal(err)
		}
		rec, ok := c.Get()
		if view, vok := c.View(); vok != ok || !bytes.Equal(view, rec) {
			t.Errorf("%v %d: View %x %v, Get %x %v", r.dir, r.key, view, vok, rec, ok)
		}
		switch {
		case found != (r.found != 0):
			t.Errorf("%v %d: found %v, want %v", r.dir, r.key, found, r.found != 0)
		case found && (!ok || be.Uint32(rec) != r.found):
			t.Errorf("%v %d: on %x, want %d", r.dir, r.key, rec, r.found)
		}
	}
}

func TestWalkAcrossLeaves(t *testing.T) {
	starts := seq(1, 3, 1000)
	tr, _ := buildBnobt(t, starts)
	c := tr.NewCursor()
	leaves := map[uint64]bool{}
	i := 0
	ok, err := c.First()
	for ; ok; ok, err = c.Increment() {
		r, _ := c.Get()
		if be.Uint32(r) != starts[i] {
			t.Fatalf("forward %d: %d, want %d", i, be.Uint32(r), starts[i])
		}
		leaves[c.lv[0].n.ptr] = true
		i++
	}
	if err != nil || i != len(starts) || len(leaves) < 10 {
		t.Fatalf("forward walk: %v after %d records in %d leaves", err, i, len(leaves))
	}
	// Past the end the cursor stays past the end; Decrement comes back.
	if ok, err := c.Increment(); ok || err != nil {
		t.Fatalf("increment past the end: %v %v", ok, err)
	}
	i = len(starts) - 1
	for ok, err = c.Last(); ok; ok, err = c.Decrement() {
		r, _ := c.Get()
		if be.Uint32(r) != starts[i] {
			t.Fatalf("backward %d: %d, want %d", i, be.Uint32(r), starts[i])
		}
		i--
	}
	if err != nil || i != -1 {
		t.Fatalf("backward walk: %v, stopped at %d", err, i)
	}
}

func TestEmptyAndMisuse(t *testing.T) {
	tr, s := buildBnobt(t, nil)
	c := tr.NewCursor()
	for _, dir := range []Dir{LE, EQ, GE} {
		if found, err := c.Lookup(dir, bnoRec(7)); found || err != nil {
			t.Errorf("empty %v: %v %v", dir, found, err)
		}
	}
	if ok, err := c.First(); ok || err != nil {
		t.Errorf("First on empty: %v %v", ok, err)
	}
	if _, ok := c.Get(); ok {
		t.Error("Get on empty tree")
	}
	if _, ok := c.View(); ok {
		t.Error("View on empty tree")
	}
	if err := c.Delete(); !errors.Is(err, ErrNoRecord) {
		t.Errorf("Delete on empty: %v", err)
	}
	if err := c.Update(bnoRec(7)); !errors.Is(err, ErrNoRecord) {
		t.Errorf("Update on empty: %v", err)
	}
	if _, err := tr.NewCursor().Increment(); !errors.Is(err, ErrNoRecord) {
		t.Errorf("Increment on an unpositioned cursor: %v", err)
	}
	if err := tr.NewCursor().Insert(bnoRec(7)); !errors.Is(err, ErrPosition) {
		t.Errorf("Insert on an unpositioned cursor: %v", err)
	}
	if _, err := c.Lookup(EQ, []byte{1, 2, 3}); err == nil {
		t.Error("short record accepted")
	}
	if ok, err := c.Last(); ok || err != nil {
		t.Errorf("Last on empty: %v %v", ok, err)
	}
	if err := c.Insert(bnoRec(7)); err != nil { // Last left the cursor at 0
		if !errors.Is(err, ErrPosition) {
			t.Errorf("Insert before the first entry: %v", err)
		}
	}

	// A tree with content: duplicates and out-of-order records.
	for _, st := range seq(100, 10, 300) {
		c.Lookup(EQ, bnoRec(st))
		if err := c.Insert(bnoRec(st)); err != nil {
			t.Fatal(err)
		}
	}
	s.commit()
	c.Lookup(EQ, bnoRec(500))
	if err := c.Insert(u32s(500, 3)); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate insert: %v", err)
	}
	c.Lookup(EQ, bnoRec(505)) // the place of 505
	if err := c.Insert(bnoRec(1000)); !errors.Is(err, ErrKeyOrder) {
		t.Errorf("insert out of order: %v", err)
	}
	c.Lookup(EQ, bnoRec(500))
	if err := c.Update(bnoRec(510)); !errors.Is(err, ErrKeyOrder) {
		t.Errorf("update onto the next key: %v", err)
	}
	if err := c.Update(u32s(500, 9)); err != nil {
		t.Errorf("update in place: %v", err)
	}
	if _, err := tr.Check(nil); err != nil {
		t.Fatal(err)
	}

	// An inode fork without a btree.
	bt, _ := newInodeTree(Bmbt, testGeo(512), rand.New(rand.NewSource(2)), 64)
	if _, err := bt.NewCursor().First(); !errors.Is(err, ErrNoTree) {
		t.Errorf("cursor on an extents fork: %v", err)
	}
	if _, err := bt.ToExtents(); !errors.Is(err, ErrNoTree) {
		t.Errorf("ToExtents without a tree: %v", err)
	}
	if err := bt.FromExtents(nil, 0); err == nil {
		t.Error("FromExtents of nothing")
	}
	ext := []format.Extent{{StartOff: 0, StartBlock: 100, BlockCount: 1}, {StartOff: 5, StartBlock: 200, BlockCount: 1}}
	if err := bt.FromExtents(ext, 0); err != nil {
		t.Fatal(err)
	}
	if err := bt.FromExtents(ext, 0); err == nil {
		t.Error("FromExtents on a fork with a tree")
	}
	if err := bt.SetForkSize(3); err == nil {
		t.Error("fork too small for a root accepted")
	}
	if err := tr.SetForkSize(64); err == nil {
		t.Error("SetForkSize on an AG tree")
	}
}

// TestInodeRootMoves grows a bmbt past its inode root, shrinks the fork
// under it (the root moves down into a block), grows the fork back and
// deletes until the root takes its child's entries in again.
func TestInodeRootMoves(t *testing.T) {
	geo := testGeo(512)
	tr, s := newInodeTree(Bmbt, geo, rand.New(rand.NewSource(3)), 72) // root holds 4
	var changes int
	tr.RootChanged = func() { changes++ }
	var ext []format.Extent
	for i := 0; i < 4; i++ {
		ext = append(ext, format.Extent{StartOff: format.FileOff(10 * i), StartBlock: 1000, BlockCount: 1})
	}
	if err := tr.FromExtents(ext, 0); err != nil {
		t.Fatal(err)
	}
	c := tr.NewCursor()
	insert := func(off int) {
		t.Helper()
		rec := extRec(format.Extent{StartOff: format.FileOff(off), StartBlock: 5000, BlockCount: 1})
		if found, err := c.Lookup(EQ, rec); err != nil || found {
			t.Fatalf("lookup %d: %v %v", off, found, err)
		}
		if err := c.Insert(rec); err != nil {
			t.Fatalf("insert %d: %v", off, err)
		}
		s.commit()
	}
	for off := 40; tr.IRoot.NumRecs < 3; off += 10 {
		insert(off)
	}
	if tr.IRoot.Level != 1 {
		t.Fatalf("root level %d", tr.IRoot.Level)
	}
	// The fork shrinks to 2 entries: the root's 3 move into a new node.
	if err := tr.SetForkSize(36); err != nil {
		t.Fatal(err)
	}
	s.commit()
	if tr.IRoot.Level != 2 || tr.IRoot.NumRecs != 1 || tr.ForkSize != 36 {
		t.Fatalf("after shrinking the fork: %+v, fork %d", tr.IRoot, tr.ForkSize)
	}
	if _, err := tr.Check(nil); err != nil {
		t.Fatal(err)
	}
	// Grow the fork again and delete until the node has 2 entries left
	// and fits: the root takes them back.
	if err := tr.SetForkSize(72); err != nil {
		t.Fatal(err)
	}
	for tr.IRoot.Level == 2 {
		if ok, err := c.Last(); err != nil || !ok {
			t.Fatalf("last: %v %v", ok, err)
		}
		if err := c.Delete(); err != nil {
			t.Fatal(err)
		}
		s.commit()
		if _, err := tr.Check(nil); err != nil {
			t.Fatal(err)
		}
	}
	if tr.IRoot.Level != 1 || changes < 4 {
		t.Fatalf("root %+v after %d changes", tr.IRoot, changes)
	}
	if _, err := tr.ToExtents(); !errors.Is(err, ErrNotSingleLeaf) {
		t.Fatalf("ToExtents with two leaves: %v", err)
	}
}

func TestDirString(t *testing.T) {
	if fmt.Sprint(LE, EQ, GE, Dir(7)) != "LE EQ GE Dir(7)" {
		t.Error(fmt.Sprint(LE, EQ, GE, Dir(7)))
	}
}
