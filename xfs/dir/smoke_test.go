package dir_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
)

func TestSmokeGrowShrink(t *testing.T) {
	for _, gc := range geoCases {
		t.Run(gc.name, func(t *testing.T) {
			m := newDir(t, gc, 128)
			g := testGeometry(gc)
			ig := inoGen{&g, rand.New(rand.NewSource(1))}
			model := map[string]entry{}
			n := 3000
			if gc.dirLog >= 2 {
				n = 6000
			}
			var forms []dir.Form
			for i := 0; i < n; i++ {
				name := fmt.Sprintf("obj%012d", i)
				e := entry{ig.next(5), uint8(1 + i%7)}
				m.Begin()
				if err := dir.Add(m, []byte(name), e.ino, e.ftype); err != nil {
					t.Fatalf("add %d: %v", i, err)
				}
				m.Commit()
				model[name] = e
				f, err := dir.GetForm(m)
				if err != nil {
					t.Fatal(err)
				}
				if len(forms) == 0 || forms[len(forms)-1] != f {
					t.Logf("%d entries: %v", i+1, f)
					forms = append(forms, f)
				}
				if i%97 == 0 || i < 200 {
					if err := dir.Check(m); err != nil {
						t.Fatalf("check after add %d: %v", i, err)
					}
				}
			}
			if err := dir.Check(m); err != nil {
				t.Fatal(err)
			}
			got := listAll(t, m)
			if len(got) != len(model) {
				t.Fatalf("list has %d, want %d", len(got), len(model))
			}
			for k, v := range model {
				ino, ft, err := dir.Lookup(m, []byte(k))
				if err != nil || ino != v.ino || ft != v.ftype || got[k] != v {
					t.Fatalf("lookup %q: %d %d %v, want %v", k, ino, ft, err, v)
				}
			}
			for i := 0; i < n; i++ {
				name := fmt.Sprintf("obj%012d", (i*7919)%n)
				m.Begin()
				ino, err := dir.Remove(m, []byte(name))
				if err != nil {
					t.Fatalf("remove %s: %v", name, err)
				}
				m.Commit()
				if ino != model[name].ino {
					t.Fatalf("remove %s gave %d", name, ino)
				}
				delete(model, name)
				f, err := dir.GetForm(m)
				if err != nil {
					t.Fatal(err)
				}
				if forms[len(forms)-1] != f {
					t.Logf("%d entries: %v", len(model), f)
					forms = append(forms, f)
				}
				if i%97 == 0 || n-i < 200 {
					if err := dir.Check(m); err != nil {
						t.Fatalf("check after remove %d (%s): %v", i, name, err)
					}
				}
			}
			if f, _ := dir.GetForm(m); f != dir.ShortForm || m.Blocks() != 0 {
				t.Fatalf("empty directory is %v with %d blocks", f, m.Blocks())
			}
			if p, err := dir.Parent(m); err != nil || p != 128 {
				t.Fatalf("parent %d %v", p, err)
			}
			_ = format.FTDir
		})
	}
}
