package btree

// Delete removes the record under the cursor (xfs_btree_delete). The
// cursor stays where the record was, as the kernel's does: on the record
// that followed it in the same leaf, or just past the end of the leaf when
// the record was its last, so that Decrement reaches the record before
// and Insert puts a record back in the same place.
//
// A block other than the root that falls below half full first borrows an
// entry from its right sibling, then from its left one, and otherwise is
// joined with a sibling (into the left block of the pair), which removes
// an entry from the parent and may cascade up. A root node left with one
// child is replaced by that child; an inode root with one child takes in
// the child's entries when they fit in the fork (never a leaf's: the bmap
// code turns such a tree back into an extent list, see ToExtents).
func (c *Cursor) Delete() error {
	if !c.onRecord() {
		return ErrNoRecord
	}
	t := c.t
	key := t.Kind.KeyOf(t.rec(c.lv[0].n, c.lv[0].ptr))
	return c.op(func() error {
		for level, more := 0, true; more; level++ {
			if level >= c.nlevels {
				return t.corrupt(t.Root, "join above the root")
			}
			var err error
			if more, err = c.delrec(level); err != nil {
				return err
			}
		}
		return nil
	}, func() error {
		// Joins leave the upper levels stale: walk down again to the leaf
		// the kernel's cursor ends in, through its lowest key.
		leaf, p := c.lv[0].n, c.lv[0].ptr
		if leaf.numrecs() == 0 {
			_, err := c.lookup(GE, key)
			return err
		}
		if _, err := c.lookup(EQ, t.lowKey(leaf, 0)); err != nil {
			return err
		}
		if c.lv[0].n.ptr != leaf.ptr {
			return t.corrupt(leaf.ptr, "leaf not reachable through its lowest key")
		}
		c.lv[0].ptr = p
		return nil
	})
}

// delrec removes the entry under the cursor at level and rebalances the
// block (xfs_btree_delrec). more is true when two blocks were joined, so
// that the cursor's entry at level+1 (the block that went away) must be
// deleted next.
func (c *Cursor) delrec(level int) (more bool, err error) {
	t := c.t
	null := t.Kind.nullPtr()
	ptr := c.lv[level].ptr
	n := c.lv[level].n
	numrecs := n.numrecs()
	if ptr < 1 || ptr > numrecs {
		return false, t.corrupt(n.ptr, "delete of entry %d of %d at level %d", ptr, numrecs, level)
	}
	if err := c.modify(n); err != nil {
		return false, err
	}
	t.moveEntries(n, ptr, n, ptr+1, numrecs-ptr, level == 0)
	numrecs--
	n.setNumrecs(numrecs)
	c.dirty(n)

	if level == c.nlevels-1 {
		if c.iroot != nil {
			if err := c.killIroot(); err != nil {
				return false, err
			}
			return false, c.decCursor(level)
		}
		// A root node with one entry hands the root to its child.
		if numrecs == 1 && level > 0 {
			return false, c.killRoot(n, level, t.ptr(n, 1))
		}
		return false, c.decCursor(level)
	}

	if ptr == 1 {
		if err := c.updateKeys(level); err != nil {
			return false, err
		}
	}
	if numrecs >= t.minRecs(level) {
		return false, c.decCursor(level)
	}

	rptr, lptr := t.rightSib(n), t.leftSib(n)
	if c.iroot != nil && rptr == null && lptr == null && level == c.nlevels-2 {
		// The only child of an inode root may run low; try to pull it up.
		if err := c.killIroot(); err != nil {
			return false, err
		}
		return false, c.decCursor(level)
	}
	if rptr == null && lptr == null {
		return false, t.corrupt(n.ptr, "block below its minimum at level %d has no siblings", level)
	}

	var lrecs, rrecs int
	tcur := c.dup()
	if rptr != null {
		// Borrow the right sibling's first entry if it can spare it.
		tcur.lv[level].ptr = numrecs
		if ok, err := tcur.increment(level); err != nil {
			return false, err
		} else if !ok {
			return false, t.corrupt(n.ptr, "right sibling %d not reachable from the parents", rptr)
		}
		right := tcur.lv[level].n
		tcur.lv[level].ptr = right.numrecs()
		if right.numrecs()-1 >= t.minRecs(level) {
			ok, err := tcur.lshift(level)
			if err != nil {
				return false, err
			}
			if ok {
				return false, c.decCursor(level)
			}
		}
		rrecs = right.numrecs()
		if lptr != null {
			tcur.lv[level].ptr = 1
			if ok, err := tcur.decrement(level); err != nil {
				return false, err
			} else if !ok {
				return false, t.corrupt(rptr, "left sibling %d not reachable from the parents", n.ptr)
			}
		}
	}
	if lptr != null {
		// Borrow the left sibling's last entry if it can spare it.
		tcur.lv[level].ptr = 1
		if ok, err := tcur.decrement(level); err != nil {
			return false, err
		} else if !ok {
			return false, t.corrupt(n.ptr, "left sibling %d not reachable from the parents", lptr)
		}
		tcur.lv[level].ptr = 1
		left := tcur.lv[level].n
		if left.numrecs()-1 >= t.minRecs(level) {
			ok, err := tcur.rshift(level)
			if err != nil {
				return false, err
			}
			if ok {
				if level == 0 {
					c.lv[0].ptr++
				}
				return false, nil
			}
		}
		lrecs = left.numrecs()
	}

	// Join: everything moves into the left block of the pair.
	var left, right *node
	joinedLeft := false
	switch {
	case lptr != null && lrecs+numrecs <= n.maxr:
		right = n
		if left, err = c.read(lptr, level); err != nil {
			return false, err
		}
		joinedLeft = true
	case rptr != null && rrecs+numrecs <= n.maxr:
		left = n
		if right, err = c.read(rptr, level); err != nil {
			return false, err
		}
	default:
		// Cannot happen in a well-formed tree; the kernel leaves it be.
		return false, c.decCursor(level)
	}
	if t.rightSib(left) != right.ptr || t.leftSib(right) != left.ptr {
		return false, t.corrupt(left.ptr, "siblings disagree with block %d", right.ptr)
	}
	lrecs, rrecs = left.numrecs(), right.numrecs()
	t.moveEntries(left, lrecs+1, right, 1, rrecs, level == 0)
	left.setNumrecs(lrecs + rrecs)
	rr := t.rightSib(right)
	t.setRightSib(left, rr)
	c.dirty(left)
	if rr != null {
		rrn, err := c.read(rr, level)
		if err != nil {
			return false, err
		}
		if t.leftSib(rrn) != right.ptr {
			return false, t.corrupt(rr, "left sibling %d, want %d", t.leftSib(rrn), right.ptr)
		}
		t.setLeftSib(rrn, left.ptr)
		c.dirty(rrn)
	}
	if err := c.free(right); err != nil {
		return false, err
	}
	if joinedLeft {
		c.lv[level].n = left
		c.lv[level].ptr += lrecs
	} else if c.iroot != nil || level+1 < c.nlevels {
		// The parent entry to delete is the right block's: the next one.
		if _, err := c.increment(level + 1); err != nil {
			return false, err
		}
	}
	if level > 0 {
		c.lv[level].ptr--
	}
	return true, nil
}

// decCursor steps a node level's index back after a deletion, as the
// kernel does, so that it points at an existing entry.
func (c *Cursor) decCursor(level int) error {
	if level > 0 && level < c.nlevels {
		_, err := c.decrement(level)
		return err
	}
	return nil
}

// killRoot replaces a root node that has one entry by its child
// (xfs_btree_kill_root).
func (c *Cursor) killRoot(n *node, level int, child uint64) error {
	t := c.t
	t.Root, t.Levels = child, t.Levels-1
	if err := c.free(n); err != nil {
		return err
	}
	c.lv[level].n, c.lv[level].ptr = nil, 0
	c.nlevels--
	return nil
}

// killIroot pulls the entries of the inode root's only child into the
// root when they fit, freeing the child (xfs_btree_kill_iroot). Children
// that are leaves stay: an inode root is never a leaf.
func (c *Cursor) killIroot() error {
	t := c.t
	level := c.nlevels - 1
	root := c.iroot
	if level == 1 || root.numrecs() != 1 {
		return nil
	}
	child := c.lv[level-1].n
	nr := child.numrecs()
	if nr > root.maxr {
		return nil
	}
	if t.leftSib(child) != t.Kind.nullPtr() || t.rightSib(child) != t.Kind.nullPtr() {
		return t.corrupt(child.ptr, "only child of the inode root has siblings")
	}
	t.moveEntries(root, 1, child, 1, nr, false)
	root.setNumrecs(nr)
	if err := c.free(child); err != nil {
		return err
	}
	root.setLevel(level - 1)
	c.dirty(root)
	c.lv[level-1].n = root
	c.lv[level].n, c.lv[level].ptr = nil, 0
	c.nlevels--
	return nil
}
