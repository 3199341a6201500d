package xfs

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestRefusedOpenAfterRecovery: a writable open that replays a crashed
// log and then finds damaged unlinked lists is refused. With intents
// still to finish, the log stays dirty, so that a later recovery (once
// the damage is repaired) still finishes them; without any, the log is
// marked clean, and a read-only open sees everything the log replayed.
func TestRefusedOpenAfterRecovery(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	t.Run("intents pending", func(t *testing.T) {
		x := efiCrashImage(t, false)
		restore := oracle.DamageUnlinkedBucket(t, x.img)
		if v, err := Open(x.img, Options{}); !errors.Is(err, ErrCorrupt) {
			if err == nil {
				v.Close()
			}
			t.Fatalf("writable open of damaged lists after a crash: %v, want a corruption error", err)
		}
		if v, err := Open(x.img, Options{ReadOnly: true}); !errors.Is(err, ErrNeedsRecovery) {
			if err == nil {
				v.Close()
			}
			t.Fatalf("read-only open after the refusal: %v, want the log still to need recovery", err)
		}
		restore()
		v, err := Open(x.img, Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := v.Recovery()
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		if st.IntentsFinished != len(x.aExt) {
			t.Errorf("the recovery after the repair finished %d intent extents, want %d", st.IntentsFinished, len(x.aExt))
		}
		oracle.Repair(t, x.img)
		if after := freeBlocks(t, x.img); after != x.free+x.aBlocks {
			t.Errorf("free blocks %d, want %d + %d", after, x.free, x.aBlocks)
		}
	})
	t.Run("no intents", func(t *testing.T) {
		img := filepath.Join(t.TempDir(), "crash.img")
		if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
			t.Fatal(err)
		}
		v, err := Open(img, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The crash: the create reaches the log, none of its blocks the disk.
		v.cache.SkipWriteback()
		ino, err := v.names().Create(v.Root(), "logged", Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Force(); err != nil {
			t.Fatal(err)
		}
		if err := v.abandon(); err != nil {
			t.Fatal(err)
		}
		restore := oracle.DamageUnlinkedBucket(t, img)
		if v, err := Open(img, Options{}); !errors.Is(err, ErrCorrupt) {
			if err == nil {
				v.Close()
			}
			t.Fatalf("writable open of damaged lists after a crash: %v, want a corruption error", err)
		}
		ro, err := Open(img, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only open after the refusal: %v", err)
		}
		got, err := ro.names().Lookup(ro.Root(), "logged")
		ro.Close()
		if err != nil || got != ino {
			t.Errorf("the replayed create: lookup gives %d, %v; want %d", got, err, ino)
		}
		restore()
		oracle.Repair(t, img)
	})
}

// failingWrite is a device whose write number at (counting from 1) fails
// once with EIO; every other write goes through. It hides the base
// device's optional interfaces, so the log writes then syncs.
type failingWrite struct {
	dev.Device
	at     int
	mu     sync.Mutex // guards writes: the log writes from its own goroutine
	writes int
}

func (d *failingWrite) WriteAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	d.writes++
	fail := d.writes == d.at
	d.mu.Unlock()
	if fail {
		return 0, syscall.EIO
	}
	return d.Device.WriteAt(p, off)
}

// count is the number of writes so far.
func (d *failingWrite) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writes
}

// TestCrashedOpenAndCloseWithFailedWrite: the writable open and the close
// of a crashed volume (a replay, then files on the unlinked lists to free)
// meet one failed write, at each of their writes in turn. A refused open
// leaves the log needing recovery (a log with a failed write gets no
// unmount record), a close that fails leaves what the log holds, and
// either way the next open recovers everything: the files are freed, and
// the free counts and xfs_repair agree.
func TestCrashedOpenAndCloseWithFailedWrite(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	dir := t.TempDir()
	base := filepath.Join(dir, "crash.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := Open(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil { // a first open sets up the quota inode
		t.Fatal(err)
	}
	before := statfsOf(t, base)
	if v, err = Open(base, Options{LazyCommits: true}); err != nil {
		t.Fatal(err)
	}
	// The crash: the files are unlinked while open, so on the unlinked
	// lists; the log has it all, the disk none of the in-place writes.
	v.cache.SkipWriteback()
	for i := range 50 {
		name := fmt.Sprintf("held%d", i)
		ino, err := v.names().CreateFile(v.Root(), name, Attrs{Mode: 0o644}, bytes.Repeat([]byte{byte(i)}, 5000), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.files().Open(ino); err != nil {
			t.Fatal(err)
		}
		if err := v.names().Unlink(v.Root(), name); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Force(); err != nil {
		t.Fatal(err)
	}
	if err := v.abandon(); err != nil {
		t.Fatal(err)
	}

	refused, closeFailed := 0, 0
	for at := 1; ; at++ {
		img := filepath.Join(dir, "try.img")
		oracle.CopySparse(t, base, img)
		d, err := dev.Open(img, false)
		if err != nil {
			t.Fatal(err)
		}
		fd := &failingWrite{Device: d, at: at}
		v, err := OpenDevice(fd, Options{})
		if err != nil {
			d.Close()
			refused++
			if ro, rerr := Open(img, Options{ReadOnly: true}); !errors.Is(rerr, ErrNeedsRecovery) {
				if rerr == nil {
					ro.Close()
				}
				t.Fatalf("write %d failed (%v): the refused open left a log that does not need recovery (read-only open: %v)", at, err, rerr)
			}
		} else if err := v.Close(); err != nil {
			closeFailed++
		} else if n := fd.count(); n < at {
			t.Logf("an open and close of the crashed volume make %d writes; %d failures refused the open, %d the close", n, refused, closeFailed)
			if refused == 0 || closeFailed == 0 {
				t.Fatal("the failures did not reach both the open and the close")
			}
			return
		} else {
			t.Fatalf("write %d failed, yet the open and the close succeeded", at)
		}
		v, err = Open(img, Options{})
		if err != nil {
			t.Fatalf("write %d failed: the next open: %v", at, err)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		if got := statfsOf(t, img); got.FreeBlocks != before.FreeBlocks || got.Inodes-got.FreeInodes != before.Inodes-before.FreeInodes {
			t.Errorf("write %d failed: free blocks %d, inodes in use %d; want %d and %d", at,
				got.FreeBlocks, got.Inodes-got.FreeInodes, before.FreeBlocks, before.Inodes-before.FreeInodes)
		}
		oracle.Repair(t, img)
	}
}

// statfsOf is the Statfs of the clean image img.
func statfsOf(t *testing.T, img string) Statfs {
	t.Helper()
	v, err := Open(img, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	st, err := v.space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	return st
}
