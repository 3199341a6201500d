package xfs_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// countingDevice counts the reads that reach the device.
type countingDevice struct {
	dev.Device
	reads atomic.Int64
}

func (d *countingDevice) ReadAt(p []byte, off int64) (int, error) {
	d.reads.Add(1)
	return d.Device.ReadAt(p, off)
}

// TestReadOnlyReadsFromCache: a read-only volume serves lookups, listings
// and attribute reads from its buffer cache once the blocks were read:
// a second round of the same calls reads nothing from the device. (Until
// read-only volumes had a cache, every call read and fully verified each
// directory and attribute block again.)
func TestReadOnlyReadsFromCache(t *testing.T) {
	img := filepath.Join(t.TempDir(), "ro.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	// Short form, block, leaf and node directories; leaf and node
	// attribute forks, the latter with remote values.
	dirs := map[string]int{"sf": 5, "block": 60, "leaf": 400, "node": 4000}
	for name, n := range dirs {
		dir, err := v.Names().Mkdir(v.Root(), name, xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if _, err := v.Names().Create(dir, fmt.Sprintf("entry-%05d", i), xfs.Attrs{Mode: 0o644}); err != nil {
				t.Fatal(err)
			}
		}
	}
	xattrs := map[string][2]int{"leaf": {40, 32}, "node": {300, 6000}} // count, value size
	for name, x := range xattrs {
		ino, err := v.Names().Create(v.Root(), "xattr-"+name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < x[0]; i++ {
			if err := v.Xattrs().Set(ino, fmt.Sprintf("user.a%04d", i), make([]byte, x[1]), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}

	d, err := dev.Open(img, true)
	if err != nil {
		t.Fatal(err)
	}
	cd := &countingDevice{Device: d}
	ro, err := xfs.OpenDevice(cd, xfs.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	round := func() {
		for name, n := range dirs {
			dir, err := ro.Names().Lookup(ro.Root(), name)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i += 1 + n/50 {
				if _, err := ro.Names().Lookup(dir, fmt.Sprintf("entry-%05d", i)); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if _, err := ro.Names().Lookup(dir, "missing"); err == nil {
				t.Fatalf("%s: found a missing name", name)
			}
			if ents, err := ro.Names().ReadDir(dir); err != nil || len(ents) != n {
				t.Fatalf("%s: listed %d entries: %v", name, len(ents), err)
			}
		}
		for name, x := range xattrs {
			ino, err := ro.Names().Lookup(ro.Root(), "xattr-"+name)
			if err != nil {
				t.Fatal(err)
			}
			if list, err := ro.Xattrs().List(ino); err != nil || len(list) != x[0] {
				t.Fatalf("xattr-%s: listed %d: %v", name, len(list), err)
			}
			if val, err := ro.Xattrs().Get(ino, "user.a0007"); err != nil || len(val) != x[1] {
				t.Fatalf("xattr-%s: value of %d bytes: %v", name, len(val), err)
			}
		}
	}
	round()
	cold := cd.reads.Swap(0)
	round()
	if warm := cd.reads.Load(); warm != 0 {
		t.Fatalf("the second round read the device %d times (the first %d)", warm, cold)
	}
	t.Logf("first round: %d device reads, second: none", cold)
}
