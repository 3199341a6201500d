package btree

import (
	"github.com/xfs3/xfs3/xfs/format"
)

// node is a block as a cursor sees it: its bytes laid out as a btree block
// with a capacity maxr that places the pointer array. The inode root of a
// bmbt is a node too: an in-memory long-form block (header, then maxr keys,
// then maxr pointers) with blk == nil, whose capacity comes from the fork
// size. The kernel keeps its in-core inode root the same way.
type node struct {
	blk   Block  // nil for the inode root
	ptr   uint64 // the block's address; unused for the inode root
	buf   []byte
	maxr  int  // records (leaf) or key/pointer pairs (node) that fit
	dirty bool // inode root only: changed in this operation
}

func (n *node) isIRoot() bool { return n.blk == nil }

// Header fields live at the same offsets in both forms.
func (n *node) level() int          { return int(be.Uint16(n.buf[4:])) }
func (n *node) setLevel(l int)      { be.PutUint16(n.buf[4:], uint16(l)) }
func (n *node) numrecs() int        { return int(be.Uint16(n.buf[6:])) }
func (n *node) setNumrecs(nrec int) { be.PutUint16(n.buf[6:], uint16(nrec)) }

func (t *Tree) leftSib(n *node) uint64 {
	if t.Kind.Shape.Long {
		return be.Uint64(n.buf[8:])
	}
	return uint64(be.Uint32(n.buf[8:]))
}

func (t *Tree) rightSib(n *node) uint64 {
	if t.Kind.Shape.Long {
		return be.Uint64(n.buf[16:])
	}
	return uint64(be.Uint32(n.buf[12:]))
}

func (t *Tree) setLeftSib(n *node, p uint64) {
	if t.Kind.Shape.Long {
		be.PutUint64(n.buf[8:], p)
	} else {
		be.PutUint32(n.buf[8:], uint32(p))
	}
}

func (t *Tree) setRightSib(n *node, p uint64) {
	if t.Kind.Shape.Long {
		be.PutUint64(n.buf[16:], p)
	} else {
		be.PutUint32(n.buf[12:], uint32(p))
	}
}

// Entries are numbered from 1, as in the kernel: index 0 means "before the
// first entry" and numrecs+1 "after the last".

func (t *Tree) recOff(i int) int { return t.Kind.hdrLen() + (i-1)*t.Kind.Shape.RecLen }
func (t *Tree) keyOff(i int) int { return t.Kind.hdrLen() + (i-1)*t.Kind.Shape.KeyLen }
func (t *Tree) ptrOff(n *node, i int) int {
	return t.Kind.hdrLen() + n.maxr*t.Kind.Shape.KeyLen + (i-1)*t.Kind.Shape.PtrLen
}

func (t *Tree) rec(n *node, i int) []byte {
	off := t.recOff(i)
	return n.buf[off : off+t.Kind.Shape.RecLen]
}

func (t *Tree) key(n *node, i int) []byte {
	off := t.keyOff(i)
	return n.buf[off : off+t.Kind.Shape.KeyLen]
}

func (t *Tree) ptr(n *node, i int) uint64 {
	off := t.ptrOff(n, i)
	if t.Kind.Shape.PtrLen == 8 {
		return be.Uint64(n.buf[off:])
	}
	return uint64(be.Uint32(n.buf[off:]))
}

func (t *Tree) setPtr(n *node, i int, p uint64) {
	off := t.ptrOff(n, i)
	if t.Kind.Shape.PtrLen == 8 {
		be.PutUint64(n.buf[off:], p)
	} else {
		be.PutUint32(n.buf[off:], uint32(p))
	}
}

// moveEntries copies count entries (records of a leaf, or keys with their
// pointers of a node) from src starting at si to dst starting at di. dst
// and src may be the same node with overlapping ranges.
func (t *Tree) moveEntries(dst *node, di int, src *node, si int, count int, leaf bool) {
	if count <= 0 {
		return
	}
	s := &t.Kind.Shape
	if leaf {
		copy(dst.buf[t.recOff(di):t.recOff(di+count)], src.buf[t.recOff(si):t.recOff(si+count)])
		return
	}
	copy(dst.buf[t.keyOff(di):t.keyOff(di+count)], src.buf[t.keyOff(si):t.keyOff(si+count)])
	d, o := t.ptrOff(dst, di), t.ptrOff(src, si)
	copy(dst.buf[d:d+count*s.PtrLen], src.buf[o:o+count*s.PtrLen])
}

// searchKey returns the key of entry i for comparisons: the key computed
// from the record in a leaf, the stored key in a node.
func (t *Tree) searchKey(n *node, level, i int, scratch []byte) []byte {
	if level == 0 {
		t.Kind.Key(scratch, t.rec(n, i))
		return scratch
	}
	return t.key(n, i)
}

// lowKey returns a copy of the lowest key of a block: the key of its first
// record or its first key (xfs_btree_get_keys for non-overlapping trees).
func (t *Tree) lowKey(n *node, level int) []byte {
	k := make([]byte, t.Kind.Shape.KeyLen)
	if level == 0 {
		t.Kind.Key(k, t.rec(n, 1))
	} else {
		copy(k, t.key(n, 1))
	}
	return k
}

// irootNode builds the in-memory node of an inode root from t.IRoot.
func (t *Tree) irootNode() (*node, error) {
	if err := t.checkRoot(); err != nil {
		return nil, err
	}
	r := t.IRoot
	maxr := format.BmdrMaxRecs(t.ForkSize)
	n := &node{
		buf:  make([]byte, t.Kind.hdrLen()+maxr*(t.Kind.Shape.KeyLen+t.Kind.Shape.PtrLen)),
		maxr: maxr,
	}
	n.setLevel(int(r.Level))
	n.setNumrecs(int(r.NumRecs))
	t.setLeftSib(n, t.Kind.nullPtr())
	t.setRightSib(n, t.Kind.nullPtr())
	for i := 1; i <= int(r.NumRecs); i++ {
		be.PutUint64(t.key(n, i), uint64(r.Keys[i-1]))
		t.setPtr(n, i, uint64(r.Ptrs[i-1]))
	}
	return n, nil
}

// irootStruct decodes an inode root node back into the fork structure.
func (t *Tree) irootStruct(n *node) *format.BmdrRoot {
	nr := n.numrecs()
	r := &format.BmdrRoot{
		Level:   uint16(n.level()),
		NumRecs: uint16(nr),
		Keys:    make([]format.FileOff, nr),
		Ptrs:    make([]format.FsBlock, nr),
	}
	for i := 1; i <= nr; i++ {
		r.Keys[i-1] = format.FileOff(be.Uint64(t.key(n, i)))
		r.Ptrs[i-1] = format.FsBlock(t.ptr(n, i))
	}
	return r
}
