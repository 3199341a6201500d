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

// cuiBuiCrash describes an image whose log holds the first transaction of
// two kernel-style reflink chains, their intents never finished: b gets
// a's first extent mapped (CUI INCREASE + BUI MAP), c (a clone of a)
// loses a's second extent (BUI UNMAP + CUI DECREASE). A finished pair
// for a's third extent is in the log too, and must change nothing.
type cuiBuiCrash struct {
	img     string
	a, b, c format.Ino
	aExt    []format.Extent
	free    uint64 // free blocks on disk before the crash
	data    []byte // a's bytes
}

func intentItem(b []byte) xlog.Item { return xlog.Item{Regions: [][]byte{b}} }

func cuiBuiCrashImage(t *testing.T) cuiBuiCrash {
	img := filepath.Join(t.TempDir(), "cuibui.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := Open(img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var x cuiBuiCrash
	x.img = img
	for _, p := range []struct {
		name string
		ino  *format.Ino
	}{{"a", &x.a}, {"b", &x.b}, {"c", &x.c}, {"pad", new(format.Ino)}} {
		if *p.ino, err = v.names().Create(v.Root(), p.name, Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	// Interleaved with another file's, so that a gets three extents.
	pad, _ := v.names().Lookup(v.Root(), "pad")
	for round := 0; round < 3; round++ {
		chunk := bytes.Repeat([]byte{byte('x' + round)}, 3*4096)
		x.data = append(x.data, chunk...)
		for _, ino := range []format.Ino{x.a, pad} {
			if _, err := v.files().WriteAt(ino, chunk, int64(round*len(chunk))); err != nil {
				t.Fatal(err)
			}
			if err := v.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := v.files().CloneRange(x.c, 0, x.a, 0, int64(len(x.data))); err != nil {
		t.Fatal(err)
	}
	x.aExt = fileExtents(t, v, x.a)
	if len(x.aExt) != 3 {
		t.Fatalf("a maps %v, want three extents", x.aExt)
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
	pin := func(own, durable xlog.Ticket) error { return errors.New("intent still pending at the crash") }
	e0, e1, e2 := x.aExt[0], x.aExt[1], x.aExt[2]
	phys := func(id uint64, e format.Extent, typ uint32) xlog.Item {
		return intentItem((&format.CUILogFormat{Size: 1, ID: id, Extents: []format.PhysExtent{{Start: e.StartBlock, Len: uint32(e.BlockCount), Flags: typ}}}).Encode())
	}
	bmap := func(id uint64, ino format.Ino, e format.Extent, typ uint32) xlog.Item {
		return intentItem((&format.BUILogFormat{Size: 1, ID: id, Extents: []format.MapExtent{{Owner: ino, Start: e.StartBlock,
			StartOff: e.StartOff, Len: uint32(e.BlockCount), Flags: typ}}}).Encode())
	}
	items := []xlog.Item{
		phys(1, e0, format.RefcountIncrease), bmap(2, x.b, e0, format.BmapMap),
		bmap(3, x.c, e1, format.BmapUnmap), phys(4, e1, format.RefcountDecrease),
		phys(5, e2, format.RefcountDecrease), bmap(6, x.c, e2, format.BmapUnmap),
	}
	if _, err := lw.Queue(items, pin); err != nil {
		t.Fatal(err)
	}
	done := []xlog.Item{intentItem(format.EncodeIntentDone(format.LogItemCUD, 5)), intentItem(format.EncodeIntentDone(format.LogItemBUD, 6))}
	if _, err := lw.Commit(done); err != nil {
		t.Fatal(err)
	}
	// What the kernel's remap transaction logs with its intents: b's
	// flag and size.
	h, unlock := v.lockInode(x.b)
	err = v.runTx(0, true, func(tx *txn) error {
		c, err := tx.modify(h, x.b)
		if err != nil {
			return err
		}
		c.core.Flags2 |= format.Diflag2Reflink
		c.core.Size = int64(e0.BlockCount) * int64(v.geo.BlockSize)
		c.touch(true)
		return nil
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

// checkCuiBuiResult: b maps a's first extent, c lost a's second, the
// third is untouched; the counts follow (xfs_repair compares them with the
// mappings) and no block was freed or leaked.
func checkCuiBuiResult(t *testing.T, x cuiBuiCrash, img, when string) {
	t.Helper()
	v, err := Open(img, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	defer v.Close()
	e0, e1 := x.aExt[0], x.aExt[1]
	bs := int64(v.geo.BlockSize)
	for _, c := range []struct {
		ino  format.Ino
		want []byte
	}{
		{x.a, x.data},
		{x.b, x.data[:e0.BlockCount*uint64(bs)]},
		{x.c, append(append(append([]byte(nil), x.data[:uint64(e1.StartOff)*uint64(bs)]...), make([]byte, e1.BlockCount*uint64(bs))...), x.data[uint64(e1.End())*uint64(bs):]...)},
	} {
		got := make([]byte, len(c.want))
		if n, err := v.Files().ReadAt(c.ino, got, 0); n != len(got) || !bytes.Equal(got, c.want) {
			t.Errorf("%s: inode %d reads %d bytes (%v), not what it should", when, c.ino, n, err)
		}
	}
	if s, err := v.Stat(x.b); err != nil || s.Blocks != e0.BlockCount {
		t.Errorf("%s: b %+v, %v; want %d blocks", when, s, err, e0.BlockCount)
	}
	if got := statfsOf(t, img).FreeBlocks; got != x.free {
		t.Errorf("%s: %d free blocks, want %d", when, got, x.free)
	}
}

// TestRecoverFinishesRefcountAndBmapIntents: the engine finishes the
// CUIs and BUIs a crashed chain left (and not the finished ones), and
// xfs_repair finds the refcount btree equal to the mappings.
func TestRecoverFinishesRefcountAndBmapIntents(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	x := cuiBuiCrashImage(t)
	v, err := Open(x.img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := v.Recovery()
	if !ok || st.RefcountFinished != 2 || st.BmapFinished != 2 {
		t.Errorf("recovery %+v (replayed %v), want 2 refcount and 2 bmap intents finished", st, ok)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, x.img)
	checkCuiBuiResult(t, x, x.img, "after recovery")
}

// TestKernelFinishesRefcountAndBmapIntents: the kernel, given the same
// crash image, ends where the engine does.
func TestKernelFinishesRefcountAndBmapIntents(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	x := cuiBuiCrashImage(t)
	oracle.Unmount(t, oracle.Mount(t, x.img, false))
	oracle.Repair(t, x.img)
	checkCuiBuiResult(t, x, x.img, "after the kernel's recovery")
}

// TestCrashWhileFinishingRefcountIntents: the power fails at every write
// of the recovery that finishes the CUIs and BUIs (keeping none, then
// all, of the unflushed writes); the next recovery still ends with every
// intent done exactly once.
func TestCrashWhileFinishingRefcountIntents(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	x := cuiBuiCrashImage(t)
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
			checkCuiBuiResult(t, x, img, "after a cut recovery")
			if cut%4 == 0 || cut == writes {
				oracle.Repair(t, img)
			}
		}
	}
	t.Logf("%d cut points", writes)
}
