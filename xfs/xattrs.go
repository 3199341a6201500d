package xfs

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs/attr"
	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Xattrs is the volume's extended attributes: names in the user,
// trusted and security namespaces with values up to 64 KiB, in every
// attribute fork format the kernel writes (short form in the inode, leaf
// and node blocks, remote values), converted at the kernel's thresholds
// by package attr. Each call is one transaction on one inode under its
// lock; SetMany sets several attributes in one. An Xattrs comes from
// Volume.Xattrs and is safe for many goroutines.
type Xattrs struct{ *mount }

// Xattrs returns the volume's extended attributes.
func (v *Volume) Xattrs() Xattrs { return Xattrs{v.mount} }

func (m *mount) xattrs() Xattrs { return Xattrs{m} }

// Xattr is one extended attribute.
type Xattr struct {
	Namespace string // "user", "trusted" or "security"
	Name      string // without the namespace prefix
	Value     []byte
}

// FullName is the attribute name as getfattr prints it ("user.name").
func (x Xattr) FullName() string { return x.Namespace + "." + x.Name }

// SplitXattrName splits "user.name" into namespace flags and name.
// MaxXattrNameLen is Linux's XATTR_NAME_MAX: the longest full name
// ("user.name") the kernel lets anyone read or write.
const MaxXattrNameLen = 255

func SplitXattrName(full string) (flags uint8, name string, err error) {
	if len(full) > MaxXattrNameLen {
		return 0, "", fmt.Errorf("attribute name of %d bytes (at most %d with its prefix): %w", len(full), MaxXattrNameLen, ErrNameTooLong)
	}
	ns, name, ok := strings.Cut(full, ".")
	if !ok || name == "" {
		return 0, "", fmt.Errorf("attribute %q needs a namespace prefix (user., trusted. or security.): %w", full, ErrInvalid)
	}
	switch ns {
	case "user":
		return 0, name, nil
	case "trusted":
		return format.AttrRoot, name, nil
	case "security":
		return format.AttrSecure, name, nil
	}
	return 0, "", fmt.Errorf("attribute namespace %q is not supported: %w", ns, ErrInvalid)
}

// List returns every attribute with its value, in on-disk order.
// Parent-pointer attributes, which are not user-visible, are left out.
func (v Xattrs) List(ino format.Ino) ([]Xattr, error) {
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return nil, err
	}
	var out []Xattr
	x := xattrVisitor{fn: func(ns string, name, value []byte) error {
		out = append(out, Xattr{Namespace: ns, Name: string(name), Value: bytes.Clone(value)})
		return nil
	}}
	if err := listXattrs(attrReadFork{readFork{v: v.mount, ip: ip}}, x.visit); err != nil {
		return nil, err
	}
	return out, nil
}

// xattrVisitor hands fn the attributes of an inode that a caller can see
// (not parent pointers), with their namespace ("user", ...); name and
// value are valid only during the call. The caller holds the inode's
// lock. One visitor, with its visit bound once, serves any number of
// inodes without allocating (EntryInode).
type xattrVisitor struct {
	fn func(ns string, name, value []byte) error
}

func (x *xattrVisitor) visit(ns uint8, name, value []byte) error {
	if ns&format.AttrParent != 0 {
		return nil
	}
	// Names are C strings to Linux: one holding a NUL byte (or none at
	// all) is damage, not a name a caller could ask for.
	if len(name) == 0 || bytes.IndexByte(name, 0) >= 0 {
		return format.Corrupt("attribute", "", "name %q is empty or holds a NUL byte", name)
	}
	return x.fn(format.NamespaceName(ns), name, value)
}

// listXattrs runs visit (an xattrVisitor's) over the attribute fork r
// reads.
func listXattrs(r fork.Reader, visit func(ns uint8, name, value []byte) error) error {
	if err := attr.List(r, visit); err != nil {
		return format.Located(err, fmt.Sprintf("inode %d attr fork", r.Owner()))
	}
	return nil
}

// Get returns the value of the attribute named like "user.color". It
// looks the name up by hash, as the kernel does.
func (v Xattrs) Get(ino format.Ino, full string) ([]byte, error) {
	flags, name, err := SplitXattrName(full)
	if err != nil {
		return nil, err
	}
	defer v.rlock(ino)()
	ip, err := v.iget(ino)
	if err != nil {
		return nil, err
	}
	val, err := attr.Get(attrReadFork{readFork{v: v.mount, ip: ip}}, flags, []byte(name))
	if err == attr.ErrNoData {
		return nil, errNoXattr
	} else if err != nil {
		return nil, format.Located(xattrError(err), fmt.Sprintf("inode %d attr fork", ino))
	}
	return val, nil
}

// errNoXattr is Get's answer for an absent attribute: an expected
// outcome (optional metadata, a folder marker looked for), so it costs
// no formatting.
var errNoXattr = fmt.Errorf("%w: %w", ErrNoData, attr.ErrNoData)

// Extended attribute changes, through xfs/attr over the engine's
// attribute fork.

// XattrFlag chooses between create-only and replace-only sets.
type XattrFlag int

const (
	// XattrCreate fails with ErrExist when the attribute exists.
	XattrCreate XattrFlag = XattrFlag(attr.Create)
	// XattrReplace fails with ErrNoData when the attribute is absent.
	XattrReplace XattrFlag = XattrFlag(attr.Replace)
)

// Set sets the attribute named like "user.color" to value.
func (v Xattrs) Set(ino format.Ino, name string, value []byte, flag XattrFlag) error {
	ns, short, err := SplitXattrName(name)
	if err != nil {
		return err
	}
	return v.changeXattr(ino, func(f *attrFork) error {
		return setXattrIn(f, ns, short, value, flag)
	}, v.xattrBlocks(len(value)))
}

// SetMany sets several attributes in one transaction: all of them or,
// on error, none. Later entries win over earlier ones of the same name.
func (v Xattrs) SetMany(ino format.Ino, attrs []Xattr) error {
	set, err := v.parseXattrs(attrs)
	if err != nil {
		return err
	}
	return v.changeXattr(ino, set.apply, set.blocks)
}

// xattrSet is a list of attributes checked and ready to set within a
// transaction, with the blocks to reserve for them.
type xattrSet struct {
	list   []parsedXattr
	blocks int64
}

type parsedXattr struct {
	ns    uint8
	short string
	value []byte
}

func (v Xattrs) parseXattrs(attrs []Xattr) (xattrSet, error) {
	set := xattrSet{list: make([]parsedXattr, len(attrs))}
	for i, x := range attrs {
		ns, short, err := SplitXattrName(x.FullName())
		if err != nil {
			return xattrSet{}, err
		}
		set.list[i] = parsedXattr{ns, short, x.Value}
		set.blocks += v.xattrBlocks(len(x.Value))
	}
	return set, nil
}

// apply sets the attributes, in order, in f's transaction.
func (set xattrSet) apply(f *attrFork) error {
	for _, p := range set.list {
		if err := setXattrIn(f, p.ns, p.short, p.value, 0); err != nil {
			return err
		}
	}
	return nil
}

// xattrReserve is the reservation of a change to an attribute fork that
// needs blocks for its values: room for the fork to become a tree and for
// the bmbt.
func (v Xattrs) xattrReserve(blocks int64) int64 {
	return blocks + 4*format.MaxBtreeLevels + v.bmbtReserve()
}

// xattrBlocks is the reservation for setting one value of n bytes: its
// remote blocks and room for the fork to grow a level.
func (v Xattrs) xattrBlocks(n int) int64 { return int64(n>>v.geo.BlockLog) + 2 }

// setXattrIn sets one attribute within a transaction.
func setXattrIn(f *attrFork, ns uint8, short string, value []byte, flag XattrFlag) error {
	// Linux allows user attributes only on files and directories (others
	// could never be read back through a mount).
	if typ := f.c.core.Mode & format.SIFMT; ns == 0 && typ != format.SIFREG && typ != format.SIFDIR {
		return fmt.Errorf("user attribute on a %s: %w", format.FileType(f.c.core.Mode), ErrInvalid)
	}
	return attr.Set(f, ns, []byte(short), value, int(flag))
}

// Remove removes the attribute named like "user.color".
func (v Xattrs) Remove(ino format.Ino, name string) error {
	ns, short, err := SplitXattrName(name)
	if err != nil {
		return err
	}
	return v.changeXattrWith(ino, func(f *attrFork) error {
		return attr.Remove(f, ns, []byte(short))
	}, 2, true)
}

func (v Xattrs) changeXattr(ino format.Ino, fn func(*attrFork) error, blocks int64) error {
	return v.changeXattrWith(ino, fn, blocks, false)
}

func (v Xattrs) changeXattrWith(ino format.Ino, fn func(*attrFork) error, blocks int64, freeing bool) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	return v.xattrTx(h, ino, fn, blocks, freeing)
}

// xattrTx runs fn on ino's attribute fork in one transaction; the caller
// holds ino's lock.
func (v Xattrs) xattrTx(h *inodeHandle, ino format.Ino, fn func(*attrFork) error, blocks int64, freeing bool) error {
	return v.runTx(v.xattrReserve(blocks), freeing, func(t *txn) error {
		c, err := t.modify(h, ino)
		if err != nil {
			return err
		}
		if err := fn(&attrFork{c}); err != nil {
			return xattrError(err)
		}
		c.touch(false)
		return nil
	})
}

// xattrError maps the attribute package's errors to the engine's kinds.
func xattrError(err error) error {
	switch {
	case errors.Is(err, attr.ErrNoData):
		return fmt.Errorf("%w: %w", ErrNoData, err)
	case errors.Is(err, attr.ErrExist):
		return fmt.Errorf("%w: %w", ErrExist, err)
	case errors.Is(err, attr.ErrNameTooLong):
		return fmt.Errorf("%w: %w", ErrNameTooLong, err)
	case errors.Is(err, attr.ErrInvalid), errors.Is(err, attr.ErrValueTooLarge):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return err
}

// attrFork is the engine's attr.Fork: an inode's attribute fork inside a
// transaction.
type attrFork struct{ c *inodeChange }

var _ attr.Fork = (*attrFork)(nil)

func (a *attrFork) Geometry() *format.Geometry { return &a.c.t.v.geo }
func (a *attrFork) Owner() format.Ino          { return a.c.ino }
func (a *attrFork) Size() int64                { return 0 }
func (a *attrFork) SetSize(int64)              {}
func (a *attrFork) InlineSpace() int           { return len(a.c.forkBytes(AttrFork)) }
func (a *attrFork) MaxInlineSpace() int        { return len(a.c.forkBytes(AttrFork)) }
func (a *attrFork) Dirty(d format.Daddr)       { a.c.t.Dirty(d) }
func (a *attrFork) ForkOff() int               { return int(a.c.core.ForkOff) }

func (a *attrFork) Format() int8 {
	if a.c.core.ForkOff == 0 {
		return format.FmtExtents
	}
	return a.c.core.AFormat
}

func (a *attrFork) Inline() []byte { return append([]byte(nil), a.c.forkBytes(AttrFork)...) }

func (a *attrFork) SetInline(b []byte) error {
	fork := a.c.forkBytes(AttrFork)
	if len(b) > len(fork) {
		return fmt.Errorf("xfs: internal error: %d attribute bytes in a %d-byte fork", len(b), len(fork))
	}
	clear(fork)
	copy(fork, b)
	a.c.core.AFormat = format.FmtLocal
	a.c.setNextents(AttrFork, 0)
	a.c.ext[AttrFork], a.c.extLoaded[AttrFork] = nil, true
	return nil
}

func (a *attrFork) ToBlocks() error {
	clear(a.c.forkBytes(AttrFork))
	a.c.core.AFormat = format.FmtExtents
	a.c.setNextents(AttrFork, 0)
	a.c.ext[AttrFork], a.c.extLoaded[AttrFork] = nil, true
	return nil
}

func (a *attrFork) Mapped() ([][2]format.FileOff, error) {
	if a.c.core.ForkOff == 0 {
		return nil, nil
	}
	return a.c.mapped(AttrFork)
}

func (a *attrFork) Read(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return a.c.readBlocks(AttrFork, off, count, ops)
}

func (a *attrFork) View(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return a.c.viewBlocks(AttrFork, off, count, ops)
}

func (a *attrFork) Alloc(off format.FileOff, count int, ops *trans.Ops) ([]byte, format.Daddr, error) {
	return a.c.allocBlocks(AttrFork, off, count, ops)
}

func (a *attrFork) Free(off format.FileOff, count int) error {
	return a.c.freeForkBlocks(AttrFork, off, count)
}

// DataFork describes the data fork as xfs_attr_shortform_bytesfit sees it.
func (a *attrFork) DataFork() (int8, int) {
	c := a.c
	switch c.core.Format {
	case format.FmtLocal:
		return format.FmtLocal, int(c.core.Size)
	case format.FmtExtents:
		return format.FmtExtents, int(c.core.DataExtents()) * format.ExtentRecSize
	case format.FmtBtree:
		root, err := format.DecodeBmdrRoot(c.forkBytes(DataFork))
		if err != nil {
			return format.FmtBtree, len(c.forkBytes(DataFork))
		}
		return format.FmtBtree, format.BmdrHdrSize + 16*int(root.NumRecs)
	}
	return c.core.Format, 0
}

// SetForkOff moves the boundary between the forks, keeping both forks'
// contents (a btree root is laid out again for its new size).
func (a *attrFork) SetForkOff(off int) error {
	c := a.c
	lit := format.LiteralSize(c.t.v.geo.InodeSize)
	if off < 1 || off<<3 >= lit {
		return fmt.Errorf("xfs: internal error: attribute fork offset %d", off)
	}
	return c.moveForkOff(off)
}

// AddFork creates an empty attribute fork at off, converting the data
// fork when it no longer fits.
func (a *attrFork) AddFork(off int) error {
	c := a.c
	if c.core.ForkOff != 0 {
		return fmt.Errorf("xfs: internal error: inode %d already has an attribute fork", c.ino)
	}
	if c.core.Format == format.FmtLocal && c.core.Size > int64(off)<<3 {
		if c.core.Mode&format.SIFMT == format.SIFDIR {
			// The entries move to a directory block first, then the
			// fork boundary moves.
			if err := dir.ToBlock(dataFork{c}); err != nil {
				return err
			}
			return a.AddFork(off)
		}
		target := string(dataFork{c}.Inline())
		if err := c.moveForkOff(off); err != nil {
			return err
		}
		c.core.AFormat = format.FmtExtents
		clear(c.forkBytes(DataFork))
		c.core.Format = format.FmtLocal
		c.core.Size = 0
		return c.writeSymlink(target)
	}
	if err := c.moveForkOff(off); err != nil {
		return err
	}
	c.core.AFormat = format.FmtExtents
	c.setNextents(AttrFork, 0)
	clear(c.forkBytes(AttrFork))
	c.ext[AttrFork], c.extLoaded[AttrFork] = nil, true
	return nil
}

// RemoveFork deletes an attribute fork that maps no blocks.
func (a *attrFork) RemoveFork() error {
	c := a.c
	if err := c.moveForkOff(0); err != nil {
		return err
	}
	c.core.AFormat = format.FmtExtents
	c.setNextents(AttrFork, 0)
	c.ext[AttrFork], c.extLoaded[AttrFork] = nil, true
	return c.symlinkBackInline()
}

// symlinkBackInline moves a remote symlink target that now fits in the
// data fork back inline: xfs_repair rejects a remote symlink short
// enough to be local.
func (c *inodeChange) symlinkBackInline() error {
	f := dataFork{c}
	if c.core.Mode&format.SIFMT != format.SIFLNK || c.core.Format == format.FmtLocal || c.core.Size > int64(f.InlineSpace()) {
		return nil
	}
	ext, err := c.mapping(DataFork)
	if err != nil {
		return err
	}
	target, err := c.t.v.readSymlinkBlocks(ext, int(c.core.Size), c.ino)
	if err != nil {
		return err
	}
	for _, e := range ext {
		if err := c.freeForkBlocks(DataFork, e.StartOff, int(e.BlockCount)); err != nil {
			return err
		}
	}
	return f.SetInline(target)
}

// moveForkOff sets di_forkoff (0: no attribute fork) and lays the forks
// out again: extents and local data stay at the start of the data fork, a
// bmbt root is re-encoded for its new size (moving into a new block when
// it no longer fits), attribute fork bytes move with the boundary.
func (c *inodeChange) moveForkOff(off int) error {
	oldAttr := append([]byte(nil), c.forkBytes(AttrFork)...)
	oldData := append([]byte(nil), c.forkBytes(DataFork)...)
	var root *format.BmdrRoot
	if c.core.Format == format.FmtBtree {
		r, err := format.DecodeBmdrRoot(oldData)
		if err != nil {
			return format.Located(err, fmt.Sprintf("inode %d data fork", c.ino))
		}
		root = r
	}
	c.core.ForkOff = uint8(off)
	clear(c.raw[format.InodeCoreSize:])
	data := c.forkBytes(DataFork)
	if off != 0 {
		copy(c.forkBytes(AttrFork), oldAttr)
	}
	switch {
	case root != nil:
		tr := c.bmbtWith(DataFork, root, len(oldData))
		if err := tr.SetForkSize(len(data)); err != nil {
			return err
		}
		tr.RootChanged()
	case c.core.Format == format.FmtExtents && int(c.core.DataExtents())*format.ExtentRecSize > len(data):
		// The extents no longer fit: they move into a btree.
		ext, err := c.mapping(DataFork)
		if err != nil {
			return err
		}
		c.ext[DataFork], c.extLoaded[DataFork] = nil, true
		c.setNextents(DataFork, 0)
		return c.setMapping(DataFork, ext)
	default:
		copy(data, oldData)
	}
	return nil
}
