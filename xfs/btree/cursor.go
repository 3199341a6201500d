package btree

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// Dir is the comparison a Lookup finds.
type Dir int

// Lookup directions (XFS_LOOKUP_LE, _EQ, _GE).
const (
	LE Dir = iota // the last record with key <= the search key
	EQ            // the record with key == the search key
	GE            // the first record with key >= the search key
)

func (d Dir) String() string {
	switch d {
	case LE:
		return "LE"
	case EQ:
		return "EQ"
	case GE:
		return "GE"
	}
	return fmt.Sprintf("Dir(%d)", int(d))
}

// Cursor is a position in a tree: a block and an entry index per level,
// like struct xfs_btree_cur. A cursor belongs to one transaction and one
// goroutine. After a change made through another cursor of the same tree,
// it must be repositioned with Lookup, First or Last before it is used.
type Cursor struct {
	t       *Tree
	nlevels int
	lv      [format.MaxBtreeLevels]struct {
		n   *node
		ptr int // 1-based entry index in n
	}
	iroot *node // the inode root, shared with cursors duplicated from this one
	// changing is set while an operation changes the tree: every block
	// the cursor reads then is made the transaction's own (Store.Modify).
	changing bool
}

// NewCursor returns an unpositioned cursor on t.
func (t *Tree) NewCursor() *Cursor { return &Cursor{t: t} }

// dup copies the cursor's position; blocks are shared.
func (c *Cursor) dup() *Cursor {
	d := *c
	return &d
}

// read fetches and checks the block at ptr, which must be at level.
func (c *Cursor) read(ptr uint64, level int) (*node, error) {
	t := c.t
	if !t.validPtr(ptr) {
		return nil, format.Corrupt(t.Kind.Shape.Name, t.rootWhere(), "pointer to block %d out of range at level %d", ptr, level+1)
	}
	blk, err := t.Store.Read(ptr)
	if err != nil {
		return nil, err
	}
	b := blk.Bytes()
	h, err := t.checkHeader(ptr, b, level)
	if err != nil {
		return nil, err
	}
	// Only a root leaf may be empty; an inode root is never a leaf.
	if h.NumRecs == 0 && (level != 0 || c.nlevels != 1 || c.iroot != nil) {
		return nil, t.corrupt(ptr, "empty block at level %d", level)
	}
	n := &node{blk: blk, ptr: ptr, buf: b, maxr: t.maxRecs(level)}
	if c.changing {
		if err := c.modify(n); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// modify makes n's block the transaction's own to change.
func (c *Cursor) modify(n *node) error {
	if n.isIRoot() {
		return nil
	}
	if err := c.t.Store.Modify(n.blk); err != nil {
		return err
	}
	n.buf = n.blk.Bytes()
	return nil
}

// alloc gets a new block from the store and gives it a header.
func (c *Cursor) alloc(near uint64, level int) (*node, error) {
	t := c.t
	blk, err := t.Store.Alloc(near)
	if err != nil {
		return nil, err
	}
	b := blk.Bytes()
	p := blk.Ptr()
	if !t.validPtr(p) || len(b) != t.Geo.BlockSize {
		return nil, fmt.Errorf("btree: store allocated an unusable block %d (%d bytes)", p, len(b))
	}
	t.initBlock(b, p, level, 0)
	n := &node{blk: blk, ptr: p, buf: b, maxr: t.maxRecs(level)}
	t.Store.Dirty(blk)
	return n, nil
}

func (c *Cursor) free(n *node) error { return c.t.Store.Free(n.blk) }

// dirty reports a change to n.
func (c *Cursor) dirty(n *node) {
	if n.isIRoot() {
		n.dirty = true
		return
	}
	c.t.Store.Dirty(n.blk)
}

// reset empties the cursor for a new descent from the Tree's root,
// rebuilding the inode root from t.IRoot.
func (c *Cursor) reset() error {
	t := c.t
	if err := t.checkRoot(); err != nil {
		return err
	}
	*c = Cursor{t: t, nlevels: t.Height()}
	if t.Kind.inodeRooted() {
		n, err := t.irootNode()
		if err != nil {
			return err
		}
		c.iroot = n
	}
	return nil
}

// Lookup positions the cursor for key(rec) and reports whether it points
// at a record satisfying dir (xfs_btree_lookup). Only the key fields of
// rec matter. After an EQ lookup that returns false, the cursor marks
// where a record with that key goes, which is where Insert puts it.
func (c *Cursor) Lookup(dir Dir, rec []byte) (bool, error) {
	if err := c.checkLen(rec); err != nil {
		return false, err
	}
	return c.lookup(dir, c.t.Kind.KeyOf(rec))
}

// First moves to the first record; false for an empty tree.
func (c *Cursor) First() (bool, error) {
	return c.lookup(GE, make([]byte, c.t.Kind.Shape.KeyLen))
}

// Last moves to the last record; false for an empty tree.
func (c *Cursor) Last() (bool, error) {
	return c.lookup(LE, bytes.Repeat([]byte{0xFF}, c.t.Kind.Shape.KeyLen))
}

func (c *Cursor) checkLen(rec []byte) error {
	if len(rec) != c.t.Kind.Shape.RecLen {
		return fmt.Errorf("btree: %s record of %d bytes, want %d", c.t.Kind.Shape.Name, len(rec), c.t.Kind.Shape.RecLen)
	}
	return nil
}

func (c *Cursor) lookup(dir Dir, key []byte) (bool, error) {
	if err := c.reset(); err != nil {
		return false, err
	}
	t := c.t
	scratch := make([]byte, t.Kind.Shape.KeyLen)
	var (
		n     *node
		keyno int
		diff  = 1
		ptr   = t.Root
	)
	for level := c.nlevels - 1; level >= 0; level-- {
		if level == c.nlevels-1 && c.iroot != nil {
			n = c.iroot
		} else {
			var err error
			if n, err = c.read(ptr, level); err != nil {
				return false, err
			}
			if level == c.nlevels-1 && (t.leftSib(n) != t.Kind.nullPtr() || t.rightSib(n) != t.Kind.nullPtr()) {
				return false, t.corrupt(n.ptr, "root block has siblings")
			}
		}
		c.lv[level].n = n
		if diff == 0 {
			// A key matched higher up: it is the lowest key of this subtree.
			keyno = 1
		} else {
			low, high := 1, n.numrecs()
			if high == 0 { // an empty tree: read refuses other empty blocks
				if dir != LE {
					c.lv[0].ptr = 1
				} else {
					c.lv[0].ptr = 0
				}
				return false, nil
			}
			for low <= high {
				keyno = (low + high) / 2
				diff = t.Kind.Compare(t.searchKey(n, level, keyno, scratch), key)
				if diff < 0 {
					low = keyno + 1
				} else if diff > 0 {
					high = keyno - 1
				} else {
					break
				}
			}
		}
		if level > 0 {
			// The search stopped past the key: the subtree is the previous one.
			if diff > 0 {
				if keyno--; keyno < 1 {
					keyno = 1
				}
			}
			ptr = t.ptr(n, keyno)
			c.lv[level].ptr = keyno
		}
	}
	if dir != LE && diff < 0 {
		keyno++
		// Past the end of a leaf that is not the last: GE wants the next
		// leaf's first record.
		if dir == GE && keyno > n.numrecs() && t.rightSib(n) != t.Kind.nullPtr() {
			c.lv[0].ptr = keyno
			ok, err := c.increment(0)
			if err != nil {
				return false, err
			}
			if !ok {
				return false, t.corrupt(n.ptr, "right sibling %d is not reachable from the parents", t.rightSib(n))
			}
			return true, nil
		}
	} else if dir == LE && diff > 0 {
		keyno--
	}
	c.lv[0].ptr = keyno
	switch {
	case keyno == 0 || keyno > n.numrecs():
		return false, nil
	case dir != EQ || diff == 0:
		return true, nil
	}
	return false, nil
}

// Get returns a copy of the record under the cursor; ok is false when the
// cursor is not on a record.
func (c *Cursor) Get() (rec []byte, ok bool) {
	if rec, ok = c.View(); ok {
		rec = bytes.Clone(rec)
	}
	return rec, ok
}

// View is Get without the copy: the record's bytes in its block, valid
// until the tree or the cursor changes, for a caller that decodes them
// at once.
func (c *Cursor) View() (rec []byte, ok bool) {
	if c.nlevels == 0 {
		return nil, false
	}
	n, p := c.lv[0].n, c.lv[0].ptr
	if n == nil || p < 1 || p > n.numrecs() {
		return nil, false
	}
	return c.t.rec(n, p), true
}

// Increment moves to the next record; false past the last one.
func (c *Cursor) Increment() (bool, error) {
	if c.nlevels == 0 {
		return false, ErrNoRecord
	}
	return c.increment(0)
}

// Decrement moves to the previous record; false before the first one.
func (c *Cursor) Decrement() (bool, error) {
	if c.nlevels == 0 {
		return false, ErrNoRecord
	}
	return c.decrement(0)
}

// increment moves the cursor one entry right at level (xfs_btree_increment):
// within the block if it can, else up to the first ancestor that has an
// entry to the right and down its leftmost path. The sibling pointers of
// the old and new block must agree with the move.
func (c *Cursor) increment(level int) (bool, error) {
	t := c.t
	old := c.lv[level].n
	if c.lv[level].ptr++; c.lv[level].ptr <= old.numrecs() {
		return true, nil
	}
	rsib := t.rightSib(old)
	if rsib == t.Kind.nullPtr() {
		return false, nil
	}
	lev := level + 1
	for ; lev < c.nlevels; lev++ {
		if c.lv[lev].ptr++; c.lv[lev].ptr <= c.lv[lev].n.numrecs() {
			break
		}
	}
	if lev == c.nlevels {
		if c.iroot != nil {
			return false, nil
		}
		return false, t.corrupt(old.ptr, "right sibling %d but no next entry in the parents", rsib)
	}
	for n := c.lv[lev].n; lev > level; {
		p := t.ptr(n, c.lv[lev].ptr)
		lev--
		var err error
		if n, err = c.read(p, lev); err != nil {
			return false, err
		}
		c.lv[lev].n, c.lv[lev].ptr = n, 1
	}
	nw := c.lv[level].n
	if nw.ptr != rsib || t.leftSib(nw) != old.ptr {
		return false, t.corrupt(old.ptr, "right sibling %d, but the next block is %d whose left sibling is %d", rsib, nw.ptr, t.leftSib(nw))
	}
	return true, nil
}

// decrement is increment's mirror (xfs_btree_decrement).
func (c *Cursor) decrement(level int) (bool, error) {
	t := c.t
	old := c.lv[level].n
	if c.lv[level].ptr--; c.lv[level].ptr > 0 {
		return true, nil
	}
	lsib := t.leftSib(old)
	if lsib == t.Kind.nullPtr() {
		return false, nil
	}
	lev := level + 1
	for ; lev < c.nlevels; lev++ {
		if c.lv[lev].ptr--; c.lv[lev].ptr > 0 {
			break
		}
	}
	if lev == c.nlevels {
		if c.iroot != nil {
			return false, nil
		}
		return false, t.corrupt(old.ptr, "left sibling %d but no previous entry in the parents", lsib)
	}
	for n := c.lv[lev].n; lev > level; {
		p := t.ptr(n, c.lv[lev].ptr)
		lev--
		var err error
		if n, err = c.read(p, lev); err != nil {
			return false, err
		}
		c.lv[lev].n, c.lv[lev].ptr = n, n.numrecs()
	}
	nw := c.lv[level].n
	if nw.ptr != lsib || t.rightSib(nw) != old.ptr {
		return false, t.corrupt(old.ptr, "left sibling %d, but the previous block is %d whose right sibling is %d", lsib, nw.ptr, t.rightSib(nw))
	}
	return true, nil
}

// onRecord reports whether the cursor points at a record.
func (c *Cursor) onRecord() bool {
	if c.nlevels == 0 || c.lv[0].n == nil {
		return false
	}
	p := c.lv[0].ptr
	return p >= 1 && p <= c.lv[0].n.numrecs()
}

// updateKeys copies the lowest key of the block at level into its parent,
// and on up while the entry changed is the first of its block
// (xfs_btree_update_keys). It stops early where the key already matches:
// keys are exact copies, so everything above matches too.
func (c *Cursor) updateKeys(level int) error {
	t := c.t
	n := c.lv[level].n
	if n.numrecs() == 0 {
		return nil
	}
	key := t.lowKey(n, level)
	for lev := level + 1; lev < c.nlevels; lev++ {
		p, i := c.lv[lev].n, c.lv[lev].ptr
		if i < 1 || i > p.numrecs() {
			return t.corrupt(p.ptr, "cursor entry %d outside %d entries at level %d", i, p.numrecs(), lev)
		}
		if bytes.Equal(t.key(p, i), key) {
			break
		}
		if err := c.modify(p); err != nil {
			return err
		}
		copy(t.key(p, i), key)
		c.dirty(p)
		if i != 1 {
			break
		}
	}
	return nil
}

// op wraps a changing operation: change does the work, then reposition
// (if not nil) walks the cursor down the changed tree. When either fails,
// the Tree's root fields are put back as they were, RootChanged is not
// called and the cursor becomes unusable until the next Lookup; when both
// succeed, the new root is published and RootChanged called if it moved.
func (c *Cursor) op(change, reposition func() error) error {
	t := c.t
	root, levels, iroot := t.Root, t.Levels, t.IRoot
	err := c.changeBlocks(change)
	if err == nil && c.iroot != nil && c.iroot.dirty {
		t.IRoot = t.irootStruct(c.iroot)
		c.iroot.dirty = false
	}
	if err == nil && reposition != nil {
		err = reposition()
	}
	if err != nil {
		t.Root, t.Levels, t.IRoot = root, levels, iroot
		c.nlevels = 0
		return err
	}
	if (t.Root != root || t.Levels != levels || t.IRoot != iroot) && t.RootChanged != nil {
		t.RootChanged()
	}
	return nil
}

// changeBlocks runs change with every block it reads the transaction's
// own to change (siblings it shifts entries into, merges, relinks); it
// makes the blocks of the cursor's path its own where it writes them.
func (c *Cursor) changeBlocks(change func() error) error {
	c.changing = true
	defer func() { c.changing = false }()
	return change()
}

// Update overwrites the record under the cursor with rec and fixes the
// keys above it (xfs_btree_update). rec's key must stay between the keys
// of the records before and after it (else ErrKeyOrder).
func (c *Cursor) Update(rec []byte) error {
	if err := c.checkLen(rec); err != nil {
		return err
	}
	if !c.onRecord() {
		return ErrNoRecord
	}
	t := c.t
	n, p := c.lv[0].n, c.lv[0].ptr
	if err := c.checkBetween(t.Kind.KeyOf(rec), p-1, p+1); err != nil {
		if errors.Is(err, ErrExists) {
			err = ErrKeyOrder
		}
		return err
	}
	return c.op(func() error {
		if err := c.modify(n); err != nil {
			return err
		}
		copy(t.rec(n, p), rec)
		c.dirty(n)
		if p == 1 {
			return c.updateKeys(0)
		}
		return nil
	}, nil)
}
