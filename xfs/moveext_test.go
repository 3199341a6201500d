package xfs_test

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// modelFile is a file on the volume and the bytes it should hold.
type modelFile struct {
	ino  format.Ino
	data []byte
}

func (f *modelFile) write(t *testing.T, v *xfs.Volume, off int, p []byte) {
	t.Helper()
	if _, err := v.Files().WriteAt(f.ino, p, int64(off)); err != nil {
		t.Fatal(err)
	}
	if end := off + len(p); end > len(f.data) {
		f.data = append(f.data, make([]byte, end-len(f.data))...)
	}
	copy(f.data[off:], p)
}

// extend sets the size past the written data (a trailing hole).
func (f *modelFile) extend(t *testing.T, v *xfs.Volume, size int) {
	t.Helper()
	if err := v.Files().Truncate(f.ino, int64(size)); err != nil {
		t.Fatal(err)
	}
	f.data = append(f.data, make([]byte, size-len(f.data))...)
}

// TestAppendExtents moves files of every mapping shape (one extent, a
// bmbt of hundreds of extents needing several transactions, unwritten
// extents, holes, blocks past EOF) onto empty and non-empty files, checks
// the result through the engine, then with xfs_repair -n and the kernel.
func TestAppendExtents(t *testing.T) {
	img := filepath.Join(t.TempDir(), "move.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	rng := rand.New(rand.NewSource(3))
	random := func(n int) []byte {
		p := make([]byte, n)
		rng.Read(p)
		return p
	}
	files := map[string]*modelFile{}
	newFile := func(name string) *modelFile {
		ino, err := v.Names().Create(v.Root(), name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		f := &modelFile{ino: ino}
		files[name] = f
		return f
	}
	// everyOther writes n single blocks with holes between: n extents.
	everyOther := func(f *modelFile, start, n int) {
		for i := 0; i < n; i++ {
			f.write(t, v, (start+2*i)*bs, random(bs))
		}
	}

	type move struct{ dst, src string }
	var moves []move

	// One extent into an empty file.
	newFile("empty-dst")
	newFile("one").write(t, v, 0, random(300*bs+17))
	moves = append(moves, move{"empty-dst", "one"})

	// A bmbt source (and 1,200 extents: several transactions) onto a
	// bmbt destination with a trailing hole.
	d := newFile("btree-dst")
	everyOther(d, 0, 200)
	d.extend(t, v, 420*bs)
	s := newFile("btree-src")
	everyOther(s, 1, 1200)
	s.write(t, v, 2402*bs, random(100)) // unaligned end
	moves = append(moves, move{"btree-dst", "btree-src"})

	// Unwritten extents, holes and preallocated blocks past EOF.
	d = newFile("prealloc-dst")
	d.write(t, v, 0, random(8*bs))
	if err := v.Files().Preallocate(d.ino, 64*int64(bs)); err != nil { // past EOF: must be dropped
		t.Fatal(err)
	}
	s = newFile("prealloc-src")
	if err := v.Files().Preallocate(s.ino, 256*int64(bs)); err != nil {
		t.Fatal(err)
	}
	s.write(t, v, 10*bs, random(5*bs))
	s.write(t, v, 100*bs+5, random(3*bs))
	s.write(t, v, 300*bs, random(2*bs)) // past the preallocation: a hole before it
	s.extend(t, v, 303*bs)              // ends in a hole
	if err := v.Files().Preallocate(s.ino, 400*int64(bs)); err != nil {
		t.Fatal(err)
	}
	moves = append(moves, move{"prealloc-dst", "prealloc-src"})

	// An empty source changes nothing but times.
	d = newFile("keeps")
	d.write(t, v, 0, random(2*bs))
	newFile("nothing")
	moves = append(moves, move{"keeps", "nothing"})

	// The result of an earlier move moves again (now onto "chain").
	d = newFile("chain")
	d.write(t, v, 0, random(bs))
	moves = append(moves, move{"chain", "empty-dst"})

	for _, m := range moves {
		dst, src := files[m.dst], files[m.src]
		stSrc, _ := v.Stat(src.ino)
		if err := v.Files().AppendExtents(dst.ino, src.ino); err != nil {
			t.Fatalf("append %s to %s: %v", m.src, m.dst, err)
		}
		dst.data = append(dst.data, src.data...)
		src.data = nil
		st, err := v.Stat(src.ino)
		if err != nil || st.Size != 0 || st.Blocks != 0 || st.Extents != 0 {
			t.Errorf("%s after the move: %+v, %v", m.src, st, err)
		}
		if m.src == "btree-src" && stSrc.DataFormat != "btree" {
			t.Errorf("btree-src was %s, want a bmbt source", stSrc.DataFormat)
		}
	}
	if st, _ := v.Stat(files["btree-dst"].ino); st.DataFormat != "btree" || st.Extents < 1400 {
		t.Errorf("btree-dst: %s with %d extents", st.DataFormat, st.Extents)
	}

	// An unaligned destination is refused and left alone.
	u := newFile("unaligned")
	u.write(t, v, 0, random(bs+1))
	w := newFile("waiting")
	w.write(t, v, 0, random(bs))
	if err := v.Files().AppendExtents(u.ino, w.ino); !errors.Is(err, xfs.ErrUnaligned) {
		t.Errorf("unaligned destination: %v, want ErrUnaligned", err)
	}
	if err := v.Files().AppendExtents(u.ino, u.ino); !errors.Is(err, xfs.ErrInvalid) {
		t.Errorf("append to itself: %v, want ErrInvalid", err)
	}
	if err := v.Files().AppendExtents(u.ino, v.Root()); !errors.Is(err, xfs.ErrInvalid) {
		t.Errorf("append a directory: %v, want ErrInvalid", err)
	}

	check := func(v *xfs.Volume) {
		t.Helper()
		for name, f := range files {
			st, err := v.Stat(f.ino)
			if err != nil || st.Size != int64(len(f.data)) {
				t.Errorf("%s: size %d, want %d (%v)", name, st.Size, len(f.data), err)
				continue
			}
			got := make([]byte, len(f.data))
			if _, err := v.Files().ReadAt(f.ino, got, 0); err != nil && len(got) > 0 {
				t.Errorf("%s: %v", name, err)
			}
			if !bytes.Equal(got, f.data) {
				t.Errorf("%s: the engine reads other bytes", name)
			}
		}
	}
	check(v)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if v, err = xfs.Open(img, xfs.Options{}); err != nil {
		t.Fatal(err)
	}
	check(v)
	v.Close()

	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	for name, f := range files {
		got, err := os.ReadFile(filepath.Join(mnt, name))
		if err != nil || !bytes.Equal(got, f.data) {
			t.Errorf("kernel reads %s wrongly (%d bytes, want %d): %v", name, len(got), len(f.data), err)
		}
	}
}

// TestAppendExtentsCrossing moves two files' content back and forth from
// two goroutines at once (each call locks the pair in inode order, so
// opposite directions must not deadlock) and checks that every byte ends
// up in exactly one of them, in order.
func TestAppendExtentsCrossing(t *testing.T) {
	img := filepath.Join(t.TempDir(), "cross.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	bs := v.Geometry().BlockSize
	var inos [2]format.Ino
	for i := range inos {
		if inos[i], err = v.Names().Create(v.Root(), string(rune('x'+i)), xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 8*bs/16)
	if _, err := v.Files().WriteAt(inos[0], want, 0); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	for g := range 2 {
		go func() {
			for range 100 {
				if err := v.Files().AppendExtents(inos[g], inos[1-g]); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	var sizes [2]int64
	for i, ino := range inos {
		st, err := v.Stat(ino)
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = st.Size
	}
	full := inos[0]
	if sizes[1] != 0 {
		full = inos[1]
	}
	got := make([]byte, len(want))
	if sizes[0]+sizes[1] != int64(len(want)) || min(sizes[0], sizes[1]) != 0 {
		t.Fatalf("sizes %v, want one file of %d bytes and one empty", sizes, len(want))
	}
	if _, err := v.Files().ReadAt(full, got, 0); err != nil || !bytes.Equal(got, want) {
		t.Errorf("content moved wrongly: %v", err)
	}
}
