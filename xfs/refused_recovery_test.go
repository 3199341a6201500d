package xfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// damageLastAGI points an unlinked bucket of img's last AG at an inode
// number of that AG where no inode chunk lies, CRC recomputed, and
// returns a function that puts the AGI back. The crashes of these tests
// log nothing of that AG, so replay leaves the damage in place.
func damageLastAGI(t *testing.T, img string) (restore func()) {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(b)
	if err != nil {
		t.Fatal(err)
	}
	g := format.NewGeometry(sb)
	ag := format.AgNumber(g.AgCount - 1)
	off := int64(g.AgbToDaddr(ag, 0))<<format.BBShift + 2*int64(g.SectSize)
	orig := bytes.Clone(b[off : off+int64(g.SectSize)])
	agi := bytes.Clone(orig)
	last := g.AgBlockToAgIno(format.AgBlock(g.AgSize(ag) - 1))
	const bucket = 5
	binary.BigEndian.PutUint32(agi[40+4*bucket:], uint32(last-last%format.AgiUnlinkedBuckets+bucket))
	format.SetCRC(agi, format.AgiCRCOff)
	put := func(sector []byte) {
		f, err := os.OpenFile(img, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(sector, off); err != nil {
			t.Fatal(err)
		}
	}
	put(agi)
	return func() { put(orig) }
}

// TestRefusedOpenAfterRecovery: a writable open that replays a crashed
// log and then finds damaged unlinked lists is refused. With intents
// still to finish, the log stays dirty, so that a later recovery (once
// the damage is repaired) still finishes them; without any, the log is
// marked clean, and a read-only open sees everything the log replayed.
func TestRefusedOpenAfterRecovery(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	t.Run("intents pending", func(t *testing.T) {
		x := efiCrashImage(t, false)
		restore := damageLastAGI(t, x.img)
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
		ino, err := v.Create(v.Root(), "logged", Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Force(); err != nil {
			t.Fatal(err)
		}
		if err := v.dev.Close(); err != nil {
			t.Fatal(err)
		}
		restore := damageLastAGI(t, img)
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
		got, err := ro.Lookup(ro.Root(), "logged")
		ro.Close()
		if err != nil || got != ino {
			t.Errorf("the replayed create: lookup gives %d, %v; want %d", got, err, ino)
		}
		restore()
		oracle.Repair(t, img)
	})
}
