package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestApply: several name changes of files in one transaction, as an
// object store keeps versions: the current file moves aside and a staged
// one takes its name (nothing released), a kept version comes back over
// the current one (which is released), and a name is removed with the
// same call. A call that fails at any op changes nothing. Files that
// lose their last links in several AGs in one call are all released.
// Afterwards xfs_repair is clean and the kernel sees what the engine does.
func TestApply(t *testing.T) {
	oracle.Require(t, oracle.ToolMount)
	v, img, q := newHeldVolume(t)
	mkdir := func(parent format.Ino, name string) format.Ino { return mustMkdir(t, v, parent, name) }
	cur, ver, tmp := mkdir(v.Root(), "cur"), mkdir(v.Root(), "ver"), mkdir(v.Root(), "tmp")
	v1 := writeFile(t, v, cur, "k", 5000, 4096, '1')
	v2 := writeFile(t, v, tmp, "staged", 9000, 4096, '2')

	// A new version over the current one: the old one moves aside.
	err := v.Names().Apply([]xfs.NameOp{
		{Dir: cur, Name: "k", ToDir: ver, ToName: "v1", Attrs: []xfs.Xattr{{Namespace: "user", Name: "noncurrent", Value: []byte("since")}}},
		{Dir: tmp, Name: "staged", ToDir: cur, ToName: "k", Attrs: []xfs.Xattr{{Namespace: "user", Name: "etag", Value: []byte("e2")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantNames(t, v, cur, map[string]format.Ino{"k": v2})
	wantNames(t, v, ver, map[string]format.Ino{"v1": v1})
	wantNames(t, v, tmp, nil)
	if got, err := v.Xattrs().Get(v1, "user.noncurrent"); err != nil || string(got) != "since" {
		t.Errorf("moved aside: attribute %q, %v", got, err)
	}
	if got, err := v.Xattrs().Get(v2, "user.etag"); err != nil || string(got) != "e2" {
		t.Errorf("moved in: attribute %q, %v", got, err)
	}
	if released := q.take(); len(released) != 0 {
		t.Errorf("released %v; nothing lost its last link", released)
	}

	// Failures change nothing, whichever op fails.
	sub := mkdir(cur, "sub")
	if _, err := v.Names().Symlink(cur, "ln", "k", xfs.Attrs{Mode: 0o777}); err != nil {
		t.Fatal(err)
	}
	if err := v.Names().Link(v1, ver, "v1-link"); err != nil {
		t.Fatal(err)
	}
	moveBack := xfs.NameOp{Dir: ver, Name: "v1", ToDir: cur, ToName: "k"}
	failing := []failingApply{
		{"missing source", []xfs.NameOp{moveBack, {Dir: ver, Name: "nope", ToDir: cur, ToName: "x"}}, xfs.ErrNotFound},
		{"source moved away before", []xfs.NameOp{moveBack, {Dir: ver, Name: "v1", ToDir: cur, ToName: "again"}}, xfs.ErrNotFound},
		{"onto a directory", []xfs.NameOp{moveBack, {Dir: cur, Name: "k", ToDir: cur, ToName: "sub"}}, xfs.ErrIsDir},
		{"a directory", []xfs.NameOp{{Dir: cur, Name: "sub", ToDir: ver, ToName: "sub"}}, xfs.ErrIsDir},
		{"a symlink", []xfs.NameOp{moveBack, {Dir: cur, Name: "ln"}}, xfs.ErrInvalid},
		{"onto another name of itself", []xfs.NameOp{{Dir: ver, Name: "v1-link", ToDir: ver, ToName: "v1"}}, xfs.ErrInvalid},
		{"dot", []xfs.NameOp{{Dir: cur, Name: ".", ToDir: ver, ToName: "x"}}, xfs.ErrInvalid},
		{"attributes on a removal", []xfs.NameOp{{Dir: cur, Name: "k", Attrs: []xfs.Xattr{{Namespace: "user", Name: "a"}}}}, xfs.ErrInvalid},
		{"too many", slices.Repeat([]xfs.NameOp{moveBack}, 9), xfs.ErrInvalid},
	}
	applyFailing(t, v, failing, cur, ver, tmp, sub)

	// The kept version comes back over the current one, which goes, and
	// its second name goes in the same call.
	if err := v.Names().Apply([]xfs.NameOp{moveBack, {Dir: ver, Name: "v1-link"}}); err != nil {
		t.Fatal(err)
	}
	wantNames(t, v, ver, nil)
	st, err := v.Stat(v1)
	if err != nil || st.Nlink != 1 {
		t.Errorf("kept version: %d links, %v", st.Nlink, err)
	}
	readBack(t, v, v1, bytes.Repeat([]byte{'1'}, 5000))
	if released := q.take(); !slices.Equal(released, []uint64{uint64(v2)}) {
		t.Errorf("released %v, want the replaced version %d", released, v2)
	}
	if _, err := v.Space().Inactivate(v2); err != nil {
		t.Fatal(err)
	}

	// Files losing their last links in several AGs, in one call.
	var removals []xfs.NameOp
	ags := map[format.AgNumber]bool{}
	g := v.Geometry()
	for i := range 4 {
		d := mkdir(v.Root(), fmt.Sprintf("ag%d", i))
		ino := writeFile(t, v, d, "f", 100, 4096, 'a')
		ag, _ := g.InoToAg(ino)
		ags[ag] = true
		removals = append(removals, xfs.NameOp{Dir: d, Name: "f"})
	}
	if len(ags) < 2 {
		t.Logf("the files landed in %d AG only", len(ags))
	}
	if err := v.Names().Apply(removals); err != nil {
		t.Fatal(err)
	}
	released := q.take()
	if len(released) != len(removals) {
		t.Errorf("released %v, want %d inodes", released, len(removals))
	}
	for _, ino := range released {
		if _, err := v.Space().Inactivate(format.Ino(ino)); err != nil {
			t.Fatal(err)
		}
	}
	closeDrained(t, v, img)
}

// TestApplyConcurrent: calls whose directories overlap in every order
// (each call's set locked without waiting while holding) neither
// deadlock nor lose a file: each of the files keeps moving around a ring
// of directories, and at the end each is in exactly one of them.
func TestApplyConcurrent(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	v, img, _ := newHeldVolume(t)
	const ring, workers, rounds = 3, 4, 60
	dirs := make([]format.Ino, ring)
	for i := range dirs {
		d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("d%d", i), xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		dirs[i] = d
	}
	for w := range workers {
		writeFile(t, v, dirs[0], fmt.Sprintf("w%d", w), 100, 4096, byte(w))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("w%d", w)
			at := 0
			for r := range rounds {
				// Two directories, in either order, with a hop through a
				// third name so that one call names both twice.
				to := (at + 1 + r%2) % ring
				err := v.Names().Apply([]xfs.NameOp{
					{Dir: dirs[at], Name: name, ToDir: dirs[to], ToName: name + ".hop"},
					{Dir: dirs[to], Name: name + ".hop", ToDir: dirs[to], ToName: name},
				})
				if err != nil {
					t.Error(err)
					return
				}
				at = to
			}
		}()
	}
	wg.Wait()
	count := map[string]int{}
	for _, d := range dirs {
		for _, e := range readDirSorted(t, v, d) {
			count[e.Name]++
		}
	}
	for w := range workers {
		if n := count[fmt.Sprintf("w%d", w)]; n != 1 {
			t.Errorf("w%d found %d times", w, n)
		}
	}
	if len(count) != workers {
		t.Errorf("names left: %v", count)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

func readDirSorted(t *testing.T, v *xfs.Volume, d format.Ino) []xfs.DirEntry {
	t.Helper()
	ents, err := v.Names().ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ents, func(a, b xfs.DirEntry) int { return bytes.Compare([]byte(a.Name), []byte(b.Name)) })
	return ents
}

// wantNames checks that directory d holds exactly the names of want, each
// naming the inode given.
func wantNames(t *testing.T, v *xfs.Volume, d format.Ino, want map[string]format.Ino) {
	t.Helper()
	got := map[string]format.Ino{}
	for _, e := range readDirSorted(t, v, d) {
		got[e.Name] = e.Ino
	}
	if len(got) != len(want) {
		t.Errorf("directory %d holds %v, want %v", d, got, want)
		return
	}
	for name, ino := range want {
		if got[name] != ino {
			t.Errorf("directory %d: %q is inode %d, want %d", d, name, got[name], ino)
		}
	}
}

func readBack(t *testing.T, v *xfs.Volume, ino format.Ino, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := v.Files().ReadAt(ino, got, 0); err != nil || !bytes.Equal(got, want) {
		t.Errorf("inode %d reads back other bytes (%v)", ino, err)
	}
}

// TestApplyNew: Apply makes inodes in its transaction, as an object
// store makes a delete marker, and the directory that keeps it, in the
// step that moves the current version aside. The made directory takes
// names from later ops of the call, and a made name is left alone by
// them; calls that break the rules change nothing. Concurrent calls each
// making two inodes (inode chunks filling up meanwhile) lose none.
// Afterwards xfs_repair is clean and the kernel sees what the engine
// does, attributes included.
func TestApplyNew(t *testing.T) {
	oracle.Require(t, oracle.ToolMount)
	v, img, q := newHeldVolume(t)
	mkdir := func(parent format.Ino, name string) format.Ino { return mustMkdir(t, v, parent, name) }
	cur, vers := mkdir(v.Root(), "cur"), mkdir(v.Root(), "vers")
	v1 := writeFile(t, v, cur, "k", 5000, 4096, '1')
	attr := func(name, value string) []xfs.Xattr {
		return []xfs.Xattr{{Namespace: "user", Name: name, Value: []byte(value)}}
	}
	file := &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o640, ProjID: 7}}
	dirNew := &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o750}, Dir: true}
	// The marker keeps a time of its own (a store remaking it).
	since := time.Date(2021, 3, 4, 5, 6, 7, 890123456, time.UTC)
	marker := &xfs.NewInode{Attrs: file.Attrs, Mtime: since}

	// A marker, in a directory made for the key, hides the current
	// version, which moves in beside it.
	err := v.Names().Apply([]xfs.NameOp{
		{ToDir: vers, ToName: "k.d", Attrs: attr("key", "k"), New: dirNew},
		{ToDir: xfs.MadeDir, ToName: "m2", Attrs: attr("marker", ""), New: marker},
		{Dir: cur, Name: "k", ToDir: xfs.MadeDir, ToName: "v1", Attrs: attr("noncurrent", "since")},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantNames(t, v, cur, nil)
	kd := mustLookup(t, v, vers, "k.d")
	m2 := mustLookup(t, v, kd, "m2")
	wantNames(t, v, kd, map[string]format.Ino{"m2": m2, "v1": v1})
	for _, c := range []struct {
		ino         format.Ino
		mode        uint32
		nlink       uint32
		size        int64
		name, value string
	}{
		{kd, format.SIFDIR | 0o750, 2, -1, "user.key", "k"},
		{m2, format.SIFREG | 0o640, 1, 0, "user.marker", ""},
		{v1, 0, 1, 5000, "user.noncurrent", "since"},
	} {
		st, err := v.Stat(c.ino)
		switch {
		case err != nil:
			t.Fatal(err)
		case c.mode != 0 && uint32(st.Mode) != c.mode, st.Nlink != c.nlink, c.size >= 0 && st.Size != c.size:
			t.Errorf("inode %d: mode %o, %d links, %d bytes; want %o, %d, %d", c.ino, st.Mode, st.Nlink, st.Size, c.mode, c.nlink, c.size)
		}
		if got, err := v.Xattrs().Get(c.ino, c.name); err != nil || string(got) != c.value {
			t.Errorf("inode %d: %s = %q, %v; want %q", c.ino, c.name, got, err, c.value)
		}
	}
	if st, err := v.Stat(m2); err != nil || st.ProjID != 7 || !st.Mtime.Equal(since) {
		t.Errorf("marker: project %d, mtime %v, %v; want 7, %v", st.ProjID, st.Mtime, err, since)
	}
	if st, err := v.Stat(kd); err != nil || time.Since(st.Mtime) > time.Minute {
		t.Errorf("made directory: mtime %v, %v; want now", st.Mtime, err)
	}
	if st, err := v.Stat(vers); err != nil || st.Nlink != 3 {
		t.Errorf("parent of the made directory: %d links, %v; want 3", st.Nlink, err)
	}

	// Calls that break the rules change nothing.
	kept := writeFile(t, v, cur, "kept", 10, 4096, 'k')
	failing := []failingApply{
		{"a name that exists", []xfs.NameOp{{ToDir: kd, ToName: "v1", New: file}}, xfs.ErrExist},
		{"MadeDir before a directory is made", []xfs.NameOp{{ToDir: xfs.MadeDir, ToName: "x", New: file}}, xfs.ErrInvalid},
		{"two directories", []xfs.NameOp{{ToDir: vers, ToName: "a", New: dirNew}, {ToDir: vers, ToName: "b", New: dirNew}}, xfs.ErrInvalid},
		{"a directory in itself", []xfs.NameOp{{ToDir: xfs.MadeDir, ToName: "a", New: dirNew}}, xfs.ErrInvalid},
		{"a source name", []xfs.NameOp{{Dir: cur, Name: "kept", ToDir: kd, ToName: "x", New: file}}, xfs.ErrInvalid},
		{"a made name moved", []xfs.NameOp{{ToDir: kd, ToName: "m3", New: file}, {Dir: kd, Name: "m3", ToDir: cur, ToName: "x"}}, xfs.ErrInvalid},
		{"a made name replaced", []xfs.NameOp{{ToDir: kd, ToName: "m3", New: file}, {Dir: cur, Name: "kept", ToDir: kd, ToName: "m3"}}, xfs.ErrInvalid},
		{"a last link released", []xfs.NameOp{{ToDir: kd, ToName: "m3", New: file}, {Dir: cur, Name: "kept"}}, xfs.ErrInvalid},
		{"data in a directory", []xfs.NameOp{{ToDir: vers, ToName: "a", New: &xfs.NewInode{Dir: true, Data: []byte("x")}}}, xfs.ErrInvalid},
		{"too much data", []xfs.NameOp{{ToDir: kd, ToName: "m3", New: &xfs.NewInode{Data: make([]byte, xfs.MaxCreateData+1)}}}, xfs.ErrInvalid},
	}
	applyFailing(t, v, failing, cur, vers, kd)

	// A second marker in the directory that exists now, with the
	// version coming back under the key.
	err = v.Names().Apply([]xfs.NameOp{
		{ToDir: kd, ToName: "m3", New: file},
		{Dir: kd, Name: "v1", ToDir: cur, ToName: "k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	m3 := mustLookup(t, v, kd, "m3")
	wantNames(t, v, kd, map[string]format.Ino{"m2": m2, "m3": m3})
	wantNames(t, v, cur, map[string]format.Ino{"k": v1, "kept": kept})

	// A small new version made whole in the name the current one leaves.
	body := bytes.Repeat([]byte("new version "), 1000)
	err = v.Names().Apply([]xfs.NameOp{
		{Dir: cur, Name: "k", ToDir: kd, ToName: "v1"},
		{ToDir: cur, ToName: "k", Attrs: attr("etag", "e3"), New: &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o644}, Data: body}},
	})
	if err != nil {
		t.Fatal(err)
	}
	v3 := mustLookup(t, v, cur, "k")
	wantNames(t, v, kd, map[string]format.Ino{"m2": m2, "m3": m3, "v1": v1})
	readBack(t, v, v3, body)
	readBack(t, v, v1, bytes.Repeat([]byte{'1'}, 5000))
	if got, err := v.Xattrs().Get(v3, "user.etag"); err != nil || string(got) != "e3" {
		t.Errorf("new version: attribute %q, %v", got, err)
	}

	// Concurrent calls, two inodes each, in directories of every AG.
	const workers, rounds = 4, 100
	var wg sync.WaitGroup
	for w := range workers {
		home := mkdir(v.Root(), fmt.Sprintf("w%d", w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				err := v.Names().Apply([]xfs.NameOp{
					{ToDir: home, ToName: fmt.Sprintf("d%d", r), New: dirNew},
					{ToDir: xfs.MadeDir, ToName: "m", Attrs: attr("r", fmt.Sprint(r)), New: file},
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		home := mustLookup(t, v, v.Root(), fmt.Sprintf("w%d", w))
		if n := len(readDirSorted(t, v, home)); n != rounds {
			t.Errorf("w%d holds %d directories, want %d", w, n, rounds)
		}
		d := mustLookup(t, v, home, fmt.Sprintf("d%d", rounds-1))
		if got, err := v.Xattrs().Get(mustLookup(t, v, d, "m"), "user.r"); err != nil || string(got) != fmt.Sprint(rounds-1) {
			t.Errorf("w%d: last marker's attribute %q, %v", w, got, err)
		}
	}
	if released := q.take(); len(released) != 0 {
		t.Errorf("released %v; nothing lost its last link", released)
	}
	closeDrained(t, v, img)
}

func mustMkdir(t *testing.T, v *xfs.Volume, parent format.Ino, name string) format.Ino {
	t.Helper()
	d, err := v.Names().Mkdir(parent, name, xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// failingApply is an Apply call that must fail with want.
type failingApply struct {
	name string
	ops  []xfs.NameOp
	want error
}

// applyFailing makes each call, checking its error and that none of dirs
// changed.
func applyFailing(t *testing.T, v *xfs.Volume, calls []failingApply, dirs ...format.Ino) {
	t.Helper()
	before := map[format.Ino][]xfs.DirEntry{}
	for _, d := range dirs {
		before[d] = readDirSorted(t, v, d)
	}
	for _, c := range calls {
		if err := v.Names().Apply(c.ops); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		for d, want := range before {
			if got := readDirSorted(t, v, d); !slices.Equal(got, want) {
				t.Fatalf("%s changed directory %d: %v, was %v", c.name, d, got, want)
			}
		}
	}
}
