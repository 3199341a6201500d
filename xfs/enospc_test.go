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
// attributes until every kind of allocation fails with ErrNoSpace, deletes
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
	t.Logf("refill: %d files", n)
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
