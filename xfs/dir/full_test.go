package dir_test

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
)

// TestFullVolume grows directories with a block budget that is always
// exactly spent: every Add that needs a block (a conversion, a new data,
// leaf, node or free-index block, a split, a new root) fails with the
// fork's error, possibly after part of its allocations succeeded; after
// Cancel the directory must be exactly as before. Then the budget grows by
// one block and the Add is retried. Removes never allocate.
func TestFullVolume(t *testing.T) {
	t.Parallel()
	for _, gc := range []geoCase{geo("4k-attrfork"), geo("d1k"), geo("n16k")} {
		t.Run(gc.name, func(t *testing.T) {
			t.Parallel()
			m := newDir(t, gc, 128)
			g := testGeometry(gc)
			rng := rand.New(rand.NewSource(7))
			ig := inoGen{&g, rng}
			model := map[string]entry{}
			var names []string
			failures := map[dir.Form]int{}
			target := 1500
			if gc.dirLog > 0 {
				target = 3000
			}
			if gc.name == "d1k" {
				target = 4000 // a three-level tree on 1 KiB blocks
			}
			for i := 0; len(model) < target; i++ {
				var name string
				if rng.Intn(3) == 0 {
					name = fmt.Sprintf("%0*d", 1+rng.Intn(60), i)
				} else {
					name = fmt.Sprintf("f%07d", i)
				}
				e := entry{ig.next(2), 1}
				form, _ := dir.GetForm(m)
				for {
					fp := fingerprint(m)
					m.BlockLimit = max(m.Blocks(), 1)
					m.Begin()
					err := dir.Add(m, []byte(name), e.ino, e.ftype)
					if err == nil {
						m.Commit()
						break
					}
					if !errors.Is(err, fork.ErrMemFull) {
						t.Fatalf("add %q: %v", name, err)
					}
					m.Cancel()
					failures[form]++
					if fingerprint(m) != fp {
						t.Fatalf("add %q failed (%v) and Cancel did not restore the directory", name, err)
					}
					if err := dir.Check(m); err != nil {
						t.Fatal(err)
					}
					// Allow one more block and retry.
					m.BlockLimit = m.Blocks() + 1
					m.Begin()
					err = dir.Add(m, []byte(name), e.ino, e.ftype)
					if err == nil {
						m.Commit()
						break
					}
					if !errors.Is(err, fork.ErrMemFull) {
						t.Fatalf("add %q: %v", name, err)
					}
					m.Cancel()
					if fingerprint(m) != fp {
						t.Fatalf("add %q failed (%v) and Cancel did not restore the directory", name, err)
					}
					m.BlockLimit = 0
					m.Begin()
					if err := dir.Add(m, []byte(name), e.ino, e.ftype); err != nil {
						t.Fatalf("add %q with no limit: %v", name, err)
					}
					m.Commit()
					break
				}
				model[name] = e
				names = append(names, name)
			}
			if err := dir.Check(m); err != nil {
				t.Fatal(err)
			}
			// Shrink with no block to spare: removes never allocate.
			m.BlockLimit = m.Blocks()
			rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			for i, name := range names {
				m.Begin()
				if _, err := dir.Remove(m, []byte(name)); err != nil {
					t.Fatalf("remove %q on a full volume: %v", name, err)
				}
				m.Commit()
				m.BlockLimit = max(m.Blocks(), 1)
				delete(model, name)
				if i%200 == 0 {
					if err := dir.Check(m); err != nil {
						t.Fatal(err)
					}
				}
			}
			t.Logf("failed adds by form: %v", failures)
			for _, f := range []dir.Form{dir.ShortForm, dir.BlockForm, dir.LeafForm, dir.NodeForm} {
				// A limit of 0 means none, so the first block of a
				// one-block directory cannot be refused.
				if failures[f] == 0 && (f != dir.ShortForm || gc.dirLog > 0) {
					t.Errorf("no Add failed for lack of space in %v form", f)
				}
			}
			if got := listAll(t, m); len(got) != 0 {
				t.Fatalf("%d entries left", len(got))
			}
		})
	}
}
