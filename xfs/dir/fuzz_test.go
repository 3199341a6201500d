package dir_test

import (
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

// FuzzVerifiers feeds arbitrary bytes to every block verifier: they may
// refuse, never panic.
func FuzzVerifiers(f *testing.F) {
	m := buildDir(f, geo("4k"), 2500, 30)
	ranges, _ := m.Mapped()
	for _, r := range ranges {
		b, _, _ := m.Block(r[0])
		f.Add(append([]byte(nil), b...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 64 {
			return
		}
		for _, ops := range []interface {
			Verify(b []byte, d format.Daddr) error
		}{verifier(dir.DataOps.Verify), verifier(dir.Leaf1Ops.Verify), verifier(dir.LeafNOps.Verify), verifier(dir.TreeOps.Verify), verifier(dir.FreeOps.Verify), verifier(dir.NodeOps.Verify)} {
			_ = ops.Verify(b, 0)
		}
	})
}

type verifier func(b []byte, d format.Daddr) error

func (v verifier) Verify(b []byte, d format.Daddr) error { return v(b, d) }

// FuzzShortForm reads arbitrary short-form directories through the API.
func FuzzShortForm(f *testing.F) {
	m := buildDir(f, geo("4k"), 9, 5)
	f.Add(append([]byte(nil), m.Data...))
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 128})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 336 {
			return
		}
		g := testGeometry(geo("4k"))
		mem := fork.NewMem(g, testOwner, 336)
		mem.Data, mem.DiSize = b, int64(len(b))
		_ = dir.Check(mem)
		_, _, _ = dir.Lookup(mem, []byte("a"))
		_ = dir.List(mem, func([]byte, format.Ino, uint8) error { return nil })
		mem.Begin()
		_ = dir.Add(mem, []byte("new"), 200, 1)
		mem.Cancel()
	})
}

// FuzzShortFormSize reads arbitrary short-form directories whose di_size
// need not match the bytes (the seeds once fed the read path's own
// decoder in package format).
func FuzzShortFormSize(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 128, 1, 0, 0x60, 'a', 1, 0, 0, 0, 131}, int64(15))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		if len(b) > 336 {
			return
		}
		mem := fork.NewMem(testGeometry(geo("4k")), testOwner, 336)
		mem.Data, mem.DiSize = b, size
		_ = dir.Check(mem)
		_, _, _ = dir.Lookup(mem, []byte("a"))
		_, _, _ = dir.Lookup(mem, []byte(".."))
		_ = dir.List(mem, func([]byte, format.Ino, uint8) error { return nil })
	})
}
