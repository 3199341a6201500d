package dabtree_test

import (
	"testing"

	"github.com/xfs3/xfs3/xfs/dabtree"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// TestBlocksMany: one operation holding more blocks than Blocks keeps
// inline or finds by a scan. Each block keeps one state for the whole
// operation, freed blocks are forgotten (and can be allocated again), and
// only the blocks still held reach the fork at Flush.
func TestBlocksMany(t *testing.T) {
	g := format.Geometry{BlockSize: 1024, BlockLog: 10, DirBlkSize: 1024, FType: true}
	m := fork.NewMem(g, 777, 0)
	if err := m.ToBlocks(); err != nil {
		t.Fatal(err)
	}
	const n = 40
	m.Begin()
	c := dabtree.NewBlocks(m, 1)
	bufs := make([]*dabtree.Buf, n)
	for i := range n {
		b, err := c.Alloc(uint32(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		b.B[0] = byte(i + 1)
		bufs[i] = b
	}
	for i := range n {
		b, err := c.Read(uint32(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		if b != bufs[i] || b.Blkno != uint32(i) || b.B[0] != byte(i+1) {
			t.Fatalf("block %d: state %p (block %d, byte %d), want the one allocated", i, b, b.Blkno, b.B[0])
		}
		if _, err := c.Alloc(uint32(i), nil); err == nil {
			t.Fatalf("block %d allocated twice", i)
		}
	}
	freed := []uint32{2, 30} // one kept inline, one found through the index
	for _, blk := range freed {
		if err := c.Free(blk); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(blk, nil); err == nil {
			t.Fatalf("freed block %d still reads", blk)
		}
	}
	again, err := c.Alloc(30, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again == bufs[30] || again.B[0] != 0 {
		t.Fatalf("block 30 allocated again: old state %v, first byte %d; want a new, zeroed one", again == bufs[30], again.B[0])
	}
	again.B[0] = 99
	c.Flush()
	m.Commit()
	for i := range n {
		b, _, ok := m.Block(format.FileOff(i))
		switch {
		case i == 2:
			if ok {
				t.Fatal("freed block 2 is still mapped")
			}
		case !ok:
			t.Fatalf("block %d is not mapped", i)
		case i == 30 && b[0] != 99, i != 30 && b[0] != byte(i+1):
			t.Fatalf("block %d holds %d after the commit", i, b[0])
		}
	}
}
