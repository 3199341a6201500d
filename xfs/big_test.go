package xfs_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestBigDirectoryAndFragmentedFiles grows a directory to 50,000 entries
// (node form with a multi-level da-btree) and two files to thousands of
// extents each by interleaved writes; checks with the oracles; then
// shrinks the directory back to empty (short form) and the files to
// nothing, and checks again. Calls do not force the log each
// (LazyCommits, as under load): the test is about the structures, and
// 100,000 durable log writes were most of its time.
func TestBigDirectoryAndFragmentedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("slow; run without -short")
	}
	img := filepath.Join(t.TempDir(), "big.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 2 << 30}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := v.Names().Mkdir(v.Root(), "big", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	const entries = 50000
	for i := 0; i < entries; i++ {
		if _, err := v.Names().Create(dir, fmt.Sprintf("object-%07d-with-a-longer-name", i), xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	a, err := v.Names().Create(v.Root(), "frag-a", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.Names().Create(v.Root(), "frag-b", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	const pieces = 3000
	for i := 0; i < pieces; i++ {
		for k, ino := range []format.Ino{a, b} {
			if _, err := v.Files().WriteAt(ino, bytes.Repeat([]byte{byte(i + k)}, bs), int64(i*bs)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, ino := range []format.Ino{a, b} {
		st, _ := v.Stat(ino)
		if st.Extents < 1000 || st.DataFormat != "btree" {
			t.Fatalf("interleaved writes left %d extents (%s)", st.Extents, st.DataFormat)
		}
		t.Logf("fragmented file: %d extents", st.Extents)
	}
	check := func(what string) {
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		oracle.Require(t, oracle.ToolRepair, oracle.ToolMount, oracle.ToolDB)
		oracle.Repair(t, img)
		ro := openRO(t, img)
		ours := engineSnapshot(t, ro)
		ino, _ := ro.Names().LookupPath("big", false)
		ro.Close()
		t.Logf("%s: directory in %s form", what, oracle.DirFormat(t, img, uint64(ino)))
		mnt := oracle.Mount(t, img, true)
		kernel, err := oracle.SnapshotDir(mnt)
		oracle.Unmount(t, mnt)
		if err != nil {
			t.Fatal(err)
		}
		requireSame(t, kernel, ours)
		if v, err = xfs.Open(img, xfs.Options{LazyCommits: true}); err != nil {
			t.Fatal(err)
		}
	}
	check("grown")
	for i := 0; i < entries; i++ {
		if err := v.Names().Unlink(dir, fmt.Sprintf("object-%07d-with-a-longer-name", i)); err != nil {
			t.Fatalf("unlink %d: %v", i, err)
		}
	}
	for _, ino := range []format.Ino{a, b} {
		if err := v.Files().Truncate(ino, 0); err != nil {
			t.Fatal(err)
		}
	}
	check("shrunk")
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if got := oracle.DirFormat(t, img, uint64(dir)); got != "shortform" {
		t.Errorf("empty directory left in %s form", got)
	}
}
