package attr

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestBatches runs several sets and removes in one transaction (as an S3
// PUT storing its metadata does), then commits or cancels the lot.
func TestBatches(t *testing.T) {
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(11, uint64(bs)))
			f := newMemFork(testGeometry(bs, 512), testIno, format.FmtLocal, 20)
			model := map[string][]byte{}
			for batch := 0; batch < 400; batch++ {
				next := map[string][]byte{}
				for k, v := range model {
					next[k] = v
				}
				f.Begin()
				for i := 0; i < 1+rng.IntN(6); i++ {
					name := fmt.Sprintf("n%03d", rng.IntN(120))
					if rng.IntN(4) == 0 {
						err := Remove(f, User, []byte(name))
						if _, ok := next[name]; ok != (err == nil) || (err != nil && !errors.Is(err, ErrNoData)) {
							t.Fatalf("batch %d: remove %s: %v (present %v)", batch, name, err, ok)
						}
						delete(next, name)
						continue
					}
					n := rng.IntN(60)
					if rng.IntN(8) == 0 {
						n = 300 + rng.IntN(9000)
					}
					v := bytes.Repeat([]byte{byte(batch)}, n)
					if err := Set(f, User, []byte(name), v, 0); err != nil {
						t.Fatalf("batch %d: set %s: %v", batch, name, err)
					}
					next[name] = v
					// Reads inside the transaction see its own changes.
					if got, err := Get(f, User, []byte(name)); err != nil || !bytes.Equal(got, v) {
						t.Fatalf("batch %d: get %s inside the transaction: %v", batch, name, err)
					}
				}
				if rng.IntN(5) == 0 {
					f.Cancel()
				} else {
					f.Commit()
					model = next
				}
				if err := Check(f); err != nil {
					t.Fatalf("batch %d: %v", batch, err)
				}
				got := map[string][]byte{}
				if err := List(f, func(_ uint8, name, value []byte) error {
					got[string(name)] = bytes.Clone(value)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(got) != len(model) {
					t.Fatalf("batch %d: %d attributes, want %d", batch, len(got), len(model))
				}
				for k, v := range model {
					if !bytes.Equal(got[k], v) {
						t.Fatalf("batch %d: %s has %d bytes, want %d", batch, k, len(got[k]), len(v))
					}
				}
			}
		})
	}
}
