package dir

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Form is one of the four directory formats.
type Form int

const (
	ShortForm Form = iota // entries in the inode (di_format local)
	BlockForm             // one directory block: entries, leaf array, tail
	LeafForm              // data blocks and one leaf1 block with the bests table
	NodeForm              // data blocks, a da-btree of leafn blocks, free-index blocks
)

func (f Form) String() string {
	switch f {
	case ShortForm:
		return "shortform"
	case BlockForm:
		return "block"
	case LeafForm:
		return "leaf"
	case NodeForm:
		return "node"
	}
	return fmt.Sprintf("Form(%d)", int(f))
}

// op is the state of one directory operation.
type op struct {
	r     fork.Reader
	w     fork.Writer // nil when reading
	g     *format.Geometry
	d     *geom           // &geom
	c     *dabtree.Blocks // &blocks
	owner format.Ino

	// The op's own geometry and block cache, in one allocation with it.
	geom   geom
	blocks dabtree.Blocks
}

// errNoFType refuses filesystems whose directory entries have no file
// type byte (the ftype feature, which mkfs always sets on v5).
var errNoFType = fmt.Errorf("dir: directories without the ftype feature: %w", format.ErrUnsupported)

func newOp(r fork.Reader) (*op, error) {
	g := r.Geometry()
	if !g.FType {
		return nil, errNoFType
	}
	o := opPool.Get().(*op)
	*o = op{r: r, g: g, geom: newGeom(g), owner: r.Owner()}
	o.d, o.c = &o.geom, &o.blocks
	o.c.Init(r, o.d.fsbs)
	o.w = o.c.W
	return o, nil
}

// opPool keeps ops between operations: an op is a kilobyte (its block
// cache), and every directory lookup and change makes one.
var opPool = sync.Pool{New: func() any { return new(op) }}

// done gives o back to the pool, dropping what it refers to. Nothing
// keeps o after the operation that made it returns.
func (o *op) done() {
	*o = op{}
	opPool.Put(o)
}

// form tells the directory's format without reading more than needed: a
// local fork is short form; a one-block data space whose block is "XDB3"
// is block form; otherwise the first leaf-space block says leaf1 or node.
func (o *op) form() (Form, error) {
	switch o.r.Format() {
	case format.FmtLocal:
		return ShortForm, nil
	case format.FmtExtents, format.FmtBtree:
	default:
		return 0, format.Corrupt("directory", "", "data fork format %d", o.r.Format())
	}
	size := o.r.Size()
	if size < int64(o.d.blk) || size%int64(o.d.blk) != 0 || size > format.DirLeafOffset {
		return 0, format.Corrupt("directory", "", "size %d is not a whole number of %d-byte blocks", size, o.d.blk)
	}
	// The form only needs a look at a block: a view, which the reads of
	// an operation that changes the block turn into a private copy.
	if size == int64(o.d.blk) {
		b, err := o.dataBlock(0, o.c.View)
		if err != nil {
			return 0, err
		}
		if dblock(b.B).isBlockForm() {
			return BlockForm, nil
		}
	}
	l, err := o.leafSpaceBlock(o.d.leafBlk, o.c.View)
	if err != nil {
		return 0, err
	}
	if dabtree.Magic(l.B) == format.Dir3Leaf1Magic {
		return LeafForm, nil
	}
	return NodeForm, nil
}

// readData reads data block db (either data magic), checking its owner.
func (o *op) readData(db uint32) (*dabtree.Buf, error) { return o.dataBlock(db, o.c.Read) }

// dataBlock is readData through get: Blocks.Read, or Blocks.View for a
// look only.
func (o *op) dataBlock(db uint32, get func(uint32, *trans.Ops) (*dabtree.Buf, error)) (*dabtree.Buf, error) {
	b, err := get(o.d.daOf(db), DataOps)
	if err == nil {
		err = checkOwner4("dir3 data block", b.B, o.g.UUID, o.owner)
	}
	if err != nil {
		return nil, format.Located(err, dataWhere(db))
	}
	return b, nil
}

// readLeafSpace reads a block of the leaf space (leaf1, leafn or node).
func (o *op) readLeafSpace(da uint32) (*dabtree.Buf, error) {
	return o.leafSpaceBlock(da, o.c.Read)
}

// leafSpaceBlock is readLeafSpace through get (see dataBlock).
func (o *op) leafSpaceBlock(da uint32, get func(uint32, *trans.Ops) (*dabtree.Buf, error)) (*dabtree.Buf, error) {
	b, err := get(da, TreeOps)
	if err == nil {
		err = dabtree.CheckOwner("dir3 leaf", b.B, o.g.UUID, o.owner)
	}
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("dir leaf block %d", da))
	}
	return b, nil
}

// readLeaf1 reads the single leaf block of a leaf directory.
func (o *op) readLeaf1() (*dabtree.Buf, error) {
	b, err := o.readLeafSpace(o.d.leafBlk)
	if err == nil && dabtree.Magic(b.B) != format.Dir3Leaf1Magic {
		err = format.Corrupt("dir3 leaf1", fmt.Sprintf("dir leaf block %d", o.d.leafBlk), "magic %#x", dabtree.Magic(b.B))
	}
	return b, err
}

// readFree reads free-index block fdb and checks its header against the
// block's position (xfs_dir3_free_header_check).
func (o *op) readFree(fdb uint32) (*dabtree.Buf, error) {
	b, err := o.c.Read(o.d.daOf(fdb), FreeOps)
	if err == nil {
		err = checkOwner4("dir3 free block", b.B, o.g.UUID, o.owner)
	}
	if err == nil {
		if want := int(fdb-o.d.freeDB) * o.d.freeMax; fblock(b.B).firstDB() != want {
			err = format.Corrupt("dir3 free block", "", "firstdb %d, want %d", fblock(b.B).firstDB(), want)
		}
	}
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("dir free block %d", fdb))
	}
	return b, nil
}

// tryReadFree is readFree that reports a hole instead of failing.
func (o *op) tryReadFree(fdb uint32) (*dabtree.Buf, bool, error) {
	b, err := o.readFree(fdb)
	if err == nil {
		return b, false, nil
	}
	if hole, herr := o.c.IsHole(o.d.daOf(fdb)); herr == nil && hole {
		return nil, true, nil
	}
	return nil, false, err
}

// entryAt checks that a leaf address points at a live entry of data block
// b and reports whether it carries name.
func (o *op) entryAt(b dblock, off int, name []byte) (bool, error) {
	end := b.end()
	if off < dataHdrSize || off%8 != 0 || off+12 > end || b.isFree(off) || off+entSize(b.nameLen(off)) > end {
		return false, format.Corrupt("dir3 leaf entry", "", "address of offset %d is not an entry", off)
	}
	return bytes.Equal(b.name(off), name), nil
}

// growData maps the first unused data block and extends di_size over it
// (xfs_dir2_grow_inode for the data space).
func (o *op) growData() (*dabtree.Buf, error) {
	da, err := o.c.FirstUnused(0, 1)
	if err != nil {
		return nil, err
	}
	if da >= o.d.leafBlk {
		return nil, format.Corrupt("directory", "", "data space is full")
	}
	buf, err := o.c.Alloc(da, DataOps)
	if err != nil {
		return nil, err
	}
	if end := int64(da+uint32(o.d.fsbs)) << o.g.BlockLog; end > o.r.Size() {
		o.w.SetSize(end)
	}
	return buf, nil
}

// freeData unmaps data block buf; when it was the last one, di_size ends
// at the last data block left (xfs_dir2_shrink_inode).
func (o *op) freeData(buf *dabtree.Buf) error {
	da := buf.Blkno
	if err := o.c.Free(buf.Blkno); err != nil {
		return err
	}
	if o.r.Size() > int64(da+uint32(o.d.fsbs))<<o.g.BlockLog {
		return nil
	}
	end, err := o.c.LastBefore(da)
	if err != nil {
		return err
	}
	o.w.SetSize(int64(end) << o.g.BlockLog)
	return nil
}

// tree returns the da-btree of a node directory.
func (o *op) tree() *dabtree.Tree {
	return &dabtree.Tree{C: o.c, Root: o.d.leafBlk, Ops: nodeTreeOps, Leaf: leafnOps{o.d}, What: "dir3 leaf"}
}

var nodeTreeOps = dabtree.TreeOps("dir3 node tree", format.Dir3LeafNMagic, func(b []byte) error { return checkLeaf(lblock(b)) })
