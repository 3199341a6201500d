package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
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
		d, err := v.Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		for ; ; files++ {
			ino, err := v.Create(d, fmt.Sprintf("f%d", files), xfs.Attrs{Mode: 0o644})
			if err == nil {
				_, err = v.WriteAt(ino, bytes.Repeat([]byte{1}, 4096*(1+rng.Intn(4))), 0)
			}
			if errors.Is(err, xfs.ErrNoSpace) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < files; i += 2 {
			if err := v.Unlink(d, fmt.Sprintf("f%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		btrees := 0
	big:
		for n := 0; n < 40; n++ {
			ino, err := v.Create(d, fmt.Sprintf("big%d", n), xfs.Attrs{Mode: 0o644})
			if err != nil {
				t.Fatal(err)
			}
			size := int64(5<<20 + rng.Intn(1<<20))
			if err := v.Preallocate(ino, size); errors.Is(err, xfs.ErrNoSpace) {
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
				if _, err := v.WriteAt(ino, p, off); errors.Is(err, xfs.ErrNoSpace) {
					break big
				} else if err != nil {
					t.Fatalf("seed %d file %d, write at %d: %v", seed, n, off, err)
				}
			}
			if n%3 == 0 {
				if err := v.Unlink(d, fmt.Sprintf("big%d", n)); err != nil {
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
