package btree

import "fmt"

// Insert adds rec where the cursor points, as xfs_btree_insert does: after
// a Lookup that did not find rec's key (EQ, the usual way), or after an
// Increment or Decrement that left the cursor next to where rec belongs
// (the kernel's bmap code shortens a record, increments and inserts the
// rest this way, which can put rec at the front of the next leaf rather
// than the end of this one). The cursor ends on the new record.
//
// It returns ErrExists when a record in the leaf next to the position has
// rec's key, ErrKeyOrder when rec does not sort between them, and
// ErrPosition when the cursor is not at a place where a record can go.
//
// A full block first tries to pass its last entry to its right sibling,
// then its first entry to its left sibling, and only then splits in two,
// with a new block on the right; a full root grows the tree by a level
// (for an inode root, by moving the root's entries into a new child).
func (c *Cursor) Insert(rec []byte) error {
	if err := c.checkLen(rec); err != nil {
		return err
	}
	t := c.t
	if c.nlevels == 0 || c.lv[0].n == nil {
		return ErrPosition
	}
	n, p := c.lv[0].n, c.lv[0].ptr
	if p < 1 || p > n.numrecs()+1 {
		return ErrPosition
	}
	key := t.Kind.KeyOf(rec)
	if err := c.checkBetween(key, p-1, p); err != nil {
		return err
	}
	return c.op(func() error { return c.insert(rec, key) }, func() error {
		// Splits leave the cursor's upper levels stale; find the record again.
		found, err := c.lookup(EQ, key)
		if err == nil && !found {
			err = t.corrupt(t.Root, "inserted record not found again")
		}
		return err
	})
}

// checkBetween makes sure a record with key sorts after entry prev and
// before entry next of the cursor's leaf, looking into the neighbouring
// leaf when prev or next falls outside it: Insert checks the entries
// around its position, Update those around the record it replaces.
func (c *Cursor) checkBetween(key []byte, prev, next int) error {
	t := c.t
	n := c.lv[0].n
	order := func(lo, hi []byte) error {
		switch d := t.Kind.Compare(lo, hi); {
		case d == 0:
			return ErrExists
		case d > 0:
			return ErrKeyOrder
		}
		return nil
	}
	var pn, nn *node
	switch {
	case prev >= 1:
		pn = n
	default:
		d := c.dup()
		d.lv[0].ptr = 1
		ok, err := d.decrement(0)
		if err != nil {
			return err
		}
		if ok {
			pn, prev = d.lv[0].n, d.lv[0].ptr
		}
	}
	switch {
	case next <= n.numrecs():
		nn = n
	default:
		d := c.dup()
		d.lv[0].ptr = n.numrecs()
		ok, err := d.increment(0)
		if err != nil {
			return err
		}
		if ok {
			nn, next = d.lv[0].n, d.lv[0].ptr
		}
	}
	if pn != nil {
		if err := order(t.Kind.KeyOf(t.rec(pn, prev)), key); err != nil {
			return err
		}
	}
	if nn != nil {
		if err := order(key, t.Kind.KeyOf(t.rec(nn, next))); err != nil {
			return err
		}
	}
	return nil
}

// insert adds rec at the cursor and carries splits up the tree: each level
// that split hands the new block's key and pointer to the level above,
// through a cursor positioned after the split block's entry.
func (c *Cursor) insert(rec, key []byte) error {
	t := c.t
	pcur := c
	var (
		nptr uint64
		nkey = key
	)
	for level := 0; ; level++ {
		if level >= len(c.lv) {
			return ErrTooTall
		}
		ptr, k, ncur, err := pcur.insrec(level, rec, nkey, nptr)
		if err != nil {
			return err
		}
		if ncur != nil {
			pcur = ncur
		}
		if ptr == t.Kind.nullPtr() {
			return nil
		}
		nptr, nkey = ptr, k
	}
}

// insrec inserts one entry at level (xfs_btree_insrec): the record rec in
// a leaf, or the key/pointer pair key/ptrIn in a node. When the block had
// to split it returns the new block's pointer and key, and a cursor for
// the level above when there is one.
func (c *Cursor) insrec(level int, rec, key []byte, ptrIn uint64) (nptr uint64, nkey []byte, ncur *Cursor, err error) {
	t := c.t
	null := t.Kind.nullPtr()
	if c.iroot == nil && level >= c.nlevels {
		return null, nil, nil, c.newRoot()
	}
	ptr := c.lv[level].ptr
	if ptr == 0 {
		return null, nil, nil, t.corrupt(t.Root, "insert before the first entry at level %d", level)
	}
	optr := ptr
	old := c.lv[level].n
	nptr = null
	if old.numrecs() == old.maxr {
		var moved bool
		if nptr, nkey, ncur, moved, err = c.makeUnfull(level); err != nil {
			return null, nil, nil, err
		}
		if moved {
			optr = c.lv[level].ptr
		}
	}
	n := c.lv[level].n
	ptr = c.lv[level].ptr
	numrecs := n.numrecs()
	if ptr < 1 || ptr > numrecs+1 || numrecs >= n.maxr {
		return null, nil, nil, t.corrupt(n.ptr, "no room at entry %d of %d", ptr, numrecs)
	}
	if err := c.modify(n); err != nil {
		return null, nil, nil, err
	}
	if level == 0 {
		t.moveEntries(n, ptr+1, n, ptr, numrecs-ptr+1, true)
		copy(t.rec(n, ptr), rec)
	} else {
		t.moveEntries(n, ptr+1, n, ptr, numrecs-ptr+1, false)
		copy(t.key(n, ptr), key)
		t.setPtr(n, ptr, ptrIn)
	}
	n.setNumrecs(numrecs + 1)
	c.dirty(n)
	switch {
	case n != old && nptr != null:
		// The entry went into the block the split made: its key, which
		// goes up with it, may have changed.
		nkey = t.lowKey(n, level)
	case optr == 1:
		if err := c.updateKeys(level); err != nil {
			return null, nil, nil, err
		}
	}
	return nptr, nkey, ncur, nil
}

// makeUnfull makes room in the full block at level
// (xfs_btree_make_block_unfull). moved reports a left shift, after which
// the cursor's entry index has changed.
func (c *Cursor) makeUnfull(level int) (nptr uint64, nkey []byte, ncur *Cursor, moved bool, err error) {
	null := c.t.Kind.nullPtr()
	if c.iroot != nil && level == c.nlevels-1 {
		return null, nil, nil, false, c.newIroot()
	}
	ok, err := c.rshift(level)
	if err != nil || ok {
		return null, nil, nil, false, err
	}
	ok, err = c.lshift(level)
	if err != nil || ok {
		return null, nil, nil, ok, err
	}
	nptr, nkey, ncur, err = c.split(level)
	return nptr, nkey, ncur, false, err
}

// rshift moves the last entry of the block at level to its right sibling
// when the sibling has room and the cursor's entry is not the one that
// would move (xfs_btree_rshift).
func (c *Cursor) rshift(level int) (bool, error) {
	t := c.t
	if c.iroot != nil && level == c.nlevels-1 {
		return false, nil
	}
	left := c.lv[level].n
	rp := t.rightSib(left)
	if rp == t.Kind.nullPtr() {
		return false, nil
	}
	lrecs := left.numrecs()
	if c.lv[level].ptr >= lrecs {
		return false, nil
	}
	right, err := c.read(rp, level)
	if err != nil {
		return false, err
	}
	if t.leftSib(right) != left.ptr {
		return false, t.corrupt(rp, "left sibling %d, want %d", t.leftSib(right), left.ptr)
	}
	rrecs := right.numrecs()
	if rrecs == right.maxr {
		return false, nil
	}
	if err := c.modify(left); err != nil {
		return false, err
	}
	leaf := level == 0
	t.moveEntries(right, 2, right, 1, rrecs, leaf)
	t.moveEntries(right, 1, left, lrecs, 1, leaf)
	left.setNumrecs(lrecs - 1)
	right.setNumrecs(rrecs + 1)
	c.dirty(left)
	c.dirty(right)
	// The right block has a new first entry: fix its keys through a cursor
	// moved onto it.
	tcur := c.dup()
	tcur.lv[level].ptr = lrecs - 1
	ok, err := tcur.increment(level)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, t.corrupt(left.ptr, "right sibling %d not reachable from the parents", rp)
	}
	return true, tcur.updateKeys(level)
}

// lshift moves the first entry of the block at level to its left sibling
// when the sibling has room and the cursor's entry is not the first
// (xfs_btree_lshift). The cursor's index moves down by one.
func (c *Cursor) lshift(level int) (bool, error) {
	t := c.t
	if c.iroot != nil && level == c.nlevels-1 {
		return false, nil
	}
	right := c.lv[level].n
	lp := t.leftSib(right)
	if lp == t.Kind.nullPtr() {
		return false, nil
	}
	if c.lv[level].ptr <= 1 {
		return false, nil
	}
	left, err := c.read(lp, level)
	if err != nil {
		return false, err
	}
	if t.rightSib(left) != right.ptr {
		return false, t.corrupt(lp, "right sibling %d, want %d", t.rightSib(left), right.ptr)
	}
	lrecs := left.numrecs()
	if lrecs == left.maxr {
		return false, nil
	}
	rrecs := right.numrecs()
	if err := c.modify(right); err != nil {
		return false, err
	}
	leaf := level == 0
	t.moveEntries(left, lrecs+1, right, 1, 1, leaf)
	left.setNumrecs(lrecs + 1)
	t.moveEntries(right, 1, right, 2, rrecs-1, leaf)
	right.setNumrecs(rrecs - 1)
	c.dirty(left)
	c.dirty(right)
	if err := c.updateKeys(level); err != nil {
		return false, err
	}
	c.lv[level].ptr--
	return true, nil
}

// split moves the upper half of the block at level into a new block on its
// right (__xfs_btree_split). With an odd count the half that will receive
// the new entry gets one entry fewer, so both end up equal. The cursor
// follows its entry; the returned cursor points one entry right of the
// split block's entry in the parent, where the new block's entry goes.
func (c *Cursor) split(level int) (nptr uint64, nkey []byte, ncur *Cursor, err error) {
	t := c.t
	null := t.Kind.nullPtr()
	left := c.lv[level].n
	if err := c.modify(left); err != nil {
		return null, nil, nil, err
	}
	right, err := c.alloc(left.ptr, level)
	if err != nil {
		return null, nil, nil, err
	}
	lrecs := left.numrecs()
	rrecs := lrecs / 2
	if lrecs&1 == 1 && c.lv[level].ptr <= rrecs+1 {
		rrecs++
	}
	t.moveEntries(right, 1, left, lrecs-rrecs+1, rrecs, level == 0)
	lrecs -= rrecs
	left.setNumrecs(lrecs)
	right.setNumrecs(rrecs)
	nkey = t.lowKey(right, level)

	rr := t.rightSib(left)
	t.setRightSib(right, rr)
	t.setLeftSib(right, left.ptr)
	t.setRightSib(left, right.ptr)
	c.dirty(left)
	c.dirty(right)
	if rr != null {
		rrn, err := c.read(rr, level)
		if err != nil {
			return null, nil, nil, err
		}
		if t.leftSib(rrn) != left.ptr {
			return null, nil, nil, t.corrupt(rr, "left sibling %d, want %d", t.leftSib(rrn), left.ptr)
		}
		t.setLeftSib(rrn, right.ptr)
		c.dirty(rrn)
	}
	if c.lv[level].ptr > lrecs+1 {
		c.lv[level].n = right
		c.lv[level].ptr -= lrecs
	}
	if level+1 < c.nlevels {
		ncur = c.dup()
		ncur.lv[level+1].ptr++
	}
	return right.ptr, nkey, ncur, nil
}

// newRoot grows a short-form tree by a level (xfs_btree_new_root): the two
// blocks of the old top level become the two entries of a new root.
func (c *Cursor) newRoot() error {
	t := c.t
	top := c.nlevels - 1
	if c.nlevels >= len(c.lv) {
		return ErrTooTall
	}
	nr, err := c.alloc(t.Root, c.nlevels)
	if err != nil {
		return err
	}
	t.Root, t.Levels = nr.ptr, t.Levels+1

	var left, right *node
	entry := 1
	cur := c.lv[top].n
	if rp := t.rightSib(cur); rp != t.Kind.nullPtr() {
		left = cur
		if right, err = c.read(rp, top); err != nil {
			return err
		}
	} else {
		right, entry = cur, 2
		lp := t.leftSib(cur)
		if lp == t.Kind.nullPtr() {
			return t.corrupt(cur.ptr, "split root has no sibling")
		}
		if left, err = c.read(lp, top); err != nil {
			return err
		}
	}
	if t.rightSib(left) != right.ptr || t.leftSib(right) != left.ptr {
		return t.corrupt(left.ptr, "siblings of the old root level disagree")
	}
	copy(t.key(nr, 1), t.lowKey(left, top))
	copy(t.key(nr, 2), t.lowKey(right, top))
	t.setPtr(nr, 1, left.ptr)
	t.setPtr(nr, 2, right.ptr)
	nr.setNumrecs(2)
	c.dirty(nr)
	c.lv[c.nlevels].n, c.lv[c.nlevels].ptr = nr, entry
	c.nlevels++
	return nil
}

// newIroot moves the entries of a full inode root into a new child block
// and leaves the root with one entry pointing at it
// (xfs_btree_new_iroot). The cursor's entry at the old root level now
// indexes the child.
func (c *Cursor) newIroot() error {
	t := c.t
	if c.nlevels >= len(c.lv) {
		return ErrTooTall
	}
	root := c.iroot
	level := root.level()
	if level != c.nlevels-1 {
		return fmt.Errorf("btree: inode root at level %d in a cursor of %d levels", level, c.nlevels)
	}
	child, err := c.alloc(t.ptr(root, 1), level)
	if err != nil {
		return err
	}
	nr := root.numrecs()
	t.moveEntries(child, 1, root, 1, nr, false)
	child.setNumrecs(nr)
	c.dirty(child)
	root.setLevel(level + 1)
	root.setNumrecs(1)
	t.setPtr(root, 1, child.ptr)
	c.dirty(root)
	c.lv[level+1].n, c.lv[level+1].ptr = root, 1
	c.lv[level].n = child
	c.nlevels++
	return nil
}
