package xfs_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestOpenReadWrite opens a volume for writing, closes it, and requires
// xfs_repair to find nothing and the counters to be unchanged. (The first
// open of a fresh volume gives it project quota: a quota inode and a
// block of records. The open after that must change nothing.)
func TestOpenReadWrite(t *testing.T) {
	img := filepath.Join(t.TempDir(), "rw.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	first, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := xfs.Open(img, xfs.Options{}); !errors.Is(err, dev.ErrInUse) {
		t.Fatalf("second writer: %v", err)
	}
	// The writer's log is dirty from its open on: a reader is told why.
	if _, err := xfs.Open(img, xfs.Options{ReadOnly: true}); !errors.Is(err, dev.ErrInUse) {
		t.Fatalf("reader next to a writer: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	ro := openRO(t, img)
	after, _ := ro.Space().Statfs()
	if before != after {
		t.Fatalf("statfs changed across a read-write open: %+v -> %+v", before, after)
	}
	if sb := ro.Superblock(); sb.FDBlocks != after.FreeBlocks || sb.ICount != after.Inodes || sb.IFree != after.FreeInodes {
		t.Fatalf("superblock counters %d/%d/%d, AG headers %d/%d/%d", sb.FDBlocks, sb.ICount, sb.IFree, after.FreeBlocks, after.Inodes, after.FreeInodes)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}
