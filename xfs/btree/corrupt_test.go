package btree

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// blockPath returns the blocks from the root down to the leaf holding the
// record with key start, and the leaf's right neighbour.
func blockPath(t *testing.T, tr *Tree, start uint32) (path []*node, next *node) {
	t.Helper()
	c := tr.NewCursor()
	if found, err := c.Lookup(EQ, bnoRec(start)); err != nil || !found {
		t.Fatalf("lookup %d: %v %v", start, found, err)
	}
	for l := c.nlevels - 1; l >= 0; l-- {
		path = append(path, c.lv[l].n)
	}
	c.lv[0].ptr = c.lv[0].n.numrecs()
	if ok, err := c.Increment(); err != nil || !ok {
		t.Fatalf("no leaf after the one holding %d", start)
	}
	return path, c.lv[0].n
}

// TestCorruptBlocks damages one block of a three-level tree at a time and
// checks that every operation reaching it fails with a CorruptError, and
// that none panics.
func TestCorruptBlocks(t *testing.T) {
	starts := seq(1, 2, 4000)
	tr, s := buildBnobt(t, starts)
	if tr.Levels != 3 {
		t.Fatalf("want 3 levels, have %d", tr.Levels)
	}
	const key = 4001 // a record in the middle of the tree
	clean := s.snapshot()
	root, levels := tr.Root, tr.Levels

	refinal := func(n *node) { tr.Kind.Finalize(n.buf, 0) }
	type damage func(path []*node, next *node)
	cases := []struct {
		name string
		hurt damage
		// which operations must notice: a lookup of the key, a walk over
		// the whole tree, Check (always).
		lookup, walk bool
	}{
		{"bad CRC", func(p []*node, _ *node) { p[2].buf[100] ^= 1 }, true, true},
		{"bad magic", func(p []*node, _ *node) { be.PutUint32(p[2].buf, format.CntbtMagic); refinal(p[2]) }, true, true},
		{"bad owner", func(p []*node, _ *node) { be.PutUint32(p[2].buf[48:], 3); refinal(p[2]) }, true, true},
		{"bad uuid", func(p []*node, _ *node) { p[2].buf[40] ^= 0xFF; refinal(p[2]) }, true, true},
		{"bad blkno", func(p []*node, _ *node) { be.PutUint64(p[2].buf[16:], 8); refinal(p[2]) }, true, true},
		{"leaf claims level 1", func(p []*node, _ *node) { p[2].setLevel(1); refinal(p[2]) }, true, true},
		{"too many records", func(p []*node, _ *node) { p[2].setNumrecs(p[2].maxr + 1); refinal(p[2]) }, true, true},
		{"empty leaf", func(p []*node, _ *node) { p[2].setNumrecs(0); refinal(p[2]) }, true, true},
		{"self sibling", func(p []*node, _ *node) { tr.setRightSib(p[2], p[2].ptr); refinal(p[2]) }, true, true},
		{"sibling out of range", func(p []*node, _ *node) { tr.setLeftSib(p[2], 1<<20); refinal(p[2]) }, true, true},
		{"sibling skips a leaf", func(p []*node, nx *node) {
			// The leaf's right sibling points past its real neighbour.
			tr.setRightSib(p[2], tr.rightSib(nx))
			refinal(p[2])
		}, false, true},
		{"sibling loop", func(p []*node, nx *node) {
			// Two leaves pointing at each other the wrong way round.
			tr.setLeftSib(p[2], nx.ptr)
			refinal(p[2])
		}, true, true},
		{"node pointer out of range", func(p []*node, _ *node) {
			for i := 1; i <= p[1].numrecs(); i++ {
				tr.setPtr(p[1], i, uint64(tr.Geo.AgBlocks)+5)
			}
			refinal(p[1])
		}, true, true},
		{"node pointer to a node", func(p []*node, _ *node) {
			for i := 1; i <= p[1].numrecs(); i++ {
				tr.setPtr(p[1], i, p[1].ptr)
			}
			refinal(p[1])
		}, true, true},
		{"node pointer to header block", func(p []*node, _ *node) {
			for i := 1; i <= p[1].numrecs(); i++ {
				tr.setPtr(p[1], i, 0)
			}
			refinal(p[1])
		}, true, true},
		{"root has siblings", func(p []*node, _ *node) { tr.setRightSib(p[0], p[1].ptr); refinal(p[0]) }, true, true},
		{"key out of order", func(p []*node, _ *node) {
			copy(tr.key(p[1], 2), tr.key(p[1], p[1].numrecs()))
			refinal(p[1])
		}, false, false},
		{"key not the child's lowest", func(p []*node, _ *node) {
			be.PutUint32(tr.key(p[1], 2), be.Uint32(tr.key(p[1], 2))+1)
			refinal(p[1])
		}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.restore(clean)
			tr.Root, tr.Levels = root, levels
			path, next := blockPath(t, tr, key)
			tc.hurt(path, next)
			isCorrupt := func(op string, err error) {
				t.Helper()
				var ce *format.CorruptError
				if !errors.As(err, &ce) || !errors.Is(err, format.ErrCorrupt) {
					t.Errorf("%s: %v, want a CorruptError", op, err)
				}
			}
			_, err := tr.Check(nil)
			isCorrupt("check", err)
			if tc.lookup {
				_, err := tr.NewCursor().Lookup(EQ, bnoRec(key))
				isCorrupt("lookup", err)
			}
			c := tr.NewCursor()
			ok, err := c.First()
			for n := 0; ok && err == nil && n <= len(starts); n++ {
				ok, err = c.Increment()
			}
			if tc.walk {
				isCorrupt("walk", err)
			}
			// Changes that run into the damage fail too, without panicking.
			c = tr.NewCursor()
			for _, st := range []uint32{key - 1, key + 1} {
				if found, err := c.Lookup(EQ, bnoRec(st)); err == nil && !found {
					_ = c.Insert(bnoRec(st))
				}
			}
			if found, err := c.Lookup(EQ, bnoRec(key)); err == nil && found {
				_ = c.Delete()
			}
		})
	}
}

// TestCorruptRoots checks the root fields the caller hands in.
func TestCorruptRoots(t *testing.T) {
	tr, _ := buildBnobt(t, seq(1, 2, 100))
	for _, bad := range []struct {
		root   uint64
		levels int
	}{{tr.Root, 0}, {tr.Root, format.MaxBtreeLevels + 1}, {0, 1}, {1 << 40, 1}, {tr.Root, tr.Levels + 1}} {
		t2 := *tr
		t2.Root, t2.Levels = bad.root, bad.levels
		if _, err := t2.NewCursor().First(); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("root %d levels %d: %v", bad.root, bad.levels, err)
		}
		if _, err := t2.Check(nil); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("check of root %d levels %d: %v", bad.root, bad.levels, err)
		}
	}

	bt, _ := newInodeTree(Bmbt, testGeo(512), rand.New(rand.NewSource(4)), 40)
	for _, r := range []*format.BmdrRoot{
		{Level: 0, NumRecs: 1, Keys: []format.FileOff{0}, Ptrs: []format.FsBlock{5}},
		{Level: 1, NumRecs: 3, Keys: make([]format.FileOff, 3), Ptrs: make([]format.FsBlock, 3)},
		{Level: 1, NumRecs: 2, Keys: make([]format.FileOff, 1), Ptrs: make([]format.FsBlock, 1)},
		{Level: 1, NumRecs: 1, Keys: []format.FileOff{0}, Ptrs: []format.FsBlock{5}}, // AG 0 block 5
		{Level: 1, NumRecs: 1, Keys: []format.FileOff{0}, Ptrs: []format.FsBlock{2 << 16}},
	} {
		bt.IRoot = r
		if _, err := bt.NewCursor().First(); !errors.Is(err, format.ErrCorrupt) && r.Ptrs[0] != 5 {
			t.Errorf("root %+v: %v", r, err)
		}
		if _, err := bt.Check(nil); err == nil {
			t.Errorf("check of root %+v passed", r)
		}
	}
}
