package dir

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/format"
)

// sfDir is a decoded short-form directory, kept in the inode's data fork:
//
//	count u8, i8count u8, parent (4 or 8 bytes)
//	entries: namelen u8, offset be16, name, ftype u8, inumber (4 or 8 bytes)
//
// i8count counts the inode numbers (parent included) that need 8 bytes;
// when it is not zero every inode number takes 8 bytes. An entry's offset
// is where it would live in a block-form directory; offsets increase.
type sfDir struct {
	parent format.Ino
	ents   []sfEnt
}

type sfEnt struct {
	name  []byte
	off   int
	ftype uint8
	ino   format.Ino
}

// wide reports whether inode numbers take 8 bytes.
func (s *sfDir) wide() bool {
	if s.parent > maxShortIno {
		return true
	}
	for _, e := range s.ents {
		if e.ino > maxShortIno {
			return true
		}
	}
	return false
}

func (s *sfDir) i8count() int {
	n := 0
	if s.parent > maxShortIno {
		n++
	}
	for _, e := range s.ents {
		if e.ino > maxShortIno {
			n++
		}
	}
	return n
}

// hdrSize and entSize give the encoded sizes (xfs_dir2_sf_hdr_size,
// xfs_dir2_sf_entsize).
func sfHdrSize(wide bool) int {
	if wide {
		return 10
	}
	return 6
}

func sfEntSize(namelen int, wide bool) int {
	if wide {
		return 3 + namelen + 1 + 8
	}
	return 3 + namelen + 1 + 4
}

func (s *sfDir) size() int {
	w := s.wide()
	n := sfHdrSize(w)
	for _, e := range s.ents {
		n += sfEntSize(len(e.name), w)
	}
	return n
}

func (s *sfDir) encode() []byte {
	w := s.wide()
	b := make([]byte, 0, s.size())
	i8 := s.i8count()
	b = append(b, byte(len(s.ents)), byte(i8))
	b = appendIno(b, s.parent, w)
	for _, e := range s.ents {
		b = append(b, byte(len(e.name)), byte(e.off>>8), byte(e.off))
		b = append(b, e.name...)
		b = append(b, e.ftype)
		b = appendIno(b, e.ino, w)
	}
	return b
}

func appendIno(b []byte, ino format.Ino, wide bool) []byte {
	if wide {
		return be.AppendUint64(b, uint64(ino))
	}
	return be.AppendUint32(b, uint32(ino))
}

// decodeSF parses and checks a short-form directory like the kernel's
// xfs_dir2_sf_verify: sizes, non-empty names, increasing offsets that
// leave room for each entry, i8count, file types, and that the whole
// directory would fit one block-form block.
func decodeSF(b []byte, d *geom) (*sfDir, error) {
	const what = "short-form directory"
	if len(b) < 6 {
		return nil, format.Corrupt(what, "", "%d bytes is too short", len(b))
	}
	count, i8 := int(b[0]), int(b[1])
	wide := i8 != 0
	inoLen := 4
	if wide {
		inoLen = 8
	}
	if len(b) < 2+inoLen {
		return nil, format.Corrupt(what, "", "header does not fit %d bytes", len(b))
	}
	s := &sfDir{parent: sfIno(b[2:], inoLen), ents: make([]sfEnt, 0, count)}
	p := 2 + inoLen
	off := d.firstOff
	for i := 0; i < count; i++ {
		if p+3 > len(b) {
			return nil, format.Corrupt(what, "", "entry %d starts past the end", i)
		}
		nl := int(b[p])
		eoff := int(be.Uint16(b[p+1:]))
		end := p + 3 + nl + 1 + inoLen
		switch {
		case nl == 0:
			return nil, format.Corrupt(what, "", "entry %d has an empty name", i)
		case end > len(b):
			return nil, format.Corrupt(what, "", "entry %d overruns the fork", i)
		case eoff < off:
			return nil, format.Corrupt(what, "", "entry %d offset %d below %d", i, eoff, off)
		}
		e := sfEnt{name: b[p+3 : p+3+nl], off: eoff, ftype: b[p+3+nl], ino: sfIno(b[p+4+nl:], inoLen)}
		if e.ftype > format.FTSymlink {
			return nil, format.Corrupt(what, "", "entry %d has file type %d", i, e.ftype)
		}
		s.ents = append(s.ents, e)
		off = eoff + d.entSize(nl)
		p = end
	}
	switch {
	case p != len(b):
		return nil, format.Corrupt(what, "", "%d entries end at byte %d of %d", count, p, len(b))
	case s.i8count() != i8:
		return nil, format.Corrupt(what, "", "i8count %d, %d wide inode numbers", i8, s.i8count())
	case off+(count+2)*8+8 > d.blk:
		return nil, format.Corrupt(what, "", "entries would not fit a directory block")
	}
	return s, nil
}

func sfIno(b []byte, n int) format.Ino {
	if n == 8 {
		return format.Ino(be.Uint64(b) & maxIno)
	}
	return format.Ino(be.Uint32(b))
}

func (s *sfDir) find(name []byte) int {
	for i, e := range s.ents {
		if bytes.Equal(e.name, name) {
			return i
		}
	}
	return -1
}

// sfCreate writes an empty short-form directory (xfs_dir2_sf_create).
func (o *op) sfCreate(parent format.Ino) error {
	s := &sfDir{parent: parent}
	return o.w.SetInline(s.encode())
}

// sfAdd adds an entry to a short-form directory, or converts it to block
// form first when the entry does not fit the inode or the directory would
// not fit one block (xfs_dir2_sf_addname).
func (o *op) sfAdd(s *sfDir, name []byte, ino format.Ino, ftype uint8) error {
	widen := ino > maxShortIno && !s.wide()
	incr := sfEntSize(len(name), s.wide())
	if widen {
		incr += (len(s.ents) + 2) * 4 // parent, old and new entries grow
	}
	oldSize := s.size()
	pick := 0
	if oldSize+incr <= o.w.InlineSpace() && len(s.ents) < 255 {
		pick = o.sfPick(s, len(name), widen)
	}
	if pick == 0 {
		if err := o.sfToBlock(s); err != nil {
			return err
		}
		return o.blockAdd(name, ino, ftype)
	}
	size := o.d.entSize(len(name))
	e := sfEnt{name: name, ftype: ftype, ino: ino}
	if pick == 1 {
		// Easy: append after the last entry.
		e.off = o.d.firstOff
		if n := len(s.ents); n > 0 {
			e.off = s.ents[n-1].off + o.d.entSize(len(s.ents[n-1].name))
		}
		s.ents = append(s.ents, e)
	} else {
		// Hard: the first gap between offsets that holds the entry.
		at, off := len(s.ents), o.d.firstOff
		for i, x := range s.ents {
			if off+size <= x.off {
				at = i
				break
			}
			off = x.off + o.d.entSize(len(x.name))
		}
		e.off = off
		s.ents = append(s.ents[:at], append([]sfEnt{e}, s.ents[at:]...)...)
	}
	return o.w.SetInline(s.encode())
}

// sfPick decides how to add an entry of namelen bytes: 0 when the result
// would not fit a block-form block (convert), 1 to append it, 2 to put it
// into the first gap between entry offsets (xfs_dir2_sf_addname_pick).
func (o *op) sfPick(s *sfDir, namelen int, widen bool) int {
	size := o.d.entSize(namelen)
	off := o.d.firstOff
	holeFit := false
	for _, e := range s.ents {
		if !holeFit {
			holeFit = off+size <= e.off
		}
		off = e.off + o.d.entSize(len(e.name))
	}
	used := off + (len(s.ents)+3)*8 + 8
	need := used
	if !holeFit {
		need += size
	}
	switch {
	case need > o.d.blk:
		return 0
	case widen, used+size > o.d.blk:
		return 2
	}
	return 1
}

// sfRemove removes entry i (xfs_dir2_sf_removename); the inode numbers
// shrink back to 4 bytes when the last wide one goes.
func (o *op) sfRemove(s *sfDir, i int) error {
	s.ents = append(s.ents[:i], s.ents[i+1:]...)
	return o.w.SetInline(s.encode())
}

// sfReplace points entry i (or ".." for i < 0) at ino
// (xfs_dir2_sf_replace). When the inode numbers must widen and the result
// does not fit the inode, the directory becomes a block directory first.
func (o *op) sfReplace(s *sfDir, i int, name []byte, ino format.Ino, ftype uint8) error {
	if ino > maxShortIno && !s.wide() {
		if s.size()+(len(s.ents)+1)*4 > o.w.InlineSpace() {
			if err := o.sfToBlock(s); err != nil {
				return err
			}
			_, err := o.blockReplace(name, ino, ftype)
			return err
		}
	}
	if i < 0 {
		s.parent = ino
	} else {
		s.ents[i].ino, s.ents[i].ftype = ino, ftype
	}
	return o.w.SetInline(s.encode())
}

// sfToBlock converts a short-form directory to a single block: "." and
// ".." first, every entry at its recorded offset, the gaps free, the leaf
// array sorted by hash (xfs_dir2_sf_to_block).
func (o *op) sfToBlock(s *sfDir) error {
	if err := o.w.ToBlocks(); err != nil {
		return err
	}
	o.w.SetSize(0)
	buf, err := o.growData()
	if err != nil {
		return err
	}
	b := dblock(buf.B)
	initData(b, format.Dir3BlockMagic, buf.Daddr, o.g.UUID, o.owner)
	// Leaf area for count+2 entries and the tail, taken off the end.
	count := len(s.ents) + 2
	leafStart := len(b) - 8 - 8*count
	if leafStart < o.d.firstOff {
		return format.Corrupt("short-form directory", "", "%d entries do not fit a block", len(s.ents))
	}
	clear(b[dataHdrSize:])
	b.setTail(count, 0)
	clear(b[48:60])
	type lent struct{ hash, addr uint32 }
	leaf := make([]lent, 0, count)
	b.putEntry(dataHdrSize, []byte("."), o.owner, format.FTDir)
	leaf = append(leaf, lent{hashDot, o.d.ptr(0, dataHdrSize)})
	off := dataHdrSize + o.d.entSize(1)
	b.putEntry(off, []byte(".."), s.parent, format.FTDir)
	leaf = append(leaf, lent{hashDotDot, o.d.ptr(0, off)})
	off += o.d.entSize(2)
	for _, e := range s.ents {
		if e.off < off || e.off+o.d.entSize(len(e.name)) > leafStart {
			return format.Corrupt("short-form directory", "", "entry %q offset %d does not fit", e.name, e.off)
		}
		// Entries and free regions are 8-byte aligned: a gap of 4 would
		// be a free region too short to hold its own length and tag.
		// Reads never use the offsets, and the kernel's short-form
		// verifier does not check them, so only conversion refuses them.
		if e.off%dataAlign != 0 {
			return format.Corrupt("short-form directory", "", "entry %q offset %d is not a multiple of %d", e.name, e.off, dataAlign)
		}
		if e.off > off {
			b.setFree(off, e.off-off)
			b.freeInsert(off, e.off-off)
		}
		b.putEntry(e.off, e.name, e.ino, e.ftype)
		leaf = append(leaf, lent{format.DaHashName(e.name), o.d.ptr(0, e.off)})
		off = e.off + o.d.entSize(len(e.name))
	}
	if off < leafStart {
		b.setFree(off, leafStart-off)
		b.freeInsert(off, leafStart-off)
	}
	sort.SliceStable(leaf, func(i, j int) bool { return leaf[i].hash < leaf[j].hash })
	for i, e := range leaf {
		be.PutUint32(b[leafStart+8*i:], e.hash)
		be.PutUint32(b[leafStart+8*i+4:], e.addr)
	}
	o.c.Dirty(buf)
	return nil
}

// blockSF returns the short form of a block-form directory, or false when
// it would not fit the inode (xfs_dir2_block_sfsize).
func (o *op) blockSF(b dblock) (*sfDir, bool, error) {
	s := &sfDir{}
	sawDotDot := false
	end := b.end()
	for off := dataHdrSize; off < end; {
		if b.isFree(off) {
			off += b.freeLen(off)
			continue
		}
		name := b.name(off)
		switch {
		case isDot(name):
		case isDotDot(name):
			s.parent, sawDotDot = b.ino(off), true
		default:
			s.ents = append(s.ents, sfEnt{name: name, off: off, ftype: b.ftype(off), ino: b.ino(off)})
		}
		off += entSize(b.nameLen(off))
	}
	if !sawDotDot {
		return nil, false, format.Corrupt("dir3 block", dataWhere(0), "no \"..\" entry")
	}
	if len(s.ents) > 255 || s.size() > o.w.InlineSpace() {
		return nil, false, nil
	}
	return s, true, nil
}

// blockToSF turns a block directory that fits the inode back into short
// form (xfs_dir2_block_to_sf).
func (o *op) blockToSF(buf *dabtree.Buf, s *sfDir) error {
	if err := o.c.Free(buf.Blkno); err != nil {
		return err
	}
	o.w.SetSize(0)
	if err := o.w.SetInline(s.encode()); err != nil {
		return fmt.Errorf("dir: back to short form: %w", err)
	}
	return nil
}
