package dir

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// Dump describes a directory's on-disk structure line by line: every
// field and every entry, free region, leaf entry (stale ones included),
// best and node entry, but not what depends on where blocks live on disk
// (blkno, CRC, LSN) or bytes no structure covers. Two directories built by
// the same operations with the same rules dump the same.
func Dump(r fork.Reader) ([]string, error) {
	o, err := newOp(r)
	if err != nil {
		return nil, err
	}
	defer o.done()
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	f, err := o.form()
	if err != nil {
		return nil, err
	}
	add("form %v size %d", f, r.Size())
	if f == ShortForm {
		s, err := decodeSF(r.Inline(), o.d)
		if err != nil {
			return nil, err
		}
		add("sf parent %d i8count %d", s.parent, s.i8count())
		for _, e := range s.ents {
			add("  %d %q %d %d", e.off, e.name, e.ino, e.ftype)
		}
		return out, nil
	}
	m, err := r.Mapped()
	if err != nil {
		return nil, err
	}
	for _, rg := range m {
		for off := rg[0]; off < rg[1]; off += format.FileOff(o.d.fsbs) {
			da := uint32(off)
			switch {
			case da < o.d.leafBlk:
				buf, err := o.readData(o.d.dbOf(da))
				if err != nil {
					return nil, err
				}
				b := dblock(buf.B)
				add("data %d magic %#x bestfree %v", o.d.dbOf(da), b.magic(), [3][2]int{b.bfPair(0), b.bfPair(1), b.bfPair(2)})
				end := b.end()
				for p := dataHdrSize; p < end; {
					if b.isFree(p) {
						add("  free %d+%d", p, b.freeLen(p))
						p += b.freeLen(p)
						continue
					}
					add("  %d %q %d %d", p, b.name(p), b.ino(p), b.ftype(p))
					p += entSize(b.nameLen(p))
				}
				if b.isBlockForm() {
					add("  tail count %d stale %d", b.tailCount(), b.tailStale())
					for i := 0; i < b.tailCount(); i++ {
						add("  leaf %#x %#x", b.leafHash(i), b.leafAddr(i))
					}
				}
			case da < o.d.freeBlk:
				buf, err := o.readLeafSpace(da)
				if err != nil {
					return nil, err
				}
				bb := buf.B
				if dabtree.Magic(bb) == dabtree.NodeMagic {
					add("node %d forw %d back %d level %d count %d", da, dabtree.Forw(bb), dabtree.Back(bb), dabtree.NodeLevel(bb), dabtree.NodeCount(bb))
					for i := 0; i < dabtree.NodeCount(bb); i++ {
						h, before := dabtree.NodeEntry(bb, i)
						add("  %#x %d", h, before)
					}
					continue
				}
				l := lblock(bb)
				add("leaf %d magic %#x forw %d back %d count %d stale %d", da, l.magic(), dabtree.Forw(bb), dabtree.Back(bb), l.count(), l.stale())
				for i := 0; i < l.count(); i++ {
					h, a := l.ent(i)
					add("  %#x %#x", h, a)
				}
				if l.magic() == format.Dir3Leaf1Magic {
					for i := 0; i < l.bestCount(); i++ {
						add("  best %d", l.best(i))
					}
				}
			default:
				buf, err := o.readFree(o.d.dbOf(da))
				if err != nil {
					return nil, err
				}
				fb := fblock(buf.B)
				add("free %d firstdb %d nvalid %d nused %d", o.d.dbOf(da), fb.firstDB(), fb.nvalid(), fb.nused())
				for i := 0; i < fb.nvalid(); i++ {
					add("  best %d", fb.best(i))
				}
			}
		}
	}
	return out, nil
}

func (b dblock) bfPair(i int) [2]int {
	o, l := b.bf(i)
	return [2]int{o, l}
}
