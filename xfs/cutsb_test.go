package xfs_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestCutBeforeFirstLogRecord: the power fails during a Sync after the
// superblock, whose counters include lazily committed changes, was
// flushed (with the data ahead of the log write) but before the log record
// of those changes was written. Had the log still looked cleanly
// unmounted, the kernel would have trusted those counters and xfs_repair
// would report them (a 2000-case power-cut run found this). The engine
// logs the superblock when it opens a volume for writing, so the log is
// dirty, the kernel recovers and recounts, and repair is clean.
func TestCutBeforeFirstLogRecord(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	dir := t.TempDir()
	base := filepath.Join(dir, "base.img")
	v, f := newFaultVolume(t, base, xfs.Options{LazyCommits: true})
	for i := 0; i < 4; i++ {
		ino, err := v.Names().Create(v.Root(), fmt.Sprint("f", i), xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Files().WriteAt(ino, []byte("data"), 0); err != nil {
			t.Fatal(err)
		}
	}
	writes, _ := f.Stats()
	f.CutAt(writes + 2) // the superblock write lands, the log write does not
	if err := v.Sync(); err == nil {
		t.Fatal("Sync succeeded past the power cut")
	}
	xfs.Abandon(v)
	img := filepath.Join(dir, "crash.img")
	oracle.CopySparse(t, base, img)
	if err := f.Image(img, dev.Crash{}); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own.img")
	oracle.CopySparse(t, img, own)
	if got := kernelReplay(t, img); len(got) != 1 {
		t.Errorf("the kernel's replay shows %d entries, want the root alone", len(got))
	}
	v, err := xfs.Open(own, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, own)
}
