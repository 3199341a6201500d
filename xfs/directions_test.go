package xfs_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestBothDirections mixes writers: the kernel writes into a volume our
// mkfs made and the engine goes on writing; the engine writes into a
// volume mkfs.xfs made and the kernel filled. Each time xfs_repair must
// be clean and the kernel must show exactly what the engine shows.
func TestBothDirections(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount, oracle.ToolDB)
	t.Run("kernel-then-engine", func(t *testing.T) {
		img := filepath.Join(t.TempDir(), "ours.img")
		if _, err := mkfs.Format(img, mkfs.Options{Size: 1 << 30}); err != nil {
			t.Fatal(err)
		}
		mnt := oracle.Mount(t, img, false)
		if err := oracle.Populate(mnt, oracle.Small); err != nil {
			t.Fatal(err)
		}
		oracle.Unmount(t, mnt)
		oracle.Repair(t, img)
		engineWritesOn(t, img, 1)
	})
	for _, variant := range []oracle.Variant{oracle.Variants[0], oracle.Variants[1]} {
		t.Run("mkfs.xfs-"+variant.Name, func(t *testing.T) {
			img, _ := oracle.BuildFixture(t, t.TempDir(), variant, oracle.Small)
			engineWritesOn(t, img, 2)
		})
	}
}

// engineWritesOn runs the model workload in a new directory and removes,
// renames and annotates some of what the kernel wrote, then checks.
func engineWritesOn(t *testing.T, img string, seed int64) {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	// Touch the kernel's files: attributes, renames, unlinks.
	var kernelFiles []struct {
		dir  format.Ino
		name string
		ino  format.Ino
	}
	var walk func(dir format.Ino, depth int)
	walk = func(dir format.Ino, depth int) {
		ents, err := v.Names().ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			switch e.Type {
			case format.FTDir:
				if depth < 3 {
					walk(e.Ino, depth+1)
				}
			case format.FTReg:
				kernelFiles = append(kernelFiles, struct {
					dir  format.Ino
					name string
					ino  format.Ino
				}{dir, e.Name, e.Ino})
			}
		}
	}
	walk(v.Root(), 0)
	rng.Shuffle(len(kernelFiles), func(i, j int) { kernelFiles[i], kernelFiles[j] = kernelFiles[j], kernelFiles[i] })
	for i, f := range kernelFiles[:len(kernelFiles)/3] {
		var err error
		switch i % 3 {
		case 0:
			err = v.Names().Unlink(f.dir, f.name)
		case 1:
			err = v.Names().Rename(f.dir, f.name, v.Root(), "moved-"+f.name[:min(len(f.name), 40)]+"-"+string(rune('a'+i%26)))
		default:
			err = v.Xattrs().Set(f.ino, "user.engine", []byte("was here"), 0)
			if err == nil {
				_, err = v.Files().WriteAt(f.ino, []byte("appended by the engine"), 1<<20)
			}
		}
		if err != nil {
			t.Fatalf("change kernel file %s: %v", f.name, err)
		}
	}
	// And a workload of our own.
	dir, err := v.Names().Mkdir(v.Root(), "engine", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	m := &model{rng: rng, t: t, v: v, root: &mnode{ino: dir, dir: map[string]*mnode{}, mode: 0o755, nlink: 2}}
	for m.op = 0; m.op < 1500; m.op++ {
		m.step()
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	ro := openRO(t, img)
	ours := engineSnapshot(t, ro)
	ro.Close()
	mnt := oracle.Mount(t, img, true)
	kernel, err := oracle.SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, kernel, ours)
	if _, err := os.Stat(filepath.Join(mnt, "engine")); err != nil {
		t.Fatal(err)
	}
}
