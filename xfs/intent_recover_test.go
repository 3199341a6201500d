package xfs

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// fileExtents returns the committed data-fork mapping of ino.
func fileExtents(t *testing.T, v *Volume, ino format.Ino) []format.Extent {
	t.Helper()
	h, unlock := v.lockInode(ino)
	defer unlock()
	tx, err := v.begin(0)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Cancel()
	c, err := tx.modify(h, ino)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := c.mapping(DataFork)
	if err != nil {
		t.Fatal(err)
	}
	return ext
}

func efiItem(id uint64, padded bool, exts []format.Extent) xlog.Item {
	f := &format.EFILogFormat{Size: 1, ID: id}
	for _, e := range exts {
		f.Extents = append(f.Extents, format.EFIExtent{Start: e.StartBlock, Len: uint32(e.BlockCount)})
	}
	return xlog.Item{Regions: [][]byte{f.Encode(padded)}}
}

func efdItem(id uint64) xlog.Item {
	b := make([]byte, format.EFIHeadSize)
	b[0], b[1], b[2] = format.LogItemEFD&0xff, format.LogItemEFD>>8, 1
	for i := 0; i < 8; i++ {
		b[8+i] = byte(id >> (8 * i))
	}
	return xlog.Item{Regions: [][]byte{b}}
}

func freeBlocks(t *testing.T, img string) uint64 {
	t.Helper()
	return statfsOf(t, img).FreeBlocks
}

// efiCrash describes an image left by a crash with free intents pending.
type efiCrash struct {
	img           string
	a, b, c       format.Ino
	aExt, bExt    []format.Extent
	cExt          []format.Extent
	free, aBlocks uint64 // free blocks on disk before the crash; a's blocks
}

// efiCrashImage makes an image whose log's last transactions removed file
// a's mapping and logged an extent-free intent for its blocks, but never
// freed them; also an intent for c finished by its done item, and, when
// stale, an unfinished intent for blocks of b that are free already.
func efiCrashImage(t *testing.T, stale bool) efiCrash {
	img := filepath.Join(t.TempDir(), "efi.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := Open(img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var inos [3]format.Ino
	for i, name := range []string{"a", "b", "c"} {
		if inos[i], err = v.names().Create(v.Root(), name, Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	// Interleaved writes, so that a gets more than one extent.
	chunk := bytes.Repeat([]byte("intent"), 3000)
	for round := 0; round < 3; round++ {
		for _, ino := range inos {
			if _, err := v.files().WriteAt(ino, chunk, int64(round*len(chunk))); err != nil {
				t.Fatal(err)
			}
			if err := v.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	x := efiCrash{img: img, a: inos[0], b: inos[1], c: inos[2]}
	x.aExt, x.bExt, x.cExt = fileExtents(t, v, x.a), fileExtents(t, v, x.b), fileExtents(t, v, x.c)
	for _, e := range x.aExt {
		x.aBlocks += e.BlockCount
	}
	t.Logf("a: %v, b: %v, c: %v", x.aExt, x.bExt, x.cExt)
	if len(x.aExt) < 2 || len(x.bExt) == 0 || len(x.cExt) == 0 {
		t.Fatalf("want a fragmented file a and files b, c with data")
	}
	// b's blocks are really free from now on.
	if err := v.files().Truncate(x.b, 0); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	x.free = freeBlocks(t, img)

	// The crash: nothing reaches the disk but the log.
	v, err = Open(img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v.cache.SkipWriteback()
	lw := v.cache.Log()
	// An intent pins its log space until it is done, as in the kernel's
	// AIL: a failing write-back does that here.
	pin := func(own, durable xlog.Ticket) error { return errors.New("intent still pending at the crash") }
	items := []xlog.Item{efiItem(0xa, true, x.aExt), efiItem(0xc, true, x.cExt)}
	if stale {
		items = append(items, efiItem(0xb, false, x.bExt)) // packed layout
	}
	if _, err := lw.Queue(items, pin); err != nil {
		t.Fatal(err)
	}
	if _, err := lw.Commit([]xlog.Item{efdItem(0xc)}); err != nil {
		t.Fatal(err)
	}
	// a's mapping goes, its blocks are not freed: what the kernel's
	// unmap transaction logs before its intent is done.
	h, unlock := v.lockInode(x.a)
	err = v.runTx(0, true, func(tx *txn) error {
		c, err := tx.modify(h, x.a)
		if err != nil {
			return err
		}
		c.core.NBlocks -= x.aBlocks
		c.core.Size = 0
		c.touch(true)
		return c.setMapping(DataFork, nil)
	})
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := lw.ForceAll(); err != nil {
		t.Fatal(err)
	}
	if err := v.abandon(); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestRecoverFinishesFreeIntents: recovery frees the extents of an
// unfinished intent, skips an intent whose extents are free already,
// leaves a finished intent alone, and xfs_repair finds the result clean
// with the freed blocks counted.
func TestRecoverFinishesFreeIntents(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	x := efiCrashImage(t, true)
	v, err := Open(x.img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := v.Recovery()
	if !ok || st.IntentsFinished != len(x.aExt) || st.IntentsSkipped != len(x.bExt) {
		t.Errorf("recovery %+v (replayed %v), want %d extents freed, %d skipped", st, ok, len(x.aExt), len(x.bExt))
	}
	if s, err := v.Stat(x.a); err != nil || s.Size != 0 {
		t.Errorf("a after recovery: %+v, %v", s, err)
	}
	if got := fileExtents(t, v, x.c); len(got) != len(x.cExt) {
		t.Errorf("c's mapping %v, was %v", got, x.cExt)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, x.img)
	if after := freeBlocks(t, x.img); after != x.free+x.aBlocks {
		t.Errorf("free blocks %d, want %d + %d", after, x.free, x.aBlocks)
	}
}

// TestKernelFinishesOurFreeIntents: the kernel, given the same kind of
// crash image (without the stale intent, which it calls corruption),
// frees the same blocks: the intents are written the way it reads them.
func TestKernelFinishesOurFreeIntents(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	x := efiCrashImage(t, false)
	oracle.Unmount(t, oracle.Mount(t, x.img, false))
	oracle.Repair(t, x.img)
	if after := freeBlocks(t, x.img); after != x.free+x.aBlocks {
		t.Errorf("free blocks %d after the kernel's recovery, want %d + %d", after, x.free, x.aBlocks)
	}
}

// TestCrashWhileFinishingIntents: the power fails at every write of the
// recovery that finishes the intents (keeping none, then all, of the
// unflushed writes); the next recovery must still end with a's blocks
// freed exactly once, and xfs_repair clean. The first record the new log
// writer puts down moves the tail past the old log, so the frees must be
// in it, or after a log that still holds the intents.
func TestCrashWhileFinishingIntents(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	x := efiCrashImage(t, false)
	openAt := func(cutAt int) *dev.Fault {
		f, closeBase, err := dev.OpenFault(x.img)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeBase() })
		f.CutAt(cutAt)
		if v, err := OpenDevice(f, Options{}); err == nil {
			if err := v.Close(); err != nil && !f.IsCut() {
				t.Fatal(err)
			}
		} else if !f.IsCut() {
			t.Fatal(err)
		}
		return f
	}
	writes, _ := openAt(0).Stats()
	for cut := 1; cut <= writes; cut++ {
		f := openAt(cut)
		for _, keep := range []int{0, f.Pending()} {
			img := filepath.Join(t.TempDir(), "cut.img")
			oracle.CopySparse(t, x.img, img)
			if err := f.Image(img, dev.Crash{Keep: keep}); err != nil {
				t.Fatal(err)
			}
			v, err := Open(img, Options{})
			if err != nil {
				t.Fatalf("cut at write %d of %d, %d unflushed kept: %v", cut, writes, keep, err)
			}
			if err := v.Close(); err != nil {
				t.Fatal(err)
			}
			if got := freeBlocks(t, img); got != x.free+x.aBlocks {
				t.Fatalf("cut at write %d of %d, %d unflushed kept: %d free blocks, want %d + %d", cut, writes, keep, got, x.free, x.aBlocks)
			}
			if cut%4 == 0 || cut == writes {
				oracle.Repair(t, img)
			}
		}
	}
	t.Logf("%d cut points", writes)
}
