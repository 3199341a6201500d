package dabtree

import "github.com/xfs3/xfs3/xfs/format"

// Shape summarises a tree that passed Check.
type Shape struct {
	Levels int      // blocks on a root-to-leaf path (1: the root is a leaf)
	Nodes  []uint32 // interior nodes, root first, level by level
	Leaves []uint32 // leaves in hash order
}

// Check walks the whole tree level by level and verifies every block with
// the tree's Ops (as a first read would, cached or not), then what the
// kernel's verifiers and xfs_repair require of its shape: node levels
// decrease by one towards leaves of the tree's leaf magic, node counts
// within bounds, hashes ordered within and across blocks, every key equal
// to the last hash of its child, sibling links that chain each level from
// left to right with no link leaving it, and no block reached twice. It
// calls leaf for every leaf, in hash order, so the caller can check its
// contents.
func (t *Tree) Check(leaf func(b *Buf) error) (Shape, error) {
	var s Shape
	seen := map[uint32]bool{}
	level := []uint32{t.Root}
	keys := []uint32(nil) // keys[i]: the parent's key for level[i]
	want := -1            // node level expected at this depth
	for depth := 0; ; depth++ {
		if depth >= MaxDepth {
			return s, format.Corrupt(t.What, "", "tree deeper than %d levels", MaxDepth)
		}
		var next, nextKeys []uint32
		var prevLast uint32
		isLeaf := false
		for i, blkno := range level {
			where := blockWhere(blkno)
			if seen[blkno] {
				return s, format.Corrupt(t.What, where, "block reached twice")
			}
			seen[blkno] = true
			b, err := t.Read(blkno)
			if err != nil {
				return s, err
			}
			bb := b.B
			// The read path must accept every block, cached or not.
			if err := t.Ops.Verify(bb, b.Daddr); err != nil {
				return s, format.Located(err, where)
			}
			// Sibling links chain the level exactly.
			wantBack, wantForw := uint32(0), uint32(0)
			if i > 0 {
				wantBack = level[i-1]
			}
			if i+1 < len(level) {
				wantForw = level[i+1]
			}
			if Back(bb) != wantBack || Forw(bb) != wantForw {
				return s, format.Corrupt(t.What, where, "siblings back %d forw %d, want %d and %d", Back(bb), Forw(bb), wantBack, wantForw)
			}
			var first, last uint32
			var count int
			if Magic(bb) == NodeMagic {
				if err := VerifyNode(bb); err != nil { // whatever Ops checks
					return s, format.Located(err, where)
				}
				lv := NodeLevel(bb)
				if want >= 0 && lv != want {
					return s, format.Corrupt(t.What, where, "node level %d, want %d", lv, want)
				}
				if i > 0 && isLeaf {
					return s, format.Corrupt(t.What, where, "nodes and leaves mixed in one level")
				}
				want = lv
				count = NodeCount(bb)
				first, last = nodeHash(bb, 0), nodeHash(bb, count-1)
				for e := 0; e < count; e++ {
					h, child := NodeEntry(bb, e)
					if child == t.Root || child == 0 {
						return s, format.Corrupt(t.What, where, "entry %d points at block %d", e, child)
					}
					next = append(next, child)
					nextKeys = append(nextKeys, h)
				}
				s.Nodes = append(s.Nodes, blkno)
			} else {
				if Magic(bb) != t.Leaf.Magic() {
					return s, format.Corrupt(t.What, where, "bad magic %#x", Magic(bb))
				}
				if want > 0 || i > 0 && !isLeaf {
					return s, format.Corrupt(t.What, where, "leaf where a level-%d node belongs", want)
				}
				isLeaf = true
				first, last, count = t.Leaf.Bounds(bb)
				if err := leaf(b); err != nil {
					return s, format.Located(err, where)
				}
				s.Leaves = append(s.Leaves, blkno)
			}
			if count > 0 {
				if i > 0 && first < prevLast {
					return s, format.Corrupt(t.What, where, "first hash %#x below the previous block's last %#x", first, prevLast)
				}
				prevLast = last
			}
			if keys != nil && keys[i] != last {
				return s, format.Corrupt(t.What, where, "parent key %#x, last hash %#x", keys[i], last)
			}
		}
		s.Levels++
		if isLeaf {
			return s, nil
		}
		level, keys = next, nextKeys
		want--
	}
}
