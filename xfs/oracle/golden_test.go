package oracle

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"
)

var update = flag.Bool("update", false, "regenerate the golden images in testdata/golden")

// TestGenerateGolden rebuilds testdata/golden/<variant>.img.zst and
// <variant>.json with the Small preset. It runs only with -update or
// XFS3_UPDATE_GOLDEN=1:
//
//	go test ./xfs/oracle -run TestGenerateGolden -update
func TestGenerateGolden(t *testing.T) {
	if !*update && os.Getenv("XFS3_UPDATE_GOLDEN") != "1" {
		t.Skip("golden images are regenerated only with -update or XFS3_UPDATE_GOLDEN=1")
	}
	Require(t, ToolMkfs, ToolRepair, ToolDB, ToolMount)
	dir, err := GoldenDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range Variants {
		t.Run(v.Name, func(t *testing.T) {
			img, snap := BuildFixture(t, t.TempDir(), v, Small)
			zst, js, err := GoldenPaths(v.Name)
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteGolden(zst, img); err != nil {
				t.Fatal(err)
			}
			if err := snap.WriteFile(js); err != nil {
				t.Fatal(err)
			}
			checkGoldenSize(t, zst, 1<<20)
		})
	}
}

// checkGoldenSize logs the size of a new golden file and fails the test
// if it exceeds limit bytes.
func checkGoldenSize(t *testing.T, path string, limit int64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes", filepath.Base(path), st.Size())
	if st.Size() > limit {
		t.Errorf("%s is %d bytes, want well under %d KiB", path, st.Size(), limit>>10)
	}
}

// TestGolden checks every golden image: it must decompress, pass
// xfs_repair -n, have the variant's geometry, and show the kernel exactly
// the recorded snapshot.
func TestGolden(t *testing.T) {
	geometry := map[string]map[string]string{
		"default": {"blocksize": "4096", "inodesize": "512", "dirblklog": "0"},
		"b1k":     {"blocksize": "1024", "inodesize": "512", "dirblklog": "2"},
		"i1k":     {"blocksize": "4096", "inodesize": "1024", "dirblklog": "0"},
		"n16k":    {"blocksize": "4096", "inodesize": "512", "dirblklog": "2"},
	}
	for _, v := range Variants {
		t.Run(v.Name, func(t *testing.T) {
			Require(t, ToolRepair, ToolDB, ToolMount)
			img, want := LoadGolden(t, v.Name)
			if len(want) < 100 {
				t.Fatalf("golden snapshot has only %d entries", len(want))
			}
			Repair(t, img)
			sb := DBSuperblock(t, img)
			for k, val := range geometry[v.Name] {
				if sb[k] != val {
					t.Errorf("superblock %s = %q, want %q", k, sb[k], val)
				}
			}
			mnt := Mount(t, img, true)
			got, err := SnapshotDir(mnt)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range want.Diff(got) {
				t.Error(d)
			}
		})
	}
}

// TestOpenGoldenCopies: every OpenGolden is a whole, separate copy of the
// compressed image, holes where it has zero blocks, however the copies
// before it were changed (the decoded image is kept between calls).
func TestOpenGoldenCopies(t *testing.T) {
	zst, _, err := GoldenPaths("default")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(zst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(dec)
	dec.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		img := OpenGolden(t, zst)
		got, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("copy %d differs from the decompressed image (%d bytes against %d)", i, len(got), len(want))
		}
		var st syscall.Stat_t
		if err := syscall.Stat(img, &st); err != nil {
			t.Fatal(err)
		}
		if allocated := st.Blocks * 512; allocated >= int64(len(want))/2 {
			t.Errorf("copy %d takes %d bytes of disk for a %d-byte image: its zero blocks are not holes", i, allocated, len(want))
		}
		// The next copy must not see this one's change.
		if err := os.WriteFile(img, bytes.Repeat([]byte{0xa5}, 1<<16), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
