package btree

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// forkReplay replays on our tree what the kernel's bmap code does to a
// data fork when a range inside one written extent is unmapped
// (xfs_bunmapi, xfs_bmap_del_extent_real): the same btree calls in the
// same order, and the same extents <-> btree conversions at its end.
type forkReplay struct {
	tr  *Tree
	c   *Cursor
	ext []format.Extent // the fork's extents while it has no btree root
	n   int             // extents in the fork

	conversions int
}

func (f *forkReplay) maxExt() int { return f.tr.ForkSize / format.ExtentRecSize }

// find returns the extent containing off, from the extent list or the tree.
func (f *forkReplay) find(off format.FileOff) (format.Extent, bool, error) {
	if f.tr.IRoot == nil {
		i := sort.Search(len(f.ext), func(i int) bool { return f.ext[i].End() > off })
		if i == len(f.ext) || f.ext[i].StartOff > off {
			return format.Extent{}, false, nil
		}
		return f.ext[i], true, nil
	}
	found, err := f.c.Lookup(LE, extRec(format.Extent{StartOff: off}))
	if err != nil || !found {
		return format.Extent{}, false, err
	}
	r, _ := f.c.Get()
	e := format.DecodeExtent(r)
	return e, e.End() > off, nil
}

// unmap removes [off, off+n) from the fork; the range lies inside one
// extent or inside a hole.
func (f *forkReplay) unmap(off format.FileOff, n uint64) error {
	got, ok, err := f.find(off)
	if err != nil || !ok {
		return err
	}
	end := off + format.FileOff(n)
	if end > got.End() {
		return fmt.Errorf("unmap [%d,%d) crosses the end of %v", off, end, got)
	}
	left := got // the part before the hole
	left.BlockCount = uint64(off - got.StartOff)
	right := got // the part after it
	right.StartOff = end
	right.StartBlock = got.StartBlock + format.FsBlock(end-got.StartOff)
	right.BlockCount = uint64(got.End() - end)

	if f.tr.IRoot == nil {
		i := sort.Search(len(f.ext), func(i int) bool { return f.ext[i].StartOff >= got.StartOff })
		var repl []format.Extent
		if left.BlockCount > 0 {
			repl = append(repl, left)
		}
		if right.BlockCount > 0 {
			repl = append(repl, right)
		}
		f.ext = append(f.ext[:i], append(repl, f.ext[i+1:]...)...)
		f.n = len(f.ext)
	} else {
		found, err := f.c.Lookup(EQ, extRec(got))
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("extent %v not found", got)
		}
		switch {
		case left.BlockCount == 0 && right.BlockCount == 0:
			err = f.c.Delete()
			f.n--
		case left.BlockCount == 0:
			err = f.c.Update(extRec(right))
		case right.BlockCount == 0:
			err = f.c.Update(extRec(left))
		default:
			// Shorten the record, step past it and insert the rest there.
			if err = f.c.Update(extRec(left)); err == nil {
				if _, err = f.c.Increment(); err == nil {
					err = f.c.Insert(extRec(right))
				}
			}
			f.n++
		}
		if err != nil {
			return err
		}
	}
	// xfs_bunmapi ends by switching the fork format when it must.
	switch {
	case f.tr.IRoot == nil && f.n > f.maxExt():
		err := f.tr.FromExtents(f.ext, 0)
		f.ext = nil
		f.conversions++
		return err
	case f.tr.IRoot != nil && f.n <= f.maxExt():
		f.ext, err = f.tr.ToExtents()
		f.conversions++
		return err
	}
	return nil
}

// records returns the fork's extent records.
func (f *forkReplay) records(t testing.TB) [][]byte {
	var recs [][]byte
	if f.tr.IRoot == nil {
		for _, e := range f.ext {
			recs = append(recs, extRec(e))
		}
		return recs
	}
	if _, err := f.tr.Check(func(r []byte) error { recs = append(recs, bytes.Clone(r)); return nil }); err != nil {
		t.Fatal(err)
	}
	return recs
}

// kernelFork builds a file of blocks fs blocks on a kernel mount, unmaps
// the given blocks one fallocate(PUNCH_HOLE) at a time, and returns the
// image and the file's inode number.
func kernelFork(t *testing.T, blockSize, blocks int, punches []int) (img string, ino format.Ino) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount)
	img = filepath.Join(t.TempDir(), "img")
	oracle.Mkfs(t, img, 128<<20, "-b", fmt.Sprintf("size=%d", blockSize))
	mnt := oracle.Mount(t, img, false)
	name := filepath.Join(mnt, "f")
	if err := os.WriteFile(name, bytes.Repeat([]byte{0xA5}, blocks*blockSize), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	const punchHole = 0x01 | 0x02 // FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE
	for _, b := range punches {
		if err := syscall.Fallocate(int(f.Fd()), punchHole, int64(b*blockSize), int64(blockSize)); err != nil {
			t.Fatal(err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Unmount(t, mnt)
	return img, format.Ino(st.Ino)
}

// TestKernelShapes unmaps random blocks of a file on a kernel mount and
// replays the kernel's sequence of btree calls on our tree: the records
// and the shape of the two trees (entries per block, level by level) must
// be the same. Inserts land in the middle of leaves, so right and left
// shifts, splits with the cursor on either side, the inode root growing
// down a level and the odd delete all have to match the kernel.
func TestKernelShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a kernel mount")
	}
	for _, tc := range []struct {
		blockSize, blocks, punches int
	}{
		{1024, 24000, 6000}, // grows to four levels
		{4096, 3000, 700},   // two levels, 4 KiB blocks
		{1024, 4000, 12000}, // holes merge again: deletes, borrows, joins
		{1024, 2000, 14000}, // back down to an extent list
	} {
		t.Run(fmt.Sprintf("b%d-%d-%d", tc.blockSize, tc.blocks, tc.punches), func(t *testing.T) {
			seed := rand.Int63()
			rng := rand.New(rand.NewSource(seed))
			punches := make([]int, tc.punches)
			for i := range punches {
				punches[i] = rng.Intn(tc.blocks)
			}
			img, ino := kernelFork(t, tc.blockSize, tc.blocks, punches)
			im := openImage(t, img)
			shapes := im.checkAll() // the kernel's free space trees are big now too
			im.checkInode(ino, shapes)
			off, err := im.g.InoLocation(ino)
			if err != nil {
				t.Fatal(err)
			}
			raw := im.read(off, im.g.InodeSize)
			d, err := format.VerifyInode(im.g, ino, raw)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := d.Forks(raw)
			var krecs [][]byte
			switch d.Format {
			case format.FmtBtree:
				root, err := format.DecodeBmdrRoot(data)
				if err != nil {
					t.Fatal(err)
				}
				ktr := &Tree{Kind: Bmbt, Geo: im.g, Ino: ino, IRoot: root, ForkSize: len(data)}
				ktr.Store = &imgStore{t: ktr, f: im.f, blocks: map[uint64]*memBlock{}}
				krecs = (&forkReplay{tr: ktr}).records(t)
			case format.FmtExtents:
				for i := uint64(0); i < d.DataExtents(); i++ {
					krecs = append(krecs, bytes.Clone(data[i*format.ExtentRecSize:(i+1)*format.ExtentRecSize]))
				}
			default:
				t.Fatalf("data fork format %d", d.Format)
			}

			// The file was one extent before the punches: every record
			// maps at the same distance.
			base := format.FsBlock(100) // any place will do when nothing is left
			if len(krecs) > 0 {
				first := format.DecodeExtent(krecs[0])
				base = first.StartBlock - format.FsBlock(first.StartOff)
			}
			for _, r := range krecs {
				if e := format.DecodeExtent(r); e.StartBlock-format.FsBlock(e.StartOff) != base {
					t.Skipf("the kernel did not write the file as one extent (%v)", e)
				}
			}

			tr, _ := newInodeTree(Bmbt, im.g, rng, len(data))
			f := &forkReplay{tr: tr, c: tr.NewCursor(), n: 1,
				ext: []format.Extent{{StartBlock: base, BlockCount: uint64(tc.blocks)}}}
			for i, b := range punches {
				if err := f.unmap(format.FileOff(b), 1); err != nil {
					t.Fatalf("seed %d: punch %d (block %d): %v", seed, i, b, err)
				}
			}
			recs := f.records(t)
			if len(recs) != len(krecs) {
				t.Fatalf("seed %d: replay has %d extents, kernel %d", seed, len(recs), len(krecs))
			}
			for i := range recs {
				if !bytes.Equal(recs[i], krecs[i]) {
					t.Fatalf("seed %d: extent %d is %v, kernel %v", seed, i, format.DecodeExtent(recs[i]), format.DecodeExtent(krecs[i]))
				}
			}
			kshape, kbtree := shapes[ino]
			if kbtree != (tr.IRoot != nil) {
				t.Fatalf("seed %d: kernel fork in btree format %v, ours %v", seed, kbtree, tr.IRoot != nil)
			}
			var shape bmbtShape
			if kbtree {
				shape = shapeOf(t, tr)
				if fmt.Sprint(shape) != fmt.Sprint(kshape) {
					t.Fatalf("seed %d: shape differs from the kernel's\nours:   %v\nkernel: %v", seed, shape, kshape)
				}
			}
			t.Logf("seed %d: %d extents, shape %v, %d format changes", seed, len(recs), shape, f.conversions)
		})
	}
}
