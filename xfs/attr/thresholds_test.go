package attr

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// newKernelInode returns a fork like a file the kernel just created: an
// empty data fork and an empty attribute fork at offset 24 (192 bytes of
// data fork), as xfs-facts.md §0 records.
func newKernelInode(t *testing.T, bs, isize int) *memFork {
	f := newMemFork(testGeometry(bs, isize), testIno, format.FmtExtents, 0)
	if err := f.AddFork(24); err != nil {
		t.Fatal(err)
	}
	return f
}

func mustSet(t *testing.T, f *memFork, name string, value []byte) {
	t.Helper()
	if err := Set(f, User, []byte(name), value, 0); err != nil {
		t.Fatalf("set %s: %v", name, err)
	}
	f.Commit()
}

func formOf(t *testing.T, f *memFork) Form {
	t.Helper()
	form, err := FormOf(f)
	if err != nil {
		t.Fatal(err)
	}
	return form
}

// TestThresholds pins the formats the fact sheet (§5) observed on the
// kernel: small attributes stay short form up to 8 and more, 30 need a
// leaf; a 3000-byte value stays in a 4 KiB leaf; a 60000-byte value takes
// 15 remote blocks next to the leaf.
func TestThresholds(t *testing.T) {
	f := newKernelInode(t, 4096, 512)
	for i := 1; i <= 30; i++ {
		mustSet(t, f, fmt.Sprintf("attr-%02d", i), bytes.Repeat([]byte("v"), 15))
		form := formOf(t, f)
		switch {
		case i <= 8 && form != FormShort:
			t.Fatalf("%d attributes in %v form, want short", i, form)
		case i == 30 && form != FormLeaf:
			t.Fatalf("%d attributes in %v form, want leaf", i, form)
		}
	}

	f = newKernelInode(t, 4096, 512)
	mustSet(t, f, "small", []byte("small"))
	mustSet(t, f, "v3000", bytes.Repeat([]byte("x"), 3000))
	if form := formOf(t, f); form != FormLeaf || f.Blocks() != 1 {
		t.Fatalf("3000-byte value: %v form, %d blocks; want a leaf", form, f.Blocks())
	}

	f = newKernelInode(t, 4096, 512)
	mustSet(t, f, "small", []byte("small"))
	mustSet(t, f, "remote", bytes.Repeat([]byte("x"), 60000))
	if form := formOf(t, f); form != FormLeaf || f.Blocks() != 16 {
		t.Fatalf("60000-byte value: %v form, %d blocks; want a leaf and 15 remote blocks", form, f.Blocks())
	}

	// Values of 254 bytes fit the short form, 255 do not.
	f = newKernelInode(t, 4096, 512)
	mustSet(t, f, "a", bytes.Repeat([]byte("x"), 254))
	if form := formOf(t, f); form != FormShort {
		t.Fatalf("254-byte value: %v form", form)
	}
	mustSet(t, f, "b", bytes.Repeat([]byte("x"), 255))
	if form := formOf(t, f); form != FormLeaf {
		t.Fatalf("255-byte value: %v form", form)
	}
	// Removing it goes back to short form.
	if err := Remove(f, User, []byte("b")); err != nil {
		t.Fatal(err)
	}
	f.Commit()
	if form := formOf(t, f); form != FormShort {
		t.Fatalf("after removing the 255-byte value: %v form", form)
	}
	// Removing the last one removes the fork.
	if err := Remove(f, User, []byte("a")); err != nil {
		t.Fatal(err)
	}
	f.Commit()
	if f.ForkOff() != 0 || formOf(t, f) != FormNone {
		t.Fatalf("no attributes left but forkoff %d", f.ForkOff())
	}
}
