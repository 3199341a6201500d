package refcount

import (
	"math/rand"
	"path/filepath"
	"slices"
	"testing"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestAllocatorBacked runs random increments, and the decrements that
// undo them, on AG 1 of a volume mkfs.xfs made, through Open: tree
// blocks come from the AG's free space and go back to it, one
// transaction per change. After every change the records equal the
// model's and Check passes (agf_refcount_blocks included); once every
// increment is undone the tree is one empty leaf again, the AG's free
// space is what it was, and xfs_repair -n passes the volume.
func TestAllocatorBacked(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "vol.img")
	oracle.Mkfs(t, img, 64<<20, "-b", "size=1024", "-m", "reflink=1")
	im := openImage(t, img)
	const ag = 1
	agfBefore, err := alloc.Committed(im.cache.Read, &im.geo, ag)
	if err != nil {
		t.Fatal(err)
	}
	// The blocks a file would map: every block of the region counts 1.
	var region Extent
	im.change(func(tx *alloc.Tx) error {
		a, err := tx.Lock(ag)
		if err != nil {
			return err
		}
		bno, n, err := a.Alloc(alloc.Request{MinLen: 4000, MaxLen: 4000})
		region = Extent{bno, n}
		return err
	})
	m := newBlockModel(region.Start, int(region.Len))

	rng := rand.New(rand.NewSource(7))
	var active []Extent // increments not undone yet
	steps, tallest := 1500, 0
	if testing.Short() {
		steps = 400
	}
	for step := 0; step < steps || len(active) > 0; step++ {
		var e Extent
		delta := 1
		if len(active) > 0 && (step >= steps*3/5 || rng.Intn(10) < 3) {
			i := rng.Intn(len(active))
			e, delta = active[i], -1
			active = slices.Delete(active, i, i+1)
		} else {
			i := rng.Intn(int(region.Len) - 6)
			e = Extent{region.Start + format.AgBlock(i), uint32(1 + rng.Intn(6))}
			active = append(active, e)
		}
		im.change(func(tx *alloc.Tx) error {
			tr, err := Open(tx, ag)
			if err != nil {
				return err
			}
			free, err := tr.Adjust(e.Start, e.Len, delta)
			if len(free) > 0 {
				t.Errorf("step %d: %+d %v freed %v", step, delta, e, free)
			}
			return err
		})
		for b := e.Start; b < e.End(); b++ {
			m.count[b-region.Start] = uint32(int(m.count[b-region.Start]) + delta)
		}
		im.change(func(tx *alloc.Tx) error {
			tr, err := Open(tx, ag)
			if err != nil {
				return err
			}
			if got, want := records(t, tr), m.records(); !slices.Equal(got, want) {
				t.Fatalf("step %d (%+d %v): records differ from the model\n%s", step, delta, e, firstDiff(got, want))
			}
			_, err = tr.Check()
			tallest = max(tallest, tr.Levels())
			return err
		})
	}
	im.change(func(tx *alloc.Tx) error {
		a, err := tx.Lock(ag)
		if err != nil {
			return err
		}
		return a.Free(region.Start, region.Len)
	})
	agf, err := alloc.Committed(im.cache.Read, &im.geo, ag)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tallest tree %d levels; after: %d refcount blocks, level %d", tallest, agf.RefcountBlocks, agf.RefcountLevel)
	if tallest < 2 || agf.RefcountBlocks != 1 || agf.RefcountLevel != 1 {
		t.Errorf("tree grew to %d levels and ended with %d blocks, %d levels: want 2+, then one leaf", tallest, agf.RefcountBlocks, agf.RefcountLevel)
	}
	if got, was := agf.FreeBlks+agf.FlCount, agfBefore.FreeBlks+agfBefore.FlCount; got != was {
		t.Errorf("AG %d has %d free blocks (with the free list), had %d", ag, got, was)
	}
	im.writeCounters()
	im.close()
	oracle.Repair(t, img)
}
