package refcount

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Tree is one AG's refcount btree as one transaction, or one reader of
// committed blocks, sees it. It is used by one goroutine.
type Tree struct {
	bt  *btree.Tree
	geo *format.Geometry
	ag  format.AgNumber
	// hdr is the AGF: the transaction's locked copy, which the tree's
	// changes update, or the committed one.
	hdr *format.Agf
}

// Open locks AG ag's AGF in transaction t (lock order: AGFs ascending,
// see package xfs doc; a LockOrderError comes back as alloc's Lock gives
// it) and returns its refcount btree. New tree blocks are allocated from
// the AG's free space near the block being split and charged to t's
// reservation; freed ones go back busy and are credited to it. The AGF's
// refcount_root, refcount_level and refcount_blocks follow every change.
// The Tree takes its root from the AGF once: use one Tree per AG in a
// transaction (or Open again after another Tree of the AG changed).
func Open(t *alloc.Tx, ag format.AgNumber) (*Tree, error) {
	g := t.Geo()
	if !g.Reflink {
		return nil, fmt.Errorf("%w: the volume has no refcount btree (reflink is off)", format.ErrUnsupported)
	}
	a, err := t.Lock(ag)
	if err != nil {
		return nil, err
	}
	h := a.Header()
	bt := btree.NewAGTree(btree.Refcountbt, g, ag, h.RefcountRoot, h.RefcountLevel, nil)
	bt.Store = alloc.NewStore(t.Tx, t.Space, bt,
		func(near uint64) (uint64, error) {
			bno, _, err := a.Alloc(alloc.Request{MinLen: 1, MaxLen: 1, Goal: format.AgBlock(near), Reserved: true})
			if err != nil {
				return 0, err
			}
			if err := t.Use(1); err != nil {
				return 0, err
			}
			a.AddRefcountBlocks(1)
			return uint64(bno), nil
		},
		func(ptr uint64) error {
			if err := a.Free(format.AgBlock(ptr), 1); err != nil {
				return err
			}
			t.Freed(1)
			a.AddRefcountBlocks(-1)
			return nil
		})
	bt.RootChanged = func() { a.SetRefcountRoot(bt.AGRoot()) }
	return &Tree{bt: bt, geo: g, ag: ag, hdr: h}, nil
}

// Committed returns AG ag's refcount btree as last committed, read
// through read without locking anything: for volumes nobody changes
// meanwhile (a read-only volume, checks at open, tests). Changes through
// it fail.
func Committed(read alloc.Reader, g *format.Geometry, ag format.AgNumber) (*Tree, error) {
	if !g.Reflink {
		return nil, fmt.Errorf("%w: the volume has no refcount btree (reflink is off)", format.ErrUnsupported)
	}
	h, err := alloc.Committed(read, g, ag)
	if err != nil {
		return nil, err
	}
	bt := btree.NewAGTree(btree.Refcountbt, g, ag, h.RefcountRoot, h.RefcountLevel, nil)
	ops := treeOps(bt)
	bt.Store = &btree.ReadOnly{Tree: bt, Fetch: func(ptr uint64) ([]byte, error) {
		return read(bt.Daddr(ptr), g.BlockSize, ops)
	}}
	return &Tree{bt: bt, geo: g, ag: ag, hdr: h}, nil
}

// treeOps verifies a block of bt when the cache reads it and sets its
// CRC on write; named as alloc's tree ops name it, so the cache takes
// the two for the same kind of block.
func treeOps(bt *btree.Tree) *trans.Ops {
	return &trans.Ops{
		Name: bt.Kind.Shape.Name,
		Verify: func(b []byte, d format.Daddr) error {
			bno := format.AgBlock((uint64(d) >> (bt.Geo.BlockLog - format.BBShift)) % uint64(bt.Geo.AgBlocks))
			return bt.VerifyBlock(uint64(bno), b)
		},
		Finish: func(b []byte) { bt.Kind.Finalize(b, 0) },
	}
}

// AG is the tree's allocation group.
func (t *Tree) AG() format.AgNumber { return t.ag }

// Levels is the tree's height.
func (t *Tree) Levels() int { return t.bt.Height() }

// where names the tree in errors.
func (t *Tree) where() string { return fmt.Sprintf("AG %d refcountbt", t.ag) }

func (t *Tree) corrupt(why string, args ...any) error {
	return format.Corrupt("refcountbt", t.where(), why, args...)
}

// get returns the record under c, checked as the kernel checks every
// record it reads.
func (t *Tree) get(c *btree.Cursor) (Rec, error) {
	b, ok := c.View()
	if !ok {
		return Rec{}, t.corrupt("cursor is not on a record")
	}
	r := DecodeRec(b)
	if err := r.Check(t.geo, t.ag); err != nil {
		return Rec{}, format.Located(err, t.where())
	}
	return r, nil
}

// lookup positions a new cursor for block bno of domain d in direction
// dir and returns the record it finds there, if it belongs to d.
func (t *Tree) lookup(dir btree.Dir, d Domain, bno format.AgBlock) (*btree.Cursor, Rec, bool, error) {
	c := t.bt.NewCursor()
	ok, err := c.Lookup(dir, Rec{Start: bno, Domain: d}.bytes())
	if err != nil || !ok {
		return c, Rec{}, false, err
	}
	r, err := t.get(c)
	if err != nil {
		return c, Rec{}, false, err
	}
	return c, r, r.Domain == d, nil
}

// step moves c one record on (next) or back and returns that record if
// it belongs to domain d.
func (t *Tree) step(c *btree.Cursor, next bool, d Domain) (Rec, bool, error) {
	var ok bool
	var err error
	if next {
		ok, err = c.Increment()
	} else {
		ok, err = c.Decrement()
	}
	if err != nil || !ok {
		return Rec{}, false, err
	}
	r, err := t.get(c)
	if err != nil {
		return Rec{}, false, err
	}
	return r, r.Domain == d, nil
}

// insert adds r, which must not exist yet.
func (t *Tree) insert(r Rec) error {
	c := t.bt.NewCursor()
	ok, err := c.Lookup(btree.EQ, r.bytes())
	if err != nil {
		return err
	}
	if ok {
		return t.corrupt("inserting %v: a record starts there", r)
	}
	return t.orderErr(c.Insert(r.bytes()), "inserting %v", r)
}

// orderErr turns the cursor's complaint that a record does not fit
// between its neighbours into corruption: the algorithms here only put
// records where they belong, so neighbours out of place are damage.
func (t *Tree) orderErr(err error, what string, args ...any) error {
	if errors.Is(err, btree.ErrKeyOrder) || errors.Is(err, btree.ErrExists) {
		return t.corrupt(what+": records out of order around it", args...)
	}
	return err
}

// update replaces the record old with r (whose start may differ, within
// its neighbours).
func (t *Tree) update(old, r Rec) error {
	c, cur, ok, err := t.lookup(btree.EQ, old.Domain, old.Start)
	if err != nil {
		return err
	}
	if !ok || cur != old {
		return t.corrupt("updating %v: record not found", old)
	}
	return t.orderErr(c.Update(r.bytes()), "updating %v to %v", old, r)
}

// remove deletes the record old.
func (t *Tree) remove(old Rec) error {
	c, cur, ok, err := t.lookup(btree.EQ, old.Domain, old.Start)
	if err != nil {
		return err
	}
	if !ok || cur != old {
		return t.corrupt("removing %v: record not found", old)
	}
	return c.Delete()
}

// checkRange refuses a range that is empty or not inside the AG past
// its headers.
func (t *Tree) checkRange(bno format.AgBlock, n uint32) error {
	if n == 0 || bno <= headerBlock(t.geo) || uint64(bno)+uint64(n) > uint64(t.geo.AgSize(t.ag)) {
		return fmt.Errorf("%w: AG %d blocks %d+%d are not a range of the AG", format.ErrInvalid, t.ag, bno, n)
	}
	return nil
}
