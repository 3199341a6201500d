package dabtree_test

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// A toy leaf format, standing in for attribute leaves: after the 64-byte
// header (count be16 at 56), sorted (hash be32, value be32) pairs.
const toyMagic = 0x7AB1

var be = binary.BigEndian

type toyLeaf struct{ blk int }

func count(b []byte) int            { return int(be.Uint16(b[56:])) }
func setCount(b []byte, n int)      { be.PutUint16(b[56:], uint16(n)) }
func ent(b []byte, i int) []byte    { return b[64+8*i : 64+8*i+8] }
func hashAt(b []byte, i int) uint32 { return be.Uint32(ent(b, i)) }
func ents(b []byte, i, j int) []byte {
	return b[64+8*i : 64+8*j]
}

func (toyLeaf) Magic() uint16 { return toyMagic }
func (toyLeaf) Bounds(b []byte) (uint32, uint32, int) {
	n := count(b)
	if n == 0 {
		return 0, 0, 0
	}
	return hashAt(b, 0), hashAt(b, n-1), n
}
func (toyLeaf) Order(a, b []byte) bool {
	na, nb := count(a), count(b)
	return na > 0 && nb > 0 && (hashAt(b, 0) < hashAt(a, 0) || hashAt(b, nb-1) < hashAt(a, na-1))
}
func (l toyLeaf) Usage(b []byte) (bool, bool) {
	return 64+8*count(b) > l.blk/2, count(b) == 0
}
func (l toyLeaf) Fits(a, b []byte) bool { return l.blk-l.blk/4-8*(count(a)+count(b)) >= 0 }
func (l toyLeaf) Merge(drop, save *dabtree.Blk) {
	d, s := drop.Buf.B, save.Buf.B
	dc, sc := count(d), count(s)
	at := sc
	if l.Order(s, d) {
		copy(ents(s, dc, dc+sc), ents(s, 0, sc))
		at = 0
	}
	copy(ents(s, at, at+dc), ents(d, 0, dc))
	setCount(s, sc+dc)
}

func verifyToy(b []byte) error {
	if 64+8*count(b) > len(b) {
		return format.Corrupt("toy leaf", "", "count %d", count(b))
	}
	for i := 1; i < count(b); i++ {
		if hashAt(b, i) < hashAt(b, i-1) {
			return format.Corrupt("toy leaf", "", "order at %d", i)
		}
	}
	return nil
}

var toyOps = dabtree.TreeOps("toy tree", toyMagic, verifyToy)

type toyTree struct {
	t     *testing.T
	m     *fork.Mem
	root  uint32
	leaf  toyLeaf
	model map[[2]uint32]bool
}

func newToy(t *testing.T, root uint32) *toyTree {
	g := format.Geometry{BlockSize: 1024, BlockLog: 10, DirBlkSize: 1024, FType: true}
	copy(g.UUID[:], "dabtree-test-uid")
	m := fork.NewMem(g, 777, 0)
	if err := m.ToBlocks(); err != nil {
		t.Fatal(err)
	}
	tt := &toyTree{t: t, m: m, root: root, leaf: toyLeaf{1024}, model: map[[2]uint32]bool{}}
	m.Begin()
	c := dabtree.NewBlocks(m, 1)
	b, err := c.Alloc(root, toyOps)
	if err != nil {
		t.Fatal(err)
	}
	dabtree.InitHeader(b.B, 64, toyMagic, b.Daddr, g.UUID, 777)
	c.Flush()
	m.Commit()
	return tt
}

func (tt *toyTree) tree() *dabtree.Tree {
	return &dabtree.Tree{C: dabtree.NewBlocks(tt.m, 1), Root: tt.root, Ops: toyOps, Leaf: tt.leaf, What: "toy tree"}
}

// insert puts (h, v) after every entry with hash <= h, in the last leaf
// holding h, splitting a full leaf like a directory leaf split. Rooted at
// block 0, a full lone leaf first moves under a root node, as an
// attribute fork's leaf does.
func (tt *toyTree) insert(h, v uint32) error {
	tr := tt.tree()
	p, err := tr.Lookup(h)
	if err != nil {
		return err
	}
	for p.Bottom().Hash == h {
		if ok, err := tr.Shift(p, true); err != nil {
			return err
		} else if !ok {
			break
		}
	}
	leaf := p.Bottom()
	b := leaf.Buf.B
	n := count(b)
	if 64+8*(n+1) > len(b) && len(p) == 1 && tt.root == 0 {
		if err := tr.Deepen(); err != nil {
			return err
		}
		tr.C.Flush()
		return tt.insert(h, v)
	}
	i := sort.Search(n, func(i int) bool { return hashAt(b, i) > h })
	if 64+8*(n+1) <= len(b) {
		put(b, i, h, v)
		tr.C.Dirty(leaf.Buf)
		if err := tr.FixHash(p); err != nil {
			return err
		}
		tr.C.Flush()
		return nil
	}
	nb, err := tr.Grow(toyOps)
	if err != nil {
		return err
	}
	g := tt.m.Geometry()
	dabtree.InitHeader(nb.B, 64, toyMagic, nb.Daddr, g.UUID, 777)
	half := n / 2
	copy(ents(nb.B, 0, n-half), ents(b, half, n))
	setCount(nb.B, n-half)
	setCount(b, half)
	if i <= half {
		put(b, i, h, v)
	} else {
		put(nb.B, i-half, h, v)
	}
	nblk := &dabtree.Blk{Blkno: nb.Blkno, Buf: nb, Leaf: true}
	if err := tr.Link(leaf, nblk); err != nil {
		return err
	}
	tr.C.Dirty(leaf.Buf)
	if err := tr.Split(p, nblk); err != nil {
		return err
	}
	tr.C.Flush()
	return nil
}

func put(b []byte, i int, h, v uint32) {
	n := count(b)
	copy(ents(b, i+1, n+1), ents(b, i, n))
	be.PutUint32(ent(b, i), h)
	be.PutUint32(ent(b, i)[4:], v)
	setCount(b, n+1)
}

// remove deletes (h, v), joining leaves under 37% like directories do.
func (tt *toyTree) remove(h, v uint32) error {
	tr := tt.tree()
	p, err := tr.Lookup(h)
	if err != nil {
		return err
	}
	for {
		leaf := p.Bottom()
		b := leaf.Buf.B
		n := count(b)
		for i := sort.Search(n, func(i int) bool { return hashAt(b, i) >= h }); i < n && hashAt(b, i) == h; i++ {
			if be.Uint32(ent(b, i)[4:]) != v {
				continue
			}
			copy(ents(b, i, n-1), ents(b, i+1, n))
			setCount(b, n-1)
			tr.C.Dirty(leaf.Buf)
			if err := tr.FixHash(p); err != nil {
				return err
			}
			if 64+8*(n-1) < len(b)*37/100 && len(p) > 1 {
				if _, err := tr.Join(p); err != nil {
					return err
				}
			}
			tr.C.Flush()
			return nil
		}
		if leaf.Hash != h {
			return fmt.Errorf("(%#x, %d) not found", h, v)
		}
		if ok, err := tr.Shift(p, true); err != nil || !ok {
			return fmt.Errorf("(%#x, %d) not found: %v", h, v, err)
		}
	}
}

func (tt *toyTree) check() dabtree.Shape {
	t := tt.t
	got := map[[2]uint32]bool{}
	shape, err := tt.tree().Check(func(b *dabtree.Buf) error {
		for i := 0; i < count(b.B); i++ {
			k := [2]uint32{hashAt(b.B, i), be.Uint32(ent(b.B, i)[4:])}
			if got[k] {
				return fmt.Errorf("%v twice", k)
			}
			got[k] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(tt.model) {
		t.Fatalf("tree holds %d entries, model %d", len(got), len(tt.model))
	}
	for k := range tt.model {
		if !got[k] {
			t.Fatalf("%v missing", k)
		}
	}
	// Walk visits the same entries in hash order.
	var last uint32
	n := 0
	if err := tt.tree().Walk(func(b *dabtree.Buf) error {
		for i := 0; i < count(b.B); i++ {
			if h := hashAt(b.B, i); h < last {
				return fmt.Errorf("walk out of order")
			} else {
				last = h
			}
			n++
		}
		return nil
	}); err != nil || n != len(tt.model) {
		t.Fatalf("walk: %d entries, %v", n, err)
	}
	return shape
}

// TestToyTree grows a tree of toy leaves to three levels and shrinks it
// back to a single leaf, with runs of equal hashes spanning leaves, under
// Check after every batch; rooted at block 0 like attribute forks and at a
// high block like directories.
func TestToyTree(t *testing.T) {
	for _, root := range []uint32{0, 1 << 20} {
		t.Run(fmt.Sprint("root", root), func(t *testing.T) {
			tt := newToy(t, root)
			rng := rand.New(rand.NewSource(5))
			var keys [][2]uint32
			maxLevels := 0
			n := 60000
			if raceEnabled {
				n = 20000 // still three levels
			}
			for i := 0; i < n; i++ {
				h := rng.Uint32()
				if rng.Intn(4) == 0 {
					h = uint32(rng.Intn(50)) // equal hashes in long runs
				}
				k := [2]uint32{h, uint32(i)}
				tt.m.Begin()
				if err := tt.insert(k[0], k[1]); err != nil {
					t.Fatalf("insert %d: %v", i, err)
				}
				tt.m.Commit()
				tt.model[k] = true
				keys = append(keys, k)
				if i%5000 == 0 {
					maxLevels = max(maxLevels, tt.check().Levels)
				}
			}
			s := tt.check()
			maxLevels = max(maxLevels, s.Levels)
			t.Logf("grown: %d levels, %d nodes, %d leaves", s.Levels, len(s.Nodes), len(s.Leaves))
			if maxLevels < 3 {
				t.Errorf("only %d levels", maxLevels)
			}
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			for i, k := range keys {
				tt.m.Begin()
				if err := tt.remove(k[0], k[1]); err != nil {
					t.Fatalf("remove %d: %v", i, err)
				}
				tt.m.Commit()
				delete(tt.model, k)
				if i%5000 == 0 || len(keys)-i < 300 {
					tt.check()
				}
			}
			s = tt.check()
			if s.Levels != 1 || tt.m.Blocks() != 1 {
				t.Fatalf("empty tree has %d levels and %d blocks", s.Levels, tt.m.Blocks())
			}
		})
	}
}
