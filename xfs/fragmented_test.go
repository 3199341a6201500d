package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestPreallocOnFragmentedSpace fills a volume with small files, frees
// every other one and then preallocates and writes files of a few MiB, so
// that each gets hundreds of extents under a bmbt whose blocks come from
// space the free-space btrees just gave up. This found a free-space btree
// block taken back as a bmbt block in the same transaction and written with
// the short-form CRC (the second volume of a run hit it: new directories
// rotate over the AGs process-wide). xfs_repair checks every volume.
func TestPreallocOnFragmentedSpace(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	for seed := int64(1); seed <= 2; seed++ {
		img := filepath.Join(t.TempDir(), "frag.img")
		if _, err := mkfs.Format(img, mkfs.Options{Size: 96 << 20}); err != nil {
			t.Fatal(err)
		}
		v, err := xfs.Open(img, xfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(seed))
		d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		for ; ; files++ {
			ino, err := v.Names().Create(d, fmt.Sprintf("f%d", files), xfs.Attrs{Mode: 0o644})
			if err == nil {
				_, err = v.Files().WriteAt(ino, bytes.Repeat([]byte{1}, 4096*(1+rng.Intn(4))), 0)
			}
			if errors.Is(err, xfs.ErrNoSpace) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < files; i += 2 {
			if err := v.Names().Unlink(d, fmt.Sprintf("f%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		btrees := 0
	big:
		for n := 0; n < 40; n++ {
			ino, err := v.Names().Create(d, fmt.Sprintf("big%d", n), xfs.Attrs{Mode: 0o644})
			if err != nil {
				t.Fatal(err)
			}
			size := int64(5<<20 + rng.Intn(1<<20))
			if err := v.Files().Preallocate(ino, size); errors.Is(err, xfs.ErrNoSpace) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if st, _ := v.Stat(ino); st.DataFormat == "btree" {
				btrees++
			}
			buf := bytes.Repeat([]byte{byte(n)}, 1<<20)
			for off := int64(0); off < size; off += int64(len(buf)) {
				p := buf[:min(int64(len(buf)), size-off)]
				if _, err := v.Files().WriteAt(ino, p, off); errors.Is(err, xfs.ErrNoSpace) {
					break big
				} else if err != nil {
					t.Fatalf("seed %d file %d, write at %d: %v", seed, n, off, err)
				}
			}
			if n%3 == 0 {
				if err := v.Names().Unlink(d, fmt.Sprintf("big%d", n)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if btrees == 0 {
			t.Errorf("seed %d: no preallocation needed a bmbt; the test lost its point", seed)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		oracle.Repair(t, img)
	}
}

// TestWriteConvertsEveryRecordOfALeaf: a preallocation scattered over 40
// single free blocks (a bmbt with one leaf under the inode root) is written
// whole in one call, which changes every record of that leaf. Deleting
// the old records before inserting the new ones emptied the leaf part-way
// and the next lookup refused it ("empty block at level 0").
func TestWriteConvertsEveryRecordOfALeaf(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "leaf.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bs := int64(v.Geometry().BlockSize)
	fs, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	// Ballast takes nearly all free space; holes punched in it every other
	// block leave 40 free single blocks and nothing bigger.
	ballast, err := v.Names().Create(v.Root(), "ballast", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	size := int64(fs.FreeBlocks-fs.ReservedBlocks-256) * bs
	if err := v.Files().Preallocate(ballast, size); err != nil {
		t.Fatal(err)
	}
	for {
		err := v.Files().Preallocate(ballast, size+bs)
		if errors.Is(err, xfs.ErrNoSpace) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		size += bs
	}
	full, _ := v.Space().Statfs()
	for i := int64(0); i < 40; i++ {
		if err := v.Files().PunchHole(ballast, (1000+2*i)*bs, bs); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Sync(); err != nil { // freed blocks stop being busy
		t.Fatal(err)
	}
	t.Logf("%d blocks free when full, then 40 single blocks punched", full.FreeBlocks)
	f, err := v.Names().Create(v.Root(), "scattered", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), int(40*bs/16))
	if err := v.Files().Preallocate(f, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	st, _ := v.Stat(f)
	if st.DataFormat != "btree" || st.Extents < 30 {
		t.Fatalf("preallocation is %s with %d extents; the test needs a scattered bmbt", st.DataFormat, st.Extents)
	}
	if _, err := v.Files().WriteAt(f, data, 0); err != nil {
		t.Fatalf("writing over %d unwritten extents at once: %v", st.Extents, err)
	}
	got := make([]byte, len(data))
	if _, err := v.Files().ReadAt(f, got, 0); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	if b, err := os.ReadFile(filepath.Join(mnt, "scattered")); err != nil || !bytes.Equal(b, data) {
		t.Errorf("the kernel reads other bytes (%v)", err)
	}
}
