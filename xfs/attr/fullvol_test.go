package attr

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// TestFullVolume runs every Set of a growing fork first on a volume with
// no free block, then with one, two, ... until it succeeds: every attempt
// that runs out of space must fail with the fork's error and, once
// cancelled, leave the fork exactly as it was. That covers a failure at
// each allocation a Set makes: short form to leaf, remote value blocks,
// leaf to node, leaf splits (also double ones), node and root splits.
func TestFullVolume(t *testing.T) {
	for _, c := range []struct {
		bs, n int
	}{{4096, 400}, {1024, 700}} {
		t.Run(fmt.Sprint(c.bs), func(t *testing.T) {
			t.Parallel()
			f := newMemFork(testGeometry(c.bs, 512), testIno, format.FmtExtents, 16)
			rng := rand.New(rand.NewPCG(7, uint64(c.bs)))
			want := map[string][]byte{}
			var names []string
			fails := 0
			for i := 0; i < c.n; i++ {
				name := fmt.Sprintf("name-%04d-%s", i, bytes.Repeat([]byte{'x'}, rng.IntN(60)))
				if i%7 == 6 { // now and then replace an earlier one instead
					name = names[rng.IntN(len(names))]
				}
				n := rng.IntN(50)
				switch rng.IntN(10) {
				case 0:
					n = 300
				case 1:
					n = 900 + rng.IntN(3000)
				case 2:
					n = 5000 + rng.IntN(20000)
				}
				value := bytes.Repeat([]byte{byte(i)}, n)
				for extra := 0; ; extra++ {
					before := f.state()
					f.Begin()
					f.BlockLimit = f.Blocks() + extra
					err := Set(f, User, []byte(name), value, 0)
					f.BlockLimit = 0
					if err == nil {
						f.Commit()
						break
					}
					if !errors.Is(err, fork.ErrMemFull) {
						t.Fatalf("set %d (%s, %d bytes) with %d free blocks: %v", i, name, n, extra, err)
					}
					fails++
					f.Cancel()
					if !f.state().equal(before) {
						t.Fatalf("set %d (%s) failed with %d free blocks and changed the fork", i, name, extra)
					}
				}
				if _, ok := want[name]; !ok {
					names = append(names, name)
				}
				want[name] = value
				if i%50 == 0 || i == c.n-1 {
					if err := Check(f); err != nil {
						t.Fatalf("after set %d: %v", i, err)
					}
					for k, v := range want {
						got, err := Get(f, User, []byte(k))
						if err != nil || !bytes.Equal(got, v) {
							t.Fatalf("after set %d: Get %s: %d bytes, %v; want %d bytes", i, k, len(got), err, len(v))
						}
					}
				}
			}
			form, _ := FormOf(f)
			t.Logf("%d attributes in %v form, %d blocks; %d attempts ran out of space", len(want), form, f.Blocks(), fails)
		})
	}
}
