package refcount

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

var leftoverCoW = regexp.MustCompile(`leftover CoW extent \((\d+)/(\d+)\) len (\d+)`)

// repairStaging runs xfs_repair -n on img and returns the CoW staging
// extents it reports as left over, per AG.
func repairStaging(t testing.TB, img string) map[format.AgNumber][]Extent {
	t.Helper()
	out, _ := oracle.RepairOutput(img)
	got := map[format.AgNumber][]Extent{}
	for _, m := range leftoverCoW.FindAllStringSubmatch(out, -1) {
		ag, _ := strconv.ParseUint(m[1], 10, 32)
		bno, _ := strconv.ParseUint(m[2], 10, 32)
		n, _ := strconv.ParseUint(m[3], 10, 32)
		got[format.AgNumber(ag)] = append(got[format.AgNumber(ag)], Extent{format.AgBlock(bno), uint32(n)})
	}
	return got
}

// staging returns every AG's staging extents as our code reads them.
func (im *image) staging() map[format.AgNumber][]Extent {
	im.t.Helper()
	out := map[format.AgNumber][]Extent{}
	for _, ag := range im.ags() {
		tr, err := Committed(im.cache.Read, &im.geo, ag)
		if err != nil {
			im.t.Fatal(err)
		}
		exts, err := tr.CoWStaging()
		if err != nil {
			im.t.Fatal(err)
		}
		if len(exts) > 0 {
			out[ag] = exts
		}
	}
	return out
}

// joined sorts extents and joins those that touch, as staging records
// merge.
func joined(exts []Extent) []Extent {
	exts = slices.Clone(exts)
	slices.SortFunc(exts, func(x, y Extent) int { return int(x.Start) - int(y.Start) })
	var out []Extent
	for _, e := range exts {
		if l := len(out) - 1; l >= 0 && out[l].End() == e.Start {
			out[l].Len += e.Len
			continue
		}
		out = append(out, e)
	}
	return out
}

func extentsEqual(a, b map[format.AgNumber][]Extent) bool {
	return maps.EqualFunc(a, b, func(x, y []Extent) bool { return slices.Equal(x, y) })
}

// TestKernelCleansOurStaging stages extents with this package on a
// volume mkfs.xfs made (blocks allocated through alloc, staged in pieces
// that must merge, with each other and with the staging beside them),
// and lets the kernel be the judge: xfs_repair -n
// reports exactly our staging records as leftover CoW extents, a mount
// that recovers a log frees them as the kernel frees leftovers after a
// crash, and then the free space is what it was and xfs_repair passes.
func TestKernelCleansOurStaging(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount, "xfs_io")
	img := filepath.Join(t.TempDir(), "vol.img")
	oracle.Mkfs(t, img, 64<<20, "-b", "size=1024", "-m", "reflink=1")
	im := openImage(t, img)
	freeBefore := im.freeExtents()
	want := map[format.AgNumber][]Extent{}
	for _, ag := range []format.AgNumber{1, 2} {
		for _, size := range []uint32{24, 5} {
			im.change(func(tx *alloc.Tx) error {
				a, err := tx.Lock(ag)
				if err != nil {
					return err
				}
				bno, n, err := a.Alloc(alloc.Request{MinLen: size, MaxLen: size})
				if err != nil {
					return err
				}
				tr, err := Open(tx, ag)
				if err != nil {
					return err
				}
				// Staged in three pieces, the last between the first two:
				// the records must merge into one.
				third := n / 3
				for _, p := range [][2]uint32{{0, third}, {2 * third, n - 2*third}, {third, third}} {
					if p[1] == 0 {
						continue
					}
					if err := tr.AddCoWStaging(bno+format.AgBlock(p[0]), p[1]); err != nil {
						return err
					}
				}
				want[ag] = append(want[ag], Extent{bno, n})
				return nil
			})
		}
	}
	for ag := range want {
		want[ag] = joined(want[ag])
	}
	if got := im.staging(); !extentsEqual(got, want) {
		t.Fatalf("staged %v, want %v", got, want)
	}
	im.writeCounters()
	im.close()
	if got := repairStaging(t, img); !extentsEqual(got, want) {
		t.Fatalf("xfs_repair -n reports leftover CoW extents %v, want ours %v", got, want)
	}

	// The kernel frees leftover staging only when it recovers a log
	// (xlog_recover_finish): a clean unmount leaves none. So a mount
	// changes something and shuts down without unmounting its log; the
	// next mount recovers it and cleans up.
	mnt := oracle.Mount(t, img, false)
	writeFile(t, filepath.Join(mnt, "touched"), 0, 0)
	if out, err := exec.Command("xfs_io", "-x", "-c", "shutdown -f", mnt).CombinedOutput(); err != nil {
		t.Fatalf("xfs_io shutdown: %v\n%s", err, out)
	}
	oracle.Unmount(t, mnt)
	if got := repairStaging(t, img); !extentsEqual(got, want) {
		t.Fatalf("after a mount without recovery, xfs_repair -n reports %v, want %v still", got, want)
	}
	mnt = oracle.Mount(t, img, false)
	oracle.Unmount(t, mnt)
	oracle.Repair(t, img)
	after := openImage(t, img)
	if recs := after.records(); len(recs) != 0 {
		t.Fatalf("records after the kernel's cleanup: %v", recs)
	}
	if got := after.freeExtents(); !extentsEqual(got, freeBefore) {
		t.Errorf("free extents after the kernel's cleanup:\n%v\nbefore staging:\n%v", got, freeBefore)
	}
}

// TestCleanKernelStaging takes staging records the kernel wrote: a
// volume is frozen (its metadata written in place) while a file's
// copy-on-write has blocks staged past the ones it remapped, and copied.
// On that copy our CoWStaging lists exactly what xfs_repair -n reports
// as leftover, and CleanCoWStaging plus the frees leave the refcount
// records and the free space the kernel's own mount-time cleanup leaves
// on another copy; the kernel mounts our result and xfs_repair passes it.
func TestCleanKernelStaging(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount, "xfs_freeze")
	img := filepath.Join(t.TempDir(), "vol.img")
	oracle.Mkfs(t, img, 64<<20, "-b", "size=1024", "-m", "reflink=1")
	frozen := filepath.Join(t.TempDir(), "frozen.img")
	{
		mnt := oracle.Mount(t, img, false)
		p := func(name string) string { return filepath.Join(mnt, name) }
		writeFile(t, p("a"), 0, 300*kb)
		clone(t, p("a"), p("b"), 0, 0, 0)
		clone(t, p("a"), p("c"), 0, 0, 0)
		for _, off := range []int64{10, 70, 71, 150} {
			writeFile(t, p("b"), off*kb, kb)
		}
		writeFile(t, p("c"), 200*kb, 3*kb)
		freeze := func(flag string) error {
			if out, err := exec.Command("xfs_freeze", flag, mnt).CombinedOutput(); err != nil {
				return fmt.Errorf("xfs_freeze %s: %v\n%s", flag, err, out)
			}
			return nil
		}
		if err := freeze("-f"); err != nil {
			t.Fatal(err)
		}
		// A frozen volume would hang the unmount of a failed test: thaw
		// it first (cleanups run last registered first), whatever
		// happened; the thaw below makes this one fail, harmlessly.
		t.Cleanup(func() { _ = freeze("-u") })
		oracle.CopySparse(t, img, frozen)
		if err := freeze("-u"); err != nil {
			t.Fatal(err)
		}
		oracle.Unmount(t, mnt)
	}
	want := repairStaging(t, frozen)
	n := 0
	for _, exts := range want {
		n += len(exts)
	}
	if n < 2 {
		t.Fatalf("the frozen copy has %d leftover CoW extents, want several: %v", n, want)
	}

	kern := copyImage(t, frozen)
	mnt := oracle.Mount(t, kern, false)
	oracle.Unmount(t, mnt)
	k := openImage(t, kern)
	kernRecs, kernFree := k.records(), k.freeExtents()
	k.close()

	ours := copyImage(t, frozen)
	im := openImage(t, ours)
	if got := im.staging(); !extentsEqual(got, want) {
		t.Fatalf("CoWStaging lists %v, xfs_repair -n %v", got, want)
	}
	for _, ag := range im.ags() {
		im.change(func(tx *alloc.Tx) error {
			tr, err := Open(tx, ag)
			if err != nil {
				return err
			}
			exts, err := tr.CleanCoWStaging()
			if err != nil {
				return err
			}
			if !slices.Equal(exts, want[ag]) {
				t.Errorf("AG %d: cleaned %v, want %v", ag, exts, want[ag])
			}
			a, err := tx.Lock(ag)
			if err != nil {
				return err
			}
			for _, e := range exts {
				if err := a.Free(e.Start, e.Len); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if d := diffRecords(im.records(), kernRecs); d != "" {
		t.Errorf("records after our cleanup differ from the kernel's: %s", d)
	}
	if got := im.freeExtents(); !extentsEqual(got, kernFree) {
		t.Errorf("free extents after our cleanup:\n%v\nafter the kernel's:\n%v", got, kernFree)
	}
	im.close()
	// The copy's log is dirty (a freeze covers it, it does not unmount
	// it): the kernel replays it, then finds nothing left to clean.
	mnt = oracle.Mount(t, ours, false)
	oracle.Unmount(t, mnt)
	oracle.Repair(t, ours)
	after := openImage(t, ours)
	if d := diffRecords(after.records(), kernRecs); d != "" {
		t.Errorf("records after the kernel mounted our result: %s", d)
	}
}
