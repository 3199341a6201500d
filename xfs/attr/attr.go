package attr

import (
	"bytes"
	"fmt"

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
	o := newOp(r)
	if r.Format() == format.FmtLocal {
		return FormShort, nil
	}
	m, err := o.mapped()
	if err != nil || len(m) == 0 {
		return FormNone, err
	}
	d, err := o.read(0)
	if err != nil {
		return FormNone, err
	}
	if blkMagic(d.b) == format.Da3NodeMagic {
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
	o := newOp(r)
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
	if m, err := o.mapped(); err != nil || len(m) == 0 {
		if err == nil {
			err = ErrNoData
		}
		return nil, err
	}
	st := o.newState(format.DaHashName(name), ns, name)
	found, err := st.lookup()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNoData
	}
	blk := st.bottom()
	return o.entValue(blk.d.b, blk.index)
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
	o := newOp(r)
	if r.Format() == format.FmtLocal {
		ents, err := shortForm(r)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := fn(e.flags&format.AttrNSMask, e.name, e.value); err != nil {
				return err
			}
		}
		return nil
	}
	if m, err := o.mapped(); err != nil || len(m) == 0 {
		return err
	}
	return o.walkLeaves(func(d *dablk) error {
		h := leafHdrOf(d.b)
		for i := 0; i < h.count; i++ {
			e := leafEntOf(d.b, i)
			if e.flags&format.AttrIncomplete != 0 {
				continue
			}
			v, err := o.entValue(d.b, i)
			if err != nil {
				return err
			}
			if err := fn(e.flags&format.AttrNSMask, entName(d.b, i), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// walkLeaves calls fn on every leaf from the leftmost along the forward
// sibling chain.
func (o *op) walkLeaves(fn func(d *dablk) error) error {
	st := o.newState(0, 0, nil)
	if _, err := st.lookup(); err != nil {
		return err
	}
	d := st.bottom().d
	seen := map[uint32]bool{}
	for {
		if seen[d.no] {
			return format.Corrupt(leafWhat, fmt.Sprintf("attr block %d", d.no), "leaf sibling chain loops")
		}
		seen[d.no] = true
		if err := fn(d); err != nil {
			return err
		}
		next := blkForw(d.b)
		if next == 0 {
			return nil
		}
		nd, err := o.read(next)
		if err != nil {
			return err
		}
		if blkMagic(nd.b) != format.Attr3LeafMagic {
			return format.Corrupt(leafWhat, fmt.Sprintf("attr block %d", next), "leaf sibling of block %d has magic %#x", d.no, blkMagic(nd.b))
		}
		if back := blkBack(nd.b); back != d.no {
			return format.Corrupt(leafWhat, fmt.Sprintf("attr block %d", next), "back pointer %d, want %d", back, d.no)
		}
		d = nd
	}
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
	return o.add(a)
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
	if m, err := o.mapped(); err != nil || len(m) == 0 {
		if err == nil {
			err = ErrNoData
		}
		return err
	}
	return o.removeBlocks(a, ns)
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
	if m, err := o.mapped(); err != nil || len(m) == 0 {
		return false, err
	}
	return o.newState(a.hash, a.ns, a.name).lookup()
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
	d, err := o.grow()
	if err != nil {
		return err
	}
	if d.no != 0 {
		return fmt.Errorf("attr: first leaf landed at block %d", d.no)
	}
	initLeaf(d.b, o.g, d.daddr, o.owner)
	for _, e := range ents {
		ne := &newEnt{hash: format.DaHashName(e.name), flags: e.flags, name: e.name, value: e.value, local: true,
			size: entsizeLocal(len(e.name), len(e.value))}
		idx, _ := leafLookup(d.b, ne.hash, e.flags, e.name)
		if !leafAdd(d.b, ne, idx) {
			return format.Corrupt("short-form attributes", "", "entries do not fit in one leaf")
		}
	}
	o.dirty(d)
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
		st := o.newState(a.hash, a.ns, a.name)
		if _, err := st.lookup(); err != nil {
			return err
		}
		st.ne = ne
		leaf := st.bottom()
		added := leafAdd(leaf.d.b, ne, leaf.index)
		o.dirty(leaf.d)
		if added {
			st.fixHashPath(&st.path)
			break
		}
		if st.path.active == 1 {
			// A single leaf (perhaps with remote value blocks): convert to
			// node form and try again.
			if err := o.leafToNode(); err != nil {
				return err
			}
			continue
		}
		if err := st.split(); err != nil {
			return err
		}
		break
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
	nst := o.newState(a.hash, newFilter, a.name)
	if found, err := nst.lookup(); err != nil || !found {
		if err == nil {
			err = format.Corrupt(leafWhat, "", "new entry vanished")
		}
		return err
	}
	nb := nst.bottom()
	var ob *pathBlk
	if a.replace {
		// Find the old entry while it is the only complete one.
		ost := o.newState(a.hash, a.ns, a.name)
		if found, err := ost.lookup(); err != nil || !found {
			if err == nil {
				err = format.Corrupt(leafWhat, "", "replaced entry vanished")
			}
			return err
		}
		ob = ost.bottom()
	}
	if !local {
		setEntRemote(nb.d.b, nb.index, rmtBlk, len(a.value))
	}
	clearIncomplete(nb.d.b, nb.index)
	o.dirty(nb.d)
	if !a.replace {
		return nil
	}

	// Flip: the old entry becomes the incomplete one, then goes with its
	// value blocks.
	oldFlags := leafEntOf(ob.d.b, ob.index).flags
	var oldBlk uint32
	var oldLen int
	if oldFlags&format.AttrLocal == 0 {
		oldBlk, oldLen = entRemote(ob.d.b, ob.index)
		setEntRemote(ob.d.b, ob.index, 0, 0)
	}
	e := leafEntOf(ob.d.b, ob.index)
	e.flags |= format.AttrIncomplete
	putLeafEnt(ob.d.b, ob.index, e)
	o.dirty(ob.d)
	if oldFlags&format.AttrLocal == 0 {
		if err := o.freeRemote(oldBlk, oldLen); err != nil {
			return err
		}
	}
	return o.removeEntry(a.hash, a.ns|format.AttrIncomplete, a.name)
}

func clearIncomplete(b []byte, i int) {
	e := leafEntOf(b, i)
	e.flags &^= format.AttrIncomplete
	putLeafEnt(b, i, e)
}

// removeBlocks is the pure remove in leaf or node form: the value blocks
// go first, then the entry.
func (o *op) removeBlocks(a *args, filter uint8) error {
	st := o.newState(a.hash, filter, a.name)
	found, err := st.lookup()
	if err != nil {
		return err
	}
	if !found {
		return ErrNoData
	}
	b := st.bottom()
	if leafEntOf(b.d.b, b.index).flags&format.AttrLocal == 0 {
		blk, n := entRemote(b.d.b, b.index)
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
	st := o.newState(hash, filter, name)
	found, err := st.lookup()
	if err != nil {
		return err
	}
	if !found {
		return ErrNoData
	}
	b := st.bottom()
	leafRemove(b.d.b, b.index)
	o.dirty(b.d)
	st.fixHashPath(&st.path)
	// The kernel tries a join after every removal below a node, not only
	// when the leaf fell under 37% (xfs_attr_node_remove_attr tests the
	// lookup's result, not xfs_attr3_leaf_remove's); leafTooSmall then
	// decides.
	if st.path.active > 1 {
		if err := st.join(); err != nil {
			return err
		}
	}
	return o.leafShrink()
}

// leafShrink is xfs_attr_leaf_shrink: a fork that is a single leaf goes
// back to short form when all its entries fit there.
func (o *op) leafShrink() error {
	leaf, err := o.isLeaf()
	if err != nil || !leaf {
		return err
	}
	d, err := o.read(0)
	if err != nil {
		return err
	}
	off := allFit(d.b, o.w)
	if off == 0 {
		return nil
	}
	return o.leafToShortform(d, off)
}

// leafToShortform is xfs_attr3_leaf_to_shortform: free the leaf and store
// its entries in the inode at fork offset off; off -1 means nothing is
// left and the fork goes.
func (o *op) leafToShortform(d *dablk, off int) error {
	w := o.w
	src := bytes.Clone(d.b)
	if err := o.shrink(0); err != nil {
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
