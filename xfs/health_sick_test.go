package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/quota"
)

// damageFirstBlock overwrites bytes of the first block of inode ino's
// data fork on the stopped volume img (xfs_db finds it), at offset off
// within the block.
func damageFirstBlock(t *testing.T, img string, ino format.Ino, bs int, off int) {
	t.Helper()
	exts := dbExtents(t, img, ino)
	if len(exts) == 0 {
		t.Fatalf("inode %d maps no blocks", ino)
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("damaged!"), exts[0]*int64(bs)+int64(off)); err != nil {
		t.Fatal(err)
	}
}

// dbExtents lists the linear block numbers (AG × agblocks + block) of
// an inode's data extents, as xfs_db's bmap shows them.
func dbExtents(t *testing.T, img string, ino format.Ino) []int64 {
	t.Helper()
	sb := oracle.DBSuperblock(t, img)
	var agblocks int64
	fmt.Sscan(sb["agblocks"], &agblocks)
	var out []int64
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), "bmap"), "\n") {
		var off, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &ag, &agbno, &count, &flag); err == nil {
			out = append(out, ag*agblocks+agbno)
		}
	}
	return out
}

// dbFileBlock is the linear block number (AG × agblocks + block) of file
// block fb of inode ino, as xfs_db's bmap maps it.
func dbFileBlock(t *testing.T, img string, ino format.Ino, fb int64) int64 {
	t.Helper()
	var agblocks int64
	fmt.Sscan(oracle.DBSuperblock(t, img)["agblocks"], &agblocks)
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), "bmap"), "\n") {
		var off, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &ag, &agbno, &count, &flag); err == nil && fb >= off && fb < off+count {
			return ag*agblocks + agbno + fb - off
		}
	}
	t.Fatalf("inode %d maps no file block %d", ino, fb)
	return 0
}

// openReporting opens the damaged volume img (what says how) for
// writing, and collects what OnSick hears.
func openReporting(t *testing.T, img, what string) (*xfs.Volume, *[]xfs.SickStructure) {
	t.Helper()
	var mu sync.Mutex
	reported := &[]xfs.SickStructure{}
	v, err := xfs.Open(img, xfs.Options{OnSick: func(s xfs.SickStructure) {
		mu.Lock()
		*reported = append(*reported, s)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatalf("open with %s: %v", what, err)
	}
	return v, reported
}

// repairAndOpen checks that xfs_repair -n sees damage on the stopped
// volume img, repairs it, checks that it is clean then, and opens it.
func repairAndOpen(t *testing.T, img string) *xfs.Volume {
	t.Helper()
	if out, err := oracle.RepairOutput(img); err == nil {
		t.Fatalf("xfs_repair -n found nothing wrong:\n%s", out)
	}
	oracle.RepairFix(t, img)
	oracle.Repair(t, img)
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSickDirectory: a directory block that fails its CRC marks the
// directory sick, once; every change that would touch the directory is
// then refused with ErrSick and changes nothing, while the other
// directory reads and changes as before; xfs_repair then mends the
// volume and the engine opens it again with nothing sick.
func TestSickDirectory(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "sick.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	b1, _ := v.Names().Mkdir(v.Root(), "b1", xfs.Attrs{Mode: 0o755})
	b2, _ := v.Names().Mkdir(v.Root(), "b2", xfs.Attrs{Mode: 0o755})
	for i := 0; i < 60; i++ {
		for _, d := range []format.Ino{b1, b2} {
			if _, err := v.Names().Create(d, fmt.Sprintf("object-with-a-longish-name-%03d", i), xfs.Attrs{Mode: 0o644}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	damageFirstBlock(t, img, b1, bs, 200)

	v, reported := openReporting(t, img, "a damaged directory block")
	defer func() { v.Close() }()
	for i := 0; i < 2; i++ {
		if _, err := v.Names().ReadDir(b1); !errors.Is(err, xfs.ErrCorrupt) {
			t.Fatalf("listing the damaged directory: %v, want a corruption", err)
		}
	}
	sick := v.Sick()
	if len(sick) != 1 || sick[0].Kind != "inode" || sick[0].Ino != b1 {
		t.Fatalf("sick: %+v, want directory %d", sick, b1)
	}
	if len(*reported) != 1 || (*reported)[0].Ino != b1 {
		t.Fatalf("OnSick called with %+v, want once for %d", *reported, b1)
	}
	before, _ := v.Stat(b1)
	if _, err := v.Names().Create(b1, "new", xfs.Attrs{Mode: 0o644}); !errors.Is(err, xfs.ErrSick) {
		t.Fatalf("create in the sick directory: %v, want ErrSick", err)
	}
	if err := v.Names().Unlink(b1, "object-with-a-longish-name-001"); !errors.Is(err, xfs.ErrSick) {
		t.Fatalf("unlink in the sick directory: %v, want ErrSick", err)
	}
	if err := v.Names().Rename(b2, "object-with-a-longish-name-001", b1, "moved"); !errors.Is(err, xfs.ErrSick) {
		t.Fatalf("rename into the sick directory: %v, want ErrSick", err)
	}
	if _, err := v.Names().Lookup(b2, "object-with-a-longish-name-001"); err != nil {
		t.Fatalf("the refused rename moved the name away: %v", err)
	}
	if err := v.Xattrs().Set(b1, "user.x", []byte("y"), 0); !errors.Is(err, xfs.ErrSick) {
		t.Fatalf("xattr on the sick directory: %v, want ErrSick", err)
	}
	if after, _ := v.Stat(b1); after.ChangeCount != before.ChangeCount || after.Size != before.Size {
		t.Fatalf("refused changes changed the directory: %+v then %+v", before, after)
	}
	// The other directory is untouched by all this.
	if _, err := v.Names().Create(b2, "new", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if ents, err := v.Names().ReadDir(b2); err != nil || len(ents) != 61 {
		t.Fatalf("the healthy directory lists %d entries, %v", len(ents), err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	// xfs_repair sees the damage, mends it, and the volume is whole again.
	v = repairAndOpen(t, img)
	// Repair rebuilds or junks the damaged directory (its entries go to
	// lost+found); the rest is as it was.
	if _, err := v.Names().ReadDir(v.Root()); err != nil {
		t.Fatalf("after xfs_repair: %v", err)
	}
	if ents, err := v.Names().ReadDir(b2); err != nil || len(ents) != 61 {
		t.Fatalf("after xfs_repair the healthy directory lists %d entries, %v", len(ents), err)
	}
	if _, err := v.Names().Create(b2, "after-repair", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if s := v.Sick(); len(s) != 0 {
		t.Fatalf("sick after repair: %+v", s)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	oracle.Mount(t, img, true)
}

// TestSickAGF: a volume whose AG 2 AGF fails its CRC opens for writing
// with that AG marked sick; files are made and written in the other AGs,
// nothing is allocated in AG 2, and xfs_repair then mends the header.
func TestSickAGF(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "agf.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20, AgCount: 4}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := v.Geometry()
	agf := format.DaddrToByte(g.AgHeaderDaddr(2, 1))
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("damaged!"), agf+100); err != nil {
		t.Fatal(err)
	}
	f.Close()

	v, reported := openReporting(t, img, "a damaged AGF")
	defer func() { v.Close() }()
	if s := v.Sick(); len(s) != 1 || s[0].Kind != "ag" || s[0].AG != 2 || len(*reported) != 1 {
		t.Fatalf("sick: %+v (reported %+v), want AG 2", s, *reported)
	}
	st, err := v.Space().Statfs()
	if err != nil || st.SickAGs != 1 {
		t.Fatalf("statfs: %+v, %v", st, err)
	}
	for i := 0; i < 40; i++ {
		d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("d%d", i), xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatalf("mkdir %d with AG 2 sick: %v", i, err)
		}
		ino, err := v.Names().Create(d, "f", xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatalf("create in d%d: %v", i, err)
		}
		if _, err := v.Files().WriteAt(ino, make([]byte, 200<<10), 0); err != nil {
			t.Fatalf("write in d%d: %v", i, err)
		}
		for _, n := range []format.Ino{d, ino} {
			if ag, _ := g.InoToAg(n); ag == 2 {
				t.Fatalf("inode %d made in the sick AG", n)
			}
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.RepairFix(t, img)
	oracle.Repair(t, img)
	v, err = xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := v.Sick(); len(s) != 0 {
		t.Fatalf("sick after xfs_repair: %+v", s)
	}
}

// TestSickQuotaBlock: a quota file block that fails its CRC marks the
// records it holds sick at open, and the open goes on: changes charged
// to those projects are refused with ErrSick and change nothing, the
// projects of other blocks are charged as before, the scrub lists the
// block, the engine never writes it, and xfs_repair mends the volume.
// Project 0, in block 0, has no limits: while its record is sick its
// changes go on uncharged.
func TestSickQuotaBlock(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair)
	for _, fb := range []uint64{1, 0} {
		t.Run(fmt.Sprintf("block%d", fb), func(t *testing.T) { testSickQuotaBlock(t, fb) })
	}
}

func testSickQuotaBlock(t *testing.T, fb uint64) {
	img := filepath.Join(t.TempDir(), "dquot.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := v.Geometry()
	bs := g.BlockSize
	perBlock := uint32(quota.PerBlock(&g))
	// Project 1's record is in quota file block 0, project perBlock+1's
	// in block 1; hurt's is in block fb, the one damaged.
	fine, hurt := uint32(1), perBlock+1
	if fb == 0 {
		fine, hurt = hurt, fine
	}
	dirs := map[uint32]format.Ino{}
	for _, id := range []uint32{fine, hurt} {
		d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("p%d", id), xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Quotas().SetProject(d, id); err != nil {
			t.Fatal(err)
		}
		if err := v.Quotas().SetLimits(id, quota.Limits{InoHard: 1000}); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Names().Create(d, "before", xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		dirs[id] = d
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	qino := format.Ino(0)
	fmt.Sscan(oracle.DBSuperblock(t, img)["pquotino"], &qino)
	block1 := dbFileBlock(t, img, qino, int64(fb))
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	damagedAt := block1*int64(bs) + 300
	if _, err := f.WriteAt([]byte("damaged!"), damagedAt); err != nil {
		t.Fatal(err)
	}
	damaged := make([]byte, bs)
	f.ReadAt(damaged, block1*int64(bs))
	f.Close()

	v, reported := openReporting(t, img, "a damaged quota block")
	defer func() { v.Close() }()
	sick := v.Sick()
	first := uint32(fb) * perBlock
	if len(sick) != 1 || sick[0].Kind != "quota" || sick[0].QuotaBlock != fb || sick[0].Ino != qino ||
		sick[0].Projects != [2]uint32{first, first + perBlock - 1} || len(*reported) != 1 {
		t.Fatalf("sick %+v (reported %+v), want quota file block %d", sick, *reported, fb)
	}
	// Project 0's changes (the root's) go on, charged or not.
	if _, err := v.Names().Create(v.Root(), "project-0-file", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatalf("create in the root: %v", err)
	}
	for range 2 {
		if _, err := v.Names().Create(dirs[hurt], "new", xfs.Attrs{Mode: 0o644}); !errors.Is(err, xfs.ErrSick) {
			t.Fatalf("create charged to project %d: %v, want ErrSick", hurt, err)
		}
		if err := v.Quotas().Check(hurt, 1, 1); !errors.Is(err, xfs.ErrSick) {
			t.Fatalf("quota check of project %d: %v, want ErrSick", hurt, err)
		}
	}
	if _, err := v.Names().Lookup(dirs[hurt], "new"); !errors.Is(err, xfs.ErrNotFound) {
		t.Fatalf("the refused create left a name: %v", err)
	}
	if err := v.Quotas().SetLimits(hurt+1, quota.Limits{InoHard: 5}); !errors.Is(err, xfs.ErrSick) {
		t.Fatalf("limits of another project in the block: %v, want ErrSick", err)
	}
	// Reads of the sick projects' files, and everything of the others.
	if _, err := v.Names().Lookup(dirs[hurt], "before"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Create(dirs[fine], "new", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatalf("create charged to project %d: %v", fine, err)
	}
	if q, err := v.Quotas().Get(fine); err != nil || q.Usage.Inodes != 3 {
		t.Fatalf("project %d: %+v, %v; want 3 inodes", fine, q, err)
	}
	qs, err := v.Quotas().List()
	if err != nil {
		t.Fatalf("listing quotas with a sick block: %v", err)
	}
	for _, q := range qs {
		if q.ID >= first && q.ID < first+perBlock {
			t.Fatalf("the listing has project %d, whose record is damaged", q.ID)
		}
	}
	b, err := v.Space().Scrub(t.Context(), xfs.ScrubCursor{}, 1<<20)
	if err != nil || !b.Next.Done || b.Damaged != 1 || b.Damage[0].Kind != "quota" {
		t.Fatalf("scrub: %+v, %v; want the quota block listed", b, err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	now := make([]byte, bs)
	if f, err := os.Open(img); err == nil {
		f.ReadAt(now, block1*int64(bs))
		f.Close()
	}
	if !bytes.Equal(now, damaged) {
		t.Fatal("the engine wrote the damaged quota block")
	}
	v = repairAndOpen(t, img)
	if s := v.Sick(); len(s) != 0 {
		t.Fatalf("sick after repair: %+v", s)
	}
	if _, err := v.Names().Create(dirs[hurt], "after-repair", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if q, err := v.Quotas().Get(hurt); err != nil || q.Usage.Inodes != 3 {
		t.Fatalf("project %d after repair: %+v, %v; want 3 inodes, counted again", hurt, q, err)
	}
}

// TestSickInodeTreesInTwoAGs: with the free-inode btree roots of two AGs
// damaged, new directories (which the allocator spreads over the AGs)
// are all made: each change that meets a damaged tree marks its AG sick
// and runs again elsewhere, as many times as it meets one.
func TestSickInodeTreesInTwoAGs(t *testing.T) {
	oracle.Require(t, oracle.ToolDB)
	img := filepath.Join(t.TempDir(), "finobt.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20, AgCount: 4}); err != nil {
		t.Fatal(err)
	}
	sb := oracle.DBSuperblock(t, img)
	var agblocks, bs int64
	fmt.Sscan(sb["agblocks"], &agblocks)
	fmt.Sscan(sb["blocksize"], &bs)
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ag := range []int64{2, 3} {
		var root int64
		fmt.Sscan(oracle.ParseFields(oracle.DB(t, img, fmt.Sprintf("agi %d", ag), "print free_root"))["free_root"], &root)
		if root == 0 {
			t.Fatalf("AG %d has no free-inode btree root", ag)
		}
		if _, err := f.WriteAt([]byte("damaged!"), (ag*agblocks+root)*bs+100); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	v, reported := openReporting(t, img, "two damaged free-inode btrees")
	defer func() { v.Close() }()
	for i := range 16 {
		if _, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("d%02d", i), xfs.Attrs{Mode: 0o755}); err != nil {
			t.Fatalf("mkdir %d: %v (sick: %+v)", i, err, v.Sick())
		}
	}
	sick := v.Sick()
	if len(sick) != 2 || sick[0].AG != 2 || sick[1].AG != 3 || len(*reported) != 2 {
		t.Fatalf("sick %+v (reported %+v), want AGs 2 and 3", sick, *reported)
	}
}
