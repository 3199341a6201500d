package btree

import (
	"errors"
	"sort"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// FuzzDamagedTree damages the blocks of a small three-level tree and runs
// every operation on it: nothing may panic, and errors other than the
// misuse sentinels must be corruption. Each 4 bytes of input pick a block,
// an offset and a value to XOR there; when the first byte is odd, the
// damaged blocks get a valid CRC again so that the structural checks are
// what has to catch the damage.
func FuzzDamagedTree(f *testing.F) {
	f.Add([]byte{1, 0, 0, 6, 0xFF})                // numrecs of the root
	f.Add([]byte{1, 3, 0, 8, 0x01})                // a sibling pointer
	f.Add([]byte{0, 7, 1, 0, 0x10})                // a record, CRC left bad
	f.Add([]byte{1, 2, 0, 60, 0x80, 9, 0, 5, 0x2}) // a key and a level
	f.Add([]byte{1, 1, 1, 200, 0x40})              // a node pointer
	tr, s := buildBnobt(f, seq(1, 2, 2500))
	clean, root, levels := s.snapshot(), tr.Root, tr.Levels
	ptrs := make([]uint64, 0, len(s.blocks))
	for p := range s.blocks {
		ptrs = append(ptrs, p)
	}
	sort.Slice(ptrs, func(i, j int) bool { return ptrs[i] < ptrs[j] })
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 || len(in) > 64 {
			return
		}
		s.restore(clean)
		tr.Root, tr.Levels = root, levels
		reseal := in[0]&1 == 1
		for m := in[1:]; len(m) >= 4; m = m[4:] {
			b := s.blocks[ptrs[int(m[0])%len(ptrs)]]
			b.buf[(int(m[1])<<8|int(m[2]))%len(b.buf)] ^= m[3]
			if reseal {
				tr.Kind.Finalize(b.buf, 0)
			}
		}
		ok := func(err error) {
			t.Helper()
			if err != nil && !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, ErrExists) &&
				!errors.Is(err, ErrKeyOrder) && !errors.Is(err, ErrPosition) && !errors.Is(err, ErrNoRecord) {
				t.Fatalf("unexpected error: %v", err)
			}
		}
		_, err := tr.Check(nil)
		ok(err)
		c := tr.NewCursor()
		more, err := c.First()
		for n := 0; more && err == nil && n < 3000; n++ {
			more, err = c.Increment()
		}
		ok(err)
		more, err = c.Last()
		for n := 0; more && err == nil && n < 3000; n++ {
			more, err = c.Decrement()
		}
		ok(err)
		for _, k := range []uint32{0, 1, 2, 2500, 2501, 4999, 5000, 9000} {
			for _, d := range []Dir{LE, EQ, GE} {
				_, err := c.Lookup(d, bnoRec(k))
				ok(err)
			}
			if found, err := c.Lookup(EQ, bnoRec(k)); err == nil && found {
				ok(c.Update(u32s(k, 1)))
				ok(c.Delete())
			} else if err == nil {
				ok(c.Insert(bnoRec(k)))
			}
		}
	})
}
