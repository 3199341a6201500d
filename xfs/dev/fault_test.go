package dev

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFaultPowerCut(t *testing.T) {
	base := bytes.Repeat([]byte{7}, 3*4096)
	f := NewFault(bytes.NewReader(base), int64(len(base)))
	w := func(off int64, b byte, n int) error {
		_, err := f.WriteAt(bytes.Repeat([]byte{b}, n), off)
		return err
	}
	if err := w(100, 1, 1000); err != nil { // write 1: durable after the sync
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w(4000, 2, 1024); err != nil { // write 2: straddles a page, pending
		t.Fatal(err)
	}
	if err := w(8192, 3, 1024); err != nil { // write 3: pending
		t.Fatal(err)
	}
	got := make([]byte, 1)
	f.ReadAt(got, 4500)
	if got[0] != 2 {
		t.Fatal("pending write not visible to reads")
	}
	f.CutAt(4)
	if err := w(0, 9, 512); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("write at the cut: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("sync after the cut: %v", err)
	}
	for _, tc := range []struct {
		c    Crash
		want map[int64]byte
	}{
		{Crash{}, map[int64]byte{100: 1, 1099: 1, 1100: 7, 4000: 7, 8192: 7}},
		{Crash{Keep: 1}, map[int64]byte{4000: 2, 5023: 2, 8192: 7}},
		{Crash{Keep: 2, Tear: true}, map[int64]byte{4000: 2, 8192: 3, 8192 + 511: 3, 8192 + 512: 7}},
		{Crash{Keep: 2, Subset: func(i int) bool { return i == 1 }}, map[int64]byte{4000: 7, 8192: 3, 9215: 3}},
	} {
		checkCrashImage(t, f, base, tc.c, tc.want)
	}
}

// TestFaultDurableWrite: a durable write survives any crash, older
// volatile writes under it never land over it, and the writes around it
// stay volatile.
func TestFaultDurableWrite(t *testing.T) {
	base := bytes.Repeat([]byte{7}, 3*4096)
	f := NewFault(bytes.NewReader(base), int64(len(base)))
	if _, err := f.WriteAt(bytes.Repeat([]byte{1}, 8192), 0); err != nil { // volatile
		t.Fatal(err)
	}
	if _, err := f.WriteAtDurable(bytes.Repeat([]byte{2}, 2048), 4096); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{3}, 1024), 5120); err != nil { // volatile, over it
		t.Fatal(err)
	}
	got := make([]byte, 1)
	for off, want := range map[int64]byte{0: 1, 4096: 2, 5120: 3, 6143: 3, 6144: 1} {
		f.ReadAt(got, off)
		if got[0] != want {
			t.Fatalf("read at %d: %d, want %d", off, got[0], want)
		}
	}
	// Pending now: the volatile write's two pieces either side of the
	// durable range, then the later write.
	if n := f.Pending(); n != 3 {
		t.Fatalf("%d pending writes, want 3", n)
	}
	for _, tc := range []struct {
		c    Crash
		want map[int64]byte
	}{
		{Crash{}, map[int64]byte{0: 7, 4096: 2, 5120: 2, 6143: 2, 6144: 7}},
		{Crash{Keep: 2}, map[int64]byte{0: 1, 4095: 1, 4096: 2, 5120: 2, 6144: 1, 8191: 1, 8192: 7}},
		{Crash{Keep: 3}, map[int64]byte{0: 1, 4096: 2, 5120: 3, 6143: 3, 6144: 1}},
	} {
		checkCrashImage(t, f, base, tc.c, tc.want)
	}
}

// checkCrashImage builds f's post-crash image over a copy of base and
// checks the bytes at the offsets of want.
func checkCrashImage(t *testing.T, f *Fault, base []byte, c Crash, want map[int64]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(path, base, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Image(path, c); err != nil {
		t.Fatal(err)
	}
	img, _ := os.ReadFile(path)
	for off, b := range want {
		if img[off] != b {
			t.Errorf("%+v: byte %d is %d, want %d", c, off, img[off], b)
		}
	}
}
