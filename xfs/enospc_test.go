package xfs_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestFillToFull fills a small volume with files, directories and
// attributes (and moves files with Namespace.Apply) until every kind of
// allocation fails with ErrNoSpace, a failed Apply having moved nothing; deletes
// half (one by one and in bulk), fills again, and requires xfs_repair to
// be clean and the free space to equal what xfs_db counts.
func TestFillToFull(t *testing.T) {
	for _, bs := range []int{4096, 1024} {
		t.Run(fmt.Sprintf("bs%d", bs), func(t *testing.T) { fillToFull(t, bs) })
	}
}

func fillToFull(t *testing.T, bs int) {
	img := filepath.Join(t.TempDir(), "full.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20, BlockSize: bs}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(int64(bs)))
	type entry struct {
		dir  format.Ino
		name string
	}
	var files []entry
	var dirs []format.Ino
	dirs = append(dirs, v.Root())
	var moved, moveRefused int // Apply calls that moved a file, that found no space
	fill := func(round int) int {
		failures, made := 0, 0
		for i := 0; failures < 200; i++ {
			dir := dirs[rng.Intn(len(dirs))]
			name := fmt.Sprintf("r%d-%d", round, i)
			var err error
			switch k := rng.Intn(10); {
			case k < 1:
				var ino format.Ino
				if ino, err = v.Names().Mkdir(dir, name, xfs.Attrs{Mode: 0o755}); err == nil {
					dirs = append(dirs, ino)
				}
			case k < 2 && len(files) > 0:
				// A file moves to a new name in another directory, with
				// an attribute, as a versioned store moves one aside: on
				// the full volume either all of it or nothing.
				j := rng.Intn(len(files))
				f := files[j]
				err = v.Names().Apply([]xfs.NameOp{{Dir: f.dir, Name: f.name, ToDir: dir, ToName: name,
					Attrs: []xfs.Xattr{{Namespace: "user", Name: "moved", Value: make([]byte, rng.Intn(3000))}}}})
				if err == nil {
					files[j] = entry{dir, name}
					moved++
					break
				}
				moveRefused++
				if _, lerr := v.Names().Lookup(f.dir, f.name); lerr != nil {
					t.Fatalf("round %d op %d: a failed Apply (%v) moved %s away: %v", round, i, err, f.name, lerr)
				}
				if _, lerr := v.Names().Lookup(dir, name); !errors.Is(lerr, xfs.ErrNotFound) {
					t.Fatalf("round %d op %d: a failed Apply (%v) left %s: %v", round, i, err, name, lerr)
				}
			default:
				var ino format.Ino
				if ino, err = v.Names().Create(dir, name, xfs.Attrs{Mode: 0o644}); err != nil {
					break
				}
				files = append(files, entry{dir, name})
				made++
				data := make([]byte, rng.Intn(64<<10))
				if _, err = v.Files().WriteAt(ino, data, 0); err != nil {
					break
				}
				if rng.Intn(3) == 0 {
					err = v.Xattrs().Set(ino, "user.meta", make([]byte, rng.Intn(5000)), 0)
				}
			}
			if err != nil {
				if !errors.Is(err, xfs.ErrNoSpace) {
					t.Fatalf("round %d op %d: want ErrNoSpace, got %v", round, i, err)
				}
				failures++
			}
		}
		return made
	}
	n := fill(1)
	// Moves like a rename's may use the blocks kept for frees; ones that
	// need new blocks for large attributes run out of those too, and are
	// then refused whole.
	for i := 0; moveRefused == 0 && i < 5000; i++ {
		f := files[rng.Intn(len(files))]
		name := fmt.Sprintf("big-%d", i)
		err := v.Names().Apply([]xfs.NameOp{{Dir: f.dir, Name: f.name, ToDir: f.dir, ToName: name,
			Attrs: []xfs.Xattr{{Namespace: "user", Name: fmt.Sprint("big", i), Value: make([]byte, 20000)}}}})
		switch {
		case err == nil:
			for j := range files {
				if files[j] == f {
					files[j] = entry{f.dir, name}
				}
			}
		case !errors.Is(err, xfs.ErrNoSpace):
			t.Fatalf("Apply on the full volume: want ErrNoSpace, got %v", err)
		default:
			moveRefused++
			if _, lerr := v.Names().Lookup(f.dir, f.name); lerr != nil {
				t.Fatalf("a failed Apply moved %s away: %v", f.name, lerr)
			}
			if _, lerr := v.Names().Lookup(f.dir, name); !errors.Is(lerr, xfs.ErrNotFound) {
				t.Fatalf("a failed Apply left %s: %v", name, lerr)
			}
		}
	}
	if moveRefused == 0 {
		t.Error("no Apply met the full volume")
	}
	// An Apply that makes a file allocates: it may not use the blocks
	// kept for frees, and is refused whole.
	f := files[0]
	err = v.Names().Apply([]xfs.NameOp{
		{Dir: f.dir, Name: f.name, ToDir: f.dir, ToName: "aside"},
		{ToDir: f.dir, ToName: f.name, New: &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o644}, Data: make([]byte, 64<<10)}},
	})
	if !errors.Is(err, xfs.ErrNoSpace) {
		t.Fatalf("Apply making a file on the full volume: want ErrNoSpace, got %v", err)
	}
	if _, lerr := v.Names().Lookup(f.dir, "aside"); !errors.Is(lerr, xfs.ErrNotFound) {
		t.Fatalf("a failed Apply moved %s aside: %v", f.name, lerr)
	}
	st, _ := v.Space().Statfs()
	t.Logf("first fill: %d files, %d free blocks of %d, %d free inodes", n, st.FreeBlocks, st.Blocks, st.FreeInodes)
	rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	// Half of the half goes one by one, the rest directory by directory
	// in bulk (UnlinkFiles), both on the full volume.
	half := files[:len(files)/2]
	bulk := map[format.Ino][]string{}
	for i, f := range half {
		if i%2 == 0 {
			bulk[f.dir] = append(bulk[f.dir], f.name)
			continue
		}
		if err := v.Names().Unlink(f.dir, f.name); err != nil {
			t.Fatalf("unlink %s: %v", f.name, err)
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(bulk)) {
		names := bulk[dir]
		for i, err := range v.Names().UnlinkFiles(dir, names) {
			if err != nil {
				t.Fatalf("UnlinkFiles %s: %v", names[i], err)
			}
		}
	}
	files = files[len(files)/2:]
	n = fill(2)
	t.Logf("refill: %d files; Apply moved %d files, refused %d moves", n, moved, moveRefused)
	ours, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	oracle.Repair(t, img)
	out := oracle.DB(t, img, "freesp -s")
	m := regexp.MustCompile(`total free blocks (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total in xfs_db freesp output:\n%s", out)
	}
	total, _ := strconv.ParseUint(m[1], 10, 64)
	// freesp counts the free-space btrees' records and the free lists;
	// the engine's count (like sb_fdblocks) adds the btrees' own blocks.
	var listed, btree uint64
	for ag := 0; ag < int(ours.AgCount); ag++ {
		f := oracle.ParseFields(oracle.DB(t, img, fmt.Sprintf("agf %d", ag), "print freeblks flcount btreeblks"))
		for k, dst := range map[string]*uint64{"freeblks": &listed, "flcount": &listed, "btreeblks": &btree} {
			n, err := strconv.ParseUint(f[k], 10, 64)
			if err != nil {
				t.Fatalf("agf %d %s: %q", ag, k, f[k])
			}
			*dst += n
		}
	}
	if total != listed {
		t.Fatalf("xfs_db freesp counts %d free blocks, the AGFs %d", total, listed)
	}
	if ours.FreeBlocks != total+btree {
		t.Fatalf("engine reports %d free blocks, xfs_db %d + %d free-space btree blocks", ours.FreeBlocks, total, btree)
	}
	t.Logf("free blocks: xfs_db freesp %d, engine %d (incl. free lists and btree blocks)", total, ours.FreeBlocks)

	// The kernel sees exactly what the engine sees.
	oracle.Require(t, oracle.ToolMount)
	ro := openRO(t, img)
	mine := engineSnapshot(t, ro)
	ro.Close()
	mnt := oracle.Mount(t, img, true)
	kernel, err := oracle.SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, kernel, mine)
}
