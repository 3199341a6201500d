package btree

import (
	"bytes"

	"github.com/xfs3/xfs3/xfs/format"
)

// Stats summarises a tree that passed Check.
type Stats struct {
	Levels   int   // height, counting an inode root as a level
	Blocks   int   // tree blocks; an inode root is not a block
	Records  int   // leaf records
	PerLevel []int // blocks per level, leaves first (0 for an inode root's level)
}

// Check walks the whole tree, one level at a time from the root, and
// verifies every structural invariant:
//
//   - every block passes the header checks of VerifyBlock (CRC is the
//     Store's job on read) and sits at the level its parent implies;
//   - no block is reached twice;
//   - the root has no siblings; each level's blocks are chained left to
//     right by their sibling pointers in the order their parents list
//     them, with NULL at both ends;
//   - records are in order (Kind.RecsInOrder) within and across leaves, and
//     node keys are strictly increasing within and across blocks;
//   - the key of each child equals the lowest key of the child;
//   - record counts: blocks other than the root hold between maxrecs/2 and
//     maxrecs entries (the only child of an inode root may hold fewer); a
//     root node holds at least 2 entries (an inode root at least 1), a root
//     leaf may be empty.
//
// It calls visit, when not nil, with every record in key order (the slice
// is only valid during the call); an error from visit stops the walk and
// is returned. Corruption is reported as a *format.CorruptError.
func (t *Tree) Check(visit func(rec []byte) error) (Stats, error) {
	c := t.NewCursor()
	if err := c.reset(); err != nil {
		return Stats{}, err
	}
	h := c.nlevels
	st := Stats{Levels: h, PerLevel: make([]int, h)}
	null := t.Kind.nullPtr()
	seen := make(map[uint64]bool)

	type child struct {
		ptr uint64
		key []byte
	}
	var kids []child
	var root *node
	if c.iroot != nil {
		root = c.iroot
	} else {
		var err error
		if root, err = c.read(t.Root, h-1); err != nil {
			return st, err
		}
		seen[t.Root] = true
		st.Blocks++
		st.PerLevel[h-1]++
		if t.leftSib(root) != null || t.rightSib(root) != null {
			return st, t.corrupt(root.ptr, "root block has siblings")
		}
		if h > 1 && root.numrecs() < 2 {
			return st, t.corrupt(root.ptr, "root node with %d entries", root.numrecs())
		}
	}

	// level processes the blocks of one level in order.
	var prevKey, prevRec []byte
	scan := func(n *node, level int) error {
		nr := n.numrecs()
		for i := 1; i <= nr; i++ {
			if level == 0 {
				r := t.rec(n, i)
				if prevRec != nil && !t.Kind.RecsInOrder(prevRec, r) {
					return t.corrupt(n.ptr, "record %d out of order", i)
				}
				prevRec = r
				st.Records++
				if visit != nil {
					if err := visit(r); err != nil {
						return err
					}
				}
				continue
			}
			k := t.key(n, i)
			if prevKey != nil && t.Kind.Compare(prevKey, k) >= 0 {
				return t.corrupt(n.ptr, "key %d out of order", i)
			}
			prevKey = k
			kids = append(kids, child{t.ptr(n, i), bytes.Clone(k)})
		}
		return nil
	}
	if err := scan(root, h-1); err != nil {
		return st, err
	}
	for level := h - 2; level >= 0; level-- {
		parents := kids
		kids, prevKey, prevRec = nil, nil, nil
		min := t.minRecs(level)
		if c.iroot != nil && level == h-2 && len(parents) == 1 {
			min = 1
		}
		for i, p := range parents {
			if seen[p.ptr] {
				// A shape error of the whole tree, not of one block.
				return st, format.Corrupt(t.Kind.Shape.Name, t.where(p.ptr), "block reached twice")
			}
			seen[p.ptr] = true
			n, err := c.read(p.ptr, level)
			if err != nil {
				return st, err
			}
			st.Blocks++
			st.PerLevel[level]++
			wantL, wantR := null, null
			if i > 0 {
				wantL = parents[i-1].ptr
			}
			if i+1 < len(parents) {
				wantR = parents[i+1].ptr
			}
			if l, r := t.leftSib(n), t.rightSib(n); l != wantL || r != wantR {
				return st, t.corrupt(n.ptr, "siblings %#x/%#x, want %#x/%#x", l, r, wantL, wantR)
			}
			if nr := n.numrecs(); nr < min || nr > n.maxr {
				return st, t.corrupt(n.ptr, "%d entries, want %d..%d", nr, min, n.maxr)
			}
			if t.Kind.Compare(t.lowKey(n, level), p.key) != 0 {
				return st, t.corrupt(n.ptr, "lowest key differs from the parent's key")
			}
			if err := scan(n, level); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}
