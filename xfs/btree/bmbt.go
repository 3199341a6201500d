package btree

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// ErrNotSingleLeaf: ToExtents needs a root of level 1 with one child.
var ErrNotSingleLeaf = errors.New("btree: root does not have a single leaf below it")

// FromExtents turns an extent list that outgrew the inode fork into a tree
// of one leaf below an inode root of level 1 (xfs_bmap_extents_to_btree).
// near is the allocation hint for the leaf. The caller switches the fork
// format to btree and logs the new root when RootChanged is called.
func (t *Tree) FromExtents(ext []format.Extent, near uint64) error {
	if !t.Kind.inodeRooted() {
		return fmt.Errorf("btree: %s is not rooted in an inode", t.Kind.Shape.Name)
	}
	if t.IRoot != nil {
		return fmt.Errorf("btree: inode %d fork already has a btree", t.Ino)
	}
	if format.BmdrMaxRecs(t.ForkSize) < 1 {
		return fmt.Errorf("btree: fork of %d bytes cannot hold a root", t.ForkSize)
	}
	if len(ext) == 0 || len(ext) > t.maxRecs(0) {
		return fmt.Errorf("btree: %d extents do not make one leaf of at most %d", len(ext), t.maxRecs(0))
	}
	recs := make([][]byte, len(ext))
	for i, e := range ext {
		recs[i] = make([]byte, format.ExtentRecSize)
		e.Encode(recs[i])
		if i > 0 && !t.Kind.RecsInOrder(recs[i-1], recs[i]) {
			return fmt.Errorf("btree: extent %d out of order", i)
		}
	}
	c := t.NewCursor()
	leaf, err := c.alloc(near, 0)
	if err != nil {
		return err
	}
	for i, r := range recs {
		copy(t.rec(leaf, i+1), r)
	}
	leaf.setNumrecs(len(recs))
	c.dirty(leaf)
	t.IRoot = &format.BmdrRoot{
		Level:   1,
		NumRecs: 1,
		Keys:    []format.FileOff{ext[0].StartOff},
		Ptrs:    []format.FsBlock{format.FsBlock(leaf.ptr)},
	}
	if t.RootChanged != nil {
		t.RootChanged()
	}
	return nil
}

// ToExtents turns a tree whose inode root (level 1) has a single leaf back
// into an extent list and frees the leaf (xfs_bmap_btree_to_extents). The
// caller does this when the records fit in the fork as extents; it stores
// them and switches the fork format. It returns ErrNotSingleLeaf when the
// tree has more than one leaf.
func (t *Tree) ToExtents() ([]format.Extent, error) {
	if err := t.checkRoot(); err != nil {
		return nil, err
	}
	if t.IRoot.Level != 1 || t.IRoot.NumRecs != 1 {
		return nil, ErrNotSingleLeaf
	}
	c := t.NewCursor()
	if err := c.reset(); err != nil {
		return nil, err
	}
	leaf, err := c.read(uint64(t.IRoot.Ptrs[0]), 0)
	if err != nil {
		return nil, err
	}
	if t.leftSib(leaf) != t.Kind.nullPtr() || t.rightSib(leaf) != t.Kind.nullPtr() {
		return nil, t.corrupt(leaf.ptr, "only leaf of the inode root has siblings")
	}
	ext := make([]format.Extent, leaf.numrecs())
	for i := range ext {
		ext[i] = format.DecodeExtent(t.rec(leaf, i+1))
	}
	if err := c.free(leaf); err != nil {
		return nil, err
	}
	t.IRoot = nil
	if t.RootChanged != nil {
		t.RootChanged()
	}
	return ext, nil
}

// SetForkSize tells the tree that the fork holding its root now has size
// bytes (the attribute fork offset moved). A root with more entries than
// the new size holds is first pushed down into a new child block, leaving
// one entry in the root (xfs_bmap_add_attrfork_btree calling
// xfs_btree_new_iroot, whose allocation hint is the root's first child).
func (t *Tree) SetForkSize(size int) error {
	if !t.Kind.inodeRooted() {
		return fmt.Errorf("btree: %s is not rooted in an inode", t.Kind.Shape.Name)
	}
	if format.BmdrMaxRecs(size) < 1 {
		return fmt.Errorf("btree: fork of %d bytes cannot hold a root", size)
	}
	if t.IRoot == nil || int(t.IRoot.NumRecs) <= format.BmdrMaxRecs(size) {
		t.ForkSize = size
		return nil
	}
	c := t.NewCursor()
	if err := c.reset(); err != nil {
		return err
	}
	c.lv[c.nlevels-1].n, c.lv[c.nlevels-1].ptr = c.iroot, 1
	return c.op(func() error {
		if err := c.newIroot(); err != nil {
			return err
		}
		// Re-home the one-entry root in a node sized for the new fork.
		nr := &node{
			buf:   make([]byte, t.Kind.hdrLen()+format.BmdrMaxRecs(size)*(t.Kind.Shape.KeyLen+t.Kind.Shape.PtrLen)),
			maxr:  format.BmdrMaxRecs(size),
			dirty: true,
		}
		nr.setLevel(c.iroot.level())
		t.setLeftSib(nr, t.Kind.nullPtr())
		t.setRightSib(nr, t.Kind.nullPtr())
		t.moveEntries(nr, 1, c.iroot, 1, 1, false)
		nr.setNumrecs(1)
		c.iroot = nr
		t.ForkSize = size
		return nil
	}, nil)
}
