package attr

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// Check verifies a whole attribute fork with the rules of the kernel's
// verifiers and of xfs_repair (repair/attr_repair.c, repair/da_util.c),
// plus the invariants this package keeps:
//
//   - short form: entries inside totsize, names not empty and without NUL,
//     one namespace each, count matching totsize;
//   - every leaf: not empty, entries in hash order (also across leaves),
//     hash == hash of the name, no INCOMPLETE entry, entry slots and name
//     records never overlapping, usedbytes == the records' sizes,
//     firstused == the lowest record (≤ it when holes is set), freemap
//     regions inside the free space and not overlapping each other (the
//     kernel's verifier since 2026), local records below 3/4 of a block and
//     remote ones at or above it;
//   - remote values: every block mapped, headers with the right offset,
//     length, owner, daddr and the all-ones LSN, the tail of the last block
//     zero;
//   - the tree: every block accepted by the read verifiers, and the shape
//     dabtree.Tree.Check requires (levels, keys, sibling chains);
//   - no name twice, and no mapped block that nothing uses.
func Check(r fork.Reader) error {
	if r.Format() == format.FmtLocal {
		return checkShort(r.Inline())
	}
	c := &checker{o: newOp(r), names: map[string]bool{}, owner: map[uint32]string{}}
	m, err := c.o.c.Mapped()
	if err != nil || len(m) == 0 {
		return err
	}
	shape, err := c.o.t.Check(c.leaf)
	if err != nil {
		return err
	}
	for _, no := range shape.Nodes {
		if err := c.own(no, "node"); err != nil {
			return err
		}
	}
	for _, rg := range m {
		for no := rg[0]; no < rg[1]; no++ {
			if _, ok := c.owner[uint32(no)]; !ok {
				return c.errorf(uint32(no), "block is mapped but holds nothing")
			}
		}
	}
	return nil
}

func checkShort(in []byte) error {
	if err := verifySF(in); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, e := range decodeSF(in[:sfTotsize(in)]) {
		k := string(rune(e.flags)) + string(e.name)
		if seen[k] {
			return format.Corrupt("short-form attributes", "", "%s.%q appears twice", format.NamespaceName(e.flags), e.name)
		}
		seen[k] = true
	}
	return nil
}

type checker struct {
	o     *op
	names map[string]bool
	owner map[uint32]string // block → what uses it
	last  uint32            // last hash seen, across leaves
}

func (c *checker) errorf(no uint32, f string, args ...any) error {
	return format.Corrupt("attr fork", fmt.Sprintf("attr block %d", no), f, args...)
}

func (c *checker) own(no uint32, what string) error {
	if prev, ok := c.owner[no]; ok {
		return c.errorf(no, "used as %s and as %s", prev, what)
	}
	c.owner[no] = what
	return nil
}

// leaf checks one leaf as xfs_repair's process_leaf_attr_block does.
func (c *checker) leaf(buf *dabtree.Buf) error {
	no, b, bs := buf.Blkno, buf.B, len(buf.B)
	if err := c.own(no, "leaf"); err != nil {
		return err
	}
	h := leafHdrOf(b)
	if h.count == 0 {
		return c.errorf(no, "empty leaf")
	}
	used := make([]bool, bs)
	mark := func(start, end int, what string) error {
		if end > bs {
			return c.errorf(no, "%s runs past the block", what)
		}
		for i := start; i < end; i++ {
			if used[i] {
				return c.errorf(no, "%s overlaps used bytes at %d", what, i)
			}
			used[i] = true
		}
		return nil
	}
	if err := mark(0, leafHdrSize, "header"); err != nil {
		return err
	}
	usedbytes, firstb := 0, bs
	for i := 0; i < h.count; i++ {
		e := leafEntOf(b, i)
		what := fmt.Sprintf("entry %d", i)
		if e.flags&format.AttrIncomplete != 0 {
			return c.errorf(no, "%s is incomplete", what)
		}
		if err := mark(entOff(i), entOff(i+1), what+" slot"); err != nil {
			return err
		}
		name := entName(b, i)
		if len(name) == 0 || bytes.IndexByte(name, 0) >= 0 {
			return c.errorf(no, "%s has a bad name %q", what, name)
		}
		if e.hash != format.DaHashName(name) {
			return c.errorf(no, "%s hash %#x is not the hash of %q", what, e.hash, name)
		}
		if e.hash < c.last {
			return c.errorf(no, "%s hash %#x below the previous %#x", what, e.hash, c.last)
		}
		c.last = e.hash
		sz := entsize(b, i)
		if err := mark(e.idx, e.idx+sz, what+" record"); err != nil {
			return err
		}
		usedbytes += sz
		firstb = min(firstb, e.idx)
		k := string(rune(e.flags&format.AttrNSMask)) + string(name)
		if c.names[k] {
			return c.errorf(no, "%s: %s.%q appears twice", what, format.NamespaceName(e.flags), name)
		}
		c.names[k] = true
		nl := len(name)
		if e.flags&format.AttrLocal != 0 {
			if vl := binary.BigEndian.Uint16(b[e.idx:]); entsizeLocal(nl, int(vl)) >= localMax(bs) {
				return c.errorf(no, "%s keeps a %d-byte value local", what, vl)
			}
			continue
		}
		blk, vl := entRemote(b, i)
		if entsizeLocal(nl, vl) < localMax(bs) {
			return c.errorf(no, "%s keeps a %d-byte value remote", what, vl)
		}
		if err := c.remote(no, blk, vl); err != nil {
			return err
		}
	}
	if (!h.holes && firstb != h.firstused) || h.firstused > firstb {
		return c.errorf(no, "first used byte %d, lowest record at %d", h.firstused, firstb)
	}
	if usedbytes != h.usedbytes {
		return c.errorf(no, "usedbytes %d, records hold %d", h.usedbytes, usedbytes)
	}
	for i, r := range h.freemap {
		for p := r.base; p < r.base+r.size; p++ {
			if used[p] {
				return c.errorf(no, "freemap %d (%d, %d) covers used byte %d", i, r.base, r.size, p)
			}
		}
		for j := i + 1; j < len(h.freemap); j++ {
			q := h.freemap[j]
			if r.size > 0 && q.size > 0 && r.base < q.base+q.size && q.base < r.base+r.size {
				return c.errorf(no, "freemap %d (%d, %d) overlaps freemap %d (%d, %d)", i, r.base, r.size, j, q.base, q.size)
			}
		}
	}
	return nil
}

// remote checks the blocks of a remote value.
func (c *checker) remote(leaf, blk uint32, length int) error {
	if blk == 0 {
		return c.errorf(leaf, "remote value at block 0")
	}
	per := format.RmtSpace(c.o.bs)
	for i, off := 0, 0; off < length; i, off = i+1, off+per {
		no := blk + uint32(i)
		if err := c.own(no, fmt.Sprintf("remote value of leaf %d", leaf)); err != nil {
			return err
		}
		b, daddr, err := c.o.rmtBlock(no)
		if err != nil {
			return err
		}
		if _, err := format.VerifyRmtBlock(c.o.g, "attr remote block", format.AttrRmtMagic, b, daddr, c.o.owner, uint32(off)); err != nil {
			return format.Located(err, fmt.Sprintf("attr remote block %d", no))
		}
		want := min(per, length-off)
		be := binary.BigEndian
		if int(be.Uint32(b[4:])) != off || int(be.Uint32(b[8:])) != want {
			return c.errorf(no, "remote piece %d+%d, want %d+%d", be.Uint32(b[4:]), be.Uint32(b[8:]), off, want)
		}
		if be.Uint64(b[48:]) != nullCommitLSN {
			return c.errorf(no, "remote block LSN %#x, want all ones", be.Uint64(b[48:]))
		}
		for _, x := range b[format.RmtHdrSize+want:] {
			if x != 0 {
				return c.errorf(no, "bytes after the value are not zero")
			}
		}
	}
	return nil
}
