package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// Regression tests for engine bugs found while testing the write commands.

// Freeing many extents that do not touch each other makes the free-space
// btrees split; the blocks for the splits come from the AGFL, and
// agfCtx.freeExtent (xfs/alloc.go) never tops the AGFL up first the way the
// kernel's __xfs_free_extent does with xfs_free_extent_fix_freelist. After
// about a thousand such frees in one AG, agflGet fails with "no space left
// on volume: AG 1 free list is empty" on a nearly empty volume. The failure
// hits during inactivation, after the unlink transaction committed: the
// name is gone, the inode stays on the AGI unlinked list with no links, and
// xfs_repair -n reports "agi unlinked bucket N is ... in ag 1". Every later
// unlink in that AG failed the same way. Fixed: freeExtent now tops the
// free list up first.
func TestEngineBugFragmentedFreesEmptyAGFL(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	dir := t.TempDir()
	img := filepath.Join(dir, "vol.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	volMust(t, os.Mkdir(src, 0o755))
	const n = 3000
	for i := 0; i < n; i++ {
		volMust(t, os.WriteFile(filepath.Join(src, fmt.Sprintf("file-%04d", i)), []byte{byte(i)}, 0o644))
	}
	okSilent(t, "vol", "put", img, src, "d")
	oracle.Repair(t, img)
	// Every other file: each freed block is cut off from its neighbours.
	args := []string{"vol", "rm", img}
	for i := 0; i < n; i += 2 {
		args = append(args, fmt.Sprintf("d/file-%04d", i))
	}
	if r := runCLI(t, args...); r.code != 0 {
		t.Errorf("rm of %d of %d one-block files: status %d, first error: %.200s", n/2, n, r.code, r.stderr)
	}
	oracle.Repair(t, img)
}
