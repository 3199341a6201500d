package xfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestTrimPowerCut cuts the power at every write of a trim pass that
// follows deletes committed lazily (the pass makes them durable first,
// then discards in batches of 4 records): the log writes, the in-place
// write-back and every discard. The disk keeps what was flushed plus a
// random prefix or subset of the rest, the last write torn or not. After
// recovery every file that was kept reads back as written, every deleted
// one is either gone or whole, and xfs_repair is clean; every eighth case
// the kernel reads the files too. XFS3_TRIM_POWERCUT_EVERY=n cuts at every
// n-th write only.
func TestTrimPowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	every := max(envInt("XFS3_TRIM_POWERCUT_EVERY", 1), 1)
	base, v := openImage(t, mkfs.Options{Size: 64 << 20})
	f := writeFragmented(t, v, 16, 8, 8<<10, 4)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	keep := func(i int) bool { return i%2 == 1 }

	// run opens base on a Fault device, deletes and trims, cutting the
	// power at write cutAt (0: never); it returns the device and the
	// writes before the pass began.
	run := func(cutAt int) (*dev.Fault, int) {
		fd, closeBase, err := dev.OpenFault(base)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeBase() })
		fd.CutAt(cutAt)
		v, err := xfs.OpenDevice(fd, xfs.Options{LazyCommits: true})
		if err != nil {
			t.Fatal(err) // the cut is always later than the open
		}
		g := &fragmented{dir: f.dir, names: append([]string(nil), f.names...), data: map[string][]byte{}}
		g.remove(t, v, keep)
		start, _ := fd.Stats()
		_, err = v.Space().Trim(context.Background(), xfs.TrimOptions{BatchRecords: 4})
		if err != nil && !fd.IsCut() {
			t.Fatal(err)
		}
		if err := xfs.Abandon(v); err != nil {
			t.Fatal(err)
		}
		return fd, start
	}
	dry, start := run(0)
	end, _ := dry.Stats()
	if discards := len(dry.Discarded()); discards < 20 {
		t.Fatalf("the pass made only %d discards; the test lost its point", discards)
	}
	t.Logf("the pass writes %d times (%d discards) after %d writes of open and deletes", end-start, len(dry.Discarded()), start)

	rng := rand.New(rand.NewSource(1))
	for cut, n := start+1, 0; cut <= end; cut, n = cut+every, n+1 {
		fd, _ := run(cut)
		crash := dev.Crash{Keep: rng.Intn(fd.Pending() + 1), Tear: rng.Intn(2) == 0}
		subset := rng.Intn(2) == 0
		if subset {
			pick := rand.New(rand.NewSource(int64(cut)))
			crash.Subset = func(int) bool { return pick.Intn(2) == 0 }
		}
		kernel := n%8 == 0
		t.Run(fmt.Sprintf("cut%d", cut), func(t *testing.T) {
			t.Logf("keeping %d of %d unflushed writes (a random subset: %v), tear %v", crash.Keep, fd.Pending(), subset, crash.Tear)
			img := filepath.Join(t.TempDir(), "crash.img")
			oracle.CopySparse(t, base, img)
			if err := fd.Image(img, crash); err != nil {
				t.Fatal(err)
			}
			checkTrimCrash(t, img, f, keep, kernel)
		})
	}
}

// checkTrimCrash recovers img and checks the files: those kept read back
// as written, deleted ones are gone or whole; then xfs_repair, and with
// kernel a read-only mount reading the files.
func checkTrimCrash(t *testing.T, img string, f *fragmented, keep func(int) bool, kernel bool) {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	present := &fragmented{dir: f.dir, data: map[string][]byte{}}
	for i, name := range f.names {
		ino, err := v.Names().Lookup(f.dir, name)
		if errors.Is(err, xfs.ErrNotFound) && !keep(i) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make([]byte, len(f.data[name]))
		if n, err := v.Files().ReadAt(ino, got, 0); n != len(got) || !bytes.Equal(got, f.data[name]) {
			t.Fatalf("%s (kept %v) reads %d bytes (%v), not as written", name, keep(i), n, err)
		}
		present.names = append(present.names, name)
		present.data[name] = f.data[name]
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	if kernel {
		present.checkKernel(t, img)
	}
}
