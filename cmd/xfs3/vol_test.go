package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// The kernel is the oracle: a volume made by mkfs.xfs is populated through
// a loop mount, and everything the vol commands print is compared with
// what the kernel (and getfattr, stat(1) and xfs_db) show for it.

// kentry is the kernel's view of one path of the fixture, taken on a fresh
// read-only mount (so nothing is cached, delayed or updated).
type kentry struct {
	rel     string // path relative to the mount, raw bytes
	st      syscall.Stat_t
	btime   time.Time // zero when statx is unavailable
	target  string    // symlinks
	modeStr string    // stat(1) %A, "" when stat(1) is unavailable
	sum     [32]byte  // regular files
}

// volFixture is the populated volume and the kernel's view of it.
type volFixture struct {
	img     string
	entries []kentry // every path but the root, in ls -R order
	byRel   map[string]*kentry
	// getfattr output for [path][encoding], and with -h for symlinks
	// under [path]["-h "+encoding]; a nil slice means getfattr failed.
	getfattr map[string]map[string][]byte
	// paths (and the root ".") whose attributes were captured
	attrPaths []string
}

const (
	volBigSize    = 2<<20 + 12345
	volSparseSize = 5 << 20
)

var (
	ownedAtime = time.Date(2001, 9, 9, 1, 46, 40, 123456789, time.UTC)
	ownedMtime = time.Date(2100, 1, 2, 3, 4, 5, 987654321, time.UTC)
)

// oddNames are file names that test quoting and byte-wise sorting.
var oddNames = []string{"new\nline", "tab\tname", `"quoted`, "sp ace", "\xff\xfe", "caf\u00e9", `back\slash`, "eq=ual"}

func TestVolAgainstKernel(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount, oracle.ToolDB, "getfattr", "setfattr")
	start := time.Now()
	f := buildVolFixture(t)
	t.Logf("fixture built and captured in %v (%d entries)", time.Since(start).Round(time.Millisecond), len(f.entries))
	t.Run("ls", func(t *testing.T) { testLs(t, f) })
	t.Run("get", func(t *testing.T) { testGet(t, f) })
	t.Run("stat", func(t *testing.T) { testStat(t, f) })
	t.Run("getfattr", func(t *testing.T) { testGetfattr(t, f) })
	t.Run("df", func(t *testing.T) { testDf(t, f) })
}

func buildVolFixture(t *testing.T) *volFixture {
	dir := t.TempDir()
	img := filepath.Join(dir, "vol.img")
	oracle.Mkfs(t, img, 512<<20)
	mnt := oracle.Mount(t, img, false)
	volPopulate(t, mnt)
	oracle.Unmount(t, mnt)
	mnt = oracle.Mount(t, img, true)
	f := volCapture(t, mnt)
	oracle.Unmount(t, mnt)
	f.img = img
	return f
}

func volMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func volSetxattr(t *testing.T, path, name string, value []byte) {
	t.Helper()
	if err := syscall.Setxattr(path, name, value, 0); err != nil {
		t.Fatalf("setxattr %s %s: %v", path, name, err)
	}
}

func volRunTool(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
}

func volRandom(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// volPopulate fills the mounted volume through the kernel.
func volPopulate(t *testing.T, mnt string) {
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	write := func(rel string, data []byte) { volMust(t, os.WriteFile(p(rel), data, 0o644)) }
	for _, d := range []string{"a", "a/b", "a/b/c", "empty", "many", "acl"} {
		volMust(t, os.Mkdir(p(d), 0o755))
	}
	volMust(t, os.Mkdir(p("sticky"), 0o755))
	volMust(t, os.Chmod(p("sticky"), 0o777|os.ModeSticky))
	volSetxattr(t, mnt, "user.rootattr", []byte("r"))

	write("a/small.txt", []byte("hello\n"))
	small := p("a/small.txt")
	volSetxattr(t, small, "user.color", []byte("blue"))
	volSetxattr(t, small, "user.bin", []byte{0, 0xff, '\n', '\r', '\\', '"', 'A', 0, 1})
	volSetxattr(t, small, "user.empty", nil)
	volSetxattr(t, small, "user.trailnul", []byte("abc\x00"))
	volSetxattr(t, small, `user.we=ird\name`, []byte("v"))
	volSetxattr(t, small, "trusted.t", []byte("tval"))
	volSetxattr(t, small, "security.s", []byte("sval"))
	write("a-b", []byte("dash sorts before slash\n"))

	write("big.bin", volRandom(volBigSize))
	for i := 0; i < 40; i++ {
		volSetxattr(t, p("big.bin"), fmt.Sprintf("user.attr%02d", i), []byte(strings.Repeat("x", i*7)))
	}
	volSetxattr(t, p("big.bin"), "user.remote", volRandom(20000))
	volSetxattr(t, p("big.bin"), "trusted.empty", nil)
	// A copy sharing every data block of big.bin (mkfs.xfs makes reflink
	// volumes): vol stat lists the shared runs, vol df what they save.
	volRunTool(t, mnt, "cp", "--reflink=always", "big.bin", "big-copy.bin")

	sp, err := os.Create(p("a/b/sparse"))
	volMust(t, err)
	volMust(t, sp.Truncate(volSparseSize))
	_, err = sp.WriteAt([]byte("data in the middle"), 3<<20)
	volMust(t, err)
	volMust(t, sp.Close())

	for _, i := range mrand.Perm(300) {
		write(fmt.Sprintf("many/f%03d", i), bytes.Repeat([]byte{byte(i)}, i))
	}
	for i, name := range oddNames {
		write(name, []byte(strconv.Itoa(i)))
		volSetxattr(t, p(name), "user.x", []byte(name)) // getfattr quotes the name in "# file:"
	}

	volMust(t, os.Symlink("a/small.txt", p("link")))
	volMust(t, os.Symlink("a", p("dirlink")))
	volMust(t, os.Symlink("nowhere", p("dangling")))
	volRunTool(t, mnt, "setfattr", "-h", "-n", "trusted.onlink", "-v", "lv", "link")

	write("setuid", []byte("#!/bin/sh\n"))
	volMust(t, os.Chmod(p("setuid"), 0o755|os.ModeSetuid))
	write("owned", []byte("owned by 1234:5678\n"))
	volMust(t, os.Chown(p("owned"), 1234, 5678))
	volMust(t, os.Chtimes(p("owned"), ownedAtime, ownedMtime))
	volMust(t, syscall.Mkfifo(p("fifo"), 0o600))
	volMust(t, syscall.Mknod(p("null"), syscall.S_IFCHR|0o666, 1<<8|3))

	// ACL u::rwx,u:1000:r-x,g::r-x,m::r-x,o::--- in the xattr format.
	acl := []byte{2, 0, 0, 0}
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{1, 7, 0xffffffff}, {2, 5, 1000}, {4, 5, 0xffffffff}, {0x10, 5, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		acl = binary.LittleEndian.AppendUint16(acl, e.tag)
		acl = binary.LittleEndian.AppendUint16(acl, e.perm)
		acl = binary.LittleEndian.AppendUint32(acl, e.id)
	}
	volSetxattr(t, p("acl"), "system.posix_acl_access", acl)
	volSetxattr(t, p("acl"), "system.posix_acl_default", acl)

	write("nodump", []byte("flags\n"))
	if _, err := exec.LookPath("xfs_io"); err == nil {
		volRunTool(t, mnt, "xfs_io", "-c", "chproj 42", "-c", "chattr +d", "nodump")
	} else {
		t.Log("xfs_io not found: project ID and flags are not set")
	}
}

// volCapture records the kernel's view of the mounted fixture.
func volCapture(t *testing.T, mnt string) *volFixture {
	f := &volFixture{byRel: map[string]*kentry{}, getfattr: map[string]map[string][]byte{}}
	err := filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == mnt {
			return err
		}
		rel, err := filepath.Rel(mnt, path)
		if err != nil {
			return err
		}
		e := kentry{rel: rel}
		if err := syscall.Lstat(path, &e.st); err != nil {
			return err
		}
		e.btime = statxBtime(t, path)
		switch e.st.Mode & syscall.S_IFMT {
		case syscall.S_IFLNK:
			if e.target, err = os.Readlink(path); err != nil {
				return err
			}
		case syscall.S_IFREG:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			e.sum = sha256.Sum256(b)
		}
		f.entries = append(f.entries, e)
		return nil
	})
	volMust(t, err)
	for i := range f.entries {
		f.byRel[f.entries[i].rel] = &f.entries[i]
	}

	// Symbolic modes from stat(1), all in one run, NUL-terminated.
	if _, err := exec.LookPath("stat"); err == nil {
		args := []string{"--printf", `%A\0`, "--"}
		for _, e := range f.entries {
			args = append(args, e.rel)
		}
		cmd := exec.Command("stat", args...)
		cmd.Dir = mnt
		out, err := cmd.Output()
		volMust(t, err)
		modes := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if len(modes) != len(f.entries) {
			t.Fatalf("stat(1) printed %d modes for %d paths", len(modes), len(f.entries))
		}
		for i := range f.entries {
			f.entries[i].modeStr = modes[i]
		}
	} else {
		t.Log("stat(1) not found: symbolic modes are checked by the unit test only")
	}

	// getfattr output for every path outside many/, and the root.
	f.attrPaths = []string{"."}
	for _, e := range f.entries {
		if !strings.HasPrefix(e.rel, "many/") {
			f.attrPaths = append(f.attrPaths, e.rel)
		}
	}
	f.attrPaths = append(f.attrPaths, "many/f007")
	for _, rel := range f.attrPaths {
		m := map[string][]byte{}
		for _, enc := range []string{"text", "hex", "base64"} {
			m[enc] = kernelGetfattr(t, mnt, "-d", "-m", "-", "-e", enc, "--", rel)
			if e := f.byRel[rel]; e != nil && e.st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
				m["-h "+enc] = kernelGetfattr(t, mnt, "-h", "-d", "-m", "-", "-e", enc, "--", rel)
			}
		}
		f.getfattr[rel] = m
	}
	return f
}

// kernelGetfattr runs the real getfattr in dir and returns its standard output,
// or nil when it fails.
func kernelGetfattr(t *testing.T, dir string, args ...string) []byte {
	cmd := exec.Command("getfattr", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	if stderr.Len() != 0 {
		t.Fatalf("getfattr %q wrote to stderr: %s", args, stderr.Bytes())
	}
	return out
}

// statxBtime returns the birth time the kernel reports, or the zero time
// when statx is not available on this architecture.
func statxBtime(t *testing.T, path string) time.Time {
	nr, ok := map[string]uintptr{"amd64": 332, "arm64": 291, "riscv64": 291, "loong64": 291, "386": 383}[runtime.GOARCH]
	if !ok {
		return time.Time{}
	}
	p, err := syscall.BytePtrFromString(path)
	volMust(t, err)
	var buf [256]byte
	const atFdcwd = -100
	const atSymlinkNofollow = 0x100
	const statxBtimeMask = 0x800
	fd := atFdcwd
	_, _, errno := syscall.Syscall6(nr, uintptr(fd), uintptr(unsafe.Pointer(p)), atSymlinkNofollow, statxBtimeMask, uintptr(unsafe.Pointer(&buf[0])), 0)
	if errno != 0 {
		t.Fatalf("statx %s: %v", path, errno)
	}
	if binary.NativeEndian.Uint32(buf[0:])&statxBtimeMask == 0 {
		return time.Time{}
	}
	sec := int64(binary.NativeEndian.Uint64(buf[80:]))
	nsec := int64(binary.NativeEndian.Uint32(buf[88:]))
	return time.Unix(sec, nsec)
}

// wantQuoted is the documented quoting rule, written independently of
// displayName.
func wantQuoted(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) || strings.HasPrefix(s, `"`) {
		return strconv.Quote(s)
	}
	return s
}

// wantLines joins names as the listing would print them.
func wantLines(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(wantQuoted(n))
		b.WriteByte('\n')
	}
	return b.String()
}

// okCLI runs a command that must succeed silently on stderr.
func okCLI(t *testing.T, args ...string) string {
	t.Helper()
	r := runCLI(t, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("xfs3 %q: status %d, stderr %q", args, r.code, r.stderr)
	}
	return r.stdout
}

func diffLines(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s differs at line %d:\n got: %q\nwant: %q", what, i+1, gl, wl)
			return
		}
	}
}

func testLs(t *testing.T, f *volFixture) {
	img := f.img
	var all, top, underA, underMany []string
	for _, e := range f.entries {
		all = append(all, e.rel)
		if !strings.Contains(e.rel, "/") {
			top = append(top, e.rel)
		}
		if rest, ok := strings.CutPrefix(e.rel, "a/"); ok {
			underA = append(underA, rest)
		}
		if rest, ok := strings.CutPrefix(e.rel, "many/"); ok {
			underMany = append(underMany, rest)
		}
	}
	diffLines(t, "ls -R", okCLI(t, "vol", "ls", "-R", img), wantLines(all))
	diffLines(t, "ls -R /", okCLI(t, "vol", "ls", img, "/", "-R"), wantLines(all))
	diffLines(t, "ls", okCLI(t, "vol", "ls", img), wantLines(top))
	diffLines(t, "ls -R a", okCLI(t, "vol", "ls", "-R", img, "a"), wantLines(underA))
	diffLines(t, "ls -R /a/", okCLI(t, "vol", "ls", "-R", img, "/a/"), wantLines(underA))
	diffLines(t, "ls many", okCLI(t, "vol", "ls", img, "many"), wantLines(underMany))
	diffLines(t, "ls a/b/c", okCLI(t, "vol", "ls", img, "a/b/c"), "")
	diffLines(t, "ls file", okCLI(t, "vol", "ls", img, "a/small.txt"), "a/small.txt\n")
	diffLines(t, "ls -R file", okCLI(t, "vol", "ls", "-R", img, "/a/small.txt"), "/a/small.txt\n")
	diffLines(t, "ls dirlink", okCLI(t, "vol", "ls", img, "dirlink"), "b\nsmall.txt\n")
	diffLines(t, "ls dangling", okCLI(t, "vol", "ls", img, "dangling"), "dangling\n")
	diffLines(t, "ls odd name", okCLI(t, "vol", "ls", img, "new\nline"), `"new\nline"`+"\n")

	// Long listing: every field against the kernel.
	out := okCLI(t, "vol", "ls", "-l", "-R", img)
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(got) != len(f.entries) {
		t.Fatalf("ls -l -R printed %d lines for %d entries", len(got), len(f.entries))
	}
	for i, line := range got {
		e := &f.entries[i]
		checkLongLine(t, line, e, wantQuoted(e.rel))
	}
	checkLongLine(t, strings.TrimSuffix(okCLI(t, "vol", "ls", "-l", img, "dirlink"), "\n"), f.byRel["dirlink"], "dirlink")
	checkLongLine(t, strings.TrimSuffix(okCLI(t, "vol", "ls", "-l", img, "a/small.txt"), "\n"), f.byRel["a/small.txt"], "a/small.txt")
}

var kernelTypes = map[uint32]string{
	syscall.S_IFREG: "file", syscall.S_IFDIR: "dir", syscall.S_IFLNK: "symlink",
	syscall.S_IFCHR: "chardev", syscall.S_IFBLK: "blockdev", syscall.S_IFIFO: "fifo", syscall.S_IFSOCK: "socket",
}

// checkLongLine checks one ls -l line: MODE TYPE SIZE INODE NAME[ -> TARGET].
func checkLongLine(t *testing.T, line string, e *kentry, name string) {
	t.Helper()
	if len(line) < 10+1+8+1+12+1+12+1 {
		t.Errorf("short ls -l line %q", line)
		return
	}
	mode, typ := line[:10], strings.TrimSpace(line[11:19])
	size, _ := strconv.ParseInt(strings.TrimSpace(line[20:32]), 10, 64)
	ino, _ := strconv.ParseUint(strings.TrimSpace(line[33:45]), 10, 64)
	rest := line[46:]
	if e.modeStr != "" && mode != e.modeStr {
		t.Errorf("%q: mode %q, stat(1) says %q", e.rel, mode, e.modeStr)
	}
	if want := kernelTypes[e.st.Mode&syscall.S_IFMT]; typ != want {
		t.Errorf("%q: type %q, want %q", e.rel, typ, want)
	}
	if size != e.st.Size || ino != e.st.Ino {
		t.Errorf("%q: size %d ino %d, kernel says %d and %d", e.rel, size, ino, e.st.Size, e.st.Ino)
	}
	want := name
	if e.target != "" {
		want += " -> " + wantQuoted(e.target)
	}
	if rest != want {
		t.Errorf("%q: name part %q, want %q", e.rel, rest, want)
	}
}

// maxWriter records the largest single write.
type maxWriter struct {
	bytes.Buffer
	max, writes int
}

func (w *maxWriter) Write(p []byte) (int, error) {
	w.writes++
	if len(p) > w.max {
		w.max = len(p)
	}
	return w.Buffer.Write(p)
}

func testGet(t *testing.T, f *volFixture) {
	img := f.img
	dir := t.TempDir()
	n := 0
	for _, e := range f.entries {
		if e.st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			continue
		}
		n++
		if sum := sha256.Sum256([]byte(okCLI(t, "vol", "get", img, e.rel))); sum != e.sum {
			t.Errorf("get %q to stdout: content differs from the kernel's", e.rel)
		}
	}
	t.Logf("compared %d regular files", n)

	// To files, through a symlink, into a directory.
	umask := syscall.Umask(0o22)
	syscall.Umask(umask)
	for _, tc := range []struct{ path, dest, want string }{
		{"big.bin", "big", "big.bin"},
		{"/a/b/sparse", "sparse", "a/b/sparse"},
		{"link", "viaLink", "a/small.txt"},
		{"dirlink/small.txt", "", "a/small.txt"},
	} {
		dest := filepath.Join(dir, tc.dest)
		if tc.dest == "" {
			dest = dir
		}
		if out := okCLI(t, "vol", "get", img, tc.path, dest); out != "" {
			t.Errorf("get %s %s printed %q", tc.path, dest, out)
		}
		if tc.dest == "" {
			dest = filepath.Join(dir, "small.txt")
		}
		b, err := os.ReadFile(dest)
		volMust(t, err)
		if sha256.Sum256(b) != f.byRel[tc.want].sum {
			t.Errorf("get %s to %s: content differs", tc.path, dest)
		}
		fi, err := os.Stat(dest)
		volMust(t, err)
		if fi.Mode() != fs.FileMode(0o644&^umask) {
			t.Errorf("get %s: destination mode %v", tc.path, fi.Mode())
		}
	}
	// An existing, longer destination is truncated.
	volMust(t, os.WriteFile(filepath.Join(dir, "long"), bytes.Repeat([]byte("z"), 100), 0o600))
	okCLI(t, "vol", "get", img, "a/small.txt", filepath.Join(dir, "long"))
	if b, _ := os.ReadFile(filepath.Join(dir, "long")); string(b) != "hello\n" {
		t.Errorf("existing destination holds %q", b)
	}

	// Streaming: no write larger than a chunk.
	var w maxWriter
	var stderr bytes.Buffer
	if code := run([]string{"vol", "get", img, "big.bin"}, nil, &w, &stderr); code != 0 {
		t.Fatalf("get big.bin: %d %s", code, stderr.String())
	}
	if w.Len() != volBigSize || w.max > getChunk || w.writes < 3 {
		t.Errorf("get big.bin: %d bytes in %d writes, largest %d", w.Len(), w.writes, w.max)
	}

	for _, tc := range []struct{ path, want string }{
		{"a", "is a directory"},
		{"dirlink", "is a directory"},
		{"fifo", "is a fifo, not a regular file"},
		{"null", "is a chardev, not a regular file"},
		{"dangling", "nowhere: no such file or directory"},
		{"a/small.txt/x", "not a directory"},
	} {
		dest := filepath.Join(dir, "never")
		wantCLIFailure(t, runCLI(t, "vol", "get", img, tc.path, dest), 1, tc.want)
		if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("get %s created %s", tc.path, dest)
		}
	}
}

// dbInodes prints inode core fields of the given inodes with xfs_db, one
// map per inode.
func dbInodes(t *testing.T, img string, inos []uint64) map[uint64]map[string]string {
	cmds := []string{}
	for _, ino := range inos {
		cmds = append(cmds, fmt.Sprintf("inode %d", ino),
			"print v3.inumber core.format core.nextents core.naextents core.forkoff core.aformat core.projid_lo core.projid_hi core.gen v3.flags2 "+
				"core.prealloc core.realtime core.immutable core.append core.sync core.noatime core.nodump core.rtinherit core.projinherit core.nosymlinks core.extsz core.extszinherit core.nodefrag core.filestream")
	}
	out := oracle.DB(t, img, cmds...)
	res := map[uint64]map[string]string{}
	var cur map[string]string
	for _, line := range strings.Split(out, "\n") {
		k, v, found := strings.Cut(line, " = ")
		if !found {
			continue
		}
		if k == "v3.inumber" {
			n, err := strconv.ParseUint(v, 10, 64)
			volMust(t, err)
			cur = map[string]string{}
			res[n] = cur
		}
		if cur != nil {
			cur[k] = v
		}
	}
	return res
}

// dbFormat turns "2 (extents)" into "extents".
func dbFormat(v string) string {
	if _, name, ok := strings.Cut(v, "("); ok {
		return strings.TrimSuffix(name, ")")
	}
	return v
}

var dbFlagBits = []struct {
	field string
	bit   uint16
}{
	{"core.realtime", 0x1}, {"core.prealloc", 0x2}, {"core.immutable", 0x8}, {"core.append", 0x10},
	{"core.sync", 0x20}, {"core.noatime", 0x40}, {"core.nodump", 0x80}, {"core.rtinherit", 0x100},
	{"core.projinherit", 0x200}, {"core.nosymlinks", 0x400}, {"core.extsz", 0x800},
	{"core.extszinherit", 0x1000}, {"core.nodefrag", 0x2000}, {"core.filestream", 0x4000},
}

func testStat(t *testing.T, f *volFixture) {
	img := f.img
	var sel []*kentry
	for i := range f.entries {
		if e := &f.entries[i]; !strings.HasPrefix(e.rel, "many/") || e.rel == "many/f123" {
			sel = append(sel, e)
		}
	}
	var inos []uint64
	for _, e := range sel {
		inos = append(inos, e.st.Ino)
	}
	db := dbInodes(t, img, inos)
	ts := func(sec, nsec int64) string { return time.Unix(sec, nsec).UTC().Format(timeLayout) }
	for _, e := range sel {
		var j statJSON
		out := okCLI(t, "vol", "stat", "--json", img, e.rel)
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("stat --json %q: %v\n%s", e.rel, err, out)
		}
		st := &e.st
		want := statJSON{
			Path: j.Path, Ino: st.Ino, Type: kernelTypes[st.Mode&syscall.S_IFMT], Mode: st.Mode,
			ModeOctal: fmt.Sprintf("%04o", st.Mode&0o7777), ModeSymbolic: j.ModeSymbolic,
			UID: st.Uid, GID: st.Gid, Size: st.Size, Blocks: j.Blocks, BlockSize: 4096, Nlink: uint32(st.Nlink),
			Atime: ts(st.Atim.Sec, st.Atim.Nsec), Mtime: ts(st.Mtim.Sec, st.Mtim.Nsec), Ctime: ts(st.Ctim.Sec, st.Ctim.Nsec),
			Crtime: j.Crtime, Target: e.target,
		}
		if e.modeStr != "" {
			want.ModeSymbolic = e.modeStr
		}
		if !e.btime.IsZero() {
			want.Crtime = e.btime.UTC().Format(timeLayout)
		}
		if int64(j.Blocks)*int64(j.BlockSize)/512 != st.Blocks {
			t.Errorf("%q: %d blocks of %d bytes, kernel says %d sectors", e.rel, j.Blocks, j.BlockSize, st.Blocks)
		}
		if utf8Path := string([]rune(e.rel)); j.Path != utf8Path { // each invalid byte becomes U+FFFD
			t.Errorf("%q: path %q", e.rel, j.Path)
		}
		// On-disk fields only xfs_db shows.
		d := db[st.Ino]
		if d == nil {
			t.Fatalf("xfs_db printed nothing for inode %d (%q)", st.Ino, e.rel)
		}
		want.DataFormat = dbFormat(d["core.format"])
		want.DataExtents, _ = strconv.ParseUint(d["core.nextents"], 10, 64)
		want.AttrExtents, _ = strconv.ParseUint(d["core.naextents"], 10, 64)
		want.AttrFormat = "none"
		if d["core.forkoff"] != "0" {
			want.AttrFormat = dbFormat(d["core.aformat"])
		}
		lo, _ := strconv.ParseUint(d["core.projid_lo"], 10, 32)
		hi, _ := strconv.ParseUint(d["core.projid_hi"], 10, 32)
		want.ProjID = uint32(hi<<16 | lo)
		gen, _ := strconv.ParseUint(d["core.gen"], 10, 32)
		want.Generation = uint32(gen)
		want.DiFlags2, _ = strconv.ParseUint(d["v3.flags2"], 0, 64)
		for _, fb := range dbFlagBits {
			if d[fb.field] == "1" {
				want.DiFlags |= fb.bit
			}
		}
		want.Flags = flagNames(want.DiFlags, want.DiFlags2)
		want.Shared = []sharedJSON{}
		if e.rel == "big.bin" || e.rel == "big-copy.bin" {
			// Every data block is mapped by the two files.
			for _, x := range dbDataExtents(t, img, st.Ino) {
				want.Shared = append(want.Shared, sharedJSON{x[0], x[1], x[2], 2})
			}
			if len(want.Shared) == 0 {
				t.Errorf("%q: xfs_db shows no data extents", e.rel)
			}
		}
		if fmt.Sprint(j) != fmt.Sprint(want) {
			t.Errorf("stat --json %q:\n got %+v\nwant %+v", e.rel, j, want)
		}
	}

	// What was set explicitly.
	var owned statJSON
	volMust(t, json.Unmarshal([]byte(okCLI(t, "vol", "stat", "--json", img, "owned")), &owned))
	if owned.UID != 1234 || owned.GID != 5678 || owned.Atime != "2001-09-09T01:46:40.123456789Z" || owned.Mtime != "2100-01-02T03:04:05.987654321Z" {
		t.Errorf("owned: %+v", owned)
	}
	if _, err := exec.LookPath("xfs_io"); err == nil {
		var nd statJSON
		volMust(t, json.Unmarshal([]byte(okCLI(t, "vol", "stat", "--json", img, "nodump")), &nd))
		if nd.ProjID != 42 || nd.DiFlags&0x80 == 0 || !strings.Contains(strings.Join(nd.Flags, ","), "nodump") {
			t.Errorf("nodump: projid %d flags %v", nd.ProjID, nd.Flags)
		}
	}
	var su statJSON
	volMust(t, json.Unmarshal([]byte(okCLI(t, "vol", "stat", "--json", img, "setuid")), &su))
	if su.ModeOctal != "4755" || su.ModeSymbolic != "-rwsr-xr-x" {
		t.Errorf("setuid: %s %s", su.ModeOctal, su.ModeSymbolic)
	}

	// The text form carries the same values.
	text := okCLI(t, "vol", "stat", img, "owned")
	for _, want := range []string{
		"path: owned\n", "type: file\n", "mode: 0644 (-rw-r--r--)\n", "uid: 1234\n", "gid: 5678\n",
		"size: 19\n", "nlink: 1\n", "atime: 2001-09-09T01:46:40.123456789Z\n", "mtime: 2100-01-02T03:04:05.987654321Z\n",
		"data fork: extents, 1 extent\n", "flags: bigtime\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("stat owned: no %q in\n%s", want, text)
		}
	}
	if cp := okCLI(t, "vol", "stat", img, "big-copy.bin"); !regexp.MustCompile(`\nflags: reflink,bigtime\nshared: 0\+\d+ at \d+ x2(, \d+\+\d+ at \d+ x2)*\n$`).MatchString(cp) {
		t.Errorf("stat of a reflinked copy:\n%s", cp)
	}
	if own := okCLI(t, "vol", "stat", img, "owned"); strings.Contains(own, "shared:") {
		t.Errorf("stat of a file without reflink shows shared runs:\n%s", own)
	}
	link := okCLI(t, "vol", "stat", img, "link")
	if !strings.Contains(link, "type: symlink\n") || !strings.HasSuffix(link, "target: a/small.txt\n") {
		t.Errorf("stat link:\n%s", link)
	}
	if nl := okCLI(t, "vol", "stat", img, "new\nline"); !strings.HasPrefix(nl, `path: "new\nline"`+"\n") {
		t.Errorf("stat of an odd name:\n%s", nl)
	}
}

func testGetfattr(t *testing.T, f *volFixture) {
	img := f.img
	nonEmpty := 0
	for _, rel := range f.attrPaths {
		for key, want := range f.getfattr[rel] {
			enc, noDeref := strings.CutPrefix(key, "-h ")
			args := []string{"vol", "getfattr", "-e", enc}
			if noDeref {
				args = append(args, "--no-dereference")
			}
			args = append(args, img, rel)
			r := runCLI(t, args...)
			if want == nil {
				if r.code != 1 || r.stdout != "" {
					t.Errorf("%q: getfattr failed but xfs3 %v: status %d, stdout %q", rel, args[1:], r.code, r.stdout)
				}
				continue
			}
			if r.code != 0 || r.stderr != "" {
				t.Errorf("xfs3 %q: status %d, stderr %q", args, r.code, r.stderr)
				continue
			}
			if r.stdout != string(want) {
				t.Errorf("%q %s: output differs from getfattr\n got: %q\nwant: %q", rel, key, r.stdout, want)
			}
			if len(want) > 0 {
				nonEmpty++
			}
		}
	}
	if nonEmpty < 20 {
		t.Errorf("only %d getfattr outputs had attributes; the fixture is broken", nonEmpty)
	}
	// The volume path forms of one file all print getfattr's relative header.
	for _, p := range []string{"/a/small.txt", "./a/small.txt", "//a//small.txt"} {
		got := okCLI(t, "vol", "getfattr", img, p)
		want := f.getfattr["a/small.txt"]["text"]
		if p == "//a//small.txt" {
			want = bytes.Replace(want, []byte("# file: a/small.txt"), []byte("# file: a//small.txt"), 1)
		}
		if got != string(want) {
			t.Errorf("getfattr %q:\n got %q\nwant %q", p, got, want)
		}
	}
	if got := okCLI(t, "vol", "getfattr", img, "/"); got != string(f.getfattr["."]["text"]) {
		t.Errorf("getfattr /: %q, want %q", got, f.getfattr["."]["text"])
	}
	// The default encoding is text.
	if got := okCLI(t, "vol", "getfattr", img, "big.bin"); got != string(f.getfattr["big.bin"]["text"]) {
		t.Errorf("getfattr without -e differs from -e text")
	}
}

// dbDataExtents lists an inode's data extents as xfs_db's bmap prints
// them: file block, filesystem block, length.
func dbDataExtents(t *testing.T, img string, ino uint64) [][3]uint64 {
	var out [][3]uint64
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), "bmap"), "\n") {
		var off, start, agno, agbno, count, flag uint64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &agno, &agbno, &count, &flag); err == nil {
			out = append(out, [3]uint64{off, start, count})
		}
	}
	return out
}

func testDf(t *testing.T, f *volFixture) {
	sb := oracle.ParseFields(oracle.DB(t, f.img, "sb 0", "print fdblocks icount ifree dblocks logblocks blocksize"))
	num := func(k string) uint64 {
		n, err := strconv.ParseUint(sb[k], 10, 64)
		if err != nil {
			t.Fatalf("xfs_db %s = %q", k, sb[k])
		}
		return n
	}
	total := num("dblocks") - num("logblocks")
	free := num("fdblocks")
	icount, ifree := num("icount"), num("ifree")
	bs := num("blocksize")
	pct := func(u, tot uint64) string { return fmt.Sprintf("%d%%", (u*100+tot-1)/tot) }
	var shared uint64 // big.bin's data blocks, mapped twice (big-copy.bin)
	for _, e := range f.entries {
		if e.rel == "big.bin" {
			for _, x := range dbDataExtents(t, f.img, e.st.Ino) {
				shared += x[2]
			}
		}
	}
	if shared == 0 {
		t.Fatal("big.bin has no data blocks for xfs_db")
	}
	want := fmt.Sprintf("block size: %d\n%-6s %12s %12s %12s %5s\n%-6s %12d %12d %12d %5s\n%-6s %12d %12d %12d %5s\nshared: %d blocks mapped by more than one file; sharing saves %d\n",
		bs, "", "Total", "Used", "Free", "Use%",
		"blocks", total, total-free, free, pct(total-free, total),
		"inodes", icount, icount-ifree, ifree, pct(icount-ifree, icount), shared, shared)
	diffLines(t, "df", okCLI(t, "vol", "df", f.img), want)
	got := strings.Fields(strings.Split(okCLI(t, "vol", "df", "-h", f.img), "\n")[2])
	wantH := []string{"bytes", humanSize(total * bs), humanSize((total - free) * bs), humanSize(free * bs), pct(total-free, total)}
	if fmt.Sprint(got) != fmt.Sprint(wantH) {
		t.Errorf("df -h bytes row %q, want %q", got, wantH)
	}
}
