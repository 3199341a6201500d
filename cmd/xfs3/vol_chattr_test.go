package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// chattrVolume makes a volume holding d/a, d/b, d/.hidden, the directory
// d/s and the symlink l (to d/a).
func chattrVolume(t *testing.T) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	volMust(t, err)
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	volMust(t, err)
	for _, name := range []string{"a", "b", ".hidden"} {
		_, err := v.Names().CreateFile(d, name, xfs.Attrs{Mode: 0o644}, []byte(name+"\n"), nil)
		volMust(t, err)
	}
	_, err = v.Names().Mkdir(d, "s", xfs.Attrs{Mode: 0o755})
	volMust(t, err)
	_, err = v.Names().Symlink(v.Root(), "l", "d/a", xfs.Attrs{})
	volMust(t, err)
	volMust(t, v.Close())
	return img
}

// immutableOnVolume reports the engine's view of path's flag.
func immutableOnVolume(t *testing.T, img, path string) bool {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	volMust(t, err)
	defer v.Close()
	ino, err := v.Names().LookupPath(path, false)
	volMust(t, err)
	st, err := v.Stat(ino)
	volMust(t, err)
	return st.Immutable()
}

// TestVolChattr: chattr sets and clears the flag of regular files only;
// lsattr shows it as lsattr(1) does; while it is set the write commands
// fail on the file (exit status 1, the file as it was) and after -i they
// work again.
func TestVolChattr(t *testing.T) {
	img := chattrVolume(t)
	okSilent(t, "vol", "chattr", img, "+i", "d/a")
	okSilent(t, "vol", "chattr", "+i", img, "d/.hidden") // the mode first, as chattr takes it
	if !immutableOnVolume(t, img, "d/a") || !immutableOnVolume(t, img, "d/.hidden") || immutableOnVolume(t, img, "d/b") {
		t.Fatal("chattr +i did not set the flag of exactly d/a and d/.hidden")
	}
	const clear = "----------------------"
	const immutable = "----i-----------------"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"d/a", "d/b"}, immutable + " d/a\n" + clear + " d/b\n"},
		{[]string{"d"}, immutable + " d/a\n" + clear + " d/b\n" + clear + " d/s\n"},
		{[]string{"d/"}, immutable + " d/a\n" + clear + " d/b\n" + clear + " d/s\n"},
		{[]string{"-a", "d"}, clear + " d/.\n" + clear + " d/..\n" + immutable + " d/a\n" + clear + " d/b\n" + immutable + " d/.hidden\n" + clear + " d/s\n"},
		{[]string{"-d", "d", "/"}, clear + " d\n" + clear + " /\n"},
		{[]string{"-da", "d"}, clear + " d\n"},
	} {
		args := append([]string{"vol", "lsattr", img}, c.args...)
		if got := okCLI(t, args...); got != c.want {
			t.Errorf("lsattr %q:\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
	// A symlink has no flags; the other PATHs are still shown.
	r := runCLI(t, "vol", "lsattr", img, "l", "d/b")
	if r.code != 1 || r.stdout != clear+" d/b\n" || !strings.Contains(r.stderr, "l: a symlink has no flags") {
		t.Errorf("lsattr of a symlink: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// The write commands fail on the immutable file and change nothing.
	host := filepath.Join(t.TempDir(), "new.txt")
	volMust(t, os.WriteFile(host, []byte("new\n"), 0o644))
	for _, args := range [][]string{
		{"rm", img, "d/a"},
		{"mv", img, "d/a", "d/moved"},
		{"mv", img, "d/b", "d/a"},
		{"ln", img, "d/a", "d/hard"},
		{"setfattr", img, "d/a", "user.x", "1"},
		{"rmfattr", img, "d/a", "user.x"},
		{"put", img, host, "d/a"},
	} {
		wantCLIFailure(t, runCLI(t, append([]string{"vol"}, args...)...), 1, "operation not permitted: the inode is immutable")
	}
	if got := okCLI(t, "vol", "get", img, "d/a"); got != "a\n" {
		t.Errorf("d/a reads %q after the refused changes", got)
	}
	if got := okCLI(t, "vol", "ls", img, "d"); got != ".hidden\na\nb\ns\n" {
		t.Errorf("d holds %q after the refused changes", got)
	}

	// What chattr refuses.
	wantCLIFailure(t, runCLI(t, "vol", "chattr", img, "+i", "d"), 1, "d: only regular files take the immutable flag here, not a dir")
	wantCLIFailure(t, runCLI(t, "vol", "chattr", img, "+i", "l"), 1, "only regular files take the immutable flag here, not a symlink")
	wantCLIFailure(t, runCLI(t, "vol", "chattr", img, "+i", "nope"), 1, "no such file or directory")
	wantCLIFailure(t, runCLI(t, "vol", "chattr", img, "d/a"), 2, "want a mode, +i or -i")
	wantCLIFailure(t, runCLI(t, "vol", "chattr", img, "+a", "d/a"), 2, "mode +a is not supported")
	wantCLIFailure(t, runCLI(t, "vol", "chattr", img, "-a", "d/a"), 2, "flag provided but not defined: -a")
	wantCLIFailure(t, runCLI(t, "vol", "chattr", "+i", img), 2, "want VOLUME +i|-i PATH...")
	wantCLIFailure(t, runCLI(t, "vol", "lsattr", img), 2, "want VOLUME PATH...")
	// Several PATHs: each is tried, the failures reported.
	r = runCLI(t, "vol", "chattr", img, "-i", "d", "d/a", "nope", "d/.hidden")
	if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "xfs3: vol chattr: ") != 2 {
		t.Errorf("chattr -i of two good PATHs among bad ones: status %d, stderr %q", r.code, r.stderr)
	}
	if immutableOnVolume(t, img, "d/a") || immutableOnVolume(t, img, "d/.hidden") {
		t.Fatal("chattr -i did not clear the flags")
	}
	okSilent(t, "vol", "setfattr", img, "d/a", "user.x", "1")
	okSilent(t, "vol", "mv", img, "d/a", "d/moved")
	okSilent(t, "vol", "rm", img, "d/moved")
	// A PATH "-i" after "--".
	okSilent(t, "vol", "put", img, host, "--", "-i")
	okSilent(t, "vol", "chattr", img, "+i", "--", "-i")
	if !immutableOnVolume(t, img, "-i") {
		t.Error("chattr +i -- -i did not set the flag of the file -i")
	}
	if oracle.Optional(t, "xfs_repair -n is not run", oracle.ToolRepair) {
		oracle.Repair(t, img)
	}
}

// TestVolLsattrAgainstKernel: on a volume whose flags the kernel set with
// chattr (i, a, S, d, A on files, P on a directory), vol lsattr prints
// exactly what lsattr(1) prints on a mount, for files, directories
// listed, -d and -a. Flags vol chattr changes then show in the kernel's
// lsattr, and xfs_repair -n is clean.
func TestVolLsattrAgainstKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolMount, "lsattr", "chattr")
	img := filepath.Join(t.TempDir(), "vol.img")
	oracle.Mkfs(t, img, 256<<20)
	mnt := oracle.Mount(t, img, false)
	volMust(t, os.Mkdir(filepath.Join(mnt, "x"), 0o755))
	volMust(t, os.Mkdir(filepath.Join(mnt, "x", "proj"), 0o755))
	for _, name := range []string{"imm", "app", "many", "plain", ".dot"} {
		volMust(t, os.WriteFile(filepath.Join(mnt, "x", name), []byte(name), 0o644))
	}
	for _, c := range [][]string{{"+a", "x/app"}, {"+SdA", "x/many"}, {"+P", "x/proj"}, {"+i", "x/imm"}, {"+i", "x/.dot"}} {
		volRunTool(t, mnt, "chattr", c...)
	}
	oracle.Unmount(t, mnt)

	kernelLsattr := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("lsattr", args...)
		cmd.Dir = mnt
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("lsattr %q: %v", args, err)
		}
		return string(out)
	}
	cases := [][]string{
		{"x"}, {"-a", "x"}, {"-d", "x", "x/proj"}, {"x/imm", "x/app", "x/many", "x/plain", "x/.dot"},
	}
	mnt = oracle.Mount(t, img, true)
	for _, args := range cases {
		want := kernelLsattr(args...)
		got := okCLI(t, append([]string{"vol", "lsattr", img}, args...)...)
		if got != want {
			t.Errorf("lsattr %q:\n%s\nlsattr(1) shows\n%s", args, got, want)
		}
	}
	oracle.Unmount(t, mnt)

	okSilent(t, "vol", "chattr", img, "-i", "x/imm")
	okSilent(t, "vol", "chattr", img, "+i", "x/plain")
	oracle.Repair(t, img)
	mnt = oracle.Mount(t, img, true)
	got := kernelLsattr("x/imm", "x/plain")
	want := "---------------------- x/imm\n----i----------------- x/plain\n"
	if got != want {
		t.Errorf("after vol chattr, lsattr(1) shows\n%s\nwant\n%s", got, want)
	}
	if vol := okCLI(t, "vol", "lsattr", img, "x/imm", "x/plain"); vol != want {
		t.Errorf("after vol chattr, vol lsattr shows\n%s", vol)
	}
	oracle.Unmount(t, mnt)
}

// TestVolReleaseLock follows docs/operations.md ("Removing a lock on
// purpose"): a version under COMPLIANCE retention cannot be deleted
// until, on the stopped volume, vol chattr -i and vol rmfattr take its
// flag and lock away; then the store deletes it.
func TestVolReleaseLock(t *testing.T) {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	volMust(t, st.CreateBucket("vault"))
	volMust(t, st.Locks().Enable("vault"))
	lock := store.ObjectLock{Retention: store.Retention{Mode: store.LockCompliance, Until: time.Now().Add(24 * time.Hour)}, LegalHold: true}
	info, err := st.PutObject("vault", "k", strings.NewReader("kept"), 4, store.Meta{Lock: lock})
	volMust(t, err)
	if _, err := st.Versions().Delete("vault", "k", ""); err != nil { // the locked version goes noncurrent
		t.Fatal(err)
	}
	if _, err := st.Versions().Delete("vault", "k", info.VersionID); !errors.Is(err, store.ErrObjectLocked) {
		t.Fatalf("delete of the locked version: %v", err)
	}
	volMust(t, st.Close())

	p := "vault/.xfs3.versions/.xfs3.o.k/" + info.VersionID
	if !immutableOnVolume(t, img, p) {
		t.Fatalf("%s is not immutable", p)
	}
	if r := runCLI(t, "vol", "rm", img, p); r.code == 0 || !strings.Contains(r.stderr, "immutable") {
		t.Fatalf("vol rm of a locked version: status %d, %q", r.code, r.stderr)
	}
	okSilent(t, "vol", "chattr", img, "-i", p)
	okSilent(t, "vol", "rmfattr", img, p, "user.xfs3.lock-mode")
	okSilent(t, "vol", "rmfattr", img, p, "user.xfs3.legal-hold")

	st, err = store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Versions().Delete("vault", "k", info.VersionID); err != nil {
		t.Fatalf("delete after the lock was taken away: %v", err)
	}
}
