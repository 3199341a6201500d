//go:build linux

package xfs_test

import (
	"context"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestTrimBlockDevice: a volume opened through a loop device (a block
// device: discards are BLKDISCARD) gives deleted files' space back to the
// loop's backing file when trimmed, and the files kept read back through
// the engine and the kernel, with xfs_repair clean.
func TestTrimBlockDevice(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	img := formatImage(t, mkfs.Options{Size: 128 << 20})
	loop, detach := oracle.Loop(t, img)
	v, err := xfs.Open(loop, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	f := writeFragmented(t, v, 16, 64, 16<<10, 2) // 16 MiB in 16 KiB pieces
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	free0 := freeBytes(t, v)
	f.remove(t, v, func(i int) bool { return i%2 == 0 })
	freed := freeBytes(t, v) - free0
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	before := du(t, img)
	st, err := v.Space().Trim(context.Background(), xfs.TrimOptions{OnlyFreed: true})
	if err != nil {
		if st.Unsupported {
			t.Skipf("the loop device here has no discard (BLKDISCARD): %v", err)
		}
		t.Fatal(err)
	}
	after := du(t, img)
	t.Logf("%s: freed %d KiB; backing file %d KiB before the pass, %d KiB after; %d requests, %d KiB discarded",
		loop, freed>>10, before>>10, after>>10, st.Requests, st.DiscardedBytes>>10)
	if (before-after)*100 < freed*99 || st.Errors != 0 {
		t.Fatalf("the backing file gave back %d of %d freed bytes; %+v", before-after, freed, st)
	}
	f.check(t, v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	detach()
	oracle.Repair(t, img)
	f.checkKernel(t, img)
}
