package oracle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSnapshotDir(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "a"), []byte("abc"), 0o644))
	must(syscall.Chmod(filepath.Join(root, "a"), 0o600))
	must(os.Mkdir(filepath.Join(root, "d"), 0o755))
	must(os.WriteFile(filepath.Join(root, "d", "b"), nil, 0o644))
	must(os.Link(filepath.Join(root, "a"), filepath.Join(root, "d", "a2")))
	must(os.Symlink("../a", filepath.Join(root, "d", "l")))

	xattrs := true
	err := lsetxattr(filepath.Join(root, "d", "b"), "user.k", []byte("v\x00\xff"), 0)
	if noXattrSupport(err) || errors.Is(err, syscall.EPERM) {
		t.Logf("no user xattrs on the temp dir (%v): skipping that part", err)
		xattrs = false
	} else {
		must(err)
		must(lsetxattr(filepath.Join(root, "d", "b"), "user.empty", nil, 0))
	}

	snap, err := SnapshotDir(root)
	must(err)
	var paths []string
	for _, e := range snap {
		paths = append(paths, e.Path)
	}
	if got, want := strings.Join(paths, " "), ". a d d/a2 d/b d/l"; got != want {
		t.Fatalf("paths %q, want %q", got, want)
	}
	a, _ := snap.Lookup("a")
	if a.Type != TypeFile || a.Mode != 0o600 || a.Size != 3 || a.Nlink != 2 ||
		a.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("a: %+v", a)
	}
	if a2, _ := snap.Lookup("d/a2"); a2.Ino != a.Ino {
		t.Errorf("hard link has inode %d, want %d", a2.Ino, a.Ino)
	}
	if l, _ := snap.Lookup("d/l"); l.Type != TypeSymlink || l.Target != "../a" || l.Size != 4 || l.SHA256 != "" {
		t.Errorf("d/l: %+v", l)
	}
	if d, _ := snap.Lookup("d"); d.Type != TypeDir || d.Nlink != 2 {
		t.Errorf("d: %+v", d)
	}
	if r, _ := snap.Lookup("."); r.Type != TypeDir || r.Nlink != 3 {
		t.Errorf(".: %+v", r)
	}
	if xattrs {
		b, _ := snap.Lookup("d/b")
		if len(b.Xattrs) != 2 || b.Xattrs["user.k"] != "v\x00\xff" || b.Xattrs["user.empty"] != "" {
			t.Errorf("d/b xattrs: %q", b.Xattrs)
		}
	}
	if d := snap.Diff(snap); len(d) != 0 {
		t.Errorf("self diff: %q", d)
	}

	// The snapshot survives JSON (xattr values here are not UTF-8, which
	// JSON would mangle, so drop them for this part).
	for i := range snap {
		snap[i].Xattrs = nil
	}
	file := filepath.Join(t.TempDir(), "snap.json")
	must(snap.WriteFile(file))
	back, err := ReadSnapshot(file)
	must(err)
	if d := snap.Diff(back); len(d) != 0 {
		t.Errorf("JSON round trip: %q", d)
	}
	js, err := os.ReadFile(file)
	must(err)
	for _, key := range []string{`"path"`, `"type"`, `"mode"`, `"size"`, `"nlink"`, `"ino"`, `"uid"`, `"gid"`, `"sha256"`, `"target"`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestHashSparse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 3<<20+77)
	copy(want[1<<20+5:], "data in the middle")
	copy(want[2<<20:], bytes.Repeat([]byte("x"), 70000))
	for _, off := range []int{1<<20 + 5, 2 << 20} {
		if _, err := f.WriteAt(want[off:off+70000], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(int64(len(want))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := hashFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(want); got != hex.EncodeToString(sum[:]) {
		t.Errorf("hash of sparse file %s, want %x", got, sum)
	}
}

func TestDiff(t *testing.T) {
	a := Snapshot{
		{Path: ".", Type: TypeDir, Mode: 0o755, Size: 30, Nlink: 3, Ino: 128},
		{Path: "f", Type: TypeFile, Mode: 0o644, Size: 1, Nlink: 2, Ino: 131, SHA256: "aa", Xattrs: map[string]string{"user.x": "1"}},
		{Path: "g", Type: TypeFile, Mode: 0o644, Size: 1, Nlink: 2, Ino: 131, SHA256: "aa"},
		{Path: "gone", Type: TypeFile},
		{Path: "l", Type: TypeSymlink, Mode: 0o777, Size: 1, Nlink: 1, Ino: 133, Target: "f"},
	}
	b := Snapshot{
		{Path: ".", Type: TypeDir, Mode: 0o755, Size: 42, Nlink: 3, Ino: 128},
		{Path: "f", Type: TypeFile, Mode: 0o600, Size: 1, Nlink: 2, Ino: 131, SHA256: "ab", Xattrs: map[string]string{"user.y": "1"}},
		{Path: "g", Type: TypeFile, Mode: 0o644, Size: 1, Nlink: 2, Ino: 131, SHA256: "aa"},
		{Path: "l", Type: TypeFile, Mode: 0o777, Size: 1, Nlink: 1, Ino: 133},
		{Path: "new", Type: TypeDir},
	}
	got := strings.Join(a.Diff(b), "\n")
	for _, want := range []string{
		".: size 30 != 42",
		"f: mode 0644 != 0600",
		"f: sha256 aa != ab",
		"f: xattr user.x missing from other",
		"f: unexpected xattr user.y in other",
		"gone: file missing from other",
		"l: type symlink != file",
		"new: unexpected dir in other",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "g:") {
		t.Errorf("diff reports the equal entry g:\n%s", got)
	}
	if d := a.DiffWith(b, DiffOptions{IgnoreDirSize: true}); strings.Contains(strings.Join(d, "\n"), ".: size") {
		t.Errorf("IgnoreDirSize still reports the root size: %q", d)
	}

	// Inode numbers: ignored on request, but hard links must still match.
	c := Snapshot{
		{Path: "f", Type: TypeFile, Nlink: 2, Ino: 7},
		{Path: "g", Type: TypeFile, Nlink: 2, Ino: 7},
	}
	e := Snapshot{
		{Path: "f", Type: TypeFile, Nlink: 2, Ino: 9},
		{Path: "g", Type: TypeFile, Nlink: 2, Ino: 9},
	}
	if d := c.DiffWith(e, DiffOptions{IgnoreIno: true}); len(d) != 0 {
		t.Errorf("IgnoreIno: %q", d)
	}
	if d := c.Diff(e); len(d) != 2 {
		t.Errorf("inode differences: %q", d)
	}
	e[1].Ino = 10
	if d := c.DiffWith(e, DiffOptions{IgnoreIno: true}); len(d) == 0 {
		t.Errorf("broken hard link not reported")
	}

	// The report stops after about 50 differences.
	var many Snapshot
	for i := 0; i < 200; i++ {
		many = append(many, Entry{Path: fmt.Sprintf("p%03d", i), Type: TypeFile})
	}
	if d := many.Diff(nil); len(d) > maxDiffs+1 || !strings.HasPrefix(d[len(d)-1], "...") {
		t.Errorf("%d differences reported, last %q", len(d), d[len(d)-1])
	}
}

func TestParseFields(t *testing.T) {
	m := ParseFields("magicnum = 0x58465342\nblocksize = 4096\nuuid = 1-2\nnoise line\n")
	if m["blocksize"] != "4096" || m["magicnum"] != "0x58465342" || m["uuid"] != "1-2" || len(m) != 3 {
		t.Errorf("ParseFields: %q", m)
	}
}

// recorder is a testing.TB that records Skip and Fatal instead of stopping.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skip(args ...any)                  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestRequire(t *testing.T) {
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	Require(r, "no-such-xfs-tool")
	if !strings.Contains(r.skipped, "no-such-xfs-tool not found") || r.failed != "" {
		t.Errorf("missing tool: skipped %q, failed %q", r.skipped, r.failed)
	}
	t.Setenv(RequireEnv, "1")
	r = &recorder{TB: t}
	Require(r, "no-such-xfs-tool")
	if !strings.Contains(r.failed, "no-such-xfs-tool not found") || r.skipped != "" {
		t.Errorf("missing tool with %s=1: skipped %q, failed %q", RequireEnv, r.skipped, r.failed)
	}
	if os.Geteuid() != 0 {
		r = &recorder{TB: t}
		Require(r, ToolMount)
		if !strings.Contains(r.failed, "not root") {
			t.Errorf("mount as non-root: failed %q", r.failed)
		}
	}
}
