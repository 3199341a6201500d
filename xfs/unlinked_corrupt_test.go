package xfs_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// unlinkedBase is a cleanly closed volume whose AGI unlinked lists still
// hold inodes (as after another writer), beside live files.
type unlinkedBase struct {
	im       *image
	live     map[string]format.Ino
	unlinked []format.Ino // newest first on their lists
	statfs   xfs.Statfs   // as a read-only open sees it
}

// The bytes each live file of an unlinkedBase holds.
func unlinkedLiveData(name string) []byte { return bytes.Repeat([]byte(name), 3000) }

func newUnlinkedBase(t *testing.T) *unlinkedBase {
	t.Helper()
	v, img, q := newHeldVolume(t)
	base := &unlinkedBase{live: map[string]format.Ino{}}
	for i := range 12 {
		name := fmt.Sprintf("f%02d", i)
		ino, err := v.Names().Create(v.Root(), name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Files().WriteAt(ino, unlinkedLiveData(name), 0); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			base.live[name] = ino
			continue
		}
		if err := v.Names().Unlink(v.Root(), name); err != nil {
			t.Fatal(err)
		}
	}
	for _, ino := range q.take() {
		base.unlinked = append(base.unlinked, format.Ino(ino))
	}
	if err := xfs.CloseKeepingUnlinked(v); err != nil {
		t.Fatal(err)
	}
	base.im = loadImage(t, img)
	ro, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if base.statfs, err = ro.Space().Statfs(); err != nil {
		t.Fatal(err)
	}
	return base
}

// agiOff is the byte offset of the AGI of ino's AG.
func (b *unlinkedBase) agiOff(ino format.Ino) int64 {
	g := &b.im.geo
	ag, _ := g.InoToAg(ino)
	return int64(g.AgbToDaddr(ag, 0))<<format.BBShift + 2*int64(g.SectSize)
}

// Byte offsets of an AGI bucket and of a dinode's di_next_unlinked.
func agiBucketOff(bucket format.AgIno) int64 { return 40 + 4*int64(bucket) }

const nextUnlinkedOff = 96

// setNext points ino's di_next_unlinked at next.
func (b *unlinkedBase) setNext(t *testing.T, o *overlay, ino format.Ino, next format.AgIno) {
	o.put32(b.im.inoOff(t, ino)+nextUnlinkedOff, uint32(next))
	resealInode(b.im, o, t, ino)
}

// push puts ino at the head of its bucket, as an unlink would.
func (b *unlinkedBase) push(t *testing.T, o *overlay, ino format.Ino) {
	_, agino := b.im.geo.InoToAg(ino)
	bucket := agino % format.AgiUnlinkedBuckets
	agi := b.agiOff(ino)
	head := format.AgIno(binary.BigEndian.Uint32(o.read(agi+agiBucketOff(bucket), 4)))
	b.setNext(t, o, ino, head)
	b.setBucket(o, ino, bucket, agino)
}

// setBucket makes agino the head of a bucket of ino's AGI.
func (b *unlinkedBase) setBucket(o *overlay, ino format.Ino, bucket, agino format.AgIno) {
	agi := b.agiOff(ino)
	o.put32(agi+agiBucketOff(bucket), uint32(agino))
	resealSector(b.im, o, agi, format.AgiCRCOff)
}

// freeInChunk is an inode of ino's chunk that is not in use.
func (b *unlinkedBase) freeInChunk(t *testing.T, ino format.Ino) format.Ino {
	first := ino &^ (format.InodesPerChunk - 1)
	for i := first; i < first+format.InodesPerChunk; i++ {
		off := b.im.inoOff(t, i)
		if d, err := format.VerifyInode(&b.im.geo, i, b.im.b[off:off+int64(b.im.geo.InodeSize)]); err == nil && d.Mode == 0 {
			return i
		}
	}
	t.Fatalf("no free inode in the chunk of inode %d", ino)
	return 0
}

// TestCorruptUnlinkedLists: a writable open frees every inode on the AGI
// unlinked lists, so damaged lists must stop it with a corruption error
// before it frees anything: lists that reach a linked inode or a free
// one, loop, leave their bucket or their AG. Afterwards the volume still
// opens read-only (its log is clean), with every live file whole and as
// much space and as many inodes free as before: nothing was freed.
func TestCorruptUnlinkedLists(t *testing.T) {
	base := newUnlinkedBase(t)
	if len(base.unlinked) != 6 {
		t.Fatalf("%d inodes on the unlinked lists, want 6", len(base.unlinked))
	}
	liveIno := base.live["f04"]
	victim := base.unlinked[0]
	_, victimAgino := base.im.geo.InoToAg(victim)
	rows := []struct {
		name      string
		patch     func(t *testing.T, o *overlay)
		structure string
	}{
		{"linked inode on a list", func(t *testing.T, o *overlay) { base.push(t, o, liveIno) }, "inode"},
		{"free inode on a list", func(t *testing.T, o *overlay) { base.push(t, o, base.freeInChunk(t, liveIno)) }, "inode"},
		{"list loops", func(t *testing.T, o *overlay) { base.setNext(t, o, victim, victimAgino) }, "AGI"},
		{"next leaves its bucket", func(t *testing.T, o *overlay) { base.setNext(t, o, victim, victimAgino+1) }, "AGI"},
		{"next beyond the AG", func(t *testing.T, o *overlay) {
			base.setNext(t, o, victim, victimAgino%format.AgiUnlinkedBuckets+format.AgiUnlinkedBuckets<<24)
		}, "AGI"},
		{"bucket head beyond the AG", func(t *testing.T, o *overlay) {
			bucket := victimAgino % format.AgiUnlinkedBuckets
			base.setBucket(o, victim, bucket, bucket+format.AgiUnlinkedBuckets<<24)
		}, "AGI"},
		{"next is no inode", func(t *testing.T, o *overlay) {
			// An inode number of the right bucket in the last block of
			// the AG, which holds no inode chunk on this small volume.
			g := &base.im.geo
			last := format.AgIno((g.AgBlocks - 1) << g.InoPBLog)
			next := last - last%format.AgiUnlinkedBuckets + victimAgino%format.AgiUnlinkedBuckets
			base.setNext(t, o, victim, next)
		}, "inode"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			o := newOverlay(base.im.b)
			row.patch(t, o)
			err := openWritableOnce(t, o)
			if !errors.Is(err, xfs.ErrCorrupt) {
				t.Fatalf("writable open: %v, want a corruption error", err)
			}
			var ce *format.CorruptError
			if !errors.As(err, &ce) || ce.Structure != row.structure {
				t.Errorf("writable open: %v, want a corrupt %s", err, row.structure)
			}
			t.Logf("got: %v", err)
			checkLiveFiles(t, o, base)
		})
	}
}

// openWritableOnce opens d writable and closes it, and returns the open's
// error. A panic or no answer within 10 seconds fails the test.
func openWritableOnce(t *testing.T, d *overlay) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		v, err := xfs.OpenDevice(d, xfs.Options{})
		if err == nil {
			err = v.Close()
			if err == nil {
				err = errors.New("the writable open succeeded")
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after 10 seconds: the engine hangs")
		return nil
	}
}

// checkLiveFiles opens d read-only, compares its free space and inodes
// with base's and reads every live file back.
func checkLiveFiles(t *testing.T, d *overlay, base *unlinkedBase) {
	t.Helper()
	v, err := xfs.OpenDevice(d, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after the refused one: %v", err)
	}
	defer v.Close()
	st, err := v.Space().Statfs()
	if err != nil || st.FreeBlocks != base.statfs.FreeBlocks || st.FreeInodes != base.statfs.FreeInodes {
		t.Errorf("after the refused open: %d free blocks and %d free inodes (%v), want %d and %d",
			st.FreeBlocks, st.FreeInodes, err, base.statfs.FreeBlocks, base.statfs.FreeInodes)
	}
	for name, ino := range base.live {
		got, err := v.Names().Lookup(v.Root(), name)
		if err != nil || got != ino {
			t.Errorf("%s: lookup gives %d, %v; want %d", name, got, err, ino)
			continue
		}
		st, err := v.Stat(ino)
		want := unlinkedLiveData(name)
		if err != nil || st.Nlink != 1 || st.Size != int64(len(want)) {
			t.Errorf("%s: %+v, %v", name, st, err)
			continue
		}
		buf := make([]byte, len(want))
		if n, err := v.Files().ReadAt(ino, buf, 0); err != nil || n != len(want) || !bytes.Equal(buf, want) {
			t.Errorf("%s: read %d bytes, %v; the bytes differ: %v", name, n, err, !bytes.Equal(buf, want))
		}
	}
}
