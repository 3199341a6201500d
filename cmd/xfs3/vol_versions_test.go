package main

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// versionsFixture is a volume with a versioned bucket "docs" and an
// unversioned bucket "plain", and what the store listed and held.
type versionsFixture struct {
	img   string
	crash string // a copy taken while the store was open: a dirty log
	// listed is the store's own listing of docs, as the command must
	// print it.
	listed []store.ObjectInfo
	// content of every version of docs/notes/a.txt by ID
	content map[string][]byte
	ids     []string // notes/a.txt's three versions, oldest first
	marker  string   // its delete marker, the latest
	other   string   // the version of "other"
}

// buildVersionsVolume puts three versions of notes/a.txt (the last over
// a few MiB, streamed in several chunks) and a delete marker over them,
// one version of notes/a.txt.bak and of other, and an object of an
// unversioned bucket; then closes the store.
func buildVersionsVolume(t *testing.T) *versionsFixture {
	t.Helper()
	dir := t.TempDir()
	f := &versionsFixture{img: filepath.Join(dir, "vol.xfs"), crash: filepath.Join(dir, "crash.xfs"), content: map[string][]byte{}}
	if _, err := mkfs.Format(f.img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(f.img)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"docs", "plain"} {
		volMust(t, st.CreateBucket(b))
	}
	volMust(t, st.Versions().SetState("docs", store.VersioningEnabled))
	put := func(bucket, key string, data []byte) string {
		t.Helper()
		info, err := st.PutObject(bucket, key, bytes.NewReader(data), int64(len(data)), store.Meta{})
		if err != nil {
			t.Fatal(err)
		}
		return info.VersionID
	}
	for i, data := range [][]byte{[]byte("first\n"), []byte("second, longer\n"), randomBytes(getChunk*2 + 12345)} {
		id := put("docs", "notes/a.txt", data)
		if id == "" || id == store.NullVersion || f.content[id] != nil {
			t.Fatalf("version %d has ID %q", i, id)
		}
		f.ids = append(f.ids, id)
		f.content[id] = data
	}
	put("docs", "notes/a.txt.bak", []byte("backup\n"))
	f.other = put("docs", "other", nil)
	res, err := st.Versions().Delete("docs", "notes/a.txt", "")
	if err != nil || !res.DeleteMarker {
		t.Fatalf("delete: %+v %v", res, err)
	}
	f.marker = res.VersionID
	put("plain", "k", []byte("unversioned\n"))
	page, err := st.Versions().List("docs", store.VersionListOptions{MaxKeys: 100})
	if err != nil || page.IsTruncated {
		t.Fatalf("list: %+v %v", page, err)
	}
	f.listed = page.Versions
	if len(f.listed) != 6 {
		t.Fatalf("the store lists %d versions, want 6: %+v", len(f.listed), f.listed)
	}
	// Every change is durable when it returns: a copy now is a crash.
	oracle.CopySparse(t, f.img, f.crash)
	volMust(t, st.Close())
	return f
}

// fileSum is the SHA-256 of a file, to show that it was not written.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// versionFields is a line of 'vol versions' split into its columns (keys
// of the fixture hold no spaces).
func versionFields(t *testing.T, line string) []string {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != 7 {
		t.Fatalf("line of %d columns, want 7: %q", len(f), line)
	}
	return f
}

// TestVolVersions: 'vol versions' prints every version the store lists,
// newest first, through any page size and in JSON; 'vol get-version'
// copies each version's bytes out and refuses a delete marker or a
// missing version. Neither writes the volume file, even one with a dirty
// log, and a running writer makes both fail.
func TestVolVersions(t *testing.T) {
	f := buildVersionsVolume(t)
	sum, crashSum := fileSum(t, f.img), fileSum(t, f.crash)
	// The read-only commands must not need write permission.
	volMust(t, os.Chmod(f.img, 0o444))

	r := runCLI(t, "vol", "versions", f.img, "docs")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("vol versions: status %d, stderr %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 1+len(f.listed) {
		t.Fatalf("vol versions printed %d lines, want %d:\n%s", len(lines), 1+len(f.listed), r.stdout)
	}
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "VERSION-ID LATEST MARKER SIZE LAST-MODIFIED ETAG KEY" {
		t.Errorf("header %q", lines[0])
	}
	for i, v := range f.listed {
		c := versionFields(t, lines[1+i])
		size, etag := c[3], c[5]
		wantSize, wantETag := "-", "-"
		if !v.DeleteMarker {
			wantSize, wantETag = strconv.FormatInt(v.Size, 10), v.ETag
		}
		if c[0] != v.VersionID || c[1] != yesNo(v.IsLatest) || c[2] != yesNo(v.DeleteMarker) || size != wantSize ||
			etag != wantETag || c[6] != v.Key {
			t.Errorf("line %d: %q, want %+v", i+1, lines[1+i], v)
		}
		if tm, err := time.Parse(time.RFC3339Nano, c[4]); err != nil || !tm.Equal(v.LastModified) {
			t.Errorf("line %d: last-modified %q (%v), want %v", i+1, c[4], err, v.LastModified)
		}
		// The first six columns keep their widths: KEY starts at 120.
		if !strings.HasSuffix(lines[1+i], " "+v.Key) || strings.Index(lines[1+i], v.Key) != 26+6+6+12+30+32+6 {
			t.Errorf("line %d is not aligned: %q", i+1, lines[1+i])
		}
	}
	// notes/a.txt: the marker, then its versions newest first, each
	// with the MD5 of its content as ETag.
	want := append([]string{f.marker}, f.ids[2], f.ids[1], f.ids[0])
	for i, id := range want {
		c := versionFields(t, lines[1+i])
		if c[0] != id || c[6] != "notes/a.txt" || (i == 0) != (c[1] == "yes") || (i == 0) != (c[2] == "yes") {
			t.Errorf("notes/a.txt version %d: %q, want ID %s", i, lines[1+i], id)
		}
		if i > 0 {
			sum := md5.Sum(f.content[id])
			if c[5] != hex.EncodeToString(sum[:]) || c[3] != strconv.Itoa(len(f.content[id])) {
				t.Errorf("notes/a.txt version %s: size %s ETag %s", id, c[3], c[5])
			}
		}
	}

	// Any page size prints the same; so do the flags after the arguments.
	defer func(n int) { versionsPageSize = n }(versionsPageSize)
	for _, n := range []int{1, 2, 3, 5} {
		versionsPageSize = n
		if r2 := runCLI(t, "vol", "versions", f.img, "docs"); r2.code != 0 || r2.stdout != r.stdout {
			t.Errorf("page size %d: status %d, stderr %q, output\n%s", n, r2.code, r2.stderr, r2.stdout)
		}
	}

	// A prefix, and --exact, which leaves out the keys the key begins.
	for _, c := range []struct {
		args []string
		n    int
	}{
		{[]string{"notes/"}, 5},
		{[]string{"notes/a.txt"}, 5},
		{[]string{"--exact", "notes/a.txt"}, 4},
		{[]string{"notes/a.txt", "--exact"}, 4},
		{[]string{"--exact", "notes/a.txt.bak"}, 1},
		{[]string{"--exact", "notes/a"}, 0},
		{[]string{"nothing"}, 0},
	} {
		r := runCLI(t, append([]string{"vol", "versions", f.img, "docs"}, c.args...)...)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) != 1+c.n {
			t.Errorf("versions %q: status %d, %d lines, want %d:\n%s%s", c.args, r.code, len(lines)-1, c.n, r.stdout, r.stderr)
		}
	}

	// JSON: one object per line, the store's listing.
	versionsPageSize = 2
	r = runCLI(t, "vol", "versions", "--json", f.img, "docs")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var got []versionJSON
	for dec.More() {
		var v versionJSON
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("--json: %v\n%s", err, r.stdout)
		}
		got = append(got, v)
	}
	if r.code != 0 || len(got) != len(f.listed) || strings.Count(r.stdout, "\n") != len(f.listed) {
		t.Fatalf("--json: status %d, %d versions\n%s%s", r.code, len(got), r.stdout, r.stderr)
	}
	for i, v := range f.listed {
		w := versionJSON{Key: v.Key, VersionID: v.VersionID, IsLatest: v.IsLatest, DeleteMarker: v.DeleteMarker,
			Size: v.Size, LastModified: formatTime(v.LastModified), ETag: v.ETag}
		if got[i] != w {
			t.Errorf("--json %d: %+v, want %+v", i, got[i], w)
		}
	}

	// An unversioned bucket lists its objects as null versions.
	r = runCLI(t, "vol", "versions", f.img, "plain")
	if lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); r.code != 0 || len(lines) != 2 ||
		!strings.HasPrefix(lines[1], "null ") || !strings.HasSuffix(lines[1], " k") {
		t.Errorf("versions of an unversioned bucket: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// get-version: every version's bytes, to stdout, a file and a
	// directory (named after the key's last component).
	out := t.TempDir()
	for _, id := range f.ids {
		r := runCLI(t, "vol", "get-version", f.img, "docs", "notes/a.txt", id)
		if r.code != 0 || r.stderr != "" || r.stdout != string(f.content[id]) {
			t.Errorf("get-version %s to stdout: status %d, %d bytes, stderr %q", id, r.code, len(r.stdout), r.stderr)
		}
		dest := filepath.Join(out, id)
		okSilent(t, "vol", "get-version", f.img, "docs", "notes/a.txt", id, dest)
		if b, err := os.ReadFile(dest); err != nil || !bytes.Equal(b, f.content[id]) {
			t.Errorf("get-version %s to a file: %d bytes, %v", id, len(b), err)
		}
		okSilent(t, "vol", "get-version", f.img, "docs", "notes/a.txt", id, out)
		if b, err := os.ReadFile(filepath.Join(out, "a.txt")); err != nil || !bytes.Equal(b, f.content[id]) {
			t.Errorf("get-version %s into a directory: %d bytes, %v", id, len(b), err)
		}
	}
	// An existing DEST is truncated; "-" is stdout; an empty version.
	okSilent(t, "vol", "get-version", f.img, "docs", "notes/a.txt", f.ids[0], filepath.Join(out, f.ids[2]))
	if b, _ := os.ReadFile(filepath.Join(out, f.ids[2])); string(b) != "first\n" {
		t.Errorf("get-version over a longer file left %q", b)
	}
	if r := runCLI(t, "vol", "get-version", f.img, "docs", "other", f.other, "-"); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("get-version of an empty version: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "vol", "get-version", f.img, "plain", "k", "null"); r.code != 0 || r.stdout != "unversioned\n" {
		t.Errorf("get-version of a null version: %d %q %q", r.code, r.stdout, r.stderr)
	}

	// What get-version refuses: nothing on stdout, no DEST made.
	missing := filepath.Join(out, "missing")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"marker", []string{f.img, "docs", "notes/a.txt", f.marker, missing}, 1, "is a delete marker; it has no content"},
		{"marker_stdout", []string{f.img, "docs", "notes/a.txt", f.marker}, 1, "delete marker"},
		{"other_keys_version", []string{f.img, "docs", "notes/a.txt", f.other, missing}, 1, "no such version"},
		{"null_in_versioned", []string{f.img, "docs", "notes/a.txt", "null", missing}, 1, "no such version"},
		{"no_key", []string{f.img, "docs", "nokey", f.ids[0], missing}, 1, "no such version"},
		{"bad_id", []string{f.img, "docs", "notes/a.txt", "v1", missing}, 1, "invalid version id"},
		{"no_bucket", []string{f.img, "nobucket", "k", "null", missing}, 1, `bucket "nobucket": no such bucket`},
		{"null_missing_key", []string{f.img, "plain", "nokey", "null", missing}, 1, "no such key"},
		{"empty_id", []string{f.img, "docs", "notes/a.txt", "", missing}, 2, "empty VERSION-ID"},
		{"too_few", []string{f.img, "docs", "notes/a.txt"}, 2, "want VOLUME BUCKET KEY VERSION-ID [DEST], got 3 arguments"},
		{"too_many", []string{f.img, "docs", "k", "null", "d", "e"}, 2, "got 6 arguments"},
		{"bad_flag", []string{"-x", f.img, "docs", "k", "null"}, 2, "flag provided but not defined: -x"},
	} {
		t.Run("get-version_"+c.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"vol", "get-version"}, c.args...)...)
			wantCLIFailure(t, r, c.code, c.want)
			if c.code == 1 && !strings.Contains(r.stderr, f.img) {
				t.Errorf("message does not name the volume: %q", r.stderr)
			}
			if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed get-version made its DEST: %v", err)
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no_bucket", []string{f.img, "nobucket"}, 1, `bucket "nobucket": no such bucket`},
		{"bad_bucket", []string{f.img, "No_Bucket"}, 1, "invalid bucket name"},
		{"too_few", []string{f.img}, 2, "want VOLUME BUCKET [PREFIX], got 1 argument"},
		{"too_many", []string{f.img, "docs", "a", "b"}, 2, "got 4 arguments"},
		{"exact_no_key", []string{"--exact", f.img, "docs"}, 2, "--exact needs a KEY"},
		{"empty_volume", []string{"", "docs"}, 2, "empty VOLUME path"},
		{"missing_volume", []string{filepath.Join(out, "nope.xfs"), "docs"}, 1, "no such file or directory"},
	} {
		t.Run("versions_"+c.name, func(t *testing.T) {
			wantCLIFailure(t, runCLI(t, append([]string{"vol", "versions"}, c.args...)...), c.code, c.want)
		})
	}
	if got := fileSum(t, f.img); got != sum {
		t.Fatal("the volume file changed")
	}

	// A volume with a dirty log: read-only commands refuse it, these
	// replay it in memory and leave the file as it was.
	if r := runCLI(t, "vol", "ls", f.crash); r.code == 0 {
		t.Fatalf("vol ls of the crash copy works: the copy has a clean log")
	}
	versionsPageSize = 1000
	r = runCLI(t, "vol", "versions", f.img, "docs")
	if r2 := runCLI(t, "vol", "versions", f.crash, "docs"); r2.code != 0 || r2.stdout != r.stdout {
		t.Errorf("versions of the dirty copy: %d %s\n%s\nwant\n%s", r2.code, r2.stderr, r2.stdout, r.stdout)
	}
	if r := runCLI(t, "vol", "get-version", f.crash, "docs", "notes/a.txt", f.ids[2]); r.code != 0 || r.stdout != string(f.content[f.ids[2]]) {
		t.Errorf("get-version from the dirty copy: %d, %d bytes, %s", r.code, len(r.stdout), r.stderr)
	}
	if got := fileSum(t, f.crash); got != crashSum {
		t.Fatal("the crash copy changed")
	}

	// While a writer (a server) has the volume open, both refuse it.
	volMust(t, os.Chmod(f.img, 0o644))
	st, err := store.Open(f.img)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, args := range [][]string{{"vol", "versions", f.img, "docs"}, {"vol", "get-version", f.img, "docs", "other", f.other}} {
		r := runCLI(t, args...)
		wantCLIFailure(t, r, 1, dev.ErrInUse.Error())
		if !strings.Contains(r.stderr, "stop the server") {
			t.Errorf("%s: %q does not say to stop the server", args[1], r.stderr)
		}
	}
}

// TestVolScratchDevice: writes land in memory over the file, reads mix
// them with the file's bytes at any alignment, and the file is never
// written.
func TestVolScratchDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base")
	base := randomBytes(5*scratchPage + 100) // a last, partial page
	volMust(t, os.WriteFile(path, base, 0o444))
	f, err := dev.Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	d := newScratchDevice(f)
	model := append([]byte(nil), base...)
	for _, w := range []struct {
		off int64
		n   int
	}{{10, 5}, {scratchPage - 3, 10}, {3*scratchPage + 512, 512}, {5 * scratchPage, 100}, {2 * scratchPage, scratchPage}} {
		p := randomBytes(w.n)
		if n, err := d.WriteAt(p, w.off); err != nil || n != w.n {
			t.Fatalf("write %d at %d: %d %v", w.n, w.off, n, err)
		}
		copy(model[w.off:], p)
	}
	for _, rd := range [][2]int64{{0, int64(len(base))}, {7, 20}, {scratchPage - 10, 2*scratchPage + 30}, {4 * scratchPage, scratchPage + 100}, {int64(len(base)) - 1, 1}} {
		p := make([]byte, rd[1])
		if n, err := d.ReadAt(p, rd[0]); err != nil || n != len(p) || !bytes.Equal(p, model[rd[0]:rd[0]+rd[1]]) {
			t.Errorf("read %d at %d: %d %v, differs: %v", rd[1], rd[0], n, err, !bytes.Equal(p, model[rd[0]:rd[0]+rd[1]]))
		}
	}
	if _, err := d.ReadAt(make([]byte, 2), int64(len(base))-1); err == nil {
		t.Error("a read past the end worked")
	}
	if _, err := d.WriteAt(make([]byte, 2), int64(len(base))-1); err == nil {
		t.Error("a write past the end worked")
	}
	volMust(t, d.Close())
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, base) {
		t.Fatalf("the file changed: %v", err)
	}
}
