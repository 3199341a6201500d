package dabtree

import (
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Leaf describes the leaf blocks of a tree. Directories implement it for
// leafn blocks, attribute forks for attr3 leaf blocks.
type Leaf interface {
	// Magic is the magic number of the tree's leaf blocks.
	Magic() uint16
	// Bounds returns the hashes of the first and last entries of a leaf
	// (stale or not) and how many entries it holds.
	Bounds(b []byte) (first, last uint32, count int)
	// Order reports whether leaf b holds lower hashes than leaf a, that is,
	// b belongs before a (xfs_dir2_leafn_order, xfs_attr_leaf_order).
	Order(a, b []byte) bool
	// Usage says whether a leaf is more than half full (never joined) and
	// whether it is empty (dropped without merging).
	Usage(b []byte) (overHalf, empty bool)
	// Fits reports whether the contents of two leaves fit one block with
	// at least 25% of it to spare.
	Fits(a, b []byte) bool
	// Merge moves every entry of drop into save, at the end that keeps
	// hash order, and sets both Hash fields. Join then marks save changed
	// and frees drop.
	Merge(drop, save *Blk)
}

// Tree is one da-btree of a fork, for the length of one operation.
type Tree struct {
	C    *Blocks
	Root uint32     // block number of the root (it never moves)
	Ops  *trans.Ops // verifies any block of the tree, node or leaf
	Leaf Leaf
	What string // names the tree in errors, e.g. "dir3 leaf"
}

// Blk is one block on a path from the root: for a node, Index is the
// entry followed downwards; for a leaf it is the leaf format's position.
type Blk struct {
	Blkno uint32
	Buf   *Buf
	Index int
	Hash  uint32 // last hash in the block
	Leaf  bool
}

// Path is a root-to-leaf path, root first. Its blocks are values, so a
// path is one allocation; change them through &p[i].
type Path []Blk

// Bottom returns the last block of the path (the leaf after Lookup).
func (p Path) Bottom() *Blk { return &p[len(p)-1] }

// Clone copies the path's blocks (not their buffers).
func (p Path) Clone() Path { return append(Path(nil), p...) }

func (t *Tree) g() *format.Geometry { return t.C.R.Geometry() }

// NodeEnts is how many entries fit a node of this tree.
func (t *Tree) NodeEnts() int { return NodeEnts(t.C.Fsbs << t.g().BlockLog) }

// Read returns a verified block of the tree, for the caller to change.
func (t *Tree) Read(blkno uint32) (*Buf, error) { return t.checked(t.C.Read(blkno, t.Ops)) }

// view returns a verified block of the tree, read-only (Blocks.View).
func (t *Tree) view(blkno uint32) (*Buf, error) { return t.checked(t.C.View(blkno, t.Ops)) }

func (t *Tree) checked(b *Buf, err error) (*Buf, error) {
	if err != nil {
		return nil, err
	}
	g := t.g()
	if err := CheckOwner(t.What, b.B, g.UUID, t.C.R.Owner()); err != nil {
		return nil, format.Located(err, blockWhere(b.Blkno))
	}
	return b, nil
}

// writable turns blocks a lookup only viewed into private copies, before
// the caller changes them; each Buf stays the same, with a new B.
func (t *Tree) writable(blks ...*Blk) error {
	for _, blk := range blks {
		if blk.Buf.view {
			if _, err := t.Read(blk.Blkno); err != nil {
				return err
			}
		}
	}
	return nil
}

// writablePath makes every block of p writable.
func (t *Tree) writablePath(p Path) error {
	for i := range p {
		if err := t.writable(&p[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tree) dirty(b *Buf) { t.C.Dirty(b) }

// lastHash is the hash a parent records for block b.
func (t *Tree) lastHash(b []byte) (uint32, int) {
	if Magic(b) == NodeMagic {
		n := NodeCount(b)
		if n == 0 {
			return 0, 0
		}
		return nodeHash(b, n-1), n
	}
	_, last, n := t.Leaf.Bounds(b)
	return last, n
}

// Lookup descends from the root to the leaf that holds (or would hold)
// hash: at each node the first entry whose key is >= hash, else the last
// (xfs_da3_node_lookup_int). Equal hashes may continue in the following
// leaves; callers shift forward while the leaf's last hash equals theirs.
// The leaf is the caller's to change; the nodes above it are only viewed
// (most operations change no node), and the Tree methods that change a
// path make its nodes writable first.
func (t *Tree) Lookup(hash uint32) (Path, error) {
	blkno := t.Root
	var path [MaxDepth]Blk // copied out at the leaf: one allocation
	expected := 0
	for depth := 0; ; depth++ {
		if depth >= MaxDepth {
			return nil, format.Corrupt(t.What, blockWhere(blkno), "tree deeper than %d levels", MaxDepth)
		}
		read := t.view
		if depth > 0 && expected == 0 {
			read = t.Read // a leaf
		}
		b, err := read(blkno)
		if err != nil {
			return nil, err
		}
		if Magic(b.B) != NodeMagic && b.view { // a root leaf (or damage, reported below)
			if b, err = t.Read(blkno); err != nil {
				return nil, err
			}
		}
		if Magic(b.B) != NodeMagic {
			if Magic(b.B) != t.Leaf.Magic() {
				return nil, format.Corrupt(t.What, blockWhere(blkno), "bad magic %#x", Magic(b.B))
			}
			if expected != 0 {
				return nil, format.Corrupt(t.What, blockWhere(blkno), "leaf where a level-%d node belongs", expected)
			}
			_, last, _ := t.Leaf.Bounds(b.B)
			path[depth] = Blk{Blkno: blkno, Buf: b, Hash: last, Leaf: true}
			return append(Path(nil), path[:depth+1]...), nil
		}
		level, count := NodeLevel(b.B), NodeCount(b.B)
		if depth == 0 {
			expected = level - 1
		} else if level != expected {
			return nil, format.Corrupt(t.What, blockWhere(blkno), "node level %d, want %d", level, expected)
		} else {
			expected--
		}
		i := searchNode(b.B, count, hash)
		if i == count {
			i = count - 1
		}
		_, child := NodeEntry(b.B, i)
		path[depth] = Blk{Blkno: blkno, Buf: b, Index: i, Hash: nodeHash(b.B, count-1)}
		if child == t.Root {
			return nil, format.Corrupt(t.What, blockWhere(blkno), "level-%d node points back at the root", level)
		}
		blkno = child
	}
}

// searchNode returns the first entry whose hash is >= hash, or count.
func searchNode(b []byte, count int, hash uint32) int {
	lo, hi := 0, count
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if nodeHash(b, m) < hash {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Shift moves the path one block forward (higher hashes) or back at its
// bottom level, updating the nodes above (xfs_da3_path_shift). It reports
// false, leaving the path unchanged, when there is no such block.
func (t *Tree) Shift(p Path, forward bool) (bool, error) {
	level := len(p) - 2
	var blkno uint32
	for ; level >= 0; level-- {
		blk := &p[level]
		count := NodeCount(blk.Buf.B)
		if forward && blk.Index < count-1 {
			blk.Index++
			break
		}
		if !forward && blk.Index > 0 {
			blk.Index--
			break
		}
	}
	if level < 0 {
		return false, nil
	}
	_, blkno = NodeEntry(p[level].Buf.B, p[level].Index)
	for level++; level < len(p); level++ {
		b, err := t.Read(blkno)
		if err != nil {
			return false, err
		}
		blk := &p[level]
		// Blocks of one level are all nodes or all leaves.
		if isNode := Magic(b.B) == NodeMagic; isNode == blk.Leaf || !isNode && Magic(b.B) != t.Leaf.Magic() {
			return false, format.Corrupt(t.What, blockWhere(blkno), "unexpected block (magic %#x) inside the tree", Magic(b.B))
		}
		blk.Blkno, blk.Buf = blkno, b
		if !blk.Leaf {
			count := NodeCount(b.B)
			blk.Hash = nodeHash(b.B, count-1)
			blk.Index = 0
			if !forward {
				blk.Index = count - 1
			}
			_, blkno = NodeEntry(b.B, blk.Index)
			continue
		}
		blk.Index = 0
		_, blk.Hash, _ = t.Leaf.Bounds(b.B)
	}
	return true, nil
}

// CheckRightmost checks a lookup that ran past the last hash of its leaf.
// In a sound tree that only happens in the rightmost leaf, whose forward
// pointer is 0; a pointer there is followed far enough to say what is
// wrong, so a damaged sibling chain is reported rather than hidden behind
// "not found".
func (t *Tree) CheckRightmost(p Path) error {
	for _, blk := range p[:len(p)-1] {
		if blk.Index != NodeCount(blk.Buf.B)-1 {
			return nil // not the rightmost path: the leaf's hashes decide
		}
	}
	leaf := p.Bottom()
	forw := Forw(leaf.Buf.B)
	switch {
	case forw == 0:
		return nil
	case forw == leaf.Blkno:
		return format.Corrupt(t.What, blockWhere(forw), "leaf sibling chain loops (forward pointer of block %d)", forw)
	}
	b, err := t.Read(forw)
	if err != nil {
		return err
	}
	if back := Back(b.B); back != leaf.Blkno {
		return format.Corrupt(t.What, blockWhere(forw), "back pointer %d, want %d", back, leaf.Blkno)
	}
	return format.Corrupt(t.What, blockWhere(leaf.Blkno), "the rightmost leaf has a forward sibling %d", forw)
}

// FixHash propagates the last hash of the path's bottom block up the
// path, stopping where a parent already records it (xfs_da3_fixhashpath).
func (t *Tree) FixHash(p Path) error {
	bottom := p.Bottom()
	last, count := t.lastHash(bottom.Buf.B)
	if count == 0 {
		return nil
	}
	bottom.Hash = last
	for l := len(p) - 2; l >= 0; l-- {
		blk := &p[l]
		if nodeHash(blk.Buf.B, blk.Index) == last {
			break
		}
		if err := t.writable(blk); err != nil {
			return err
		}
		setNodeHash(blk.Buf.B, blk.Index, last)
		t.dirty(blk.Buf)
		last = nodeHash(blk.Buf.B, NodeCount(blk.Buf.B)-1)
		blk.Hash = last
	}
	return nil
}

// Grow maps a new block for the tree at the first unused offset at or
// after the root (xfs_da_grow_inode) and returns it, zeroed, with its
// number. The caller formats it.
func (t *Tree) Grow(ops *trans.Ops) (*Buf, error) {
	blkno, err := t.C.FirstUnused(t.Root, 1)
	if err != nil {
		return nil, err
	}
	return t.C.Alloc(blkno, ops)
}

// order reports whether block b belongs before block a.
func (t *Tree) order(a, b []byte) bool {
	if Magic(a) == NodeMagic {
		na, nb := NodeCount(a), NodeCount(b)
		return na > 0 && nb > 0 && (nodeHash(b, 0) < nodeHash(a, 0) || nodeHash(b, nb-1) < nodeHash(a, na-1))
	}
	return t.Leaf.Order(a, b)
}

// Link puts the new block nb next to old in old's level: before it when nb
// holds lower hashes, else after it (xfs_da3_blk_link).
func (t *Tree) Link(old, nb *Blk) error {
	if err := t.writable(old, nb); err != nil {
		return err
	}
	ob, nbb := old.Buf.B, nb.Buf.B
	if t.order(ob, nbb) {
		SetForw(nbb, old.Blkno)
		SetBack(nbb, Back(ob))
		if Back(ob) != 0 {
			s, err := t.Read(Back(ob))
			if err != nil {
				return err
			}
			SetForw(s.B, nb.Blkno)
			t.dirty(s)
		}
		SetBack(ob, nb.Blkno)
	} else {
		SetForw(nbb, Forw(ob))
		SetBack(nbb, old.Blkno)
		if Forw(ob) != 0 {
			s, err := t.Read(Forw(ob))
			if err != nil {
				return err
			}
			SetBack(s.B, nb.Blkno)
			t.dirty(s)
		}
		SetForw(ob, nb.Blkno)
	}
	t.dirty(old.Buf)
	t.dirty(nb.Buf)
	return nil
}

// Unlink takes drop out of its level; save is its neighbour that stays
// (xfs_da3_blk_unlink).
func (t *Tree) Unlink(drop, save *Blk) error {
	if err := t.writable(save); err != nil {
		return err
	}
	db, sb := drop.Buf.B, save.Buf.B
	switch {
	case Back(sb) == drop.Blkno:
		SetBack(sb, Back(db))
		if Back(db) != 0 {
			s, err := t.Read(Back(db))
			if err != nil {
				return err
			}
			SetForw(s.B, save.Blkno)
			t.dirty(s)
		}
	case Forw(sb) == drop.Blkno:
		SetForw(sb, Forw(db))
		if Forw(db) != 0 {
			s, err := t.Read(Forw(db))
			if err != nil {
				return err
			}
			SetBack(s.B, save.Blkno)
			t.dirty(s)
		}
	default:
		return format.Corrupt(t.What, blockWhere(save.Blkno), "block %d is not a sibling", drop.Blkno)
	}
	t.dirty(save.Buf)
	return nil
}

// Walk calls fn for every leaf from the lowest hashes to the highest,
// following the sibling links from the leftmost leaf.
func (t *Tree) Walk(fn func(b *Buf) error) error {
	p, err := t.Lookup(0)
	if err != nil {
		return err
	}
	blkno, leaf := p.Bottom().Blkno, p.Bottom().Buf
	seen := map[uint32]bool{}
	for {
		if seen[blkno] {
			return format.Corrupt(t.What, blockWhere(blkno), "leaf sibling chain loops")
		}
		seen[blkno] = true
		if err := fn(leaf); err != nil {
			return err
		}
		next := Forw(leaf.B)
		if next == 0 {
			return nil
		}
		b, err := t.Read(next)
		if err != nil {
			return err
		}
		if m := Magic(b.B); m != t.Leaf.Magic() {
			return format.Corrupt(t.What, blockWhere(next), "leaf sibling of block %d has magic %#x", blkno, m)
		}
		if back := Back(b.B); back != blkno {
			return format.Corrupt(t.What, blockWhere(next), "back pointer %d, want %d", back, blkno)
		}
		blkno, leaf = next, b
	}
}
