package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The write commands run a script against a fresh volume; the kernel then
// mounts it read-only and must show exactly the tree the script implies,
// and xfs_repair must find nothing to fix.

// runCLIIn runs a command line with stdin.
func runCLIIn(t *testing.T, stdin io.Reader, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, stdin, &stdout, &stderr)
	return cliResult{code, stdout.String(), stderr.String()}
}

// okSilent runs a command that must succeed without printing anything.
func okSilent(t *testing.T, args ...string) {
	t.Helper()
	if r := runCLI(t, args...); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("xfs3 %q: status %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
	}
}

// model is the tree a script should leave on the volume: paths ("." is the
// root) naming inodes, several paths per inode for hard links.
type model struct {
	t       *testing.T
	paths   map[string]*minode
	nextIno uint64
	uid     uint32
	gid     uint32
}

type minode struct {
	ino    uint64
	typ    string
	mode   uint32
	size   int64
	sha    string
	target string
	xattrs map[string]string
}

func newModel(t *testing.T) *model {
	m := &model{t: t, paths: map[string]*minode{}, uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	m.paths["."] = m.inode(oracle.TypeDir, 0o755)
	return m
}

func (m *model) inode(typ string, mode uint32) *minode {
	m.nextIno++
	return &minode{ino: m.nextIno, typ: typ, mode: mode}
}

// clean turns a volume path into a model key.
func clean(p string) string {
	p = strings.Trim(filepath.Clean("/"+p), "/")
	if p == "" {
		return "."
	}
	return p
}

func (m *model) get(p string) *minode {
	m.t.Helper()
	n := m.paths[clean(p)]
	if n == nil {
		m.t.Fatalf("model: %s does not exist", p)
	}
	return n
}

func (m *model) mkdir(p string, mode uint32) { m.paths[clean(p)] = m.inode(oracle.TypeDir, mode) }

func (m *model) file(p string, data []byte, mode uint32) *minode {
	sum := sha256.Sum256(data)
	n := m.inode(oracle.TypeFile, mode)
	n.size, n.sha = int64(len(data)), hex.EncodeToString(sum[:])
	m.paths[clean(p)] = n
	return n
}

func (m *model) symlink(p, target string) {
	n := m.inode(oracle.TypeSymlink, 0o777)
	n.size, n.target = int64(len(target)), target
	m.paths[clean(p)] = n
}

func (m *model) link(existing, p string) { m.paths[clean(p)] = m.get(existing) }

func (m *model) setx(p, name, value string) {
	n := m.get(p)
	if n.xattrs == nil {
		n.xattrs = map[string]string{}
	}
	n.xattrs[name] = value
}

func (m *model) rmx(p, name string) { delete(m.get(p).xattrs, name) }

// remove drops p and everything below it.
func (m *model) remove(p string) {
	p = clean(p)
	for k := range m.paths {
		if k == p || strings.HasPrefix(k, p+"/") {
			delete(m.paths, k)
		}
	}
}

// rename moves p and everything below it to q, replacing q.
func (m *model) rename(p, q string) {
	p, q = clean(p), clean(q)
	m.remove(q)
	moved := map[string]*minode{}
	for k, n := range m.paths {
		if k == p {
			moved[q] = n
		} else if rest, ok := strings.CutPrefix(k, p+"/"); ok {
			moved[q+"/"+rest] = n
		}
	}
	m.remove(p)
	for k, n := range moved {
		m.paths[k] = n
	}
}

// graft adds a host snapshot under dest, as put copies it: hard links
// become separate files, owners become the caller's.
func (m *model) graft(dest string, snap oracle.Snapshot) {
	for _, e := range snap {
		p := clean(dest + "/" + e.Path)
		n := m.inode(e.Type, e.Mode)
		n.size, n.sha, n.target = e.Size, e.SHA256, e.Target
		if len(e.Xattrs) > 0 {
			n.xattrs = map[string]string{}
			for k, v := range e.Xattrs {
				n.xattrs[k] = v
			}
		}
		m.paths[p] = n
	}
}

// snapshot is the model as oracle.SnapshotDir would describe it.
func (m *model) snapshot() oracle.Snapshot {
	links := map[*minode]uint32{}
	subdirs := map[string]uint32{}
	for p, n := range m.paths {
		links[n]++
		if n.typ == oracle.TypeDir && p != "." {
			subdirs[clean(filepath.Dir(p))]++
		}
	}
	var s oracle.Snapshot
	for p, n := range m.paths {
		e := oracle.Entry{Path: p, Type: n.typ, Mode: n.mode, Size: n.size, Ino: n.ino, UID: m.uid, GID: m.gid,
			SHA256: n.sha, Target: n.target, Nlink: links[n]}
		if n.typ == oracle.TypeDir {
			e.Nlink = 2 + subdirs[p]
		}
		if len(n.xattrs) > 0 {
			e.Xattrs = n.xattrs
		}
		s = append(s, e)
	}
	sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
	return s
}

// checkKernel checks the volume with xfs_repair -n and compares what a
// read-only kernel mount shows with the model.
func checkKernel(t *testing.T, img string, want oracle.Snapshot) {
	t.Helper()
	start := time.Now()
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	got, err := oracle.SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	oracle.Unmount(t, mnt)
	for _, d := range want.DiffWith(got, oracle.DiffOptions{IgnoreIno: true, IgnoreDirSize: true}) {
		t.Errorf("kernel view: %s", d)
	}
	t.Logf("xfs_repair -n clean; kernel mount shows the expected %d paths (%v)", len(got), time.Since(start).Round(time.Millisecond))
}

// hostSetxattr sets an attribute on a host file (not following a final
// symlink) and reports whether the host filesystem took it.
func hostSetxattr(t *testing.T, path, name string, value []byte) bool {
	t.Helper()
	var err error
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		out, cerr := exec.Command("setfattr", "-h", "-n", name, "-v", "0x"+hex.EncodeToString(value), path).CombinedOutput()
		if cerr != nil {
			err = fmt.Errorf("%v: %s", cerr, out)
		}
	} else {
		err = syscall.Setxattr(path, name, value, 0)
	}
	if err != nil {
		t.Logf("host attribute %s on %s not set (%v): that part of the check is skipped", name, filepath.Base(path), err)
		return false
	}
	return true
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func writeHost(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	volMust(t, os.MkdirAll(filepath.Dir(path), 0o755))
	volMust(t, os.WriteFile(path, data, mode))
	volMust(t, os.Chmod(path, mode))
}

// buildHostTree makes the directory tree that put copies recursively.
func buildHostTree(t *testing.T, root string) {
	volMust(t, os.Mkdir(root, 0o750))
	p := func(rel string) string { return filepath.Join(root, rel) }
	writeHost(t, p("a.txt"), []byte("hello\n"), 0o644)
	writeHost(t, p("exec.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	writeHost(t, p("setuid"), []byte("s"), 0o755|os.ModeSetuid)
	writeHost(t, p("empty"), nil, 0o600)
	writeHost(t, p("new\nline"), []byte("odd name"), 0o644)
	writeHost(t, p("sub/deeper/random"), randomBytes(100<<10+7), 0o640)
	volMust(t, os.Chmod(p("sub"), 0o700))
	volMust(t, os.Mkdir(p("sticky"), 0o755))
	volMust(t, os.Chmod(p("sticky"), 0o777|os.ModeSticky))
	// Zeros with data at the end: the zero chunks become holes.
	zeros := make([]byte, 3<<20+100)
	copy(zeros[len(zeros)-10:], "tail data!")
	writeHost(t, p("zeros"), zeros, 0o644)
	writeHost(t, p("allzero"), make([]byte, 2<<20), 0o644)
	volMust(t, os.Symlink("../a.txt", p("sub/link")))
	volMust(t, os.Symlink("nowhere/at/all", p("dangling")))
	volMust(t, os.Symlink(strings.Repeat("long/", 120), p("longlink")))
	writeHost(t, p("hard1"), []byte("one inode, two names\n"), 0o644)
	volMust(t, os.Link(p("hard1"), p("hard2")))
	for i := 0; i < 300; i++ {
		writeHost(t, p(fmt.Sprintf("many/file-%03d", i)), []byte(strings.Repeat("m", i)), 0o644)
	}
	writeHost(t, p("attrs"), []byte("attributes\n"), 0o644)
	if hostSetxattr(t, p("a.txt"), "user.color", []byte("blue")) {
		hostSetxattr(t, p("a.txt"), "user.bin", []byte{0, 1, 2, 0xff, '\n'})
		hostSetxattr(t, p("a.txt"), "user.empty", nil)
		hostSetxattr(t, root, "user.top", []byte("on the directory"))
		hostSetxattr(t, p("sub/deeper"), "user.d", []byte("deeper"))
		// Enough to need an attribute leaf block in XFS, little enough
		// for the one block ext4 keeps attributes in.
		for i := 0; i < 24; i++ {
			hostSetxattr(t, p("attrs"), fmt.Sprintf("user.a%02d", i), bytes.Repeat([]byte{byte('a' + i)}, i*5))
		}
	}
	hostSetxattr(t, p("a.txt"), "trusted.t", []byte("trusted value"))
	hostSetxattr(t, p("a.txt"), "security.s", []byte("security value"))
	hostSetxattr(t, p("sticky"), "trusted.dir", []byte("d"))
	if _, err := exec.LookPath("setfattr"); err == nil {
		hostSetxattr(t, p("sub/link"), "trusted.onlink", []byte("on the symlink itself"))
	}
}

// buildBigTree makes 20 directories of 10 directories of 10 files.
func buildBigTree(t *testing.T, root string) int {
	n := 0
	for i := 0; i < 20; i++ {
		for j := 0; j < 10; j++ {
			d := filepath.Join(root, fmt.Sprintf("d%02d", i), fmt.Sprintf("s%d", j))
			volMust(t, os.MkdirAll(d, 0o755))
			for k := 0; k < 10; k++ {
				volMust(t, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", k)), []byte(d+"\n"), 0o644))
				n++
			}
		}
	}
	return n
}

// chunkReader yields size pseudo-random bytes and records the largest read
// it was asked for.
type chunkReader struct {
	data    []byte
	off     int
	maxRead int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	r.maxRead = max(r.maxRead, len(p))
	if r.off == len(r.data) {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}

func TestVolWrite(t *testing.T) {
	for _, variant := range []string{"xfs3-mkfs", "mkfs.xfs"} {
		t.Run(variant, func(t *testing.T) {
			oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
			img := filepath.Join(t.TempDir(), "vol.img")
			if variant == "mkfs.xfs" {
				oracle.Mkfs(t, img, 256<<20)
			} else if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			m := writeScript(t, img)
			t.Logf("script ran in %v", time.Since(start).Round(time.Millisecond))
			checkKernel(t, img, m.snapshot())
		})
	}
}

// writeScript runs the write commands against img and returns the tree
// they should leave.
func writeScript(t *testing.T, img string) *model {
	host := t.TempDir()
	m := newModel(t)

	// mkdir, with and without -p and -m.
	okSilent(t, "vol", "mkdir", "-p", img, "docs/a/b")
	m.mkdir("docs", 0o755)
	m.mkdir("docs/a", 0o755)
	m.mkdir("docs/a/b", 0o755)
	okSilent(t, "vol", "mkdir", img, "private", "-m", "0700", "other")
	m.mkdir("private", 0o700)
	m.mkdir("other", 0o700)
	okSilent(t, "vol", "mkdir", "-p", "-m", "750", img, "/docs/a/b/c/", "docs/a", "new/deep/er")
	m.mkdir("docs/a/b/c", 0o750)
	m.mkdir("new", 0o755)
	m.mkdir("new/deep", 0o755)
	m.mkdir("new/deep/er", 0o750)
	okSilent(t, "vol", "mkdir", "-m", "2775", img, "sgid")
	m.mkdir("sgid", 0o2775)
	okSilent(t, "vol", "mkdir", img, "sgid/inherits")
	m.mkdir("sgid/inherits", 0o2755) // the setgid bit passes down, as on Linux

	// put a single file: into a directory, to a new name, from stdin.
	big := randomBytes(3 << 20)
	writeHost(t, filepath.Join(host, "big.bin"), big, 0o640)
	okSilent(t, "vol", "put", img, filepath.Join(host, "big.bin"), "docs")
	m.file("docs/big.bin", big, 0o640)
	okSilent(t, "vol", "put", img, filepath.Join(host, "big.bin"), "copy.bin")
	m.file("copy.bin", big, 0o640)
	// A single file brings its attributes along.
	withAttr := filepath.Join(host, "withattr.txt")
	writeHost(t, withAttr, []byte("attributes too\n"), 0o600)
	okSilent(t, "vol", "put", img, withAttr, "docs/")
	m.file("docs/withattr.txt", []byte("attributes too\n"), 0o600)
	for _, x := range []struct{ name, value string }{{"user.a", "1"}, {"trusted.b", "2"}, {"security.c", ""}} {
		if hostSetxattr(t, withAttr, x.name, []byte(x.value)) {
			m.setx("docs/withattr.txt", x.name, x.value)
		}
	}
	okSilent(t, "vol", "put", img, withAttr, "docs/withattr.txt") // replaced, with the attributes now set
	stdinData := randomBytes(5<<20 + 3)
	cr := &chunkReader{data: stdinData}
	if r := runCLIIn(t, cr, "vol", "put", "-v", img, "-", "docs/stdin.bin"); r.code != 0 || r.stdout != "docs/stdin.bin\n" || r.stderr != "" {
		t.Fatalf("put -v from stdin: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if cr.maxRead > putChunk {
		t.Errorf("put read %d bytes at once from stdin; want chunks of at most %d", cr.maxRead, putChunk)
	}
	m.file("docs/stdin.bin", stdinData, 0o644)
	// Replacing a file: its content, mode and attributes are the new file's.
	okSilent(t, "vol", "setfattr", img, "copy.bin", "user.old", "dropped on replace")
	if r := runCLIIn(t, strings.NewReader("replaced\n"), "vol", "put", img, "-", "/copy.bin"); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("put over a file: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	m.file("copy.bin", []byte("replaced\n"), 0o644)
	if out := okCLI(t, "vol", "get", img, "copy.bin"); out != "replaced\n" {
		t.Errorf("get after replace: %q", out)
	}

	// put a directory tree: into a directory, and to a new name.
	tree := filepath.Join(host, "tree")
	buildHostTree(t, tree)
	treeSnap, err := oracle.SnapshotDir(tree)
	volMust(t, err)
	okSilent(t, "vol", "put", img, tree, "/")
	m.graft("tree", treeSnap)
	okSilent(t, "vol", "put", img, tree+"/", "imported")
	m.graft("imported", treeSnap)
	// All-zero chunks were left as holes.
	for _, hole := range []struct {
		path   string
		blocks uint64
	}{{"tree/allzero", 0}, {"tree/zeros", 1}} {
		var st statJSON
		volMust(t, json.Unmarshal([]byte(okCLI(t, "vol", "stat", "--json", img, hole.path)), &st))
		if st.Blocks != hole.blocks {
			t.Errorf("%s: %d blocks, want %d", hole.path, st.Blocks, hole.blocks)
		}
	}
	// Again into the same place: directories merge, files are replaced.
	okSilent(t, "vol", "put", img, tree, "")
	// "dir/." copies the contents into an existing directory.
	writeHost(t, filepath.Join(host, "more", "extra.txt"), []byte("extra\n"), 0o600)
	okSilent(t, "vol", "put", img, filepath.Join(host, "more")+"/.", "other")
	m.file("other/extra.txt", []byte("extra\n"), 0o600)
	// Special files are skipped, with a message and status 1.
	special := filepath.Join(host, "special")
	writeHost(t, filepath.Join(special, "regular"), []byte("kept\n"), 0o644)
	volMust(t, syscall.Mkfifo(filepath.Join(special, "fifo"), 0o644))
	r := runCLI(t, "vol", "put", img, special, "/")
	wantCLIFailure(t, r, 1, "fifo: skipping a fifo")
	m.mkdir("special", 0o755)
	m.file("special/regular", []byte("kept\n"), 0o644)

	// ln: symlinks (relative, absolute, into a directory) and hard links.
	okSilent(t, "vol", "ln", "-s", "../../big.bin", img, "docs/a/b/rel")
	m.symlink("docs/a/b/rel", "../../big.bin")
	okSilent(t, "vol", "ln", img, "absdocs", "-s", "/docs")
	m.symlink("absdocs", "/docs")
	okSilent(t, "vol", "ln", "-s", "some/where", img, "absdocs")
	m.symlink("docs/where", "some/where")
	okSilent(t, "vol", "ln", img, "docs/big.bin", "hard.bin")
	m.link("docs/big.bin", "hard.bin")
	okSilent(t, "vol", "ln", img, "absdocs/stdin.bin", "private")
	m.link("docs/stdin.bin", "private/stdin.bin")

	// The longest name and the longest symlink target.
	long := strings.Repeat("n", 255)
	okSilent(t, "vol", "mkdir", img, long)
	m.mkdir(long, 0o755)
	okSilent(t, "vol", "ln", "-s", strings.Repeat("t", 1023), img, long+"/"+long)
	m.symlink(long+"/"+long, strings.Repeat("t", 1023))

	// setfattr and rmfattr: text, hex and base64 values, replacement,
	// symlinks followed or not, a large (remote) value.
	okSilent(t, "vol", "setfattr", img, "docs/big.bin", "user.text", "plain text")
	m.setx("docs/big.bin", "user.text", "plain text")
	okSilent(t, "vol", "setfattr", img, "docs/big.bin", "user.hex", "0xdeadBEEF00")
	m.setx("docs/big.bin", "user.hex", "\xde\xad\xbe\xef\x00")
	okSilent(t, "vol", "setfattr", img, "hard.bin", "user.b64", "0sSGVsbG8sIHdvcmxkIQ==")
	m.setx("hard.bin", "user.b64", "Hello, world!")
	okSilent(t, "vol", "setfattr", img, "docs/big.bin", "trusted.quoted", `"a\012b\"c\\"`)
	m.setx("docs/big.bin", "trusted.quoted", "a\nb\"c\\")
	okSilent(t, "vol", "setfattr", img, "docs/big.bin", "user.empty", "")
	m.setx("docs/big.bin", "user.empty", "")
	okSilent(t, "vol", "setfattr", img, "docs/big.bin", "user.text", "replaced text")
	m.setx("docs/big.bin", "user.text", "replaced text")
	okSilent(t, "vol", "setfattr", img, "absdocs", "security.label", "followed")
	m.setx("docs", "security.label", "followed")
	okSilent(t, "vol", "setfattr", "--no-dereference", img, "absdocs", "trusted.link", "on the link")
	m.setx("absdocs", "trusted.link", "on the link")
	remote := randomBytes(30000)
	okSilent(t, "vol", "setfattr", img, "docs/stdin.bin", "user.remote", "0x"+hex.EncodeToString(remote))
	m.setx("docs/stdin.bin", "user.remote", string(remote))
	largest := randomBytes(65536)
	okSilent(t, "vol", "setfattr", img, "other", "trusted.largest", "0x"+hex.EncodeToString(largest))
	m.setx("other", "trusted.largest", string(largest))
	okSilent(t, "vol", "rmfattr", img, "docs/big.bin", "user.b64")
	m.rmx("docs/big.bin", "user.b64")
	if _, ok := m.get("tree/a.txt").xattrs["trusted.t"]; ok { // copied from the host
		okSilent(t, "vol", "rmfattr", img, "tree/a.txt", "trusted.t")
		m.rmx("tree/a.txt", "trusted.t")
	}

	// mv: rename, across directories, into a directory, over a file, a
	// directory with its contents, over an empty directory.
	okSilent(t, "vol", "mv", img, "other/extra.txt", "docs/moved.txt")
	m.rename("other/extra.txt", "docs/moved.txt")
	okSilent(t, "vol", "mv", img, "docs/moved.txt", "private")
	m.rename("docs/moved.txt", "private/moved.txt")
	okSilent(t, "vol", "mv", img, "copy.bin", "docs/a/b/c/")
	m.rename("copy.bin", "docs/a/b/c/copy.bin")
	okSilent(t, "vol", "mv", img, "private/moved.txt", "hard.bin") // hard.bin was a link to docs/big.bin
	m.rename("private/moved.txt", "hard.bin")
	okSilent(t, "vol", "mv", img, "imported/sub", "new/sub2")
	m.rename("imported/sub", "new/sub2")
	okSilent(t, "vol", "mv", img, "imported/many", "new/deep/er")
	m.rename("imported/many", "new/deep/er/many")
	okSilent(t, "vol", "mkdir", img, "emptydir")
	okSilent(t, "vol", "mv", img, "special", "emptydir/")
	m.rename("special", "emptydir/special")
	m.mkdir("emptydir", 0o755)
	okSilent(t, "vol", "mkdir", img, "emptydir2")
	okSilent(t, "vol", "mv", img, "sgid/inherits", "emptydir2")
	m.rename("sgid/inherits", "emptydir2/inherits")
	m.mkdir("emptydir2", 0o755)
	okSilent(t, "vol", "mkdir", "-p", img, "target-empty/inherits")
	okSilent(t, "vol", "mv", img, "emptydir2/inherits", "target-empty/") // replaces the empty target-empty/inherits
	m.rename("emptydir2/inherits", "target-empty/inherits")
	m.mkdir("target-empty", 0o755)
	// For the error cases: a directory and a file in the way of moves.
	okSilent(t, "vol", "mkdir", "-p", img, "clash/a.txt")
	m.mkdir("clash", 0o755)
	m.mkdir("clash/a.txt", 0o755)
	okSilent(t, "vol", "put", img, filepath.Join(host, "big.bin"), "clash/sticky")
	m.file("clash/sticky", big, 0o640)
	okSilent(t, "vol", "mv", img, "docs/where", "docs/where") // onto itself: nothing happens

	// rm: files, symlinks, -f on missing paths, -r trees.
	okSilent(t, "vol", "rm", img, "docs/a/b/rel", "tree/exec.sh")
	m.remove("docs/a/b/rel")
	m.remove("tree/exec.sh")
	okSilent(t, "vol", "rm", "-f", img, "nope", "tree/nope", "missing/dir/x", "docs/big.bin/x")
	okSilent(t, "vol", "rm", "-f", img)
	okSilent(t, "vol", "rm", "-r", img, "tree/sub", "imported")
	m.remove("tree/sub")
	m.remove("imported")
	okSilent(t, "vol", "rm", "-R", img, "emptydir2")
	m.remove("emptydir2")

	// rm -r of a big tree.
	bigTree := filepath.Join(host, "bigtree")
	n := buildBigTree(t, bigTree)
	start := time.Now()
	okSilent(t, "vol", "put", img, bigTree, "bulk")
	putTime := time.Since(start)
	if got := strings.Count(okCLI(t, "vol", "ls", "-R", img, "bulk"), "\n"); got != n+20+200 {
		t.Errorf("bulk holds %d paths, want %d", got, n+220)
	}
	start = time.Now()
	okSilent(t, "vol", "rm", "-r", img, "bulk/")
	t.Logf("put of %d files in 220 directories: %v; rm -r: %v", n, putTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	wantCLIFailure(t, runCLI(t, "vol", "ls", img, "bulk"), 1, "bulk: no such file or directory")

	writeErrors(t, img, host)
	return m
}

// writeErrors runs failing commands; none may change the volume.
func writeErrors(t *testing.T, img, host string) {
	src := filepath.Join(host, "big.bin")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mkdir", img, "docs/big.bin"}, 1, "docs/big.bin: file exists"},
		{[]string{"mkdir", "-p", img, "docs/big.bin"}, 1, "docs/big.bin: file exists"},
		{[]string{"mkdir", "-p", img, "docs/big.bin/sub"}, 1, "docs/big.bin: not a directory"},
		{[]string{"mkdir", img, "docs"}, 1, "docs: file exists"},
		{[]string{"mkdir", img, "/"}, 1, "/: file exists"},
		{[]string{"mkdir", img, "nope/x"}, 1, "nope: no such file or directory"},
		{[]string{"mkdir", "-m", "8", img, "x"}, 2, `invalid mode "8"`},
		{[]string{"mkdir", img, strings.Repeat("n", 256)}, 1, "name too long: the last name has 256 bytes, at most 255 are allowed"},
		{[]string{"rm", img, "docs"}, 1, "docs: is a directory"},
		{[]string{"rm", img, "absdocs/"}, 1, "absdocs/: not a directory"},
		{[]string{"rm", "-r", img, "/"}, 1, "refusing to remove the root directory"},
		{[]string{"rm", "-rf", img, ""}, 1, "refusing to remove the root directory"},
		{[]string{"rm", "-r", img, "docs/.."}, 1, "refusing to remove '.' or '..'"},
		{[]string{"rm", img, "nope"}, 1, "nope: no such file or directory"},
		{[]string{"rm", img, "docs/big.bin/x"}, 1, "docs/big.bin: not a directory"},
		{[]string{"rm", img}, 2, "want VOLUME PATH..."},
		{[]string{"put", img, src, "nope/x"}, 1, "nope: no such file or directory"},
		{[]string{"put", img, src, "docs/big.bin/x"}, 1, "docs/big.bin: not a directory"},
		{[]string{"put", img, src, "newdir/"}, 1, "newdir/: not a directory"},
		{[]string{"put", img, "-", "docs"}, 1, "docs: is a directory"},
		{[]string{"put", img, filepath.Join(host, "tree"), "docs/big.bin"}, 1, "cannot overwrite a non-directory with a directory"},
		{[]string{"put", img, filepath.Join(host, "nope"), "x"}, 1, "nope: no such file or directory"},
		{[]string{"put", img, src}, 2, "want VOLUME SRC PATH"},
		{[]string{"mv", img, "nope", "x"}, 1, "nope: no such file or directory"},
		{[]string{"mv", img, "docs", "docs/a"}, 1, "invalid argument"},
		{[]string{"mv", img, "docs/big.bin", "tree"}, 1, ""}, // tree/big.bin does not exist: this works; undone below
		{[]string{"mv", img, "/", "x"}, 1, "cannot move the root directory"},
		{[]string{"mv", img, "tree/many", "new/deep/er"}, 1, "directory not empty"},
		{[]string{"mv", img, "tree/a.txt", "clash"}, 1, "cannot move tree/a.txt to clash/a.txt: is a directory"},
		{[]string{"mv", img, "tree/sticky", "clash"}, 1, "cannot move tree/sticky to clash/sticky: not a directory"},
		{[]string{"ln", "-s", "x", img, "docs/big.bin"}, 1, "docs/big.bin: file exists"},
		{[]string{"ln", img, "docs", "x"}, 1, "directories cannot be hard linked"},
		{[]string{"ln", img, "nope", "x"}, 1, "nope: no such file or directory"},
		{[]string{"ln", "-s", "", img, "x"}, 2, "empty symlink TARGET"},
		{[]string{"ln", "-s", strings.Repeat("t", 1024), img, "x"}, 1, "name too long"},
		{[]string{"ln", "-s", "t", img}, 2, "want -s TARGET VOLUME PATH"},
		{[]string{"setfattr", img, "docs", "foo.bar", "v"}, 2, `namespace foo is not supported`},
		{[]string{"setfattr", img, "docs", "system.posix_acl_access", "v"}, 2, `namespace system is not supported`},
		{[]string{"setfattr", img, "docs", "noprefix", "v"}, 2, "has no namespace"},
		{[]string{"setfattr", img, "docs", "user.x", "0xabc"}, 2, "odd number of hex digits"},
		{[]string{"setfattr", img, "docs", "user.x", "0s@@@@"}, 2, "not valid base64"},
		{[]string{"setfattr", img, "nope", "user.x", "v"}, 1, "nope: no such file or directory"},
		{[]string{"setfattr", "--no-dereference", img, "absdocs", "user.x", "v"}, 1, "invalid"},
		{[]string{"setfattr", img, "docs", "user." + strings.Repeat("n", 251), "v"}, 2, "too long"},
		{[]string{"setfattr", img, "docs", "user.big", "0x" + strings.Repeat("00", 65537)}, 1, "attribute value too large"},
		{[]string{"rmfattr", img, "docs/big.bin", "user.never"}, 1, "no such attribute"},
		{[]string{"rmfattr", img, "docs/big.bin"}, 2, "want VOLUME PATH NAME"},
	} {
		args := append([]string{"vol"}, tc.args...)
		if tc.want == "" && tc.code == 1 && tc.args[0] == "mv" {
			// A move that works, and its inverse.
			okSilent(t, args...)
			okSilent(t, "vol", "mv", img, "tree/big.bin", "docs")
			continue
		}
		r := runCLI(t, args...)
		wantCLIFailure(t, r, tc.code, tc.want)
		if tc.code == 1 && !strings.Contains(r.stderr, img) && !strings.Contains(tc.want, "no such file") {
			t.Errorf("xfs3 %q: the message does not name the volume: %q", tc.args, r.stderr)
		}
		if strings.Count(r.stderr, "\n") != 1 && tc.code == 1 {
			t.Errorf("xfs3 %q: more than one line on stderr: %q", tc.args, r.stderr)
		}
	}

	// Several operands: each failure on its own line, the others done.
	r := runCLI(t, "vol", "mkdir", img, "nope/a", "docs", "made-anyway")
	wantCLIFailure(t, r, 1, "nope: no such file or directory")
	if !strings.Contains(r.stderr, "xfs3: vol mkdir: "+img+": docs: file exists\n") {
		t.Errorf("mkdir: second error missing: %q", r.stderr)
	}
	okSilent(t, "vol", "rm", "-r", img, "made-anyway")

	// A volume another writer has open.
	v, err := xfs.Open(img, xfs.Options{})
	volMust(t, err)
	for _, args := range writeCommands(img, host) {
		wantCLIFailure(t, runCLI(t, args...), 1, "volume is open for writing by another process")
	}
	// Reading is refused too, and says why: a writer keeps the log dirty
	// (from the moment it opens) and changes blocks under any reader.
	wantCLIFailure(t, runCLI(t, "vol", "ls", img, "docs"), 1, "volume is open for writing by another process")
	volMust(t, v.Close())
	okCLI(t, "vol", "ls", img, "docs")

	// A volume file without write permission.
	volMust(t, os.Chmod(img, 0o444))
	for _, args := range writeCommands(img, host) {
		wantCLIFailure(t, runCLI(t, args...), 1, "volume is read-only: the volume file has no write permission (mode 0444)")
	}
	okCLI(t, "vol", "ls", img, "docs")
	volMust(t, os.Chmod(img, 0o644))
}

// writeCommands is one valid invocation of every write command.
func writeCommands(img, host string) [][]string {
	return [][]string{
		{"vol", "put", img, filepath.Join(host, "big.bin"), "x"},
		{"vol", "mkdir", img, "x"},
		{"vol", "rm", "-r", img, "docs"},
		{"vol", "mv", img, "docs", "x"},
		{"vol", "ln", "-s", "t", img, "x"},
		{"vol", "ln", img, "hard.bin", "x"},
		{"vol", "setfattr", img, "docs", "user.x", "v"},
		{"vol", "rmfattr", img, "docs", "security.label"},
	}
}

// TestVolPutNoSpace fills a small volume with put until it is full.
func TestVolPutNoSpace(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	dir := t.TempDir()
	img := filepath.Join(dir, "small.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	data := randomBytes(4 << 20)
	src := filepath.Join(dir, "chunk")
	writeHost(t, src, data, 0o644)
	m := newModel(t)
	start := time.Now()
	var r cliResult
	put := 0
	for i := 0; ; i++ {
		if i > 40 {
			t.Fatal("64 MiB volume took more than 160 MiB")
		}
		name := fmt.Sprintf("f%02d", i)
		r = runCLI(t, "vol", "put", img, src, name)
		if r.code != 0 {
			break
		}
		m.file(name, data, 0o644)
		put++
	}
	t.Logf("%d files of 4 MiB fit (%v)", put, time.Since(start).Round(time.Millisecond))
	wantCLIFailure(t, r, 1, "no space left")
	if put < 10 {
		t.Errorf("only %d files of 4 MiB fit in 64 MiB", put)
	}
	// The partial file is gone.
	if ls := okCLI(t, "vol", "ls", img); strings.Contains(ls, tempPrefix) {
		t.Errorf("a temporary file was left behind:\n%s", ls)
	}
	// Standard input that does not fit fails the same way.
	if r := runCLIIn(t, bytes.NewReader(randomBytes(8<<20)), "vol", "put", img, "-", "stdin"); r.code == 0 {
		t.Error("8 MiB from stdin fit in a full volume")
	} else {
		wantCLIFailure(t, r, 1, "no space left")
	}
	checkKernel(t, img, m.snapshot())

	// Space comes back when files go.
	okSilent(t, "vol", "rm", img, "f00", "f01")
	m.remove("f00")
	m.remove("f01")
	okSilent(t, "vol", "put", img, src, "again")
	m.file("again", data, 0o644)
	checkKernel(t, img, m.snapshot())
}

// TestVolPutNoSpaceSmallFiles fills a small volume with a tree of small
// files: inodes, directory blocks and data run out together.
func TestVolPutNoSpaceSmallFiles(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	dir := t.TempDir()
	img := filepath.Join(dir, "small.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	const files = 6000
	for i := 0; i < files; i++ {
		writeHost(t, filepath.Join(src, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("f%04d", i)), randomBytes(12000), 0o644)
	}
	start := time.Now()
	wantCLIFailure(t, runCLI(t, "vol", "put", img, src, "small"), 1, "no space left")
	elapsed := time.Since(start)
	// What did fit is complete: the model is built from our own listing
	// and the host files, and the kernel must show just that.
	m := newModel(t)
	m.mkdir("small", 0o755)
	n := 0
	listing := okCLI(t, "vol", "ls", "-R", "-l", img, "small")
	for _, line := range strings.Split(strings.TrimSuffix(listing, "\n"), "\n") {
		f := strings.Fields(line)
		name := f[len(f)-1]
		if strings.HasPrefix(filepath.Base(name), tempPrefix) {
			t.Errorf("a temporary file was left behind: small/%s", name)
			continue
		}
		if f[1] == "dir" {
			m.mkdir("small/"+name, 0o755)
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, name))
		volMust(t, err)
		m.file("small/"+name, b, 0o644)
		n++
	}
	t.Logf("%d of %d files of 12000 bytes fit (%v)", n, files, elapsed.Round(time.Millisecond))
	if n < files/2 || n == files {
		t.Errorf("%d of %d files fit", n, files)
	}
	checkKernel(t, img, m.snapshot())

	// Every other file goes; a big file then has to gather the scattered
	// free blocks, and its extent list becomes a btree.
	args := []string{"vol", "rm", img}
	for p := range m.paths {
		if dir, base := filepath.Split(p); strings.Count(dir, "/") == 2 && base[len(base)-1]%2 == 0 {
			args = append(args, p)
			m.remove(p)
		}
	}
	okSilent(t, args...)
	bigData := randomBytes(16 << 20)
	writeHost(t, filepath.Join(dir, "big"), bigData, 0o600)
	okSilent(t, "vol", "put", img, filepath.Join(dir, "big"), "big")
	m.file("big", bigData, 0o600)
	var st statJSON
	volMust(t, json.Unmarshal([]byte(okCLI(t, "vol", "stat", "--json", img, "big")), &st))
	t.Logf("removed %d files; a 16 MiB file then took %d extents (%s)", len(args)-3, st.DataExtents, st.DataFormat)
	if st.DataFormat != "btree" {
		t.Errorf("the 16 MiB file is in %s format with %d extents; the test wants scattered free space", st.DataFormat, st.DataExtents)
	}
	checkKernel(t, img, m.snapshot())

	okSilent(t, "vol", "rm", "-rf", img, "small", "big")
	okSilent(t, "vol", "put", img, filepath.Join(src, "d00"), "again")
	m = newModel(t)
	m.mkdir("again", 0o755)
	for i := 0; i < 100; i++ {
		b, err := os.ReadFile(filepath.Join(src, "d00", fmt.Sprintf("f%04d", i)))
		volMust(t, err)
		m.file(fmt.Sprintf("again/f%04d", i), b, 0o644)
	}
	checkKernel(t, img, m.snapshot())
}

// TestDecodeXattrValue compares VALUE decoding with setfattr's own on a
// host file.
func TestDecodeXattrValue(t *testing.T) {
	cases := []string{
		"plain", "", "0", "0x", "0s", "0x41ff", "0X41FF", "0x 41 4 2", "0x41\t42 ", "0x414", "0xzz", "0xAbCd",
		"0sQUJD", "0SQUJD", "0sQUJ", "0sQUI=", "0sQ UJD", "0s!!", "0sQUJDRA==", "0sQUJDRA",
		`"q\101\n\"x"`, `"unterminated`, `"a"b`, `"a"b"`, `"a\\b"`, `"a\"`, `"\12"`, `"\8"`, `""`, `"`, `"\"`,
		`"\101\102"`, `"\0"`, `"\400"`, `"abc\`, `"\1234"`, `"\7777"`, "0y12", "x0x12", "caf\u00e9", `"é\351"`,
	}
	want := map[string]string{ // what setfattr 2.5.1 stores; "!" for an error
		"plain": "plain", "": "", "0": "0", "0x": "", "0s": "", "0x41ff": "A\xff", "0X41FF": "A\xff",
		"0x 41 4 2": "AB", "0x41\t42 ": "AB", "0x414": "!", "0xzz": "!", "0xAbCd": "\xab\xcd",
		"0sQUJD": "ABC", "0SQUJD": "ABC", "0sQUJ": "!", "0sQUI=": "AB", "0sQ UJD": "!", "0s!!": "!",
		"0sQUJDRA==": "ABCD", "0sQUJDRA": "!",
		`"q\101\n\"x"`: `qA\n"x`, `"unterminated`: `"unterminated`, `"a"b`: `"a"b`, `"a"b"`: `a"b`,
		`"a\\b"`: `a\b`, `"a\"`: `a"`, `"\12"`: "\n", `"\8"`: `\8`, `""`: "", `"`: `"`, `"\"`: `"`,
		`"\101\102"`: "AB", `"\0"`: "\x00", `"\400"`: "\x00", `"abc\`: `"abc\`, `"\1234"`: "S4", `"\7777"`: "\xff7",
		"0y12": "0y12", "x0x12": "x0x12", "caf\u00e9": "caf\u00e9", `"é\351"`: "é\xe9",
	}
	for _, c := range cases {
		got, err := decodeXattrValue(c)
		w, ok := want[c]
		if !ok {
			t.Fatalf("no expectation for %q", c)
		}
		if w == "!" {
			if err == nil {
				t.Errorf("decodeXattrValue(%q) = %q, want an error", c, got)
			}
			continue
		}
		if err != nil || string(got) != w {
			t.Errorf("decodeXattrValue(%q) = %q, %v; want %q", c, got, err, w)
		}
	}

	// The table itself, checked against the real setfattr.
	oracle.Require(t, "setfattr")
	f := filepath.Join(t.TempDir(), "f")
	volMust(t, os.WriteFile(f, nil, 0o644))
	if err := syscall.Setxattr(f, "user.probe", []byte("x"), 0); err != nil {
		t.Skipf("no user attributes on the host temporary directory (%v)", err)
	}
	for _, c := range cases {
		if c == "0s" {
			continue // setfattr 2.5.1 succeeds without setting anything
		}
		syscall.Removexattr(f, "user.t")
		out, err := exec.Command("setfattr", "-n", "user.t", "-v", c, f).CombinedOutput()
		if err != nil {
			if want[c] != "!" {
				t.Errorf("setfattr -v %q failed (%v: %s) but the table has %q", c, err, out, want[c])
			}
			continue
		}
		buf := make([]byte, 256)
		n, err := syscall.Getxattr(f, "user.t", buf)
		if err != nil {
			t.Fatalf("after setfattr -v %q: %v", c, err)
		}
		if got := string(buf[:n]); got != want[c] {
			t.Errorf("setfattr -v %q stored %q, the table has %q", c, got, want[c])
		}
	}
}

func TestSplitPath(t *testing.T) {
	for _, tc := range []struct{ in, parent, name string }{
		{"", "", ""}, {"/", "", ""}, {"//", "", ""}, {"a", "", "a"}, {"/a", "/", "a"}, {"a/", "", "a"},
		{"a/b", "a/", "b"}, {"a//b//", "a//", "b"}, {"/a/b/.", "/a/b/", "."}, {"..", "", ".."},
	} {
		if p, n := splitPath(tc.in); p != tc.parent || n != tc.name {
			t.Errorf("splitPath(%q) = %q, %q; want %q, %q", tc.in, p, n, tc.parent, tc.name)
		}
	}
}

// TestWriteUsageErrors covers argument mistakes that need no volume.
func TestWriteUsageErrors(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	volMust(t, os.WriteFile(src, []byte("x"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vol", "put", "img", "-"}, "want VOLUME SRC PATH, got 2 arguments"},
		{[]string{"vol", "put", "-x", "img", "-", "p"}, "flag provided but not defined: -x"},
		{[]string{"vol", "put", "", src, "p"}, "empty VOLUME path"},
		{[]string{"vol", "mkdir", "img"}, "want VOLUME PATH..."},
		{[]string{"vol", "mkdir", "-m", "rwx", "img", "d"}, `invalid mode "rwx"`},
		{[]string{"vol", "mkdir", "-m", "17777", "img", "d"}, `invalid mode "17777"`},
		{[]string{"vol", "rm"}, "want VOLUME PATH..."},
		{[]string{"vol", "mv", "img", "a"}, "want VOLUME SRC DST"},
		{[]string{"vol", "ln", "img", "a"}, "want VOLUME EXISTING NEWPATH"},
		{[]string{"vol", "ln", "img", "a", "-s"}, "flag needs an argument: -s"},
		{[]string{"vol", "setfattr", "img", "p", "user.x"}, "want VOLUME PATH NAME VALUE"},
		{[]string{"vol", "setfattr", "img", "p", "user.", "v"}, "empty after its namespace"},
		{[]string{"vol", "rmfattr", "img", "p", "trusted"}, "has no namespace"},
		{[]string{"vol", "rmfattr", "img", "p", "user.x", "extra"}, "want VOLUME PATH NAME"},
	} {
		t.Run(strings.Join(tc.args[1:], "_"), func(t *testing.T) {
			wantCLIFailure(t, runCLI(t, tc.args...), 2, tc.want)
		})
	}
	// A bad volume is an error, not a crash; nothing is created.
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.img")
	for _, args := range writeCommands(missing, dir) {
		if args[1] == "put" {
			args[3] = src
		}
		r := runCLI(t, args...)
		wantCLIFailure(t, r, 1, "no such file or directory")
		if !strings.Contains(r.stderr, missing) {
			t.Errorf("%q: the message does not name the volume: %q", args, r.stderr)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a write command created the missing volume: %v", err)
	}
}
