package xfs_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// frozen is what a refused change must leave as it was: the whole tree
// (names, contents, attributes, link counts) and the full Stat of the
// inodes involved (times, change counts, flags, blocks, project).
type frozen struct {
	snap  oracle.Snapshot
	stats map[format.Ino]xfs.Stat
}

func freeze(t *testing.T, v *xfs.Volume, inos ...format.Ino) frozen {
	t.Helper()
	f := frozen{snap: engineSnapshot(t, v), stats: map[format.Ino]xfs.Stat{}}
	for _, ino := range inos {
		f.stats[ino] = mustStat(t, v, ino)
	}
	return f
}

// check fails the test when anything frozen changed.
func (f frozen) check(t *testing.T, v *xfs.Volume, what string) {
	t.Helper()
	if d := f.snap.Diff(engineSnapshot(t, v)); len(d) > 0 {
		t.Errorf("%s changed the tree:\n%v", what, d)
	}
	for ino, want := range f.stats {
		if got := mustStat(t, v, ino); got != want {
			t.Errorf("%s changed inode %d:\n got %+v\nwant %+v", what, ino, got, want)
		}
	}
}

func mustStat(t *testing.T, v *xfs.Volume, ino format.Ino) xfs.Stat {
	t.Helper()
	st, err := v.Stat(ino)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// refusal is a change the immutable flag must stop.
type refusal struct {
	name string
	do   func() error
}

// expectRefused runs each change and requires ErrImmutable and an
// unchanged volume.
func expectRefused(t *testing.T, v *xfs.Volume, f frozen, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		if err := c.do(); !errors.Is(err, xfs.ErrImmutable) {
			t.Errorf("%s: %v, want ErrImmutable", c.name, err)
		}
		f.check(t, v, c.name)
	}
}

// inUse reports whether ino is an inode in use (a freed one reads with
// mode 0, or not at all).
func inUse(t *testing.T, v *xfs.Volume, ino format.Ino) bool {
	t.Helper()
	st, err := v.Stat(ino)
	return err == nil && st.Mode != 0
}

func newVolume(t *testing.T) (*xfs.Volume, string) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "imm.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v, img
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mkdirIn(t *testing.T, v *xfs.Volume, parent format.Ino, name string) format.Ino {
	t.Helper()
	d, err := v.Names().Mkdir(parent, name, xfs.Attrs{Mode: 0o755})
	must(t, err)
	return d
}

func userAttr(name, value string) xfs.Xattr {
	return xfs.Xattr{Namespace: "user", Name: name, Value: []byte(value)}
}

// closeRepaired closes v and has xfs_repair -n check img when it can.
func closeRepaired(t *testing.T, v *xfs.Volume, img string) {
	t.Helper()
	must(t, v.Close())
	if oracle.Optional(t, "xfs_repair -n is not run", oracle.ToolRepair) {
		oracle.Repair(t, img)
	}
}

// TestImmutableFile: every change of an immutable file is refused with
// ErrImmutable and changes nothing, reads work, a project change and a
// rename between two names of the file without attributes (both allowed
// by the kernel) work; once the flag is cleared every change works again.
func TestImmutableFile(t *testing.T) {
	v, img := newVolume(t)
	root := v.Root()
	d, other := mkdirIn(t, v, root, "d"), mkdirIn(t, v, root, "other")
	content := bytes.Repeat([]byte{'f'}, 3*4096)
	f := writeFile(t, v, d, "f", len(content), 4096, 'f')
	must(t, v.Names().Link(f, d, "f-link"))
	g := writeFile(t, v, d, "g", 4096, 4096, 'g')
	h := writeFile(t, v, d, "h", 8192, 4096, 'h')

	before := mustStat(t, v, f)
	must(t, v.Files().SetImmutable(f, true, []xfs.Xattr{userAttr("lock", "on")}, nil))
	st := mustStat(t, v, f)
	if !st.Immutable() || st.ChangeCount != before.ChangeCount+1 || st.Ctime.Before(before.Ctime) || st.Mtime != before.Mtime {
		t.Fatalf("after SetImmutable: immutable %v, change count %d (was %d), ctime %v (was %v), mtime moved %v",
			st.Immutable(), st.ChangeCount, before.ChangeCount, st.Ctime, before.Ctime, st.Mtime != before.Mtime)
	}

	fr := freeze(t, v, f, g, h, d, other, root)
	attrs := []xfs.Xattr{userAttr("etag", "e")}
	names := v.Names()
	files := v.Files()
	x := v.Xattrs()
	expectRefused(t, v, fr, []refusal{
		{"unlink", func() error { return names.Unlink(d, "f") }},
		{"unlink of its other name", func() error { return names.Unlink(d, "f-link") }},
		{"unlink file", func() error { return names.UnlinkFile(d, "f") }},
		{"unlink files", func() error { return names.UnlinkFiles(d, []string{"f"})[0] }},
		{"rename", func() error { return names.Rename(d, "f", d, "f2") }},
		{"rename to another directory", func() error { return names.Rename(d, "f", other, "f") }},
		{"rename setting attributes", func() error { return names.RenameSettingXattrs(d, "f", d, "f3", attrs) }},
		{"rename onto it", func() error { return names.Rename(d, "g", d, "f") }},
		{"rename between its names with attributes", func() error { return names.RenameSettingXattrs(d, "f-link", d, "f", attrs) }},
		{"apply remove", func() error { return names.Apply([]xfs.NameOp{{Dir: d, Name: "f"}}) }},
		{"apply move", func() error { return names.Apply([]xfs.NameOp{{Dir: d, Name: "f", ToDir: other, ToName: "f"}}) }},
		{"apply replace", func() error { return names.Apply([]xfs.NameOp{{Dir: d, Name: "g", ToDir: d, ToName: "f"}}) }},
		{"apply replace by an immutable move", func() error {
			return names.Apply([]xfs.NameOp{{Dir: d, Name: "g", ToDir: d, ToName: "f", Immutable: true}})
		}},
		{"link", func() error { return names.Link(f, other, "f") }},
		{"write", func() error { _, err := files.WriteAt(f, []byte("x"), 0); return err }},
		{"write past the end", func() error { _, err := files.WriteAt(f, []byte("x"), 1<<20); return err }},
		{"truncate", func() error { return files.Truncate(f, 0) }},
		{"truncate to its size", func() error { return files.Truncate(f, int64(len(content))) }},
		{"punch", func() error { return files.PunchHole(f, 0, 4096) }},
		{"preallocate", func() error { return files.Preallocate(f, 1<<20) }},
		{"append extents to it", func() error { return files.AppendExtents(f, h) }},
		{"append extents from it", func() error { return files.AppendExtents(g, f) }},
		{"set attribute", func() error { return x.Set(f, "user.new", []byte("v"), 0) }},
		{"set attributes", func() error { return x.SetMany(f, attrs) }},
		{"remove attribute", func() error { return x.Remove(f, "user.k") }},
		{"remove an absent attribute", func() error { return x.Remove(f, "user.absent") }},
	})

	// Reads, and what the kernel allows.
	readBack(t, v, f, content)
	if got, err := x.Get(f, "user.lock"); err != nil || string(got) != "on" {
		t.Errorf("get: %q, %v", got, err)
	}
	if list, err := x.List(f); err != nil || len(list) != 2 {
		t.Errorf("list: %v, %v", list, err)
	}
	hd, err := files.Open(f)
	must(t, err)
	must(t, hd.Close())
	if err := names.Rename(d, "f-link", d, "f"); err != nil {
		t.Errorf("rename between two names of the file: %v", err)
	}
	fr.check(t, v, "rename between two names of the file")
	must(t, v.Quotas().SetProject(f, 7))
	if st := mustStat(t, v, f); st.ProjID != 7 || !st.Immutable() {
		t.Errorf("after SetProject: project %d, immutable %v", st.ProjID, st.Immutable())
	}

	// A shared unlink removes the other names and leaves the immutable one.
	writeFile(t, v, d, "x1", 100, 100, '1')
	writeFile(t, v, d, "x2", 100, 100, '2')
	errs := names.UnlinkFiles(d, []string{"x1", "f", "x2"})
	if errs[0] != nil || !errors.Is(errs[1], xfs.ErrImmutable) || errs[2] != nil {
		t.Errorf("unlink files: %v", errs)
	}
	wantNames(t, v, d, map[string]format.Ino{"f": f, "f-link": f, "g": g, "h": h})

	// Cleared, every change works again.
	must(t, files.SetImmutable(f, false, nil, []string{"user.lock"}))
	if st := mustStat(t, v, f); st.Immutable() {
		t.Fatal("the flag is still set")
	}
	if _, err := x.Get(f, "user.lock"); !errors.Is(err, xfs.ErrNoData) {
		t.Errorf("user.lock after its removal: %v", err)
	}
	must(t, x.Set(f, "user.new", []byte("v"), 0))
	if _, err := files.WriteAt(f, []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	must(t, files.PunchHole(f, 4096, 4096))
	must(t, files.Truncate(f, 2*4096))
	must(t, files.AppendExtents(f, h))
	must(t, files.Preallocate(f, 1<<20))
	must(t, names.Link(f, other, "f"))
	must(t, names.Rename(d, "f", d, "f2"))
	must(t, names.Apply([]xfs.NameOp{{Dir: d, Name: "g", ToDir: d, ToName: "f2"}}))
	must(t, names.Unlink(d, "f-link"))
	must(t, names.Unlink(other, "f"))
	closeRepaired(t, v, img)
}

// TestImmutableDirectory: nothing adds or removes a name in an immutable
// directory, and an immutable directory is neither removed nor renamed;
// the files it names and the directories below it are not immutable for
// that. Cleared, the directory changes again.
func TestImmutableDirectory(t *testing.T) {
	v, img := newVolume(t)
	root := v.Root()
	dir, empty := mkdirIn(t, v, root, "D"), mkdirIn(t, v, root, "E")
	x := writeFile(t, v, dir, "x", 100, 100, 'x')
	sub := mkdirIn(t, v, dir, "s")
	y := writeFile(t, v, root, "y", 100, 100, 'y')
	must(t, xfs.SetInodeFlags(v, dir, format.DiflagImmutable))
	must(t, xfs.SetInodeFlags(v, empty, format.DiflagImmutable))
	if st := mustStat(t, v, dir); !st.Immutable() {
		t.Fatal("the test hook did not set the flag")
	}

	fr := freeze(t, v, root, dir, empty, x, sub, y)
	names := v.Names()
	a := xfs.Attrs{Mode: 0o644}
	expectRefused(t, v, fr, []refusal{
		{"create", func() error { _, err := names.Create(dir, "n", a); return err }},
		{"create file", func() error {
			_, err := names.CreateFile(dir, "n", a, []byte("data"), []xfs.Xattr{userAttr("a", "b")})
			return err
		}},
		{"mkdir", func() error { _, err := names.Mkdir(dir, "n", a); return err }},
		{"symlink", func() error { _, err := names.Symlink(dir, "n", "x", a); return err }},
		{"link into it", func() error { return names.Link(y, dir, "n") }},
		{"unlink", func() error { return names.Unlink(dir, "x") }},
		{"unlink file", func() error { return names.UnlinkFile(dir, "x") }},
		{"unlink files", func() error { return names.UnlinkFiles(dir, []string{"x"})[0] }},
		{"rmdir in it", func() error { return names.Rmdir(dir, "s") }},
		{"rename in it", func() error { return names.Rename(dir, "x", dir, "x2") }},
		{"rename out of it", func() error { return names.Rename(dir, "x", root, "x") }},
		{"rename into it", func() error { return names.Rename(root, "y", dir, "y") }},
		{"rename over a name in it", func() error { return names.Rename(root, "y", dir, "x") }},
		{"apply move out", func() error { return names.Apply([]xfs.NameOp{{Dir: dir, Name: "x", ToDir: root, ToName: "x"}}) }},
		{"apply move in", func() error { return names.Apply([]xfs.NameOp{{Dir: root, Name: "y", ToDir: dir, ToName: "y"}}) }},
		{"apply immutable move in", func() error {
			return names.Apply([]xfs.NameOp{{Dir: root, Name: "y", ToDir: dir, ToName: "y", Immutable: true}})
		}},
		{"apply remove", func() error { return names.Apply([]xfs.NameOp{{Dir: dir, Name: "x"}}) }},
		{"rmdir of it", func() error { return names.Rmdir(root, "E") }},
		{"rename of it", func() error { return names.Rename(root, "E", root, "E2") }},
		{"move of it", func() error { return names.Rename(root, "E", sub, "E") }},
		{"set attribute", func() error { return v.Xattrs().Set(dir, "user.a", []byte("b"), 0) }},
		{"remove attribute", func() error { return v.Xattrs().Remove(empty, "user.a") }},
	})
	if err := v.Files().SetImmutable(dir, false, nil, nil); !errors.Is(err, xfs.ErrInvalid) {
		t.Errorf("SetImmutable of a directory: %v, want ErrInvalid", err)
	}
	fr.check(t, v, "SetImmutable of a directory")

	// Its file and its subdirectory are not immutable.
	if _, err := v.Files().WriteAt(x, []byte("new"), 0); err != nil {
		t.Errorf("write of a file in an immutable directory: %v", err)
	}
	if _, err := names.Create(sub, "ok", a); err != nil {
		t.Errorf("create below an immutable directory: %v", err)
	}

	must(t, xfs.SetInodeFlags(v, dir, 0))
	must(t, xfs.SetInodeFlags(v, empty, 0))
	if _, err := names.Create(dir, "n", a); err != nil {
		t.Fatal(err)
	}
	must(t, names.Rename(dir, "x", root, "x"))
	must(t, names.Rename(root, "E", root, "E2"))
	must(t, names.Rmdir(root, "E2"))
	closeRepaired(t, v, img)
}

// TestApplyImmutable: NameOp.Immutable sets the flag on a move or keeps
// it, with the op's attributes, in one transaction; without it an
// immutable file does not move, and no op removes or replaces one. A
// call refused changes nothing, its attributes included.
func TestApplyImmutable(t *testing.T) {
	v, img := newVolume(t)
	root := v.Root()
	cur, ver, tmp := mkdirIn(t, v, root, "cur"), mkdirIn(t, v, root, "ver"), mkdirIn(t, v, root, "tmp")
	v1 := writeFile(t, v, cur, "k", 5000, 4096, '1')
	v2 := writeFile(t, v, tmp, "staged", 9000, 4096, '2')
	names := v.Names()
	immutable := func(ino format.Ino) bool { st := mustStat(t, v, ino); return st.Immutable() }
	attr := func(ino format.Ino, name string) string {
		got, err := v.Xattrs().Get(ino, name)
		if errors.Is(err, xfs.ErrNoData) {
			return ""
		}
		must(t, err)
		return string(got)
	}

	// Set on a move: the locked current version goes aside, locked, and
	// a new one takes its name.
	before := mustStat(t, v, v1)
	must(t, names.Apply([]xfs.NameOp{
		{Dir: cur, Name: "k", ToDir: ver, ToName: "v1", Attrs: []xfs.Xattr{userAttr("lock", "on")}, Immutable: true},
		{Dir: tmp, Name: "staged", ToDir: cur, ToName: "k"},
	}))
	wantNames(t, v, ver, map[string]format.Ino{"v1": v1})
	wantNames(t, v, cur, map[string]format.Ino{"k": v2})
	if st := mustStat(t, v, v1); !st.Immutable() || attr(v1, "user.lock") != "on" || st.ChangeCount <= before.ChangeCount {
		t.Fatalf("moved with Immutable: flag %v, lock %q, change count %d (was %d)", st.Immutable(), attr(v1, "user.lock"), st.ChangeCount, before.ChangeCount)
	}
	if immutable(v2) {
		t.Fatal("the other op's file became immutable")
	}
	// Kept on a move, with attributes set on the immutable file.
	must(t, names.Apply([]xfs.NameOp{{Dir: ver, Name: "v1", ToDir: ver, ToName: "v1b", Attrs: []xfs.Xattr{userAttr("lock", "kept")}, Immutable: true}}))
	if !immutable(v1) || attr(v1, "user.lock") != "kept" {
		t.Fatalf("kept: flag %v, lock %q", immutable(v1), attr(v1, "user.lock"))
	}

	fr := freeze(t, v, root, cur, ver, tmp, v1, v2)
	mark := []xfs.Xattr{userAttr("mark", "x")}
	refused := []refusal{
		{"move without Immutable", func() error {
			return names.Apply([]xfs.NameOp{{Dir: ver, Name: "v1b", ToDir: ver, ToName: "x", Attrs: mark}})
		}},
		{"remove", func() error { return names.Apply([]xfs.NameOp{{Dir: ver, Name: "v1b"}}) }},
		{"replace", func() error {
			return names.Apply([]xfs.NameOp{{Dir: cur, Name: "k", ToDir: ver, ToName: "v1b", Attrs: mark}})
		}},
		{"replace by an op with Immutable", func() error {
			return names.Apply([]xfs.NameOp{{Dir: cur, Name: "k", ToDir: ver, ToName: "v1b", Attrs: mark, Immutable: true}})
		}},
		{"move of a file an earlier op made immutable", func() error {
			return names.Apply([]xfs.NameOp{
				{Dir: cur, Name: "k", ToDir: ver, ToName: "v2", Attrs: mark, Immutable: true},
				{Dir: ver, Name: "v2", ToDir: ver, ToName: "v2b"},
			})
		}},
		{"removal of a file an earlier op made immutable", func() error {
			return names.Apply([]xfs.NameOp{
				{Dir: cur, Name: "k", ToDir: ver, ToName: "v2", Attrs: mark, Immutable: true},
				{Dir: ver, Name: "v2"},
			})
		}},
		{"replacement of a file an earlier op made immutable", func() error {
			return names.Apply([]xfs.NameOp{
				{Dir: cur, Name: "k", ToDir: ver, ToName: "v2", Attrs: mark, Immutable: true},
				{Dir: ver, Name: "v1b", ToDir: ver, ToName: "v2", Immutable: true},
			})
		}},
	}
	expectRefused(t, v, fr, refused)
	if err := names.Apply([]xfs.NameOp{{Dir: cur, Name: "k", Immutable: true}}); !errors.Is(err, xfs.ErrInvalid) {
		t.Errorf("Immutable on a removal: %v, want ErrInvalid", err)
	}
	fr.check(t, v, "Immutable on a removal")
	must(t, xfs.SetInodeFlags(v, ver, format.DiflagImmutable))
	fr = freeze(t, v, root, cur, ver, tmp, v1, v2)
	expectRefused(t, v, fr, []refusal{{"move with Immutable into an immutable directory", func() error {
		return names.Apply([]xfs.NameOp{{Dir: cur, Name: "k", ToDir: ver, ToName: "v2", Immutable: true}})
	}}})
	must(t, xfs.SetInodeFlags(v, ver, 0))

	// The locked old version comes back as the current one, still
	// locked, and the current one goes aside, locked too.
	must(t, names.Apply([]xfs.NameOp{
		{Dir: cur, Name: "k", ToDir: ver, ToName: "v2", Immutable: true},
		{Dir: ver, Name: "v1b", ToDir: cur, ToName: "k", Immutable: true},
	}))
	wantNames(t, v, cur, map[string]format.Ino{"k": v1})
	wantNames(t, v, ver, map[string]format.Ino{"v2": v2})
	if !immutable(v1) || !immutable(v2) {
		t.Fatalf("flags after the swap: %v %v", immutable(v1), immutable(v2))
	}
	readBack(t, v, v1, bytes.Repeat([]byte{'1'}, 5000))

	// Unlocked, they go.
	for _, ino := range []format.Ino{v1, v2} {
		must(t, v.Files().SetImmutable(ino, false, nil, []string{"user.lock"}))
	}
	must(t, names.Apply([]xfs.NameOp{{Dir: cur, Name: "k"}, {Dir: ver, Name: "v2"}}))
	closeRepaired(t, v, img)
}

// TestSetImmutable: the flag and the attributes change together, whatever
// the flag's state, on regular files only; removals come before sets and
// an absent name is no error; a call refused changes nothing; the flag
// outlives a close.
func TestSetImmutable(t *testing.T) {
	v, img := newVolume(t)
	root := v.Root()
	f := writeFile(t, v, root, "f", 100, 100, 'f')
	dir := mkdirIn(t, v, root, "d")
	link, err := v.Names().Symlink(root, "l", "f", xfs.Attrs{})
	must(t, err)
	files := v.Files()
	get := func(name string) string {
		got, err := v.Xattrs().Get(f, name)
		if errors.Is(err, xfs.ErrNoData) {
			return "<none>"
		}
		must(t, err)
		return string(got)
	}
	big := bytes.Repeat([]byte{'b'}, 9000) // a remote value

	for _, ino := range []format.Ino{dir, link} {
		if err := files.SetImmutable(ino, true, nil, nil); !errors.Is(err, xfs.ErrInvalid) {
			t.Errorf("inode %d: %v, want ErrInvalid", ino, err)
		}
	}
	fr := freeze(t, v, f)
	for _, c := range []struct {
		name   string
		attrs  []xfs.Xattr
		remove []string
	}{
		{"bad namespace to set", []xfs.Xattr{{Namespace: "system", Name: "x"}}, nil},
		{"bad name to remove", nil, []string{"nonamespace"}},
	} {
		if err := files.SetImmutable(f, true, c.attrs, c.remove); !errors.Is(err, xfs.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
		fr.check(t, v, c.name)
	}

	must(t, files.SetImmutable(f, true, []xfs.Xattr{userAttr("mode", "GOVERNANCE"), {Namespace: "user", Name: "big", Value: big}}, []string{"user.absent"}))
	if st := mustStat(t, v, f); !st.Immutable() || get("user.mode") != "GOVERNANCE" || get("user.big") != string(big) {
		t.Fatal("the flag and the attributes were not set together")
	}
	// Attributes change while the flag stays on; a name in both lists
	// ends up set.
	st0 := mustStat(t, v, f)
	must(t, files.SetImmutable(f, true, []xfs.Xattr{userAttr("mode", "COMPLIANCE")}, []string{"user.mode", "user.big"}))
	st := mustStat(t, v, f)
	if !st.Immutable() || get("user.mode") != "COMPLIANCE" || get("user.big") != "<none>" || st.ChangeCount != st0.ChangeCount+1 {
		t.Fatalf("while on: flag %v, mode %q, big %d bytes, change count %d (was %d)", st.Immutable(), get("user.mode"), len(get("user.big")), st.ChangeCount, st0.ChangeCount)
	}
	must(t, v.Close())

	v, err = xfs.Open(img, xfs.Options{})
	must(t, err)
	if st := mustStat(t, v, f); !st.Immutable() {
		t.Fatal("the flag did not outlive a close")
	}
	must(t, v.Files().SetImmutable(f, false, nil, []string{"user.mode"}))
	must(t, v.Names().Unlink(root, "f"))
	closeRepaired(t, v, img)

	ro, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	must(t, err)
	defer ro.Close()
	if err := ro.Files().SetImmutable(dir, true, nil, nil); !errors.Is(err, xfs.ErrReadOnly) {
		t.Errorf("read-only volume: %v, want ErrReadOnly", err)
	}
}

// TestImmutableInactivation: an inode that has the flag and no link left
// (the kernel's chattr +i through a descriptor of an unlinked file makes
// one; here a Handle) is freed like any other: one at a time, in a shared
// batch, with its forks in several transactions, and by the recovery at
// the next open after a crash.
func TestImmutableInactivation(t *testing.T) {
	v, img, q := newHeldVolume(t)
	root := v.Root()
	space0 := spaceCheck(t, v)
	doomed := func(name string, size int) format.Ino {
		t.Helper()
		ino := writeFile(t, v, root, name, size, 4096, 'd')
		hd, err := v.Files().Open(ino)
		must(t, err)
		must(t, v.Names().Unlink(root, name))
		must(t, v.Files().SetImmutable(ino, true, []xfs.Xattr{userAttr("lock", "on")}, nil))
		if st := mustStat(t, v, ino); st.Nlink != 0 || !st.Immutable() {
			t.Fatalf("%s: %d links, immutable %v", name, st.Nlink, st.Immutable())
		}
		must(t, hd.Close())
		return ino
	}
	// A file of over maxFreePerTx/2 extents (a bmbt) is freed in steps.
	fragmented := func(name string) format.Ino {
		t.Helper()
		ino, err := v.Names().Create(root, name, xfs.Attrs{Mode: 0o644})
		must(t, err)
		for i := range 300 {
			if _, err := v.Files().WriteAt(ino, []byte("x"), int64(2*i)*4096); err != nil {
				t.Fatal(err)
			}
		}
		hd, err := v.Files().Open(ino)
		must(t, err)
		must(t, v.Names().Unlink(root, name))
		must(t, v.Files().SetImmutable(ino, true, nil, nil))
		must(t, hd.Close())
		return ino
	}
	single := doomed("single", 8192)
	big := fragmented("big")
	batch := []format.Ino{doomed("b1", 100), doomed("b2", 5000), doomed("b3", 100)}
	if got := q.take(); len(got) != 5 {
		t.Fatalf("released %v, want 5 inodes", got)
	}
	for _, ino := range []format.Ino{single, big} {
		if _, err := v.Space().Inactivate(ino); err != nil {
			t.Fatalf("inactivate %d: %v", ino, err)
		}
	}
	if _, errs := v.Space().InactivateBatch(batch); errors.Join(errs...) != nil {
		t.Fatalf("inactivate batch: %v", errs)
	}
	for _, ino := range append(batch, single, big) {
		if inUse(t, v, ino) {
			t.Errorf("inode %d is still in use", ino)
		}
	}
	if n := v.Space().Unlinked(); n != 0 {
		t.Fatalf("%d inodes still unlinked", n)
	}
	if got := spaceCheck(t, v); got != space0 {
		t.Errorf("free blocks and inode chunk blocks %d, %d before", got, space0)
	}

	// Left on the unlinked list by a crash: the next open frees it.
	left := doomed("left", 8192)
	q.take()
	must(t, v.Sync())
	must(t, xfs.Abandon(v))
	crash := filepath.Join(t.TempDir(), "crash.img")
	oracle.CopySparse(t, img, crash)
	v, err := xfs.Open(img, xfs.Options{})
	must(t, err)
	if n := v.Space().Unlinked(); n != 0 {
		t.Errorf("%d inodes unlinked after recovery", n)
	}
	if inUse(t, v, left) {
		t.Errorf("inode %d survived recovery", left)
	}
	closeRepaired(t, v, img)
	// The kernel's log recovery frees it too.
	if oracle.Optional(t, "the kernel's recovery is not checked", oracle.ToolMount, oracle.ToolRepair) {
		if snap := kernelReplay(t, crash); len(snap) != 1 {
			t.Errorf("the kernel's replay shows %d entries, want the root alone", len(snap))
		}
		oracle.Repair(t, crash)
	}
}
