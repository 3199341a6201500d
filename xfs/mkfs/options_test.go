package mkfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestBadOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"block size not a power of two", Options{BlockSize: 3000}},
		{"block size below the v5 minimum", Options{BlockSize: 512}},
		{"block size too large", Options{BlockSize: 128 << 10}},
		{"inode size below the v5 minimum", Options{InodeSize: 256}},
		{"inode size too large", Options{InodeSize: 4096}},
		{"inode size not a power of two", Options{InodeSize: 768}},
		{"inode size over half a block", Options{BlockSize: 1024, InodeSize: 1024}},
		{"sector size too small", Options{SectorSize: 256}},
		{"sector size larger than a block", Options{BlockSize: 4096, SectorSize: 8192}},
		{"sector size not a power of two", Options{SectorSize: 1000}},
		{"dir block smaller than a block", Options{BlockSize: 8192, DirBlockSize: 4096}},
		{"dir block below 4 KiB", Options{BlockSize: 1024, DirBlockSize: 2048}},
		{"dir block too large", Options{DirBlockSize: 128 << 10}},
		{"one AG", Options{AgCount: 1}},
		{"negative AG count", Options{AgCount: -3}},
		{"label too long", Options{Label: "thirteen-char"}},
		{"negative size", Options{Size: -1}},
		{"size too small", Options{Size: 64<<20 - 1}},
		{"AGs too small", Options{Size: 1 << 30, AgCount: 100}},
		{"AGs too large", Options{Size: 4 << 40, AgCount: 2}},
		{"no room for the log with 64 KiB blocks", Options{Size: 64 << 20, BlockSize: 65536}},
	} {
		o := c.o
		if o.Size == 0 {
			o.Size = 1 << 30
		}
		_, err := Plan(o, 0)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Plan(%+v) error %v, want ErrInvalid", c.name, o, err)
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
}

func TestFormatErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.img")
	if _, err := Format(missing, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Format of a missing file without a size: %v, want ErrInvalid", err)
	}
	if _, err := Format(missing, Options{Size: 1 << 20}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Format with a 1 MiB size: %v, want ErrInvalid", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Format left %s behind: %v", missing, err)
	}
	small := filepath.Join(dir, "small.img")
	if err := os.WriteFile(small, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Format(small, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Format of a 1 MiB file: %v, want ErrInvalid", err)
	}
	if st, err := os.Stat(small); err != nil || st.Size() != 1<<20 {
		t.Errorf("a failed Format changed %s: %v", small, err)
	}
	if _, err := Format(dir, Options{Size: 1 << 30}); err == nil {
		t.Errorf("Format of a directory succeeded")
	}
	if _, err := Format(missing, Options{Size: 1 << 30, BlockSize: 3000}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Format with a bad block size: %v, want ErrInvalid", err)
	}
}

// TestFormatResult checks what Format reports and writes without any
// external tool: the geometry, the counters and a sparse file that holds
// only metadata.
func TestFormatResult(t *testing.T) {
	img := filepath.Join(t.TempDir(), "v.img")
	uuid := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	res, err := Format(img, Options{Size: 1 << 30, UUID: uuid, Label: "xfs3"})
	if err != nil {
		t.Fatal(err)
	}
	want := Result{UUID: uuid, BlockSize: 4096, SectorSize: 512, InodeSize: 512, DirBlockSize: 4096,
		DBlocks: 262144, AgCount: 4, AgBlocks: 65536, IMaxPct: 25, LogStart: 131078, LogOffset: 131078 * 4096,
		LogBlocks: 16384, LogAg: 2, MinLogBlocks: res.MinLogBlocks, RootIno: 128, Inodes: 64, FreeInodes: 61,
		FreeBlocks: 245728, Reflink: true}
	if *res != want {
		t.Errorf("Format reported\n%+v\nwant\n%+v", *res, want)
	}
	plan, err := Plan(Options{Size: 1 << 30, UUID: uuid}, 0)
	if err != nil || *plan != *res {
		t.Errorf("Plan = %+v, %v; want what Format reported", plan, err)
	}
	st, err := os.Stat(img)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 1<<30 {
		t.Errorf("file size %d, want %d", st.Size(), 1<<30)
	}
	// Only metadata is written: a few blocks per AG, the inode chunk and
	// the log's first record.
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Blocks*512 > 2<<20 {
		t.Errorf("a fresh 1 GiB volume uses %d bytes on the host, want a sparse file", sys.Blocks*512)
	}

	// Without reflink the refcount root is missing from every AG: the log
	// starts a block earlier and each AG has one more free block.
	want.LogStart, want.LogOffset, want.FreeBlocks, want.Reflink = 131077, 131077*4096, 245732, false
	plain, err := Plan(Options{Size: 1 << 30, UUID: uuid, NoReflink: true}, 0)
	if err != nil || *plain != want {
		t.Errorf("Plan without reflink = %+v, %v; want\n%+v", plain, err, want)
	}
}
