package xfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// scrubFixture is a volume with one of each structure a scrub walks: a
// directory in block form and beyond, a file with an xattr fork in leaf
// form, a file whose data fork is a btree, and plain files.
type scrubFixture struct {
	img                      string
	bs                       int
	dir, other, xattr, bmbt  format.Ino
	plain                    format.Ino
	files                    int // in-use inodes the fixture made
	ags                      uint32
	inodeSize, blockSizeBits int
}

func newScrubFixture(t *testing.T) *scrubFixture {
	t.Helper()
	f := &scrubFixture{img: filepath.Join(t.TempDir(), "scrub.img")}
	if _, err := mkfs.Format(f.img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := Open(f.img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	f.bs, f.ags, f.inodeSize = v.geo.BlockSize, v.geo.AgCount, v.geo.InodeSize
	must := func(ino format.Ino, err error) format.Ino {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		f.files++
		return ino
	}
	f.dir = must(v.Names().Mkdir(v.Root(), "bucket", Attrs{Mode: 0o755}))
	f.other = must(v.Names().Mkdir(v.Root(), "other", Attrs{Mode: 0o755}))
	for i := 0; i < 200; i++ {
		for _, d := range []format.Ino{f.dir, f.other} {
			must(v.Names().Create(d, fmt.Sprintf("object-with-a-longish-name-%04d", i), Attrs{Mode: 0o644}))
		}
	}
	f.xattr = must(v.Names().Create(f.other, "with-xattrs", Attrs{Mode: 0o644}))
	for i := 0; i < 40; i++ {
		if err := v.Xattrs().Set(f.xattr, fmt.Sprintf("user.attribute-%03d", i), make([]byte, 100), 0); err != nil {
			t.Fatal(err)
		}
	}
	f.bmbt = must(v.Names().Create(f.other, "fragmented", Attrs{Mode: 0o644}))
	blk := make([]byte, f.bs)
	for i := 0; i < 80; i++ { // every other block: one extent each
		if _, err := v.Files().WriteAt(f.bmbt, blk, int64(2*i*f.bs)); err != nil {
			t.Fatal(err)
		}
	}
	f.plain = must(v.Names().Create(f.other, "plain", Attrs{Mode: 0o644}))
	if _, err := v.Files().WriteAt(f.plain, []byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	for ino, want := range map[format.Ino]int8{f.dir: format.FmtExtents, f.xattr: -1, f.bmbt: format.FmtBtree} {
		ip, err := v.iget(ino)
		if err != nil {
			t.Fatal(err)
		}
		if want == -1 {
			if ip.core.ForkOff == 0 || ip.format(AttrFork) != format.FmtExtents {
				t.Fatalf("inode %d: attr fork format %d, want blocks", ino, ip.format(AttrFork))
			}
		} else if ip.core.Format != want {
			t.Fatalf("inode %d: data fork format %d, want %d", ino, ip.core.Format, want)
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

// scrubAll runs batches of budget until the pass is done.
func scrubAll(t *testing.T, v *Volume, budget int) (ScrubCounts, []SickStructure, int) {
	t.Helper()
	var total ScrubCounts
	var damage []SickStructure
	var c ScrubCursor
	batches := 0
	for !c.Done {
		b, err := v.Space().Scrub(context.Background(), c, budget)
		if err != nil {
			t.Fatalf("scrub at %+v: %v", c, err)
		}
		total.Add(b.ScrubCounts)
		damage = append(damage, b.Damage...)
		c = b.Next
		if batches++; batches > 100000 {
			t.Fatal("scrub never ends")
		}
	}
	return total, damage, batches
}

// TestScrubClean: a clean volume scrubs clean, read-write and read-only,
// with every AG's headers, every in-use inode and the trees' blocks
// counted, in bounded batches; xfs_repair agrees nothing changed.
func TestScrubClean(t *testing.T) {
	f := newScrubFixture(t)
	for _, ro := range []bool{false, true} {
		v, err := Open(f.img, Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		n, damage, batches := scrubAll(t, v, 64)
		if len(damage) != 0 || n.Damaged != 0 {
			t.Fatalf("clean volume (read-only %v): damage %+v", ro, damage)
		}
		// mkfs's root, rt bitmap and summary, and the project quota
		// inode, besides ours.
		if n.Inodes != int64(f.files+4) || n.AGHeaders != int64(3*f.ags) || n.Blocks < 30 {
			t.Fatalf("read-only %v: counts %+v, want %d inodes, %d headers", ro, n, f.files+4, 3*f.ags)
		}
		if batches < 5 {
			t.Fatalf("%d batches for %+v: the budget did not bound them", batches, n)
		}
		if s := v.Sick(); len(s) != 0 {
			t.Fatalf("sick after a clean scrub: %+v", s)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if oracle.Optional(t, "the xfs_repair check of the scrubbed volume", oracle.ToolRepair) {
		oracle.Repair(t, f.img)
	}
}

// TestScrubWhileWriting: writers go on during a scrub, which finds no
// damage in what they change under it.
func TestScrubWhileWriting(t *testing.T) {
	f := newScrubFixture(t)
	v, err := Open(f.img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				ino, err := v.Names().Create(f.dir, name, Attrs{Mode: 0o644})
				if err == nil {
					_, err = v.Files().WriteAt(ino, make([]byte, 3*f.bs), 0)
				}
				if err == nil && i%3 == 0 {
					err = v.Names().Unlink(f.dir, name)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for pass := 0; pass < 3; pass++ {
		if _, damage, _ := scrubAll(t, v, 16); len(damage) != 0 {
			t.Fatalf("pass %d: damage %+v", pass, damage)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// damageAt overwrites bytes at byte offset off of the stopped volume.
func damageAt(t *testing.T, img string, off int64) {
	t.Helper()
	fh, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt([]byte("damaged!"), off); err != nil {
		t.Fatal(err)
	}
}

// TestScrubFindsDamage: damage of each kind is found by a scrub, marked
// sick with the right owner and nothing else, and the healthy parts stay
// usable.
func TestScrubFindsDamage(t *testing.T) {
	f := newScrubFixture(t)
	pristine, err := os.ReadFile(f.img)
	if err != nil {
		t.Fatal(err)
	}
	// where returns the byte offset to damage, worked out on the clean
	// volume, and the structure that must come out sick.
	type target struct {
		name  string
		ro    bool // AG headers are read at a writable open: scrub read-only
		where func(v *Volume) (off int64, want SickStructure)
	}
	forkBlock := func(ino format.Ino, fk Fork) func(v *Volume) (int64, SickStructure) {
		return func(v *Volume) (int64, SickStructure) {
			ip, err := v.iget(ino)
			if err != nil {
				t.Fatal(err)
			}
			ext, err := v.extents(ip, fk)
			if err != nil || len(ext) == 0 {
				t.Fatalf("inode %d %v: %d extents, %v", ino, fk, len(ext), err)
			}
			return format.DaddrToByte(v.geo.FsbToDaddr(ext[0].StartBlock)) + 200, SickStructure{Kind: "inode", Ino: ino}
		}
	}
	agHeader := func(ag format.AgNumber, n int) func(v *Volume) (int64, SickStructure) {
		return func(v *Volume) (int64, SickStructure) {
			return format.DaddrToByte(v.geo.AgHeaderDaddr(ag, n)) + 100, SickStructure{Kind: "ag", AG: ag}
		}
	}
	targets := []target{
		{name: "directory block", where: forkBlock(f.dir, DataFork)},
		{name: "xattr block", where: forkBlock(f.xattr, AttrFork)},
		{name: "bmbt block", where: func(v *Volume) (int64, SickStructure) {
			ip, err := v.iget(f.bmbt)
			if err != nil {
				t.Fatal(err)
			}
			root, err := format.DecodeBmdrRoot(ip.fork(DataFork))
			if err != nil {
				t.Fatal(err)
			}
			return format.DaddrToByte(v.geo.FsbToDaddr(root.Ptrs[0])) + 100, SickStructure{Kind: "inode", Ino: f.bmbt}
		}},
		{name: "inode in a cluster", where: func(v *Volume) (int64, SickStructure) {
			g := &v.geo
			ag, agino := g.InoToAg(f.plain)
			bno, slot := g.AgInoToAgBlock(agino)
			return format.DaddrToByte(g.AgbToDaddr(ag, bno)) + int64(slot*g.InodeSize) + 40, SickStructure{Kind: "inode", Ino: f.plain}
		}},
		{name: "bnobt block", where: func(v *Volume) (int64, SickStructure) {
			agf, err := v.readAGF(1)
			if err != nil {
				t.Fatal(err)
			}
			return format.DaddrToByte(v.geo.AgbToDaddr(1, agf.Roots[format.BtBno])) + 100, SickStructure{Kind: "ag", AG: 1}
		}},
		{name: "AGF", ro: true, where: agHeader(1, 1)},
		{name: "AGI", ro: true, where: agHeader(2, 2)},
	}
	for _, tc := range targets {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(f.img, pristine, 0o644); err != nil {
				t.Fatal(err)
			}
			v, err := Open(f.img, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			off, want := tc.where(v)
			v.Close()
			damageAt(t, f.img, off)

			var reported []SickStructure
			var mu sync.Mutex
			v, err = Open(f.img, Options{ReadOnly: tc.ro, OnSick: func(s SickStructure) {
				mu.Lock()
				reported = append(reported, s)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			n, damage, _ := scrubAll(t, v, 64)
			if len(damage) != 1 || damage[0].Kind != want.Kind || damage[0].Ino != want.Ino || damage[0].AG != want.AG || n.Damaged != 1 {
				t.Fatalf("damage %+v (counts %+v), want %v", damage, n, want)
			}
			if s := v.Sick(); len(s) != 1 || s[0].String() != want.String() {
				t.Fatalf("sick %+v, want %v", s, want)
			}
			if len(reported) != 1 {
				t.Fatalf("OnSick called %d times", len(reported))
			}
			// A second pass lists it again without marking anything new.
			if _, again, _ := scrubAll(t, v, 64); len(again) != 1 || len(reported) != 1 {
				t.Fatalf("second pass: %+v, %d reports", again, len(reported))
			}
			// The healthy parts stay usable.
			if ents, err := v.Names().ReadDir(f.other); err != nil || len(ents) < 200 {
				t.Fatalf("healthy directory: %d entries, %v", len(ents), err)
			}
			if !tc.ro {
				if _, err := v.Names().Create(f.other, "after-scrub", Attrs{Mode: 0o644}); err != nil {
					t.Fatalf("create in a healthy directory: %v", err)
				}
			}
		})
	}
}

// readAGF reads AG ag's committed AGF.
func (v *mount) readAGF(ag format.AgNumber) (*format.Agf, error) {
	return alloc.Committed(v.readCommitted, &v.geo, ag)
}
