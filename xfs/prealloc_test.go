package xfs_test

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestPreallocateGivesOneExtent writes objects whose size is known in
// advance, interleaved so that plain writes would fragment them, and
// requires each to end up in one extent; also a preallocation left partly
// unwritten reads as zeros through the engine and the kernel.
func TestPreallocateGivesOneExtent(t *testing.T) {
	img := filepath.Join(t.TempDir(), "pre.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	rng := rand.New(rand.NewSource(5))
	var inos []format.Ino
	var datas [][]byte
	for i := 0; i < 4; i++ {
		ino, err := v.Names().Create(v.Root(), string(rune('a'+i)), xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Files().Preallocate(ino, size); err != nil {
			t.Fatal(err)
		}
		d := make([]byte, size)
		rng.Read(d)
		inos, datas = append(inos, ino), append(datas, d)
	}
	for off := 0; off < size; off += 64 << 10 {
		for i, ino := range inos {
			if _, err := v.Files().WriteAt(ino, datas[i][off:off+64<<10], int64(off)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, ino := range inos {
		st, _ := v.Stat(ino)
		if st.Extents != 1 || st.Size != size {
			t.Errorf("object %d: %d extents, size %d", i, st.Extents, st.Size)
		}
	}
	// Preallocated beyond what gets written: the rest reads as zeros.
	part, err := v.Names().Create(v.Root(), "partial", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Files().Preallocate(part, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Files().WriteAt(part, []byte("head"), 0); err != nil {
		t.Fatal(err)
	}
	if err := v.Files().Truncate(part, 256<<10); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	for i := range inos {
		got, err := os.ReadFile(filepath.Join(mnt, string(rune('a'+i))))
		if err != nil || !bytes.Equal(got, datas[i]) {
			t.Errorf("kernel reads object %d wrongly: %v", i, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(mnt, "partial"))
	want := append([]byte("head"), make([]byte, 256<<10-4)...)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("kernel reads the partly written preallocation wrongly: %v", err)
	}
}

// TestProjectInheritance: a directory with a project ID and the inherit
// flag passes both to new directories and its project ID to new files.
func TestProjectInheritance(t *testing.T) {
	img := filepath.Join(t.TempDir(), "proj.img")
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount, oracle.ToolDB, oracle.ToolRepair)
	oracle.Mkfs(t, img, 512<<20)
	mnt := oracle.Mount(t, img, false)
	if err := os.Mkdir(filepath.Join(mnt, "bucket"), 0o755); err != nil {
		t.Fatal(err)
	}
	oracle.Unmount(t, mnt)
	// Set the project ID and inherit flag the way xfs_quota's "project -s"
	// does (the kernel here has no quota support, so use xfs_db).
	v0 := openRO(t, img)
	bucket, err := v0.Names().LookupPath("bucket", false)
	v0.Close()
	if err != nil {
		t.Fatal(err)
	}
	oracle.DBWrite(t, img, "inode "+itoa(uint64(bucket)), "write core.projid_lo 42", "write core.projinherit 1")
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	file, err := v.Names().Create(bucket, "object", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := v.Names().Mkdir(bucket, "prefix", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	deep, err := v.Names().Create(sub, "deep", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	for _, ino := range []format.Ino{file, sub, deep} {
		st, _ := v.Stat(ino)
		if st.ProjID != 42 {
			t.Errorf("inode %d has project %d, want 42", ino, st.ProjID)
		}
		if st.IsDir() != (st.Flags&format.DiflagProjInherit != 0) {
			t.Errorf("inode %d: inherit flag %v on a dir=%v", ino, st.Flags&format.DiflagProjInherit != 0, st.IsDir())
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	f := oracle.InodeFields(t, img, uint64(deep), "core.projid_lo")
	if f["core.projid_lo"] != "42" {
		t.Errorf("xfs_db sees project %q", f["core.projid_lo"])
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
