package dir_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// rewrite changes the committed directory block at fork offset off with
// fn, re-stamping the CRC so that only structure checks can object, and
// returns a function that puts the old bytes back.
func rewrite(t *testing.T, m *fork.Mem, off format.FileOff, fsbs int, fn func(b []byte)) (undo func()) {
	t.Helper()
	crcAt := 4
	old := make([]byte, 0, fsbs*m.Geo.BlockSize)
	for i := 0; i < fsbs; i++ {
		b, _, ok := m.Block(off + format.FileOff(i))
		if !ok {
			t.Fatalf("block %d not mapped", off)
		}
		old = append(old, b...)
	}
	switch binary.BigEndian.Uint16(old[8:]) {
	case format.Dir3Leaf1Magic, format.Dir3LeafNMagic, format.Da3NodeMagic:
		crcAt = 12
	}
	put := func(data []byte, crc bool) {
		ops := &trans.Ops{Finish: func(b []byte) {
			if crc {
				format.SetCRC(b, crcAt)
			}
		}}
		m.Begin()
		b, d, err := m.Read(off, fsbs, ops)
		if err != nil {
			t.Fatal(err)
		}
		copy(b, data)
		m.Dirty(d)
		m.Commit()
	}
	mod := append([]byte(nil), old...)
	fn(mod)
	put(mod, true)
	return func() { put(old, false) }
}

func buildDir(t testing.TB, gc geoCase, n, nameLen int) *fork.Mem {
	m := newDir(t, gc, 128)
	m.Begin()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%0*d", nameLen, i)
		if err := dir.Add(m, []byte(name), format.Ino(3000+i), format.FTReg); err != nil {
			t.Fatal(err)
		}
	}
	m.Commit()
	if err := dir.Check(m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustCorrupt(t *testing.T, m *fork.Mem, what string) {
	t.Helper()
	err := dir.Check(m)
	if err == nil {
		t.Errorf("%s: Check passed", what)
	} else if !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("%s: Check failed with %v, not a corruption error", what, err)
	}
}

// TestCheckDetectsDamage damages one field at a time in valid directories
// of each format and requires Check to report corruption.
func TestCheckDetectsDamage(t *testing.T) {
	t.Parallel()
	gc := geo("4k")
	be := binary.BigEndian
	leafBlk := format.FileOff(uint64(format.DirLeafOffset) >> 12)
	freeBlk := format.FileOff(uint64(format.DirFreeOffset) >> 12)
	type damage struct {
		what string
		off  format.FileOff
		fn   func(b []byte)
	}
	add16 := func(at int, d int) func(b []byte) {
		return func(b []byte) { be.PutUint16(b[at:], uint16(int(be.Uint16(b[at:]))+d)) }
	}
	add32 := func(at int, d int) func(b []byte) {
		return func(b []byte) { be.PutUint32(b[at:], uint32(int(be.Uint32(b[at:]))+d)) }
	}
	common := []damage{
		{"bestfree length", 0, add16(50, 8)},
		{"bestfree offset", 0, add16(48, 8)},
		{"first entry's tag", 0, add16(64+16-2, 8)},
		{"\".\" inode", 0, func(b []byte) { be.PutUint64(b[64:], 5000) }},
		{"\".\" name", 0, func(b []byte) { b[73] = 'x' }},
		{"entry file type", 0, func(b []byte) { b[96+9+b[96+8]] = 9 }},
		{"entry name (hash)", 0, func(b []byte) { b[96+9] ^= 0x20 }},
		{"entry inode 0", 0, func(b []byte) { be.PutUint64(b[96:], 0) }},
		{"owner", 0, func(b []byte) { be.PutUint64(b[40:], 9) }},
		{"uuid", 0, func(b []byte) { b[30] ^= 1 }},
	}
	cases := []struct {
		n, nameLen int
		form       dir.Form
		more       []damage
	}{
		{60, 12, dir.BlockForm, []damage{
			{"tail count", 0, func(b []byte) { add32(len(b)-8, 1)(b) }},
			{"tail stale", 0, func(b []byte) { add32(len(b)-4, 1)(b) }},
			{"leaf hash", 0, func(b []byte) { add32(len(b)-8-8*62, 1)(b) }},
		}},
		{300, 12, dir.LeafForm, []damage{
			{"leaf count", leafBlk, add16(56, -1)},
			{"leaf stale", leafBlk, add16(58, 1)},
			{"leaf hash", leafBlk, add32(64, 0x7fffffff)},
			{"leaf address", leafBlk, add32(68, 2)},
			{"leaf sibling", leafBlk, add32(0, 3)},
			{"bests", leafBlk, func(b []byte) { add16(len(b)-6, 8)(b) }},
			{"bestcount", leafBlk, func(b []byte) { add32(len(b)-4, 1)(b) }},
		}},
		{2500, 30, dir.NodeForm, []damage{
			{"node key", leafBlk, add32(64, -1)},
			{"node count", leafBlk, add16(56, -1)},
			{"node level", leafBlk, add16(58, 1)},
			{"node child", leafBlk, add32(68, 1)},
			{"free nused", freeBlk, add32(56, 1)},
			{"free nvalid", freeBlk, add32(52, -1)},
			{"free firstdb", freeBlk, add32(48, 1)},
			{"free best", freeBlk, add16(64, 8)},
		}},
	}
	for _, c := range cases {
		m := buildDir(t, gc, c.n, c.nameLen)
		if f, _ := dir.GetForm(m); f != c.form {
			t.Fatalf("%d entries made %v, want %v", c.n, f, c.form)
		}
		for _, d := range append(append([]damage(nil), common...), c.more...) {
			undo := rewrite(t, m, d.off, 1, d.fn)
			mustCorrupt(t, m, fmt.Sprintf("%v: %s", c.form, d.what))
			undo()
			if err := dir.Check(m); err != nil {
				t.Fatalf("%v after undoing %s: %v", c.form, d.what, err)
			}
		}
		if c.form == dir.NodeForm {
			// A leaf's sibling link and a leaf's hash order.
			info, _ := dir.Inspect(m)
			if info.Levels < 2 {
				t.Fatalf("node directory has %d levels", info.Levels)
			}
		}
	}
	// Short form: count, i8count, an entry offset out of order.
	m := buildDir(t, gc, 5, 4)
	for _, d := range []struct {
		what string
		fn   func(b []byte)
	}{
		{"count", func(b []byte) { b[0]++ }},
		{"i8count", func(b []byte) { b[1] = 1 }},
		{"offset order", func(b []byte) { be.PutUint16(b[6+1+13:], 0x60) }},
		{"empty name", func(b []byte) { b[6] = 0 }},
	} {
		saved := append([]byte(nil), m.Data...)
		d.fn(m.Data)
		mustCorrupt(t, m, "short form: "+d.what)
		m.Data = saved
	}
}

// TestCheckSurvivesNoise flips random bytes (CRC re-stamped) in every
// block of directories of each format: Check and the read functions may
// fail, with corruption errors, but never panic.
func TestCheckSurvivesNoise(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(9))
	for _, n := range []int{60, 300, 2500} {
		m := buildDir(t, geo("4k"), n, 20)
		ranges, _ := m.Mapped()
		var offs []format.FileOff
		for _, r := range ranges {
			for o := r[0]; o < r[1]; o++ {
				offs = append(offs, o)
			}
		}
		for i := 0; i < 300; i++ {
			off := offs[rng.Intn(len(offs))]
			undo := rewrite(t, m, off, 1, func(b []byte) {
				for k := 0; k < 1+rng.Intn(3); k++ {
					b[rng.Intn(len(b))] ^= byte(1 << rng.Intn(8))
				}
			})
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic on damaged block %d: %v", off, p)
					}
				}()
				if err := dir.Check(m); err != nil && !errors.Is(err, format.ErrCorrupt) {
					t.Fatalf("Check: %v", err)
				}
				_ = dir.List(m, func([]byte, format.Ino, uint8) error { return nil })
				_, _, _ = dir.Lookup(m, []byte("00000000000000000007"))
			}()
			undo()
		}
		if err := dir.Check(m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMisalignedShortFormOffset: a short-form entry whose offset is not a
// multiple of 8 (the kernel's short-form verifier lets it through) stays
// readable, but turning the directory into a block fails as corruption
// instead of building a 4-byte free region that later writes overrun.
func TestMisalignedShortFormOffset(t *testing.T) {
	gc := geo("4k")
	m := buildDir(t, gc, 5, 10)
	// The last entry: header, four 18-byte entries, then its namelen byte
	// and its 2-byte offset.
	p := 6 + 4*(1+2+10+1+4) + 1
	if len(m.Data) != p+2+10+1+4 || m.Data[p-1] != 10 {
		t.Fatalf("unexpected short-form layout: %d bytes, %x", len(m.Data), m.Data)
	}
	off := binary.BigEndian.Uint16(m.Data[p:])
	binary.BigEndian.PutUint16(m.Data[p:], off+4)
	if got := listAll(t, m); len(got) != 5 {
		t.Fatalf("the damaged directory lists %d entries, want 5", len(got))
	}
	m.Begin()
	err := dir.Add(m, bytes.Repeat([]byte("n"), 250), 5000, format.FTReg)
	if err == nil {
		m.Commit()
	} else {
		m.Cancel() // as the engine cancels the failed transaction
	}
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("conversion of a misaligned entry: %v, want a corruption error", err)
	}
	if got := listAll(t, m); len(got) != 5 {
		t.Errorf("after the refused add the directory lists %d entries, want its 5", len(got))
	}
}
