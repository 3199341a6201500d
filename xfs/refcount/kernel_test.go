package refcount

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// kb is the block size of the kernel-made volumes: 1 KiB blocks hold 80
// refcount records a leaf, so a few hundred shared extents make a tree
// of two levels.
const kb = 1024

// sharedFiles are the files of the volume buildShared makes.
var sharedFiles = []string{"/a", "/b", "/c", "/d", "/e"}

// buildShared makes, with mkfs.xfs (reflink on, 1 KiB blocks) and the
// kernel, a volume whose files share extents in many ways: a, written
// and then fragmented into 400 one-block extents; b, c and e whole
// clones of a; b then partly rewritten (copy-on-write unshares those
// blocks); c with a range punched out; e cut short; d made of a range of
// b and a range of a. Counts run from 1 to 5, and records start and end
// everywhere.
func buildShared(t *testing.T) string {
	t.Helper()
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "s1.img")
	oracle.Mkfs(t, img, 64<<20, "-b", "size=1024", "-m", "reflink=1")
	mnt := oracle.Mount(t, img, false)
	writeFile(t, filepath.Join(mnt, "a"), 0, 1)
	oracle.Unmount(t, mnt)
	oracle.FragmentWrittenInImage(t, img, []string{"a"}, 400)

	mnt = oracle.Mount(t, img, false)
	p := func(name string) string { return filepath.Join(mnt, name) }
	clone(t, p("a"), p("b"), 0, 0, 0)
	clone(t, p("a"), p("c"), 0, 0, 0)
	clone(t, p("a"), p("e"), 0, 0, 0)
	for _, off := range []int64{10, 11, 200, 201, 202, 203, 640} {
		writeFile(t, p("b"), off*kb, kb)
	}
	writeFile(t, p("b"), 300*kb, 9*kb)
	clone(t, p("b"), p("d"), 100*kb, 300*kb, 0)
	clone(t, p("a"), p("d"), 0, 120*kb, 400*kb)
	clone(t, p("a"), p("d"), 60*kb, 80*kb, 600*kb)
	punch(t, p("c"), 50*kb, 100*kb)
	if err := os.Truncate(p("e"), 301*kb); err != nil {
		t.Fatal(err)
	}
	oracle.Unmount(t, mnt)
	return img
}

// clone makes dst's bytes [dstOff, dstOff+n) share src's [srcOff, ...)
// (FICLONERANGE); n 0 clones the whole file (FICLONE).
func clone(t testing.TB, src, dst string, srcOff, n, dstOff int64) {
	t.Helper()
	s, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n == 0 {
		err = unix.IoctlFileClone(int(d.Fd()), int(s.Fd()))
	} else {
		err = unix.IoctlFileCloneRange(int(d.Fd()), &unix.FileCloneRange{
			Src_fd: int64(s.Fd()), Src_offset: uint64(srcOff), Src_length: uint64(n), Dest_offset: uint64(dstOff)})
	}
	if err != nil {
		t.Fatalf("clone %s to %s: %v", src, dst, err)
	}
}

func punch(t testing.TB, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n); err != nil {
		t.Fatal(err)
	}
}

// fileMappings reads the mappings of files from img with xfs_db.
func fileMappings(t testing.TB, img string, files ...string) map[string][]mapping {
	out := map[string][]mapping{}
	for _, f := range files {
		out[f] = dbMappings(t, img, f)
	}
	return out
}

func modelOfFiles(m map[string][]mapping, files ...string) sharingModel {
	var fs [][]mapping
	for _, f := range files {
		fs = append(fs, m[f])
	}
	return modelOf(fs...)
}

// TestKernel checks this package against trees the kernel wrote, on one
// volume buildShared makes (state S1):
//
//   - mappings: our reading of S1's trees is exactly the records that
//     the files' mappings (read by xfs_db) imply;
//   - remove: the kernel removes b (state S2); Adjust(-1) over b's
//     extents, applied by us to a copy of S1, leaves S2's records, and
//     returns as freed exactly b's blocks no other file maps, which S2
//     has free;
//   - repair notices: a count no mapping backs fails xfs_repair -n;
//   - roundtrip: we take the sharing of b, c and e away and give it back
//     (every shared part decremented, then incremented, one transaction
//     per piece), which shrinks and regrows the trees through our
//     allocator:
//     the records are S1's again, xfs_repair -n finds nothing wrong, and
//     the kernel then removes b and c on top of our trees, leaving what
//     the remaining files' mappings imply and a volume xfs_repair
//     passes.
func TestKernel(t *testing.T) {
	s1 := buildShared(t)
	maps1 := fileMappings(t, s1, sharedFiles...)
	want1 := modelOfFiles(maps1, sharedFiles...).records()
	var got1 map[format.AgNumber][]Rec
	var levels []int
	{
		im := openImage(t, s1)
		got1 = im.records()
		levels = im.levels()
		im.close()
	}
	n := 0
	for _, rs := range got1 {
		n += len(rs)
	}
	t.Logf("S1: %d shared records, tree levels per AG %v", n, levels)
	if n < 300 || !containsAbove(levels, 1) {
		t.Fatalf("S1 has %d records and trees of %v levels: the test wants hundreds of records and a tree of two levels", n, levels)
	}

	t.Run("mappings", func(t *testing.T) {
		if d := diffRecords(only(got1, Shared), want1); d != "" {
			t.Fatalf("kernel's S1 trees, as we read them, differ from the mappings' records: %s", d)
		}
		if cow := only(got1, CoW); len(cow) != 0 {
			t.Fatalf("staging records after unmount: %v", cow)
		}
	})

	t.Run("remove", func(t *testing.T) {
		s2 := copyImage(t, s1)
		mnt := oracle.Mount(t, s2, false)
		if err := os.Remove(filepath.Join(mnt, "b")); err != nil {
			t.Fatal(err)
		}
		oracle.Unmount(t, mnt)
		kern := openImage(t, s2)
		want := kern.records()
		kernFree := kern.freeExtents()
		kern.close()

		ours := openImage(t, copyImage(t, s1))
		var freed []mapping
		for _, e := range maps1["/b"] {
			ours.change(func(tx *alloc.Tx) error {
				tr, err := Open(tx, e.ag)
				if err != nil {
					return err
				}
				free, err := tr.Adjust(e.bno, e.n, -1)
				for _, f := range free {
					freed = append(freed, mapping{e.ag, f.Start, f.Len})
				}
				return err
			})
		}
		if d := diffRecords(ours.records(), want); d != "" {
			t.Fatalf("our S1 - b differs from the kernel's S2: %s", d)
		}
		// Freed: the blocks of b that no other file maps.
		others := modelOfFiles(maps1, "/a", "/c", "/d", "/e")
		wantFreed := 0
		for _, e := range maps1["/b"] {
			for b := e.bno; b < e.bno+format.AgBlock(e.n); b++ {
				if others[e.ag][b] == 0 {
					wantFreed++
				}
			}
		}
		gotFreed := 0
		for _, f := range freed {
			gotFreed += int(f.n)
			for b := f.bno; b < f.bno+format.AgBlock(f.n); b++ {
				if others[f.ag][b] != 0 {
					t.Errorf("AG %d block %d freed, but another file maps it", f.ag, b)
				}
			}
			if !isFree(kernFree, f.ag, Extent{f.bno, f.n}) {
				t.Errorf("AG %d %d+%d freed, but the kernel's S2 does not have it free", f.ag, f.bno, f.n)
			}
		}
		if gotFreed != wantFreed || wantFreed == 0 {
			t.Errorf("freed %d blocks, want the %d of b no other file maps", gotFreed, wantFreed)
		}
		t.Logf("b: %d extents, %d blocks freed in %d pieces", len(maps1["/b"]), gotFreed, len(freed))
	})

	t.Run("repair notices", func(t *testing.T) {
		// The negative control: one increment no mapping backs is a
		// count xfs_repair must reject, or its passes above say little.
		img := copyImage(t, s1)
		im := openImage(t, img)
		e := maps1["/a"][0]
		im.change(func(tx *alloc.Tx) error {
			tr, err := Open(tx, e.ag)
			if err != nil {
				return err
			}
			_, err = tr.Adjust(e.bno, e.n, 1)
			return err
		})
		im.close()
		if out, err := oracle.RepairOutput(img); err == nil {
			t.Fatalf("xfs_repair -n passed a refcount no mapping backs:\n%s", out)
		}
	})

	t.Run("roundtrip", func(t *testing.T) {
		img := copyImage(t, s1)
		im := openImage(t, img)
		pieces := unsharePieces(modelOfFiles(maps1, sharedFiles...), maps1, "/b", "/c", "/e")
		for _, delta := range []int{-1, 1} {
			for _, p := range pieces {
				im.change(func(tx *alloc.Tx) error {
					tr, err := Open(tx, p.ag)
					if err != nil {
						return err
					}
					if delta < 0 {
						// What Shared says of the piece: shared all through.
						shared, err := tr.Shared(p.bno, p.n)
						if err != nil {
							return err
						}
						covered := uint32(0)
						for _, r := range shared {
							covered += r.Len
						}
						if covered != p.n {
							t.Errorf("Shared(%+v) covers %d blocks: %v", p, covered, shared)
						}
					}
					free, err := tr.Adjust(p.bno, p.n, delta)
					if len(free) > 0 {
						t.Errorf("%+d over shared %+v freed %v", delta, p, free)
					}
					return err
				})
			}
			if delta < 0 {
				left := 0
				for _, rs := range im.records() {
					left += len(rs)
				}
				t.Logf("%d pieces of b, c and e unshared: %d records left, tree levels %v", len(pieces), left, im.levels())
			}
		}
		if d := diffRecords(im.records(), got1); d != "" {
			t.Fatalf("records after the round trip differ from S1's: %s", d)
		}
		im.writeCounters()
		im.close()
		oracle.Repair(t, img)

		mnt := oracle.Mount(t, img, false)
		for _, f := range []string{"b", "c"} {
			if err := os.Remove(filepath.Join(mnt, f)); err != nil {
				t.Fatal(err)
			}
		}
		oracle.Unmount(t, mnt)
		oracle.Repair(t, img)
		after := openImage(t, img)
		want := modelOfFiles(fileMappings(t, img, "/a", "/d", "/e"), "/a", "/d", "/e").records()
		if d := diffRecords(after.records(), want); d != "" {
			t.Fatalf("after the kernel removed b and c on our trees: %s", d)
		}
	})
}

// unsharePieces returns, for the files in turn, the runs of their blocks
// that are still shared once the files before them gave theirs up:
// decrementing them all leaves every block mapped at least once.
func unsharePieces(m sharingModel, maps map[string][]mapping, files ...string) []mapping {
	var out []mapping
	for _, f := range files {
		for _, e := range maps[f] {
			for b := e.bno; b < e.bno+format.AgBlock(e.n); b++ {
				if m[e.ag][b] < 2 {
					continue
				}
				m[e.ag][b]--
				if l := len(out) - 1; l >= 0 && out[l].ag == e.ag && out[l].bno+format.AgBlock(out[l].n) == b {
					out[l].n++
				} else {
					out = append(out, mapping{e.ag, b, 1})
				}
			}
		}
	}
	return out
}

func containsAbove(levels []int, n int) bool {
	for _, l := range levels {
		if l > n {
			return true
		}
	}
	return false
}
