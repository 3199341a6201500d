package btree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// imgStore is a read-only Store over an image file: the buffer layer a
// volume checker would give the tree.
type imgStore struct {
	t      *Tree
	f      *os.File
	blocks map[uint64]*memBlock
}

var errReadOnly = errors.New("read-only image store")

func (s *imgStore) Read(ptr uint64) (Block, error) {
	if b, ok := s.blocks[ptr]; ok {
		return b, nil
	}
	b := &memBlock{ptr: ptr, buf: make([]byte, s.t.Geo.BlockSize)}
	if _, err := s.f.ReadAt(b.buf, format.DaddrToByte(s.t.Daddr(ptr))); err != nil {
		return nil, err
	}
	if err := s.t.VerifyBlock(ptr, b.buf); err != nil {
		return nil, err
	}
	s.blocks[ptr] = b
	return b, nil
}

func (s *imgStore) Alloc(uint64) (Block, error) { return nil, errReadOnly }
func (s *imgStore) Free(Block) error            { return errReadOnly }
func (s *imgStore) Modify(Block) error          { return errReadOnly }
func (s *imgStore) Dirty(Block)                 {}

// image is a filesystem image opened for tree checks.
type image struct {
	t *testing.T
	f *os.File
	g *format.Geometry
}

func openImage(t *testing.T, path string) *image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sect := make([]byte, 512)
	if _, err := f.ReadAt(sect, 0); err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(sect)
	if err == nil {
		err = sb.Verify(sect)
	}
	if err != nil {
		t.Fatal(err)
	}
	g := format.NewGeometry(sb)
	return &image{t: t, f: f, g: &g}
}

func (im *image) read(off int64, n int) []byte {
	im.t.Helper()
	b := make([]byte, n)
	if _, err := im.f.ReadAt(b, off); err != nil {
		im.t.Fatal(err)
	}
	return b
}

func (im *image) agTree(k *Kind, ag format.AgNumber, root format.AgBlock, levels uint32) *Tree {
	st := &imgStore{f: im.f, blocks: map[uint64]*memBlock{}}
	st.t = NewAGTree(k, im.g, ag, root, levels, st)
	return st.t
}

// check runs Check on a tree and returns its stats and records.
func (im *image) check(what string, tr *Tree) (Stats, [][]byte) {
	im.t.Helper()
	var recs [][]byte
	st, err := tr.Check(func(r []byte) error { recs = append(recs, bytes.Clone(r)); return nil })
	if err != nil {
		im.t.Fatalf("%s: %v", what, err)
	}
	// Walking with a cursor sees the same records, both ways.
	c := tr.NewCursor()
	ok, err := c.First()
	for i := 0; ok; i++ {
		if r, _ := c.Get(); i >= len(recs) || !bytes.Equal(r, recs[i]) {
			im.t.Fatalf("%s: forward walk differs at record %d", what, i)
		}
		ok, err = c.Increment()
	}
	if err != nil {
		im.t.Fatalf("%s: %v", what, err)
	}
	ok, err = c.Last()
	for i := len(recs) - 1; ok; i-- {
		if r, _ := c.Get(); i < 0 || !bytes.Equal(r, recs[i]) {
			im.t.Fatalf("%s: backward walk differs at record %d", what, i)
		}
		ok, err = c.Decrement()
	}
	if err != nil {
		im.t.Fatalf("%s: %v", what, err)
	}
	return st, recs
}

// bmbtShape describes a bmap btree: record counts per block, per level
// from the root down.
type bmbtShape [][]int

// checkAll checks every AG tree and every btree fork of an image against
// the AG header counters, and returns the shapes of the btree forks by
// inode.
func (im *image) checkAll() map[format.Ino]bmbtShape {
	t, g := im.t, im.g
	shapes := map[format.Ino]bmbtShape{}
	for ag := format.AgNumber(0); ag < format.AgNumber(g.AgCount); ag++ {
		agf, err := format.VerifyAgf(g, ag, im.read(format.DaddrToByte(g.AgHeaderDaddr(ag, 1)), g.SectSize))
		if err != nil {
			t.Fatal(err)
		}
		agi, err := format.VerifyAgi(g, ag, im.read(format.DaddrToByte(g.AgHeaderDaddr(ag, 2)), g.SectSize))
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("AG %d ", ag)
		bno, brecs := im.check(name+"bnobt", im.agTree(Bnobt, ag, agf.Roots[format.BtBno], agf.Levels[format.BtBno]))
		cnt, crecs := im.check(name+"cntbt", im.agTree(Cntbt, ag, agf.Roots[format.BtCnt], agf.Levels[format.BtCnt]))
		var free, longest uint32
		for _, r := range brecs {
			a := format.DecodeAllocRec(r)
			free += a.BlockCount
			longest = max(longest, a.BlockCount)
		}
		if free != agf.FreeBlks || longest != agf.Longest || len(brecs) != len(crecs) {
			t.Errorf("%s: bnobt holds %d free blocks, longest %d, %d records; AGF says %d, %d; cntbt has %d records",
				name, free, longest, len(brecs), agf.FreeBlks, agf.Longest, len(crecs))
		}
		if len(crecs) > 0 && format.DecodeAllocRec(crecs[len(crecs)-1]).BlockCount != agf.Longest {
			t.Errorf("%s: last cntbt record %v, longest %d", name, format.DecodeAllocRec(crecs[len(crecs)-1]), agf.Longest)
		}
		if got := uint32(bno.Blocks - 1 + cnt.Blocks - 1); got != agf.BtreeBlks {
			t.Errorf("%s: %d non-root free space btree blocks, agf_btreeblks %d", name, got, agf.BtreeBlks)
		}
		if g.Reflink {
			rc, _ := im.check(name+"refcountbt", im.agTree(Refcountbt, ag, agf.RefcountRoot, agf.RefcountLevel))
			if uint32(rc.Blocks) != agf.RefcountBlocks {
				t.Errorf("%s: %d refcountbt blocks, agf says %d", name, rc.Blocks, agf.RefcountBlocks)
			}
		}

		ino, irecs := im.check(name+"inobt", im.agTree(Inobt, ag, agi.Root, agi.Level))
		var count, freeCount uint32
		var withFree [][]byte
		for _, r := range irecs {
			ir := format.DecodeInobtRec(r)
			count += uint32(ir.Count)
			freeCount += uint32(ir.FreeCount)
			if ir.FreeCount > 0 {
				withFree = append(withFree, r)
			}
			for i := 0; i < format.InodesPerChunk; i++ {
				if ir.Present(i) && ir.Free&(1<<i) == 0 {
					im.checkInode(g.AgInoToIno(ag, ir.StartIno+format.AgIno(i)), shapes)
				}
			}
		}
		if count != agi.Count || freeCount != agi.FreeCount {
			t.Errorf("%s: inobt counts %d/%d inodes, AGI %d/%d", name, count, freeCount, agi.Count, agi.FreeCount)
		}
		if g.InobtCount && uint32(ino.Blocks) != agi.IBlocks {
			t.Errorf("%s: %d inobt blocks, agi_iblocks %d", name, ino.Blocks, agi.IBlocks)
		}
		if g.Finobt {
			fino, frecs := im.check(name+"finobt", im.agTree(Finobt, ag, agi.FreeRoot, agi.FreeLevel))
			if fmt.Sprint(frecs) != fmt.Sprint(withFree) {
				t.Errorf("%s: finobt records differ from the inobt chunks with free inodes", name)
			}
			if g.InobtCount && uint32(fino.Blocks) != agi.FBlocks {
				t.Errorf("%s: %d finobt blocks, agi_fblocks %d", name, fino.Blocks, agi.FBlocks)
			}
		}
	}
	return shapes
}

// checkInode checks the btree forks of an inode in use.
func (im *image) checkInode(ino format.Ino, shapes map[format.Ino]bmbtShape) {
	t, g := im.t, im.g
	off, err := g.InoLocation(ino)
	if err != nil {
		t.Fatal(err)
	}
	raw := im.read(off, g.InodeSize)
	d, err := format.VerifyInode(g, ino, raw)
	if err != nil {
		t.Fatalf("inode %d: %v", ino, err)
	}
	data, attr := d.Forks(raw)
	for _, f := range []struct {
		name string
		fmtv int8
		fork []byte
		n    uint64
	}{{"data", d.Format, data, d.DataExtents()}, {"attr", d.AFormat, attr, d.AttrExtents()}} {
		if f.fmtv != format.FmtBtree {
			continue
		}
		root, err := format.DecodeBmdrRoot(f.fork)
		if err != nil {
			t.Fatalf("inode %d %s fork: %v", ino, f.name, err)
		}
		is := &imgStore{f: im.f, blocks: map[uint64]*memBlock{}}
		tr := NewInodeTree(g, ino, root, len(f.fork), is)
		is.t = tr
		st, recs := im.check(fmt.Sprintf("inode %d %s fork", ino, f.name), tr)
		if uint64(len(recs)) != f.n || uint64(st.Blocks) > d.NBlocks {
			t.Errorf("inode %d %s fork: %d extents in %d blocks; inode says %d extents, %d blocks", ino, f.name, len(recs), st.Blocks, f.n, d.NBlocks)
		}
		if f.name == "data" {
			shapes[ino] = shapeOf(t, tr)
		}
	}
}

// shapeOf lists the record counts of every block of an inode-rooted tree.
func shapeOf(t testing.TB, tr *Tree) bmbtShape {
	t.Helper()
	c := tr.NewCursor()
	if err := c.reset(); err != nil {
		t.Fatal(err)
	}
	shape := bmbtShape{{c.iroot.numrecs()}}
	level := []*node{c.iroot}
	for l := c.nlevels - 2; l >= 0; l-- {
		var next []*node
		var counts []int
		for _, n := range level {
			for i := 1; i <= n.numrecs(); i++ {
				child, err := c.read(tr.ptr(n, i), l)
				if err != nil {
					t.Fatal(err)
				}
				next = append(next, child)
				counts = append(counts, child.numrecs())
			}
		}
		shape = append(shape, counts)
		level = next
	}
	return shape
}

// TestGoldenImages checks every tree of the kernel-made golden images:
// the checker's invariants hold for what the kernel writes, and the
// records agree with the AG header counters.
func TestGoldenImages(t *testing.T) {
	for _, v := range oracle.Variants {
		t.Run(v.Name, func(t *testing.T) {
			img, _ := oracle.LoadGolden(t, v.Name)
			im := openImage(t, img)
			shapes := im.checkAll()
			if len(shapes) == 0 {
				t.Fatal("no inode with a btree data fork")
			}
			for ino, s := range shapes {
				t.Logf("inode %d: bmbt shape %v", ino, s)
			}
		})
	}
}
