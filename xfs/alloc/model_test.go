package alloc

import (
	"errors"
	"math/rand"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// checkAG verifies both free-space trees of an AG against each other and
// against the AGF counters, and returns the free extents.
func checkAG(t *testing.T, h *harness, ag format.AgNumber) []format.AllocRec {
	t.Helper()
	a := h.lock(ag)
	defer a.t.Cancel()
	var byBno, byCnt []format.AllocRec
	blocks := 0
	for which, out := range map[int]*[]format.AllocRec{format.BtBno: &byBno, format.BtCnt: &byCnt} {
		st, err := a.Tree(which).Check(func(rec []byte) error {
			*out = append(*out, format.DecodeAllocRec(rec))
			return nil
		})
		if err != nil {
			t.Fatalf("AG %d tree %d: %v", ag, which, err)
		}
		blocks += st.Blocks - 1
	}
	sort.Slice(byCnt, func(i, j int) bool { return byCnt[i].StartBlock < byCnt[j].StartBlock })
	if len(byBno) != len(byCnt) {
		t.Fatalf("AG %d: bnobt has %d records, cntbt %d", ag, len(byBno), len(byCnt))
	}
	var free, longest uint32
	for i := range byBno {
		if byBno[i] != byCnt[i] {
			t.Fatalf("AG %d: trees differ at %d: %v vs %v", ag, i, byBno[i], byCnt[i])
		}
		if i > 0 && uint64(byBno[i-1].StartBlock)+uint64(byBno[i-1].BlockCount) >= uint64(byBno[i].StartBlock) {
			t.Fatalf("AG %d: free extents %v and %v touch or overlap (not merged)", ag, byBno[i-1], byBno[i])
		}
		free += byBno[i].BlockCount
		longest = max(longest, byBno[i].BlockCount)
	}
	if a.h.FreeBlks != free || a.h.Longest != longest || a.h.BtreeBlks != uint32(blocks) {
		t.Fatalf("AG %d: AGF says free %d longest %d btreeblks %d; trees say %d %d %d",
			ag, a.h.FreeBlks, a.h.Longest, a.h.BtreeBlks, free, longest, blocks)
	}
	return byBno
}

func agfLevels(h *harness, ag format.AgNumber) [2]uint32 {
	a := h.lock(ag)
	defer a.t.Cancel()
	return [2]uint32{a.h.Levels[format.BtBno], a.h.Levels[format.BtCnt]}
}

// agTotalFree is what the AG contributes to sb_fdblocks.
func agTotalFree(h *harness, ag format.AgNumber) uint32 {
	a := h.lock(ag)
	defer a.t.Cancel()
	return a.h.FreeBlks + a.h.FlCount + a.h.BtreeBlks
}

// TestAllocatorModel allocates and frees random extents in one AG over
// many transactions (some cancelled), checks the trees after each batch,
// frees everything and requires xfs_repair to find the volume clean.
func TestAllocatorModel(t *testing.T) {
	for _, bs := range []int{1024, 4096} {
		for seed := int64(1); seed <= 3; seed++ {
			allocatorModel(t, bs, seed)
		}
	}
}

type agExtent struct {
	bno format.AgBlock
	n   uint32
}

func allocatorModel(t *testing.T, blockSize int, seed int64) {
	h := newHarness(t, 256<<20, mkfs.Options{BlockSize: blockSize})
	const ag = 1
	before := agTotalFree(h, ag)
	rng := rand.New(rand.NewSource(seed))
	held := map[agExtent]bool{}
	for round := 0; round < 1200; round++ {
		a := h.lock(ag)
		tx := a.t
		next := make(map[agExtent]bool, len(held))
		for e := range held {
			next[e] = true
		}
		for op := 0; op < 1+rng.Intn(8); op++ {
			if len(next) > 0 && rng.Intn(3) == 0 {
				for e := range next {
					if err := a.Free(e.bno, e.n); err != nil {
						t.Fatalf("bs %d seed %d round %d free %v: %v", blockSize, seed, round, e, err)
					}
					delete(next, e)
					break
				}
				continue
			}
			r := Request{MinLen: 1, MaxLen: uint32(1 + rng.Intn(64))}
			if rng.Intn(2) == 0 {
				r.Goal = format.AgBlock(1 + rng.Intn(int(h.geo.AgBlocks)-1))
			}
			if rng.Intn(5) == 0 {
				r.Align = 8
			}
			bno, n, err := a.Alloc(r)
			if errors.Is(err, ErrBusyOnly) {
				continue
			}
			if err != nil {
				t.Fatalf("bs %d seed %d round %d alloc %+v: %v", blockSize, seed, round, r, err)
			}
			if r.Align > 1 && bno%8 != 0 {
				t.Fatalf("aligned allocation at %d", bno)
			}
			for e := range next {
				if uint64(e.bno) < uint64(bno)+uint64(n) && uint64(bno) < uint64(e.bno)+uint64(e.n) {
					t.Fatalf("allocation %d+%d overlaps held %v", bno, n, e)
				}
			}
			next[agExtent{bno, n}] = true
		}
		if rng.Intn(8) == 0 {
			tx.Cancel()
			continue
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		held = next
		if round%40 == 0 {
			checkAG(t, h, ag)
			if rng.Intn(2) == 0 {
				h.sync()
			}
		}
	}
	recs := checkAG(t, h, ag)
	maxLevel := agfLevels(h, ag)
	t.Logf("bs %d seed %d: %d free extents at the end, tree heights %v", blockSize, seed, len(recs), maxLevel)
	if blockSize == 1024 && maxLevel[0] < 2 {
		t.Errorf("the test never split the free-space trees")
	}
	a := h.lock(ag)
	for e := range held {
		if err := a.Free(e.bno, e.n); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.t.Commit(); err != nil {
		t.Fatal(err)
	}
	checkAG(t, h, ag)
	if after := agTotalFree(h, ag); after != before {
		t.Fatalf("AG free total %d after freeing everything, %d before", after, before)
	}
	h.sync()
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, h.Path)
}
