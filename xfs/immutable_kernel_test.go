package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// lockAttrs are the attributes a locked object carries in the power-cut
// test; lockPad's value is remote (blocks of its own) so that setting and
// removing it allocates and frees.
func lockAttrs(mode string) []xfs.Xattr {
	return []xfs.Xattr{
		userAttr("xfs3.lock-mode", mode),
		userAttr("xfs3.retain-until", "2100-01-01T00:00:00Z"),
		{Namespace: "user", Name: "xfs3.lock-pad", Value: bytes.Repeat([]byte(mode[:1]), 6000)},
	}
}

var lockNames = []string{"user.xfs3.lock-mode", "user.xfs3.retain-until", "user.xfs3.lock-pad"}

// immState is a tree and the paths of its immutable files.
type immState struct {
	snap   oracle.Snapshot
	locked map[string]bool
}

func engineImmState(t *testing.T, v *xfs.Volume) immState {
	t.Helper()
	s := immState{snap: engineSnapshot(t, v), locked: map[string]bool{}}
	for _, e := range s.snap {
		if st := mustStat(t, v, format.Ino(e.Ino)); st.Immutable() {
			s.locked[e.Path] = true
		}
	}
	return s
}

// kernelImmState mounts img read-only and reads the tree and, through
// FS_IOC_GETFLAGS, the immutable flags.
func kernelImmState(t *testing.T, img string) immState {
	t.Helper()
	mnt := oracle.Mount(t, img, true)
	defer oracle.Unmount(t, mnt)
	snap, err := oracle.SnapshotDir(mnt)
	must(t, err)
	s := immState{snap: snap, locked: map[string]bool{}}
	for _, e := range snap {
		if e.Type != oracle.TypeFile && e.Type != oracle.TypeDir {
			continue
		}
		if kernelFlags(t, filepath.Join(mnt, e.Path))&fsImmutableFL != 0 {
			s.locked[e.Path] = true
		}
	}
	return s
}

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h, the i of lsattr.
const fsImmutableFL = 0x10

// kernelFlags reads path's inode flags as lsattr does (FS_IOC_GETFLAGS).
func kernelFlags(t *testing.T, path string) uint32 {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Fatalf("FS_IOC_GETFLAGS %s: %v", path, err)
	}
	return flags
}

func (s immState) diff(o immState) []string {
	d := s.snap.DiffWith(o.snap, oracle.DiffOptions{IgnoreDirSize: true})
	if !maps.Equal(s.locked, o.locked) {
		d = append(d, fmt.Sprintf("immutable files %v, not %v", o.locked, s.locked))
	}
	return d
}

// checkLocksAgree: every regular file has the immutable flag exactly
// when it has all of the lock attributes, and none of them otherwise.
func checkLocksAgree(t *testing.T, s immState) {
	t.Helper()
	for _, e := range s.snap {
		if e.Type != oracle.TypeFile {
			continue
		}
		n := 0
		for _, name := range lockNames {
			if _, ok := e.Xattrs[name]; ok {
				n++
			}
		}
		if locked := s.locked[e.Path]; locked && n != len(lockNames) || !locked && n != 0 {
			t.Errorf("%s: immutable %v with %d of the %d lock attributes", e.Path, locked, n, len(lockNames))
		}
	}
}

// TestImmutablePowerCut cuts the power at every write of three changes
// that lock and unlock files with their attributes: SetImmutable with
// attributes (one of them remote), an Apply whose two moves set the flag
// with attributes, and SetImmutable clearing the flag and removing them.
// Each change is written back in place after its commit, so that cuts
// land in those writes too. The disk keeps what was flushed plus a random
// prefix or subset of the rest, the last write torn or not. After the engine's recovery every
// acknowledged change is there, the one in flight is all there or not at
// all, every file's flag agrees with its attributes, and xfs_repair -n is
// clean; every eighth case the kernel replays the same crash image and
// shows the same tree and flags. XFS3_IMMUTABLE_POWERCUT_EVERY=n cuts at
// every n-th write only.
func TestImmutablePowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	every := max(envInt("XFS3_IMMUTABLE_POWERCUT_EVERY", 1), 1)
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(base, xfs.Options{})
	must(t, err)
	root := v.Root()
	cur, ver, tmp := mkdirIn(t, v, root, "cur"), mkdirIn(t, v, root, "ver"), mkdirIn(t, v, root, "tmp")
	writeFile(t, v, cur, "k", 5000, 4096, 'k')
	writeFile(t, v, tmp, "new", 3000, 4096, 'n')
	locked := writeFile(t, v, root, "locked", 9000, 4096, 'l')
	must(t, v.Close())
	steps := []func(v *xfs.Volume) error{
		func(v *xfs.Volume) error { return v.Files().SetImmutable(locked, true, lockAttrs("GOVERNANCE"), nil) },
		func(v *xfs.Volume) error {
			return v.Names().Apply([]xfs.NameOp{
				{Dir: cur, Name: "k", ToDir: ver, ToName: "v1", Attrs: lockAttrs("COMPLIANCE"), Immutable: true},
				{Dir: tmp, Name: "new", ToDir: cur, ToName: "k", Attrs: lockAttrs("GOVERNANCE"), Immutable: true},
			})
		},
		func(v *xfs.Volume) error { return v.Files().SetImmutable(locked, false, nil, lockNames) },
	}

	// run opens base on a Fault device and runs the steps, cutting the
	// power at write cutAt (0: never); it returns the device, the writes
	// before the first step, the steps acknowledged and, in a run without
	// a cut, the state before and after each step.
	run := func(cutAt int) (fd *dev.Fault, start, done int, states []immState) {
		fd, closeBase, err := dev.OpenFault(base)
		must(t, err)
		t.Cleanup(func() { closeBase() })
		fd.CutAt(cutAt)
		v, err := xfs.OpenDevice(fd, xfs.Options{})
		must(t, err) // the cut is always later than the open
		start, _ = fd.Stats()
		if cutAt == 0 {
			states = append(states, engineImmState(t, v))
		}
		for _, step := range steps {
			if err := step(v); err != nil {
				if !fd.IsCut() {
					t.Fatal(err)
				}
				break
			}
			done++
			// In-place writes of what the log holds, so that cuts land
			// in them too, not only in log writes.
			if err := xfs.WriteBackNow(v); err != nil && !fd.IsCut() {
				t.Fatal(err)
			}
			if cutAt == 0 {
				states = append(states, engineImmState(t, v))
			}
		}
		must(t, xfs.Abandon(v))
		return fd, start, done, states
	}
	dry, start, _, states := run(0)
	end, _ := dry.Stats()
	for _, s := range states {
		checkLocksAgree(t, s)
	}
	t.Logf("the steps write %d times after %d writes of the open", end-start, start)

	rng := rand.New(rand.NewSource(1))
	for cut, n := start+1, 0; cut <= end; cut, n = cut+every, n+1 {
		fd, _, done, _ := run(cut)
		crash := dev.Crash{Keep: rng.Intn(fd.Pending() + 1), Tear: rng.Intn(2) == 0}
		subset := rng.Intn(2) == 0
		if subset {
			pick := rand.New(rand.NewSource(int64(cut)))
			crash.Subset = func(int) bool { return pick.Intn(2) == 0 }
		}
		kernel := n%8 == 0
		t.Run(fmt.Sprintf("cut%d", cut), func(t *testing.T) {
			t.Logf("%d steps acknowledged; keeping %d of %d unflushed writes (a random subset: %v), tear %v", done, crash.Keep, fd.Pending(), subset, crash.Tear)
			img := filepath.Join(t.TempDir(), "crash.img")
			oracle.CopySparse(t, base, img)
			must(t, fd.Image(img, crash))
			kimg := filepath.Join(t.TempDir(), "kernel.img")
			if kernel {
				oracle.CopySparse(t, img, kimg)
			}
			v, err := xfs.Open(img, xfs.Options{})
			if err != nil {
				t.Fatalf("recovery: %v", err)
			}
			got := engineImmState(t, v)
			must(t, v.Close())
			checkLocksAgree(t, got)
			// The step in flight (if any) is all there or not at all.
			before, after := states[done], states[min(done+1, len(states)-1)]
			if d := before.diff(got); len(d) > 0 {
				if d2 := after.diff(got); len(d2) > 0 {
					t.Fatalf("recovery left neither the state before step %d nor the one after it; against before:\n%s\nagainst after:\n%s",
						done+1, strings.Join(d, "\n"), strings.Join(d2, "\n"))
				}
			}
			oracle.Repair(t, img)
			if kernel {
				mnt := oracle.Mount(t, kimg, false) // the kernel replays the log
				oracle.Unmount(t, mnt)
				oracle.Repair(t, kimg)
				if d := got.diff(kernelImmState(t, kimg)); len(d) > 0 {
					t.Fatalf("the kernel's replay differs from the engine's:\n%s", strings.Join(d, "\n"))
				}
			}
		})
	}
}

// lsattrImmutable runs lsattr on the entries of dir and returns the names
// it shows with the i flag, and every name it shows.
func lsattrImmutable(t *testing.T, dir string) (immutable, all map[string]bool) {
	t.Helper()
	out, err := exec.Command("lsattr", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("lsattr %s: %v\n%s", dir, err, out)
	}
	immutable, all = map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		flags, path, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("lsattr line %q", line)
		}
		name := filepath.Base(path)
		all[name] = true
		if strings.Contains(flags, "i") {
			immutable[name] = true
		}
	}
	return immutable, all
}

// TestImmutableReadByKernel: files the engine makes immutable (by
// SetImmutable, with attributes small and remote, by an Apply move, and
// through a hard link) pass xfs_repair -n; a read-only mount shows the i
// flag on exactly them; a read-write mount (made only once xfs_repair has
// accepted the image) refuses to remove, rename, write or set an
// attribute of them with EPERM, and does all of that to the others.
func TestImmutableReadByKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount, "lsattr")
	v, img := newVolume(t)
	root := v.Root()
	objs, tmp := mkdirIn(t, v, root, "objs"), mkdirIn(t, v, root, "tmp")
	ino := map[string]format.Ino{}
	for _, name := range []string{"a", "b", "d", "e", "g"} {
		ino[name] = writeFile(t, v, objs, name, 5000, 4096, name[0])
	}
	writeFile(t, v, tmp, "c", 7000, 4096, 'c')
	must(t, v.Names().Link(ino["a"], objs, "a-link"))
	files := v.Files()
	must(t, files.SetImmutable(ino["a"], true, []xfs.Xattr{userAttr("lock", "on")}, nil))
	must(t, v.Names().Apply([]xfs.NameOp{{Dir: tmp, Name: "c", ToDir: objs, ToName: "c", Attrs: lockAttrs("COMPLIANCE"), Immutable: true}}))
	must(t, files.SetImmutable(ino["d"], true, nil, nil))
	must(t, files.SetImmutable(ino["d"], false, nil, nil))
	must(t, files.SetImmutable(ino["e"], true, lockAttrs("GOVERNANCE"), nil))
	must(t, v.Close())
	want := map[string]bool{"a": true, "a-link": true, "c": true, "e": true}

	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	got, all := lsattrImmutable(t, filepath.Join(mnt, "objs"))
	oracle.Unmount(t, mnt)
	if !maps.Equal(got, want) || len(all) != 7 {
		t.Fatalf("lsattr shows i on %v of %v, want %v", got, all, want)
	}

	mnt = oracle.Mount(t, img, false)
	p := func(name string) string { return filepath.Join(mnt, "objs", name) }
	changes := []struct {
		what string
		do   func(name string) error
	}{
		{"setxattr", func(name string) error { return unix.Setxattr(p(name), "user.k2", []byte("v"), 0) }},
		{"open for writing", func(name string) error {
			f, err := os.OpenFile(p(name), os.O_WRONLY, 0)
			if err == nil {
				_, err = f.WriteString("x")
				f.Close()
			}
			return err
		}},
		{"rename", func(name string) error { return os.Rename(p(name), p(name+".moved")) }},
		{"rm", func(name string) error {
			if want[name] {
				return os.Remove(p(name)) // not renamed
			}
			return os.Remove(p(name + ".moved"))
		}},
	}
	for name := range all {
		for _, c := range changes {
			err := c.do(name)
			switch {
			case want[name] && !errors.Is(err, syscall.EPERM):
				t.Errorf("%s of immutable %s: %v, want EPERM", c.what, name, err)
			case !want[name] && err != nil:
				t.Errorf("%s of %s: %v", c.what, name, err)
			}
		}
	}
	oracle.Unmount(t, mnt)
	oracle.Repair(t, img)
}

// TestImmutableFromKernel: on a volume made by mkfs.xfs where the kernel
// set chattr +i on a file and on a directory, the engine refuses Unlink,
// WriteAt and an attribute on the file and every change of the
// directory's names, reads both, and once SetImmutable cleared the file's
// flag does all of that to it; xfs_repair -n is clean after and the
// kernel still sees the directory immutable.
func TestImmutableFromKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount, "chattr")
	img := filepath.Join(t.TempDir(), "k.img")
	oracle.Mkfs(t, img, 128<<20)
	mnt := oracle.Mount(t, img, false)
	content := bytes.Repeat([]byte("locked\n"), 1000)
	must(t, os.WriteFile(filepath.Join(mnt, "locked"), content, 0o644))
	must(t, unix.Setxattr(filepath.Join(mnt, "locked"), "user.mode", []byte("GOVERNANCE"), 0))
	must(t, os.Mkdir(filepath.Join(mnt, "idir"), 0o755))
	must(t, os.WriteFile(filepath.Join(mnt, "idir", "inner"), []byte("in"), 0o644))
	must(t, os.WriteFile(filepath.Join(mnt, "plain"), []byte("p"), 0o644))
	for _, name := range []string{"locked", "idir"} {
		if out, err := exec.Command("chattr", "+i", filepath.Join(mnt, name)).CombinedOutput(); err != nil {
			t.Fatalf("chattr +i %s: %v\n%s", name, err, out)
		}
	}
	oracle.Unmount(t, mnt)

	v, err := xfs.Open(img, xfs.Options{})
	must(t, err)
	root := v.Root()
	names := v.Names()
	f := mustLookup(t, v, root, "locked")
	dir := mustLookup(t, v, root, "idir")
	for _, ino := range []format.Ino{f, dir} {
		if st := mustStat(t, v, ino); !st.Immutable() {
			t.Fatalf("inode %d: the kernel's flag does not show (flags %#x)", ino, st.Flags)
		}
	}
	readBack(t, v, f, content)
	fr := freeze(t, v, root, f, dir)
	expectRefused(t, v, fr, []refusal{
		{"unlink", func() error { return names.Unlink(root, "locked") }},
		{"write", func() error { _, err := v.Files().WriteAt(f, []byte("x"), 0); return err }},
		{"set attribute", func() error { return v.Xattrs().Set(f, "user.mode", []byte("NONE"), 0) }},
		{"create in the directory", func() error { _, err := names.Create(dir, "n", xfs.Attrs{Mode: 0o644}); return err }},
		{"unlink in the directory", func() error { return names.Unlink(dir, "inner") }},
		{"rename of the directory", func() error { return names.Rename(root, "idir", root, "idir2") }},
	})
	must(t, v.Files().SetImmutable(f, false, nil, nil))
	if _, err := v.Files().WriteAt(f, []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	must(t, v.Xattrs().Set(f, "user.mode", []byte("NONE"), 0))
	must(t, names.Unlink(root, "locked"))
	must(t, v.Close())
	oracle.Repair(t, img)

	mnt = oracle.Mount(t, img, true)
	defer oracle.Unmount(t, mnt)
	if _, err := os.Stat(filepath.Join(mnt, "locked")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("locked after its unlink: %v", err)
	}
	if kernelFlags(t, filepath.Join(mnt, "idir"))&fsImmutableFL == 0 {
		t.Error("the directory lost its flag")
	}
}
