package xfs_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// TestReplayOverNewerDirectoryBlocks: a node-form directory's blocks are
// logged by changed chunks within an epoch (xlog), written in place at a
// newer state before the tail moved, then changed again, and the power
// fails with any share of those in-place writes on disk, the last one
// torn or not. Both recoveries, the kernel's and ours, must rebuild every
// block from the epoch's whole image: xfs_repair -n is clean and each
// shows exactly the names the forced unlinks left.
func TestReplayOverNewerDirectoryBlocks(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	f, closeBase, err := dev.OpenFault(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBase() })
	v, err := xfs.OpenDevice(f, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	// 1,500 long names: 18 data blocks, leaf blocks under a node and a
	// free index.
	left := map[string]bool{}
	var names []string
	for i := 0; i < 1500; i++ {
		name := fmt.Sprintf("a-rather-long-object-name-%06d", i)
		if _, err := v.Names().Create(d, name, xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		left[name] = true
	}
	if err := v.Sync(); err != nil { // the next batch begins an epoch
		t.Fatal(err)
	}
	unlink := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := v.Names().Unlink(d, names[i*7%len(names)]); err != nil {
				t.Fatal(err)
			}
			delete(left, names[i*7%len(names)])
			if i%5 == 4 {
				if err := v.Force(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := v.Force(); err != nil {
			t.Fatal(err)
		}
	}
	unlink(0, 300)
	if err := xfs.WriteBackNow(v); err != nil {
		t.Fatal(err)
	}
	unlink(300, 500)
	pending := f.Pending()
	logOff, logLen := xfs.LogRange(v)
	if err := xfs.Abandon(v); err != nil {
		t.Fatal(err)
	}
	if pending < 4 {
		t.Fatalf("only %d unflushed writes: nothing was written in place ahead of the tail", pending)
	}
	// What recovery replays holds directory blocks by changed chunks,
	// each after a whole image of its block.
	s, err := (&xlog.Log{R: f, Start: logOff, Blocks: uint32(logLen / format.BBSize)}).Scan()
	if err != nil {
		t.Fatal(err)
	}
	whole, partial := 0, 0
	for _, tr := range s.Trans {
		for _, it := range tr.Items {
			bf, err := format.DecodeBufLogFormat(it.Regions[0])
			if err != nil || bf.Flags&format.BlfCancel != 0 {
				continue // not a buffer item, or a cancel
			}
			switch bf.Blft() {
			case format.BlftDir3Data, format.BlftDir3LeafN, format.BlftDir3Free, format.BlftDa3Node:
				if runs := bf.Runs(); len(runs) == 1 && runs[0] == [2]int{0, int(bf.Len) * format.BBSize / format.BlfChunk} {
					whole++
				} else {
					partial++
				}
			}
		}
	}
	if whole == 0 || partial == 0 {
		t.Fatalf("the log holds %d whole and %d partial directory block images: the premise failed", whole, partial)
	}
	t.Logf("%d unflushed writes; the log holds %d whole and %d partial directory block images", pending, whole, partial)
	want := slices.Sorted(maps.Keys(left))
	for _, crash := range []dev.Crash{{Keep: pending}, {Keep: pending, Tear: true}, {Keep: pending / 3, Tear: true}, {Keep: 2 * pending / 3, Tear: true}} {
		t.Run(fmt.Sprintf("keep%d-of-%d-tear%v", crash.Keep, pending, crash.Tear), func(t *testing.T) {
			dir := t.TempDir()
			kimg, eimg := filepath.Join(dir, "kernel.img"), filepath.Join(dir, "engine.img")
			oracle.CopySparse(t, base, kimg)
			if err := f.Image(kimg, crash); err != nil {
				t.Fatal(err)
			}
			oracle.CopySparse(t, kimg, eimg)
			checkNames(t, "the kernel's replay", want, kernelReplay(t, kimg))

			ev, err := xfs.Open(eimg, xfs.Options{})
			if err != nil {
				t.Fatalf("our recovery: %v", err)
			}
			ents, err := ev.Names().ReadDir(d)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				if e.Name != "." && e.Name != ".." {
					got = append(got, e.Name)
				}
			}
			if err := ev.Close(); err != nil {
				t.Fatal(err)
			}
			if slices.Sort(got); !slices.Equal(got, want) {
				t.Fatalf("our recovery shows %d names in d, want %d", len(got), len(want))
			}
			oracle.Repair(t, eimg)
		})
	}
}

// checkNames compares the names snap shows in directory d with want.
func checkNames(t *testing.T, what string, want []string, snap oracle.Snapshot) {
	t.Helper()
	var got []string
	for _, e := range snap {
		if name, ok := strings.CutPrefix(e.Path, "d/"); ok {
			got = append(got, name)
		}
	}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Fatalf("%s shows %d names in d, want %d", what, len(got), len(want))
	}
}
