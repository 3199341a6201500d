package dir

import (
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// Entry is one directory entry as ListFrom reports it.
type Entry struct {
	Name  []byte // valid only during the callback
	Ino   format.Ino
	FType uint8
	// Off is the entry's byte offset in the directory's data space. It
	// survives format conversions (short-form entries record the offset
	// they get in block form), so it works as a readdir cookie: resume
	// with ListFrom(r, e.Off+1, ...).
	Off uint64
}

// List calls fn for every entry but "." and "..", in directory order (by
// offset in the data space, the order the kernel's readdir returns). An
// error from fn stops the listing and is returned.
func List(r fork.Reader, fn func(name []byte, ino format.Ino, ftype uint8) error) error {
	return ListFrom(r, 0, func(e Entry) error { return fn(e.Name, e.Ino, e.FType) })
}

// ListFrom is List for the entries at offsets >= from, with their offsets.
func ListFrom(r fork.Reader, from uint64, fn func(Entry) error) error {
	o, err := newOp(r)
	if err != nil {
		return err
	}
	defer o.done()
	f, err := o.form()
	if err != nil {
		return err
	}
	if f == ShortForm {
		s, err := decodeSF(r.Inline(), o.d)
		if err != nil {
			return err
		}
		for _, e := range s.ents {
			if uint64(e.off) < from {
				continue
			}
			if err := fn(Entry{Name: e.name, Ino: e.ino, FType: e.ftype, Off: uint64(e.off)}); err != nil {
				return err
			}
		}
		return nil
	}
	dbs, err := o.dataBlocks()
	if err != nil {
		return err
	}
	for _, db := range dbs {
		base := uint64(db) << o.d.blkLog
		if base+uint64(o.d.blk) <= from {
			continue
		}
		buf, err := o.readData(db)
		if err != nil {
			return err
		}
		b := dblock(buf.B)
		if f == BlockForm != b.isBlockForm() {
			return format.Corrupt("dir3 data block", dataWhere(db), "magic %#x in a %v directory", b.magic(), f)
		}
		end := b.end()
		for off := dataHdrSize; off < end; {
			if b.isFree(off) {
				off += b.freeLen(off)
				continue
			}
			name := b.name(off)
			if base+uint64(off) >= from && !isDot(name) && !isDotDot(name) {
				if err := fn(Entry{Name: name, Ino: b.ino(off), FType: b.ftype(off), Off: base + uint64(off)}); err != nil {
					return err
				}
			}
			off += entSize(b.nameLen(off))
		}
	}
	return nil
}

// dataBlocks lists the directory blocks mapped in the data space.
func (o *op) dataBlocks() ([]uint32, error) {
	m, err := o.r.Mapped()
	if err != nil {
		return nil, err
	}
	var dbs []uint32
	for _, r := range m {
		for off := r[0]; off < r[1] && off < format.FileOff(o.d.leafBlk); off++ {
			db := o.d.dbOf(uint32(off))
			if n := len(dbs); n == 0 || dbs[n-1] != db {
				dbs = append(dbs, db)
			}
			// Skip to the next directory block.
			off = format.FileOff(o.d.daOf(db+1)) - 1
		}
	}
	return dbs, nil
}
