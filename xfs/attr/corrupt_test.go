package attr

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestCorruption damages forks one byte at a time (fixing the CRC, so that
// the structure checks are what has to catch it) and requires every entry
// point to answer with an error or a plausible result, never a panic, and
// Check to flag what it must.
func TestCorruption(t *testing.T) {
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(5, uint64(bs)))
			f := newMemFork(testGeometry(bs, 512), testIno, format.FmtExtents, 16)
			var names [][]byte
			for i := 0; i < 300; i++ {
				name := []byte(fmt.Sprintf("attr-%03d", i))
				n := rng.IntN(40)
				if i%25 == 0 {
					n = 3000 + rng.IntN(6000)
				}
				if err := Set(f, User, name, bytes.Repeat([]byte{byte(i)}, n), 0); err != nil {
					t.Fatal(err)
				}
				f.Commit()
				names = append(names, name)
			}
			if form := formOf(t, f); form != FormNode {
				t.Fatalf("built a %v-form fork", form)
			}
			ranges, _ := f.Mapped()
			var offs []format.FileOff
			for _, r := range ranges {
				for o := r[0]; o < r[1]; o++ {
					offs = append(offs, o)
				}
			}
			caught := 0
			for i := 0; i < 1500; i++ {
				off := offs[rng.IntN(len(offs))]
				b, _, _ := f.Block(off)
				pos := 8 + rng.IntN(len(b)-8)
				if pos >= 12 && pos < 16 {
					continue // the CRC itself
				}
				old, flip := b[pos], byte(1+rng.IntN(255))
				rewrite(f, off, func(b []byte) { b[pos] ^= flip })
				if survive(t, f, names[rng.IntN(len(names))], fmt.Sprintf("block %d byte %d", off, pos)) {
					caught++
				}
				rewrite(f, off, func(b []byte) { b[pos] = old })
			}
			if err := Check(f); err != nil {
				t.Fatalf("repaired fork: %v", err)
			}
			t.Logf("%d of 1500 single-byte corruptions caught by Check", caught)
		})
	}
}

// rewrite changes committed block off with fn and fixes its CRC (leaves,
// nodes and remote blocks all keep it at 12), in a transaction of its
// own, so that the next read verifies it again as one from disk would.
func rewrite(f *memFork, off format.FileOff, fn func(b []byte)) {
	f.Begin()
	b, d, _ := f.Read(off, 1, nil)
	fn(b)
	format.SetCRC(b, 12)
	f.Dirty(d)
	f.Commit()
}

// TestCorruptShortForm does the same to short-form forks.
func TestCorruptShortForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	f := newKernelInode(t, 4096, 512)
	var names [][]byte
	for i := 0; i < 8; i++ {
		names = append(names, []byte(fmt.Sprintf("a%d", i)))
		mustSet(t, f, string(names[i]), bytes.Repeat([]byte{'v'}, 5+i))
	}
	caught := 0
	for i := 0; i < 2000; i++ {
		pos := rng.IntN(len(f.Data))
		old := f.Data[pos]
		f.Data[pos] ^= byte(1 + rng.IntN(255))
		if survive(t, f, names[rng.IntN(len(names))], fmt.Sprintf("short form byte %d", pos)) {
			caught++
		}
		f.Data[pos] = old
	}
	t.Logf("%d of 2000 single-byte corruptions caught by Check", caught)
}

// survive runs every entry point on a damaged fork, cancelling changes,
// and reports whether Check flagged it.
func survive(t *testing.T, f *memFork, name []byte, what string) (caught bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: panic: %v", what, r)
		}
	}()
	err := Check(f)
	if err != nil && !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("%s: Check returned %v, not a corruption error", what, err)
	}
	_, _ = Get(f, User, name)
	_ = List(f, func(uint8, []byte, []byte) error { return nil })
	_, _ = FormOf(f)
	f.Begin()
	_ = Set(f, User, name, []byte("new value"), 0)
	_ = Set(f, Trusted, []byte("another"), bytes.Repeat([]byte("v"), 5000), 0)
	_ = Remove(f, User, name)
	f.Cancel()
	return err != nil
}
