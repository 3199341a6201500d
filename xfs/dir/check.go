package dir

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// Info describes a directory that passed Inspect.
type Info struct {
	Form       Form
	Entries    int // names other than "." and ".."
	Parent     format.Ino
	DataBlocks int // directory blocks in the data space
	LeafBlocks int // leaf1 or leafn blocks
	NodeBlocks int // da-btree interior nodes
	FreeBlocks int // free-index blocks
	Levels     int // node form: blocks on a root-to-leaf path
}

// Check verifies a whole directory; see Inspect.
func Check(r fork.Reader) error {
	_, err := Inspect(r)
	return err
}

// Inspect verifies a whole directory against the rules the kernel's
// verifiers and xfs_repair enforce, and describes it:
//
//   - every block's CRC, magic, own address, UUID and owner;
//   - data blocks: entries and free regions tile the block with correct
//     tags, free regions never touch, the bestfree table holds exactly the
//     longest three, file types are valid, no data block is empty;
//   - names are valid and unique, inode numbers valid; "." is the first
//     entry of block 0 and names the directory, ".." is in block 0, and no
//     other entry names the directory;
//   - leaf entries are sorted by hash with correct counts, and the live
//     ones match the data entries one to one with the right hashes;
//   - bests (leaf1 table, free-index blocks) equal each data block's
//     longest free region, NULLDATAOFF for missing blocks; nvalid, nused
//     and firstdb are right and every data block is covered;
//   - the da-btree's shape (package dabtree), and that nothing is mapped
//     that the format does not use; di_size ends at the last data block.
func Inspect(r fork.Reader) (Info, error) {
	var info Info
	o, err := newOp(r)
	if err != nil {
		return info, err
	}
	defer o.done()
	info.Form, err = o.form()
	if err != nil {
		return info, err
	}
	if info.Form == ShortForm {
		return info, o.checkSF(&info)
	}
	c := &checker{o: o, info: &info, names: map[string]bool{}, live: map[uint32]uint32{}, longest: map[uint32]int{}}
	return info, c.run()
}

func (o *op) validIno(ino format.Ino) bool {
	return ino != 0 && ino <= maxIno && (o.g.AgCount == 0 || o.g.ValidIno(ino))
}

func (o *op) checkSF(info *Info) error {
	const what = "short-form directory"
	s, err := decodeSF(o.r.Inline(), o.d)
	if err != nil {
		return err
	}
	if int64(len(o.r.Inline())) != o.r.Size() {
		return format.Corrupt(what, "", "size %d but %d inline bytes", o.r.Size(), len(o.r.Inline()))
	}
	if !o.validIno(s.parent) {
		return format.Corrupt(what, "", "parent %d is not a valid inode", s.parent)
	}
	seen := map[string]bool{}
	for _, e := range s.ents {
		switch {
		case CheckName(e.name) != nil || isDot(e.name) || isDotDot(e.name):
			return format.Corrupt(what, "", "bad name %q", e.name)
		case seen[string(e.name)]:
			return format.Corrupt(what, "", "name %q appears twice", e.name)
		case !o.validIno(e.ino) || e.ino == o.owner:
			return format.Corrupt(what, "", "entry %q names inode %d", e.name, e.ino)
		}
		seen[string(e.name)] = true
	}
	info.Entries, info.Parent = len(s.ents), s.parent
	return nil
}

type checker struct {
	o       *op
	info    *Info
	names   map[string]bool
	live    map[uint32]uint32 // dataptr of every live entry -> its hash
	longest map[uint32]int    // data block -> longest free region
	lastDB  uint32
	dot     bool
	dotdot  bool
}

func (c *checker) run() error {
	o := c.o
	m, err := o.r.Mapped()
	if err != nil {
		return err
	}
	var dataBlks, leafBlks, freeBlks []uint32
	for _, rg := range m {
		for off := rg[0]; off < rg[1]; off++ {
			if off >= 1<<32 || off%format.FileOff(o.d.fsbs) != 0 {
				if off >= 1<<32 {
					return format.Corrupt("directory", "", "block %d mapped beyond the free-index space", off)
				}
				continue
			}
			da := uint32(off)
			switch {
			case da < o.d.leafBlk:
				dataBlks = append(dataBlks, o.d.dbOf(da))
			case da < o.d.freeBlk:
				leafBlks = append(leafBlks, da)
			default:
				freeBlks = append(freeBlks, o.d.dbOf(da))
			}
		}
	}
	if len(dataBlks) == 0 || dataBlks[0] != 0 {
		return format.Corrupt("directory", "", "data block 0 is not mapped")
	}
	for _, db := range dataBlks {
		if err := c.dataBlock(db); err != nil {
			return err
		}
	}
	c.info.DataBlocks = len(dataBlks)
	if want := int64(c.lastDB+1) << o.d.blkLog; o.r.Size() != want {
		return format.Corrupt("directory", "", "size %d, data blocks end at %d", o.r.Size(), want)
	}
	if !c.dot || !c.dotdot {
		return format.Corrupt("directory", dataWhere(0), "no \".\" or no \"..\" entry")
	}
	c.info.Entries = len(c.names) - 2
	switch c.info.Form {
	case BlockForm:
		if len(dataBlks) != 1 || len(leafBlks) != 0 || len(freeBlks) != 0 {
			return format.Corrupt("dir3 block", "", "a block directory maps %d data, %d leaf and %d free blocks", len(dataBlks), len(leafBlks), len(freeBlks))
		}
		return nil // checkData matched the block's leaf array to its entries
	case LeafForm:
		if len(leafBlks) != 1 || leafBlks[0] != o.d.leafBlk || len(freeBlks) != 0 {
			return format.Corrupt("dir3 leaf1", "", "a leaf directory maps %d leaf and %d free blocks", len(leafBlks), len(freeBlks))
		}
		return c.leaf1()
	}
	return c.node(leafBlks, freeBlks)
}

// dataBlock checks one data block and records its entries.
func (c *checker) dataBlock(db uint32) error {
	o := c.o
	buf, err := o.readData(db)
	if err != nil {
		return err
	}
	b := dblock(buf.B)
	where := dataWhere(db)
	if (c.info.Form == BlockForm) != b.isBlockForm() || b.isBlockForm() && db != 0 {
		return format.Corrupt("dir3 data block", where, "magic %#x in a %v directory", b.magic(), c.info.Form)
	}
	c.lastDB = db
	entries := 0
	end := b.end()
	for off := dataHdrSize; off < end; {
		if b.isFree(off) {
			off += b.freeLen(off)
			continue
		}
		name, ino := b.name(off), b.ino(off)
		entries++
		switch {
		case CheckName(name) != nil:
			return format.Corrupt("dir3 data block", where, "bad name %q at %d", name, off)
		case c.names[string(name)]:
			return format.Corrupt("dir3 data block", where, "name %q appears twice", name)
		case !o.validIno(ino):
			return format.Corrupt("dir3 data block", where, "entry %q names invalid inode %d", name, ino)
		case isDot(name):
			if db != 0 || off != dataHdrSize || ino != o.owner {
				return format.Corrupt("dir3 data block", where, "\".\" at %d names %d", off, ino)
			}
			c.dot = true
		case isDotDot(name):
			if db != 0 {
				return format.Corrupt("dir3 data block", where, "\"..\" outside block 0")
			}
			c.dotdot, c.info.Parent = true, ino
		case ino == o.owner:
			return format.Corrupt("dir3 data block", where, "entry %q names the directory itself", name)
		}
		if ft := b.ftype(off); (isDot(name) || isDotDot(name)) && ft != format.FTDir {
			return format.Corrupt("dir3 data block", where, "%q has file type %d", name, ft)
		}
		c.names[string(name)] = true
		c.live[o.d.ptr(db, off)] = format.DaHashName(name)
		off += entSize(b.nameLen(off))
	}
	if entries == 0 {
		return format.Corrupt("dir3 data block", where, "empty data block")
	}
	c.longest[db] = b.longest()
	return nil
}

// leafEntries matches a leaf's live entries to the data entries.
func (c *checker) leafEntries(l lblock, seen map[uint32]bool) error {
	for i := 0; i < l.count(); i++ {
		h, a := l.ent(i)
		if a == format.NullDataptr {
			continue
		}
		want, ok := c.live[a]
		switch {
		case !ok:
			return format.Corrupt("dir3 leaf", "", "entry %d points at %#x, where no entry lives", i, a)
		case want != h:
			return format.Corrupt("dir3 leaf", "", "entry %d has hash %#x, the name hashes to %#x", i, h, want)
		case seen[a]:
			return format.Corrupt("dir3 leaf", "", "two leaf entries point at %#x", a)
		}
		seen[a] = true
	}
	return nil
}

// bestFor is what a bests table must say about data block db.
func (c *checker) bestFor(db uint32) int {
	if l, ok := c.longest[db]; ok {
		return l
	}
	return nullOff
}

func (c *checker) leaf1() error {
	o := c.o
	lbuf, err := o.readLeaf1()
	if err != nil {
		return err
	}
	l := lblock(lbuf.B)
	c.info.LeafBlocks = 1
	if dabtree.Forw(l) != 0 || dabtree.Back(l) != 0 {
		return format.Corrupt("dir3 leaf1", "", "leaf1 block has siblings")
	}
	seen := map[uint32]bool{}
	if err := c.leafEntries(l, seen); err != nil {
		return err
	}
	if len(seen) != len(c.live) {
		return format.Corrupt("dir3 leaf1", "", "%d live leaf entries for %d data entries", len(seen), len(c.live))
	}
	if l.bestCount() != int(c.lastDB)+1 {
		return format.Corrupt("dir3 leaf1", "", "bestcount %d for %d data blocks", l.bestCount(), c.lastDB+1)
	}
	for i := 0; i < l.bestCount(); i++ {
		if want := c.bestFor(uint32(i)); l.best(i) != want {
			return format.Corrupt("dir3 leaf1", "", "bests[%d] = %d, data block says %d", i, l.best(i), want)
		}
	}
	return nil
}

func (c *checker) node(leafBlks, freeBlks []uint32) error {
	o := c.o
	t := o.tree()
	seen := map[uint32]bool{}
	shape, err := t.Check(func(b *dabtree.Buf) error {
		return c.leafEntries(lblock(b.B), seen)
	})
	if err != nil {
		return err
	}
	if len(seen) != len(c.live) {
		return format.Corrupt("dir3 leafn", "", "%d live leaf entries for %d data entries", len(seen), len(c.live))
	}
	c.info.Levels = shape.Levels
	c.info.LeafBlocks, c.info.NodeBlocks = len(shape.Leaves), len(shape.Nodes)
	inTree := map[uint32]bool{}
	for _, b := range append(shape.Leaves, shape.Nodes...) {
		inTree[b] = true
	}
	for _, b := range leafBlks {
		if !inTree[b] {
			return format.Corrupt("dir3 leafn", fmt.Sprintf("dir leaf block %d", b), "mapped but not in the tree")
		}
	}
	if len(leafBlks) != len(inTree) {
		return format.Corrupt("dir3 leafn", "", "tree has %d blocks, %d are mapped", len(inTree), len(leafBlks))
	}
	covered := map[uint32]bool{}
	for _, fdb := range freeBlks {
		fbuf, err := o.readFree(fdb)
		if err != nil {
			return err
		}
		f := fblock(fbuf.B)
		used := 0
		for i := 0; i < f.nvalid(); i++ {
			db := uint32(f.firstDB() + i)
			if want := c.bestFor(db); f.best(i) != want {
				return format.Corrupt("dir3 free block", fmt.Sprintf("dir free block %d", fdb), "bests[%d] = %d, data block %d says %d", i, f.best(i), db, want)
			}
			if f.best(i) != nullOff {
				used++
				covered[db] = true
			}
		}
		if used != f.nused() {
			return format.Corrupt("dir3 free block", fmt.Sprintf("dir free block %d", fdb), "nused %d, %d bests in use", f.nused(), used)
		}
	}
	c.info.FreeBlocks = len(freeBlks)
	for db := range c.longest {
		if !covered[db] {
			return format.Corrupt("dir3 free block", "", "no free-index entry for data block %d", db)
		}
	}
	return nil
}
