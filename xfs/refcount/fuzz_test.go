package refcount

import (
	"errors"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// FuzzRecord feeds arbitrary bytes to the record decoder and checker: a
// record that passes Check has a domain, its count and range obey the
// rules, and encoding it gives back the bytes it came from.
func FuzzRecord(f *testing.F) {
	seed := func(r Rec) []byte { return r.bytes() }
	f.Add(seed(sh(100, 10, 2)))
	f.Add(seed(cw(512, 10)))
	f.Add(seed(sh(0, 0, 0)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1})
	g := memGeo(4096)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < format.RefcountShape.RecLen {
			return
		}
		b = b[:format.RefcountShape.RecLen]
		r := DecodeRec(b)
		err := r.Check(g, memAG)
		if err != nil {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("%v: error %v is not a corruption", r, err)
			}
			return
		}
		if string(r.bytes()) != string(b) {
			t.Fatalf("%v encodes to % x, decoded from % x", r, r.bytes(), b)
		}
		if r.Len == 0 || uint64(r.Start)+uint64(r.Len) > uint64(g.AgSize(memAG)) || r.Start <= headerBlock(g) {
			t.Fatalf("%v passed Check", r)
		}
		if (r.Domain == CoW) != (r.Count == 1) {
			t.Fatalf("%v passed Check", r)
		}
	})
}

// FuzzLeaf makes a tree whose root leaf holds arbitrary records (valid
// header, valid CRC, any content) and runs every operation on it: none
// may panic or loop, and each either works or reports corruption.
func FuzzLeaf(f *testing.F) {
	var recs []byte
	for _, r := range []Rec{sh(100, 10, 2), sh(110, 5, 3), cw(200, 4)} {
		recs = append(recs, r.bytes()...)
	}
	f.Add(recs, uint32(105), uint32(20), true)
	f.Add(append(sh(120, 10, 2).bytes(), sh(100, 30, 2).bytes()...), uint32(100), uint32(40), false)
	f.Fuzz(func(t *testing.T, recs []byte, bno, n uint32, inc bool) {
		tr, s := newMemTree(t, 512)
		leaf := s.blocks[tr.bt.Root].buf
		nrec := min(len(recs)/format.RefcountShape.RecLen, format.RefcountShape.MaxRecs(512, true))
		copy(leaf[format.ShortBlockHdrSize:], recs[:nrec*format.RefcountShape.RecLen])
		leaf[6], leaf[7] = byte(nrec>>8), byte(nrec)
		tr.bt.Kind.Finalize(leaf, 0)
		bno, n = bno%70000, n%70000
		ok := func(what string, err error) {
			if err != nil && !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, format.ErrInvalid) {
				t.Fatalf("%s: %v", what, err)
			}
		}
		_, err := tr.Check()
		ok("check", err)
		ok("walk", tr.Walk(func(Rec) error { return nil }))
		_, err = tr.Shared(format.AgBlock(bno), n)
		ok("shared", err)
		_, err = tr.CoWStaging()
		ok("staging", err)
		delta := -1
		if inc {
			delta = 1
		}
		_, err = tr.Adjust(format.AgBlock(bno), n, delta)
		ok("adjust", err)
		s.commit()
		ok("stage", tr.AddCoWStaging(format.AgBlock(bno), n))
		s.commit()
		ok("unstage", tr.RemoveCoWStaging(format.AgBlock(bno), n))
		s.commit()
		_, err = tr.CleanCoWStaging()
		ok("clean", err)
	})
}
