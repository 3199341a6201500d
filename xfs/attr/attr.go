package attr

import (
	"bytes"
	"fmt"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// Namespaces, as stored in the entry flags.
const (
	User    uint8 = 0
	Trusted uint8 = format.AttrRoot
	Secure  uint8 = format.AttrSecure
)

// Set flags (XATTR_CREATE, XATTR_REPLACE).
const (
	Create  = 1 // fail with ErrExist when the attribute exists
	Replace = 2 // fail with ErrNoData when it does not
)

// MaxNameLen is the longest attribute name (XATTR_NAME_MAX, without the
// namespace prefix).
const MaxNameLen = 255

func checkName(ns uint8, name []byte) error {
	switch {
	case ns != User && ns != Trusted && ns != Secure:
		return fmt.Errorf("namespace %#x: %w", ns, ErrInvalid)
	case len(name) == 0:
		return fmt.Errorf("empty name: %w", ErrInvalid)
	case len(name) > MaxNameLen:
		return fmt.Errorf("name of %d bytes: %w", len(name), ErrNameTooLong)
	case bytes.IndexByte(name, 0) >= 0:
		return fmt.Errorf("name holds a NUL byte: %w", ErrInvalid)
	}
	return nil
}

// Form is the format an attribute fork is in.
type Form int

const (
	FormNone  Form = iota // no attribute fork, or an extents fork without blocks
	FormShort             // short form in the inode
	FormLeaf              // one leaf at block 0 (plus any remote value blocks)
	FormNode              // a da-btree with a node at block 0
)

func (f Form) String() string {
	return [...]string{"none", "short", "leaf", "node"}[f]
}

// FormOf reports the format of the attribute fork behind r.
func FormOf(r fork.Reader) (Form, error) {
	if r.Format() == format.FmtLocal {
		return FormShort, nil
	}
	o := newOp(r)
	if blocks, err := o.hasBlocks(); err != nil || !blocks {
		return FormNone, err
	}
	root, err := o.t.Read(0)
	if err != nil {
		return FormNone, err
	}
	if dabtree.Magic(root.B) == dabtree.NodeMagic {
		return FormNode, nil
	}
	return FormLeaf, nil
}

// shortForm returns the verified short-form entries of a local fork.
func shortForm(r fork.Reader) ([]sfEnt, error) {
	in := r.Inline()
	if err := verifySF(in); err != nil {
		return nil, err
	}
	return decodeSF(in[:sfTotsize(in)]), nil
}

// Get returns the value of attribute name in namespace ns, or ErrNoData.
func Get(r fork.Reader, ns uint8, name []byte) ([]byte, error) {
	if err := checkName(ns, name); err != nil {
		return nil, err
	}
	if r.Format() == format.FmtLocal {
		ents, err := shortForm(r)
		if err != nil {
			return nil, err
		}
		if i := sfFind(ents, ns, name); i >= 0 {
			return bytes.Clone(ents[i].value), nil
		}
		return nil, ErrNoData
	}
	o := newOp(r)
	if blocks, err := o.hasBlocks(); err != nil || !blocks {
		if err == nil {
			err = ErrNoData
		}
		return nil, err
	}
	p, found, err := o.lookup(format.DaHashName(name), ns, name)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNoData
	}
	leaf := p.Bottom()
	return o.entValue(leaf.Buf.B, leaf.Index)
}

// entValue returns a copy of the value of entry i of leaf b.
func (o *op) entValue(b []byte, i int) ([]byte, error) {
	if leafEntOf(b, i).flags&format.AttrLocal != 0 {
		return bytes.Clone(entLocalValue(b, i)), nil
	}
	blk, n := entRemote(b, i)
	return o.readRemote(blk, n)
}

// List calls fn for every attribute, in on-disk order: short-form order,
// or leaf by leaf in hash order. ns is User, Trusted or Secure (or holds
// format.AttrParent for a parent pointer, which this package never
// writes). name and value are only valid during the call. An error from
// fn stops the walk and is returned. Incomplete entries (left by a crash
// of the kernel in the middle of a set) are skipped, as the kernel does.
func List(r fork.Reader, fn func(ns uint8, name, value []byte) error) error {
	if r.Format() == format.FmtLocal {
		// Entry by entry, without decoding the fork into a slice: a
		// listing reads the attributes of every object it reports.
		in := r.Inline()
		if err := verifySF(in); err != nil {
			return err
		}
		var e sfEnt
		for i, p := 0, format.AttrSFHdrSize; i < int(in[2]); i++ {
			e, p = sfAt(in, p)
			if err := fn(e.flags&format.AttrNSMask, e.name, e.value); err != nil {
				return err
			}
		}
		return nil
	}
	o := newOp(r)
	if blocks, err := o.hasBlocks(); err != nil || !blocks {
		return err
	}
	return o.t.Walk(func(leaf *dabtree.Buf) error {
		b := leaf.B
		for i, n := 0, leafCount(b); i < n; i++ {
			e := leafEntOf(b, i)
			if e.flags&format.AttrIncomplete != 0 {
				continue
			}
			v, err := o.entValue(b, i)
			if err != nil {
				return err
			}
			if err := fn(e.flags&format.AttrNSMask, entName(b, i), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// Set creates or replaces attribute name in namespace ns with value.
// flags is 0, Create or Replace. Everything happens in the caller's
// transaction; on error the caller cancels it.
func Set(f Fork, ns uint8, name, value []byte, flags int) error {
	if err := checkName(ns, name); err != nil {
		return err
	}
	if len(value) > format.MaxAttrValueLen {
		return fmt.Errorf("value of %d bytes: %w", len(value), ErrValueTooLarge)
	}
	if flags&^(Create|Replace) != 0 || flags == Create|Replace {
		return fmt.Errorf("flags %#x: %w", flags, ErrInvalid)
	}
	o := newOp(f)
	a := &args{ns: ns, name: name, value: value, hash: format.DaHashName(name)}
	found := false
	if f.ForkOff() != 0 {
		var err error
		if found, err = o.exists(a); err != nil {
			return err
		}
	}
	switch {
	case found && flags&Create != 0:
		return ErrExist
	case !found && flags&Replace != 0:
		return ErrNoData
	}
	if f.ForkOff() == 0 {
		// xfs_attr_set sizes the new fork for a short-form entry, with
		// name and value lengths taken as the u8 the short form stores.
		dataFmt, dataBytes := f.DataFork()
		size := format.AttrSFHdrSize + sfEntsize(int(uint8(len(name))), int(uint8(len(value))))
		if err := f.AddFork(newForkOff(o.g, dataFmt, dataBytes, size)); err != nil {
			return err
		}
	}
	a.replace = found
	return o.flush(o.add(a))
}

// Remove deletes attribute name of namespace ns, or returns ErrNoData.
func Remove(f Fork, ns uint8, name []byte) error {
	if err := checkName(ns, name); err != nil {
		return err
	}
	if f.ForkOff() == 0 {
		return ErrNoData
	}
	o := newOp(f)
	a := &args{ns: ns, name: name, hash: format.DaHashName(name)}
	if f.Format() == format.FmtLocal {
		return o.sfRemove(a, false)
	}
	if blocks, err := o.hasBlocks(); err != nil || !blocks {
		if err == nil {
			err = ErrNoData
		}
		return err
	}
	return o.flush(o.removeBlocks(a, ns))
}

// flush hands the blocks the operation changed to the transaction, unless
// it failed (the caller then cancels the transaction).
func (o *op) flush(err error) error {
	if err == nil {
		o.c.Flush()
	}
	return err
}

// args are the arguments of a set or remove.
type args struct {
	ns      uint8
	name    []byte
	value   []byte
	hash    uint32
	replace bool // the attribute exists and is being replaced
}

// exists is xfs_attr_lookup.
func (o *op) exists(a *args) (bool, error) {
	if o.r.Format() == format.FmtLocal {
		ents, err := shortForm(o.r)
		if err != nil {
			return false, err
		}
		return sfFind(ents, a.ns, a.name) >= 0, nil
	}
	if blocks, err := o.hasBlocks(); err != nil || !blocks {
		return false, err
	}
	_, found, err := o.lookup(a.hash, a.ns, a.name)
	return found, err
}

// add runs the kernel's add (or replace) sequence: short form while the
// entry fits, else leaf/node form.
func (o *op) add(a *args) error {
	sf, err := o.isShortform()
	if err != nil {
		return err
	}
	if sf {
		done, err := o.sfAdd(a)
		if err != nil || done {
			return err
		}
		if err := o.sfToLeaf(); err != nil {
			return err
		}
		a.replace = false // the old entry went with the short form
	}
	return o.addBlocks(a)
}

// sfAdd is xfs_attr_shortform_addname: in a replace the old entry goes
// first (keeping the fork); the new one is appended when both lengths
// are below 255 and the fork can grow to hold it. done is false when the
// fork has to become a leaf.
func (o *op) sfAdd(a *args) (bool, error) {
	w := o.w
	if w.Format() != format.FmtLocal {
		// An attribute fork without blocks (just created, or one the
		// kernel created empty) starts as an empty short form.
		if err := w.SetInline(encodeSF(nil)); err != nil {
			return false, err
		}
	}
	if a.replace {
		if err := o.sfRemove(a, true); err != nil {
			return false, err
		}
	}
	if len(a.name) >= sfEntMax || len(a.value) >= sfEntMax {
		return false, nil
	}
	ents, err := shortForm(w)
	if err != nil {
		return false, err
	}
	size := sfTotsize(w.Inline()) + sfEntsize(len(a.name), len(a.value))
	dataFmt, dataBytes := w.DataFork()
	off := ShortformFit(o.g, w.ForkOff(), dataFmt, dataBytes, size)
	if off == 0 {
		return false, nil
	}
	if err := o.setForkOff(off); err != nil {
		return false, err
	}
	ents = append(ents, sfEnt{a.ns, a.name, a.value})
	return true, w.SetInline(encodeSF(ents))
}

func (o *op) setForkOff(off int) error {
	if off == o.w.ForkOff() {
		return nil
	}
	return o.w.SetForkOff(off)
}

// sfRemove is xfs_attr_sf_removename. Removing the last entry of a pure
// remove also removes the fork, unless the data fork is a btree.
func (o *op) sfRemove(a *args, keepFork bool) error {
	w := o.w
	ents, err := shortForm(w)
	if err != nil {
		return err
	}
	i := sfFind(ents, a.ns, a.name)
	if i < 0 {
		return ErrNoData
	}
	ents = append(ents[:i:i], ents[i+1:]...)
	b := encodeSF(ents)
	dataFmt, dataBytes := w.DataFork()
	if len(b) == format.AttrSFHdrSize && dataFmt != format.FmtBtree && !keepFork {
		return w.RemoveFork()
	}
	// The fork does not shrink: what fitted still fits at the same offset.
	if err := o.setForkOff(ShortformFit(o.g, w.ForkOff(), dataFmt, dataBytes, len(b))); err != nil {
		return err
	}
	return w.SetInline(b)
}

// sfToLeaf is xfs_attr_shortform_to_leaf: move every short-form entry
// into a new leaf at block 0.
func (o *op) sfToLeaf() error {
	w := o.w
	ents, err := shortForm(w)
	if err != nil {
		return err
	}
	for i := range ents { // detach from the inline buffer
		ents[i].name, ents[i].value = bytes.Clone(ents[i].name), bytes.Clone(ents[i].value)
	}
	if err := w.ToBlocks(); err != nil {
		return err
	}
	dataFmt, _ := w.DataFork()
	if err := o.setForkOff(resetForkOff(o.g, w.ForkOff(), dataFmt)); err != nil {
		return err
	}
	leaf, err := o.t.Grow(treeOps)
	if err != nil {
		return err
	}
	if leaf.Blkno != 0 {
		return fmt.Errorf("attr: first leaf landed at block %d", leaf.Blkno)
	}
	initLeaf(leaf.B, o.g, leaf.Daddr, o.owner)
	for _, e := range ents {
		ne := &newEnt{hash: format.DaHashName(e.name), flags: e.flags, name: e.name, value: e.value, local: true,
			size: entsizeLocal(len(e.name), len(e.value))}
		idx, _ := leafLookup(leaf.B, ne.hash, e.flags, e.name)
		if !leafAdd(leaf.B, ne, idx) {
			return format.Corrupt("short-form attributes", "", "entries do not fit in one leaf")
		}
	}
	return nil
}

// addBlocks adds (or replaces) an attribute in leaf or node form. The new
// entry goes in first, marked incomplete when it replaces another or
// waits for its remote value; then the value blocks are written; then the
// flags flip (new complete, old incomplete) and the old entry and its
// value blocks go, as the kernel's non-logged replace does.
func (o *op) addBlocks(a *args) error {
	size, local := newEntsize(o.bs, len(a.name), len(a.value))
	ne := &newEnt{hash: a.hash, flags: a.ns, name: a.name, value: a.value, size: size, local: local, incomplete: a.replace}
	for {
		p, _, err := o.lookup(a.hash, a.ns, a.name)
		if err != nil {
			return err
		}
		leaf := p.Bottom()
		added := leafAdd(leaf.Buf.B, ne, leaf.Index)
		o.c.Dirty(leaf.Buf) // leafAdd may have compacted it anyway
		if added {
			if err := o.t.FixHash(p); err != nil {
				return err
			}
			break
		}
		if len(p) > 1 {
			if err := o.split(p, ne); err != nil {
				return err
			}
			break
		}
		// A single leaf (perhaps with remote value blocks): it moves under
		// a new root node (xfs_attr3_leaf_to_node), then splits.
		if err := o.t.Deepen(); err != nil {
			return err
		}
	}

	newFilter := a.ns
	if a.replace || !local {
		newFilter |= format.AttrIncomplete
	}
	var rmtBlk uint32
	if !local {
		var err error
		if rmtBlk, err = o.writeRemote(a.value); err != nil {
			return err
		}
	}
	if newFilter == a.ns {
		return nil // a plain local add is complete
	}
	nb, err := o.find(a.hash, newFilter, a.name, "new entry vanished")
	if err != nil {
		return err
	}
	var ob *dabtree.Blk
	if a.replace {
		// Find the old entry while it is the only complete one.
		if ob, err = o.find(a.hash, a.ns, a.name, "replaced entry vanished"); err != nil {
			return err
		}
	}
	if !local {
		setEntRemote(nb.Buf.B, nb.Index, rmtBlk, len(a.value))
	}
	clearIncomplete(nb.Buf.B, nb.Index)
	o.c.Dirty(nb.Buf)
	if !a.replace {
		return nil
	}

	// Flip: the old entry becomes the incomplete one, then goes with its
	// value blocks.
	oldFlags := leafEntOf(ob.Buf.B, ob.Index).flags
	var oldBlk uint32
	var oldLen int
	if oldFlags&format.AttrLocal == 0 {
		oldBlk, oldLen = entRemote(ob.Buf.B, ob.Index)
		setEntRemote(ob.Buf.B, ob.Index, 0, 0)
	}
	e := leafEntOf(ob.Buf.B, ob.Index)
	e.flags |= format.AttrIncomplete
	putLeafEnt(ob.Buf.B, ob.Index, e)
	o.c.Dirty(ob.Buf)
	if oldFlags&format.AttrLocal == 0 {
		if err := o.freeRemote(oldBlk, oldLen); err != nil {
			return err
		}
	}
	return o.removeEntry(a.hash, a.ns|format.AttrIncomplete, a.name)
}

// find returns the leaf holding the entry (filter, name), with its index;
// the entry must exist (gone says what it means when it does not).
func (o *op) find(hash uint32, filter uint8, name []byte, gone string) (*dabtree.Blk, error) {
	p, found, err := o.lookup(hash, filter, name)
	if err == nil && !found {
		err = format.Corrupt(leafWhat, "", "%s", gone)
	}
	if err != nil {
		return nil, err
	}
	return p.Bottom(), nil
}

func clearIncomplete(b []byte, i int) {
	e := leafEntOf(b, i)
	e.flags &^= format.AttrIncomplete
	putLeafEnt(b, i, e)
}

// removeBlocks is the pure remove in leaf or node form: the value blocks
// go first, then the entry.
func (o *op) removeBlocks(a *args, filter uint8) error {
	p, found, err := o.lookup(a.hash, filter, a.name)
	if err != nil {
		return err
	}
	if !found {
		return ErrNoData
	}
	leaf := p.Bottom()
	if leafEntOf(leaf.Buf.B, leaf.Index).flags&format.AttrLocal == 0 {
		blk, n := entRemote(leaf.Buf.B, leaf.Index)
		if err := o.freeRemote(blk, n); err != nil {
			return err
		}
	}
	return o.removeEntry(a.hash, filter, a.name)
}

// removeEntry is xfs_attr_node_remove_attr plus xfs_attr_leaf_shrink:
// remove the entry, join leaves and nodes that became too small, and go
// back to short form when everything left fits in the inode.
func (o *op) removeEntry(hash uint32, filter uint8, name []byte) error {
	p, found, err := o.lookup(hash, filter, name)
	if err != nil {
		return err
	}
	if !found {
		return ErrNoData
	}
	leaf := p.Bottom()
	leafRemove(leaf.Buf.B, leaf.Index)
	o.c.Dirty(leaf.Buf)
	if err := o.t.FixHash(p); err != nil {
		return err
	}
	// The kernel tries a join after every removal below a node, not only
	// when the leaf fell under 37% (xfs_attr_node_remove_attr tests the
	// lookup's result, not xfs_attr3_leaf_remove's); the leaf's Usage
	// then decides.
	if len(p) > 1 {
		if _, err := o.t.Join(p); err != nil {
			return err
		}
	}
	return o.leafShrink()
}

// leafShrink is xfs_attr_leaf_shrink: a fork that is a single leaf goes
// back to short form when all its entries fit there.
func (o *op) leafShrink() error {
	if single, err := o.isLeaf(); err != nil || !single {
		return err
	}
	leaf, err := o.t.Read(0)
	if err != nil {
		return err
	}
	off := allFit(leaf.B, o.w)
	if off == 0 {
		return nil
	}
	return o.leafToShortform(leaf.B, off)
}

// leafToShortform is xfs_attr3_leaf_to_shortform: free the leaf and store
// its entries in the inode at fork offset off; off -1 means nothing is
// left and the fork goes.
func (o *op) leafToShortform(leaf []byte, off int) error {
	w := o.w
	src := bytes.Clone(leaf)
	if err := o.c.Free(0); err != nil {
		return err
	}
	if off == -1 {
		return w.RemoveFork()
	}
	h := leafHdrOf(src)
	var ents []sfEnt
	for i := 0; i < h.count; i++ {
		e := leafEntOf(src, i)
		if e.flags&format.AttrIncomplete != 0 || e.idx == 0 {
			continue
		}
		ents = append(ents, sfEnt{e.flags & format.AttrNSMask, entName(src, i), entLocalValue(src, i)})
	}
	if len(ents) > 0 {
		if err := o.setForkOff(off); err != nil {
			return err
		}
	}
	return w.SetInline(encodeSF(ents))
}
