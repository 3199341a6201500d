package btree

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"
)

// TestFaults makes the store fail one call (an allocation, a read or a
// free) somewhere inside random inserts, deletes and root moves. The
// operation must return that error, leave the Tree's root fields as they
// were and not call RootChanged; after the caller cancels (the store goes
// back to its state before the operation) the tree is intact, and the
// cursor can be used again after a new Lookup.
func TestFaults(t *testing.T) {
	for _, kind := range []string{"bnobt", "inobt", "bmbt"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			seed := regressionSeeds[0]
			if !testing.Short() {
				seed = rand.Int63()
			}
			runFaults(t, kind, seed)
		})
	}
}

func runFaults(t *testing.T, kind string, seed int64) {
	g := gens[kind]
	rng := rand.New(rand.NewSource(seed))
	geo := testGeo(512)
	h := &harness{t: t, seed: seed, rng: rng, g: g, m: newModel(g), soft: true}
	if g.kind.inodeRooted() {
		h.tr, h.s = newInodeTree(g.kind, geo, rng, 56)
		h.extents = true
		h.forkSizes = []int{24, 56, 88}
	} else {
		h.tr, h.s = newAGTree(t, g.kind, geo, rng)
	}
	h.tr.RootChanged = func() { h.rootCalls++ }
	h.c = h.tr.NewCursor()

	fired := map[string]int{}
	grow := true
	for h.op = 1; h.op <= 20000; h.op++ {
		if grow && len(h.m.recs) >= 2500 {
			grow = false
		}
		if !grow && len(h.m.recs) == 0 {
			break
		}
		// Most operations run without a fault, so that the tree grows.
		armed := rng.Intn(10) < 4
		if !armed {
			h.step(grow)
			h.s.commit()
			continue
		}
		// Before the operation: what the caller would restore.
		snap := h.s.snapshot()
		root, levels, iroot, fork := h.tr.Root, h.tr.Levels, h.tr.IRoot, h.tr.ForkSize
		mrecs := append([][]byte(nil), h.m.recs...)
		extents := h.extents

		what := []string{"alloc", "alloc", "free", "free", "read"}[rng.Intn(5)]
		n := 1
		if what == "read" {
			n = 1 + rng.Intn(8)
		}
		switch what {
		case "alloc":
			h.s.failAlloc = n
		case "read":
			h.s.failRead = n
		case "free":
			h.s.failFree = n
		}
		err := catch(func() {
			// Allocations come from inserts, frees from deletes.
			switch {
			case what == "alloc" || what == "free" && grow:
				h.insert()
			case what == "free":
				h.delete()
			default:
				h.step(grow)
			}
		})
		h.s.failAlloc, h.s.failRead, h.s.failFree = 0, 0, 0
		if err == nil {
			h.s.commit()
			if h.op%200 == 0 {
				h.verify()
			}
			continue
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("seed %d op %d: %v", seed, h.op, err)
		}
		fired[what]++
		// Cancel: the store, the fork and the model go back.
		h.s.restore(snap)
		h.tr.Root, h.tr.Levels, h.tr.IRoot, h.tr.ForkSize = root, levels, iroot, fork
		h.m.recs, h.extents = mrecs, extents
		h.verify()
	}
	h.verify()
	if h.height < 3 {
		t.Errorf("seed %d: the tree only reached height %d", seed, h.height)
	}
	for _, w := range []string{"alloc", "read", "free"} {
		if fired[w] < 5 {
			t.Errorf("seed %d: only %d injected %s failures hit an operation", seed, fired[w], w)
		}
	}
	t.Logf("seed %d: %d operations, failures %v, height up to %d", seed, h.op, fired, h.height)
}

// step is one random operation of the fault test.
func (h *harness) step(grow bool) {
	switch r := h.rng.Intn(10); {
	case grow && r < 6, r < 2:
		h.insert()
	case r < 9:
		h.delete()
	default:
		h.resize()
	}
}

// catch runs a harness operation and returns the injected failure that
// aborted it, if any (the harness panics with an opError in soft mode).
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(opError)
			if !ok {
				panic(r)
			}
			err = e.err
		}
	}()
	f()
	return nil
}

// opError carries an operation's error out of harness code in fault runs.
type opError struct{ err error }

func (e opError) Error() string { return e.err.Error() }

// TestFaultsTouchOnlyDirtyBlocks checks that injected failures never corrupt the bytes of a
// block that the caller did not hand to Dirty, Alloc or Free: cancelling
// the transaction must be enough.
func TestFaultsTouchOnlyDirtyBlocks(t *testing.T) {
	tr, s := buildBnobt(t, seq(1, 2, 3000))
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 300; i++ {
		snap := s.snapshot()
		root, levels := tr.Root, tr.Levels
		s.failRead = 1 + rng.Intn(5)
		c := tr.NewCursor()
		st := uint32(2 + 2*rng.Intn(3000))
		found, err := c.Lookup(EQ, bnoRec(st))
		if err == nil && !found {
			err = c.Insert(bnoRec(st))
		}
		s.failRead = 0
		for p, b := range s.blocks {
			if old, ok := snap.blocks[p]; ok && !s.dirty[p] && !bytes.Equal(old, b.buf) {
				t.Fatalf("block %d changed without Dirty", p)
			}
		}
		if err != nil {
			if !errors.Is(err, errInjected) {
				t.Fatal(err)
			}
			s.restore(snap)
			tr.Root, tr.Levels = root, levels
		}
		s.commit()
	}
	if _, err := tr.Check(nil); err != nil {
		t.Fatal(err)
	}
}
