package ialloc

import (
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestInodeAllocFree allocates thousands of inodes (new chunks, inobt and
// finobt splits), frees a random half, allocates again, frees everything,
// and requires the counters and xfs_repair to agree. Frees go one by one
// (Free) or by the transaction (FreeInodes).
func TestInodeAllocFree(t *testing.T) {
	h := newHarness(t, 256<<20, mkfs.Options{BlockSize: 1024})
	count0, free0 := h.agiCounts()
	root := h.Sb.RootIno
	rng := rand.New(rand.NewSource(3))
	live := map[format.Ino]bool{}
	alloc := func(n int) {
		for done := 0; done < n; {
			tx := h.begin()
			batch := min(n-done, 1+rng.Intn(20))
			for i := 0; i < batch; i++ {
				ino, err := tx.Alloc(root, rng.Intn(4) == 0)
				if err != nil {
					t.Fatal(err)
				}
				if live[ino] {
					t.Fatalf("inode %d handed out twice", ino)
				}
				h.setInode(tx, ino, true)
				live[ino] = true
			}
			h.commit(tx)
			done += batch
		}
	}
	// release frees inos in transactions of up to 100, each by Free
	// calls or by one FreeInodes call, at random.
	release := func(inos []format.Ino) {
		for len(inos) > 0 {
			batch := inos[:min(len(inos), 1+rng.Intn(100))]
			inos = inos[len(batch):]
			tx := h.begin()
			together := rng.Intn(2) == 0
			for _, ino := range batch {
				h.setInode(tx, ino, false)
				delete(live, ino)
				if !together {
					if err := tx.Free(ino); err != nil {
						t.Fatal(err)
					}
				}
			}
			if together {
				if err := tx.FreeInodes(batch); err != nil {
					t.Fatal(err)
				}
			}
			h.commit(tx)
		}
	}
	alloc(3000)
	var half []format.Ino
	for ino := range live {
		if rng.Intn(2) == 0 {
			half = append(half, ino)
		}
	}
	release(half)
	alloc(1000)
	count, free := h.agiCounts()
	if got := int(count - free - (count0 - free0)); got != len(live) {
		t.Fatalf("AGIs count %d inodes in use beyond the start, model %d", got, len(live))
	}
	if uint64(h.icount.Load()) != count || uint64(h.ifree.Load()) != free {
		t.Fatalf("in-core counters %d/%d, AGIs %d/%d", h.icount.Load(), h.ifree.Load(), count, free)
	}
	var all []format.Ino
	for ino := range live {
		all = append(all, ino)
	}
	release(all)
	h.writeCounters()
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, h.Path)
}
