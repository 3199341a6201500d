package dir_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/fork"
	"github.com/xfs3/xfs3/xfs/format"
)

func commit(t *testing.T, m *fork.Mem, f func() error) {
	t.Helper()
	m.Begin()
	if err := f(); err != nil {
		m.Cancel()
		t.Fatal(err)
	}
	m.Commit()
	if err := dir.Check(m); err != nil {
		t.Fatal(err)
	}
}

func TestNameRules(t *testing.T) {
	m := newDir(t, geo("4k"), 128)
	long := bytes.Repeat([]byte("x"), 256)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"", dir.ErrInvalid},
		{"a/b", dir.ErrInvalid},
		{"a\x00b", dir.ErrInvalid},
		{string(long), dir.ErrNameTooLong},
		{".", dir.ErrExist},
		{"..", dir.ErrExist},
	} {
		m.Begin()
		err := dir.Add(m, []byte(c.name), 200, format.FTReg)
		m.Cancel()
		if !errors.Is(err, c.err) {
			t.Errorf("Add(%q) = %v, want %v", c.name, err, c.err)
		}
	}
	commit(t, m, func() error { return dir.Add(m, long[:255], 200, format.FTReg) })
	m.Begin()
	if err := dir.Add(m, long[:255], 201, format.FTReg); !errors.Is(err, dir.ErrExist) {
		t.Errorf("second Add = %v", err)
	}
	if _, err := dir.Remove(m, []byte(".")); !errors.Is(err, dir.ErrInvalid) {
		t.Errorf("Remove(.) = %v", err)
	}
	if _, err := dir.Replace(m, []byte("."), 5, format.FTDir); !errors.Is(err, dir.ErrInvalid) {
		t.Errorf("Replace(.) = %v", err)
	}
	if _, err := dir.Remove(m, []byte("nope")); !errors.Is(err, dir.ErrNotFound) {
		t.Errorf("Remove(nope) = %v", err)
	}
	if _, err := dir.Replace(m, []byte("nope"), 300, format.FTReg); !errors.Is(err, dir.ErrNotFound) {
		t.Errorf("Replace(nope) = %v", err)
	}
	if err := dir.Add(m, []byte("zero"), 0, format.FTReg); !errors.Is(err, dir.ErrInvalid) {
		t.Errorf("Add with inode 0 = %v", err)
	}
	if err := dir.Add(m, []byte("badtype"), 300, 9); !errors.Is(err, dir.ErrInvalid) {
		t.Errorf("Add with file type 9 = %v", err)
	}
	m.Cancel()
	if _, _, err := dir.Lookup(m, nil); !errors.Is(err, dir.ErrInvalid) {
		t.Errorf("Lookup(\"\") = %v", err)
	}
	if ino, ft, err := dir.Lookup(m, []byte(".")); err != nil || ino != testOwner || ft != format.FTDir {
		t.Errorf("Lookup(.) = %d %d %v", ino, ft, err)
	}
}

// TestShortFormWideInodes follows the short-form sizes through 4-byte and
// 8-byte inode numbers (i8count), the conversions both ways and the
// conversion to block form of a Replace that no longer fits
// (xfs_dir2_sf_replace_needblock).
func TestShortFormWideInodes(t *testing.T) {
	gc := geo("4k-attrfork") // 192 bytes inline
	g := testGeometry(gc)
	big := inoGen{g: &g}.bigFixed()
	m := newDir(t, gc, 128)
	size := func(want int64) {
		t.Helper()
		if f, _ := dir.GetForm(m); f != dir.ShortForm || m.DiSize != want {
			t.Fatalf("form %v size %d, want short form of %d bytes", f, m.DiSize, want)
		}
	}
	size(6)
	commit(t, m, func() error { return dir.Add(m, []byte("a"), 200, format.FTReg) })
	size(6 + 9)
	commit(t, m, func() error { return dir.Add(m, []byte("b"), big, format.FTReg) })
	size(10 + 13 + 13)
	if m.Data[1] != 1 {
		t.Fatalf("i8count %d", m.Data[1])
	}
	commit(t, m, func() error { _, err := dir.Remove(m, []byte("b")); return err })
	size(15)
	commit(t, m, func() error { return dir.SetParent(m, big) })
	size(10 + 13)
	commit(t, m, func() error { _, err := dir.Remove(m, []byte("a")); return err })
	size(10) // count 0, i8count 1: only the parent is wide
	if m.Data[0] != 0 || m.Data[1] != 1 {
		t.Fatalf("count %d i8count %d", m.Data[0], m.Data[1])
	}
	if p, err := dir.Parent(m); err != nil || p != big {
		t.Fatalf("parent %d %v", p, err)
	}
	commit(t, m, func() error { return dir.SetParent(m, 128) })
	size(6)
	// 19 narrow entries of 1..19 bytes: 6 + sum(9+n) = 6 + 171 + 190 > 192,
	// so stop when the next would not fit.
	n := 0
	for n = 1; ; n++ {
		name := strings.Repeat("n", n%9+1) + fmt.Sprint(n)
		commit(t, m, func() error { return dir.Add(m, []byte(name), format.Ino(300+n), format.FTReg) })
		if f, _ := dir.GetForm(m); f != dir.ShortForm {
			break
		}
	}
	// Back to just fitting: remove the last one.
	last := strings.Repeat("n", n%9+1) + fmt.Sprint(n)
	commit(t, m, func() error { _, err := dir.Remove(m, []byte(last)); return err })
	if f, _ := dir.GetForm(m); f != dir.ShortForm {
		t.Fatalf("did not return to short form")
	}
	// Widening every inode number cannot fit: Replace converts to block.
	commit(t, m, func() error { _, err := dir.Replace(m, []byte("nn1"), big, format.FTDir); return err })
	if f, _ := dir.GetForm(m); f != dir.BlockForm {
		t.Fatalf("replace with a wide inode left %v form", f)
	}
	if ino, ft, err := dir.Lookup(m, []byte("nn1")); err != nil || ino != big || ft != format.FTDir {
		t.Fatalf("lookup after replace: %d %d %v", ino, ft, err)
	}
}

func (ig inoGen) bigFixed() format.Ino {
	return ig.g.AgInoToIno(1<<15+7, format.AgIno(uint32(9)<<ig.g.InoPBLog))
}

// TestListFrom resumes listings at every entry's cookie in every format
// and checks the cookies survive conversions.
func TestListFrom(t *testing.T) {
	m := newDir(t, geo("4k"), 128)
	offs := map[string]uint64{}
	for i := 0; i < 700; i++ {
		name := fmt.Sprintf("entry-%d-%s", i, strings.Repeat("z", i%40))
		commit(t, m, func() error { return dir.Add(m, []byte(name), format.Ino(2000+i), format.FTReg) })
		if i%50 != 0 && i < 690 {
			continue
		}
		var all []dir.Entry
		if err := dir.ListFrom(m, 0, func(e dir.Entry) error {
			all = append(all, dir.Entry{Name: append([]byte(nil), e.Name...), Ino: e.Ino, Off: e.Off})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(all) != i+1 {
			t.Fatalf("%d entries listed, want %d", len(all), i+1)
		}
		for _, e := range all {
			if o, ok := offs[string(e.Name)]; ok && o != e.Off {
				f, _ := dir.GetForm(m)
				t.Fatalf("%q moved from %d to %d (now %v)", e.Name, o, e.Off, f)
			}
			offs[string(e.Name)] = e.Off
		}
		// Resume after each entry in turn.
		for k := 0; k < len(all); k += 1 + len(all)/10 {
			var rest []string
			if err := dir.ListFrom(m, all[k].Off+1, func(e dir.Entry) error {
				rest = append(rest, string(e.Name))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(rest) != len(all)-k-1 || len(rest) > 0 && rest[0] != string(all[k+1].Name) {
				t.Fatalf("resuming after %q gave %d entries", all[k].Name, len(rest))
			}
		}
	}
	if empty, err := dir.IsEmpty(m); err != nil || empty {
		t.Fatalf("IsEmpty = %v %v", empty, err)
	}
}

// TestToBlock converts short form to block form on demand (for an
// attribute fork that needs the room) and leaves other forms alone.
func TestToBlock(t *testing.T) {
	m := newDir(t, geo("4k"), 128)
	commit(t, m, func() error { return dir.Add(m, []byte("a"), 300, format.FTReg) })
	commit(t, m, func() error { return dir.ToBlock(m) })
	if f, _ := dir.GetForm(m); f != dir.BlockForm {
		t.Fatalf("form %v", f)
	}
	commit(t, m, func() error { return dir.ToBlock(m) })
	if ino, _, err := dir.Lookup(m, []byte("a")); err != nil || ino != 300 {
		t.Fatalf("lookup: %d %v", ino, err)
	}
}
