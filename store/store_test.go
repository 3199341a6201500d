package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// newTestStore formats a fresh volume and opens a store on it.
func newTestStore(t *testing.T) (*Store, string) {
	t.Helper()
	return newStoreOfSize(t, 512<<20)
}

// newStoreOfSize opens a store on a fresh volume of size bytes, closed
// when the test ends.
func newStoreOfSize(tb testing.TB, size int64) (*Store, string) {
	tb.Helper()
	img := filepath.Join(tb.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: size}); err != nil {
		tb.Fatal(err)
	}
	s, err := Open(img)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, img
}

func put(t *testing.T, s *Store, bucket, key, body string, m Meta) ObjectInfo {
	t.Helper()
	info, err := s.PutObject(bucket, key, strings.NewReader(body), int64(len(body)), m)
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return info
}

func get(t *testing.T, s *Store, bucket, key string) (string, ObjectInfo) {
	t.Helper()
	o, err := s.GetObject(bucket, key)
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o.Reader())
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return string(b), o.Info
}

func TestBucketNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"abc", true}, {"my-bucket.example", true}, {"a1b", true}, {strings.Repeat("a", 63), true},
		{"ab", false}, {strings.Repeat("a", 64), false}, {"ABC", false}, {"a_b", false},
		{"-ab", false}, {"ab-", false}, {".ab", false}, {"ab.", false}, {"a..b", false},
		{"192.168.1.1", false}, {"1.2.3", true}, {"xn--abc", false}, {"sthree-x", false},
		{"abc-s3alias", false}, {"abc--ol-s3", false}, {".xfs3", false}, {"a b", false}, {"abcé", false},
		{"a-.b", false}, {"a.-b", false}, {"a-b.c-d", true}, {"a--b", true},
	} {
		err := CheckBucketName(tc.name)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidBucketName)) {
			t.Errorf("CheckBucketName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestOldBucketNamesStayReachable: a bucket whose name a later S3 rule
// refuses ("a-.b"), made on the volume before the rule, is still listed,
// read and deleted; no new one is made.
func TestOldBucketNamesStayReachable(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("old-.name"); !errors.Is(err, ErrInvalidBucketName) {
		t.Fatalf("CreateBucket(old-.name) = %v", err)
	}
	a := dirAttrs
	a.ProjID = s.projects.last.Add(1)
	if _, err := s.v.Names().Mkdir(s.v.Root(), "old-.name", a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject("old-.name", "k", strings.NewReader("v"), 1, Meta{}); err != nil {
		t.Fatalf("PUT in an old bucket: %v", err)
	}
	buckets, err := s.ListBuckets()
	if err != nil || len(buckets) != 1 || buckets[0].Name != "old-.name" {
		t.Fatalf("ListBuckets: %v, %v", buckets, err)
	}
	if err := s.DeleteObject("old-.name", "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("old-.name"); err != nil {
		t.Fatalf("DeleteBucket of an old bucket: %v", err)
	}
}

func TestKeyRules(t *testing.T) {
	for _, tc := range []struct {
		key    string
		err    error
		dirs   []string
		leaf   string
		folder bool
	}{
		{key: "a", leaf: "a"},
		{key: "a/b/c", dirs: []string{"a", "b"}, leaf: "c"},
		{key: "photos/", dirs: []string{"photos"}, folder: true},
		{key: "a/b/", dirs: []string{"a", "b"}, folder: true},
		{key: "héllo/wörld", dirs: []string{"héllo"}, leaf: "wörld"},
		{key: ".hidden/..x/x..", dirs: []string{".hidden", "..x"}, leaf: "x.."},
		{key: "", err: ErrInvalidKey},
		{key: "/a", dirs: []string{""}, leaf: "a"},
		{key: "a//b", dirs: []string{"a", ""}, leaf: "b"},
		{key: "/", dirs: []string{""}, folder: true},
		{key: "a//", dirs: []string{"a", ""}, folder: true},
		{key: ".", leaf: "."},
		{key: "x/../y", dirs: []string{"x", ".."}, leaf: "y"},
		{key: "./", dirs: []string{"."}, folder: true},
		{key: "a\x00b", leaf: "a\x00b"},
		{key: "a\xffb", err: ErrInvalidKey},
		{key: strings.Repeat("a", 256), leaf: strings.Repeat("a", 256)},
		{key: strings.Repeat("a", 1024), leaf: strings.Repeat("a", 1024)},
		{key: strings.Repeat("a", 1025), err: ErrKeyTooLong},
		{key: "x/" + strings.Repeat("a", 255), dirs: []string{"x"}, leaf: strings.Repeat("a", 255)},
		{key: strings.Repeat("abcd/", 204) + "abcd", dirs: strings.Split(strings.Repeat("abcd/", 204), "/")[:204], leaf: "abcd"},
		{key: strings.Repeat("abcd/", 205), err: ErrKeyTooLong},
	} {
		kp, err := parseKey(tc.key)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("parseKey(%.40q) = %v, want %v", tc.key, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseKey(%.40q): %v", tc.key, err)
			continue
		}
		if strings.Join(kp.dirs, "/") != strings.Join(tc.dirs, "/") || kp.leaf != tc.leaf || kp.folder != tc.folder {
			t.Errorf("parseKey(%.40q) = %q %q %v, want %q %q %v", tc.key, kp.dirs, kp.leaf, kp.folder, tc.dirs, tc.leaf, tc.folder)
		}
	}
}

func TestBuckets(t *testing.T) {
	s, _ := newTestStore(t)
	steps := []struct {
		op, name string
		err      error
	}{
		{"create", "alpha", nil},
		{"create", "alpha", ErrBucketExists},
		{"create", "Bad_Name", ErrInvalidBucketName},
		{"head", "alpha", nil},
		{"head", "beta", ErrNoSuchBucket},
		{"head", "x", ErrInvalidBucketName},
		{"create", "beta", nil},
		{"put", "beta", nil},
		{"delete", "beta", ErrBucketNotEmpty},
		{"delete", "gamma", ErrNoSuchBucket},
		{"delete", "alpha", nil},
		{"delete", "alpha", ErrNoSuchBucket},
		{"create", "alpha", nil},
	}
	for i, st := range steps {
		var err error
		switch st.op {
		case "create":
			err = s.CreateBucket(st.name)
		case "delete":
			err = s.DeleteBucket(st.name)
		case "head":
			_, err = s.HeadBucket(st.name)
		case "put":
			_, err = s.PutObject(st.name, "k/x", strings.NewReader("x"), 1, Meta{})
		}
		if (st.err == nil) != (err == nil) || !errors.Is(err, st.err) {
			t.Fatalf("step %d %s %s: %v, want %v", i, st.op, st.name, err, st.err)
		}
	}
	if _, err := s.PutObject("nope", "k", strings.NewReader(""), 0, Meta{}); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("put in missing bucket: %v", err)
	}
	bs, err := s.ListBuckets()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Name != "alpha" || bs[1].Name != "beta" || bs[0].Created.IsZero() {
		t.Fatalf("ListBuckets = %+v", bs)
	}
}

func TestObjectRoundTrip(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bk1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket("bk2"); err != nil {
		t.Fatal(err)
	}
	m := Meta{ContentType: "text/plain", ContentEncoding: "gzip", ContentDisposition: "attachment",
		ContentLanguage: "en", CacheControl: "no-cache", Expires: "Thu, 01 Dec 1994 16:00:00 GMT",
		User: map[string]string{"Owner": "ann", "x": ""}}
	body := strings.Repeat("0123456789", 300000) // 3 MB: several chunks
	info := put(t, s, "bk1", "dir/sub/obj.txt", body, m)
	if info.Size != int64(len(body)) || len(info.ETag) != 32 {
		t.Fatalf("put info %+v", info)
	}
	got, gi := get(t, s, "bk1", "dir/sub/obj.txt")
	if got != body {
		t.Fatal("content differs")
	}
	wantMeta := m.clone()
	if !gi.Meta.Equal(wantMeta) || gi.ETag != info.ETag || gi.Size != info.Size || gi.LastModified.IsZero() {
		t.Fatalf("get info %+v, want meta %+v etag %s", gi, wantMeta, info.ETag)
	}
	if gi.Meta.User["owner"] != "ann" {
		t.Fatalf("user meta names are not lowercased: %v", gi.Meta.User)
	}
	hi, err := s.HeadObject("bk1", "dir/sub/obj.txt")
	if err != nil || hi.ETag != info.ETag || !hi.Meta.Equal(wantMeta) {
		t.Fatalf("head %+v %v", hi, err)
	}

	// Ranges.
	o, err := s.GetObject("bk1", "dir/sub/obj.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ off, n int64 }{{0, 10}, {5, 7}, {1 << 20, 100}, {int64(len(body)) - 3, 10}, {2, -1}} {
		sr, err := o.Range(r.off, r.n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(sr)
		end := r.off + r.n
		if r.n < 0 || end > int64(len(body)) {
			end = int64(len(body))
		}
		if err != nil || string(b) != body[r.off:end] {
			t.Fatalf("range %v: %d bytes, %v", r, len(b), err)
		}
	}
	if _, err := o.Range(int64(len(body)), 1); !errors.Is(err, ErrInvalidRange) {
		t.Fatalf("range past end: %v", err)
	}
	o.Close()

	// Unknown size, empty body.
	if _, err := s.PutObject("bk1", "unknown", strings.NewReader("streamed"), -1, Meta{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, s, "bk1", "unknown"); got != "streamed" {
		t.Fatalf("unknown-size body %q", got)
	}
	ei := put(t, s, "bk1", "empty", "", Meta{})
	if ei.ETag != emptyETag {
		t.Fatalf("empty etag %s", ei.ETag)
	}
	if got, _ := get(t, s, "bk1", "empty"); got != "" {
		t.Fatalf("empty body %q", got)
	}
	// Short body: nothing stored, no staging file left.
	if _, err := s.PutObject("bk1", "short", strings.NewReader("abc"), 10, Meta{}); !errors.Is(err, ErrIncompleteBody) {
		t.Fatalf("short body: %v", err)
	}
	if _, err := s.HeadObject("bk1", "short"); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("short body stored: %v", err)
	}
	if ents := stagedEntries(t, s); len(ents) != 0 {
		t.Fatalf("staging files left: %v", ents)
	}
	// Bad metadata.
	if _, err := s.PutObject("bk1", "m", strings.NewReader(""), 0, Meta{User: map[string]string{"a b": "x"}}); !errors.Is(err, ErrInvalidMetadata) {
		t.Fatalf("bad meta name: %v", err)
	}
	if _, err := s.PutObject("bk1", "m", strings.NewReader(""), 0, Meta{User: map[string]string{"a": strings.Repeat("v", 3000)}}); !errors.Is(err, ErrMetadataTooLarge) {
		t.Fatalf("big meta: %v", err)
	}

	// Copy keeps or replaces metadata.
	ci, err := s.CopyObject("bk1", "dir/sub/obj.txt", "bk2", "copy", nil)
	if err != nil || ci.ETag != info.ETag {
		t.Fatalf("copy %+v %v", ci, err)
	}
	if got, gi := get(t, s, "bk2", "copy"); got != body || !gi.Meta.Equal(wantMeta) {
		t.Fatalf("copy content or meta differs: %+v", gi.Meta)
	}
	nm := Meta{ContentType: "application/x"}
	if _, err := s.CopyObject("bk1", "dir/sub/obj.txt", "bk1", "dir/sub/obj.txt", &nm); err != nil {
		t.Fatal(err)
	}
	if got, gi := get(t, s, "bk1", "dir/sub/obj.txt"); got != body || !gi.Meta.Equal(nm) {
		t.Fatalf("copy onto itself: meta %+v", gi.Meta)
	}
	if _, err := s.CopyObject("bk1", "missing", "bk2", "x", nil); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("copy missing: %v", err)
	}

	// Overwrite, delete, idempotent delete.
	put(t, s, "bk1", "dir/sub/obj.txt", "new", Meta{})
	if got, gi := get(t, s, "bk1", "dir/sub/obj.txt"); got != "new" || len(gi.Meta.User) != 0 || gi.Meta.ContentType != "" {
		t.Fatalf("overwrite: %q %+v", got, gi.Meta)
	}
	for i := 0; i < 2; i++ {
		if err := s.DeleteObject("bk1", "dir/sub/obj.txt"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetObject("bk1", "dir/sub/obj.txt"); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("get deleted: %v", err)
	}
	if _, err := s.v.Names().Lookup(s.mustBucket(t, "bk1"), "dir"); err == nil {
		t.Fatal("empty parent directories were not removed")
	}
}

func (s *store) mustBucket(t *testing.T, name string) format.Ino {
	t.Helper()
	b, err := s.bucket(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestObjectAndPrefix: a key may be an object and a prefix at once, in
// either order, and the object moves back to its plain name when the
// prefix empties.
func TestObjectAndPrefix(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "a", "file a", Meta{})
	put(t, s, "bkt", "d/x", "in d", Meta{})
	for _, k := range []string{"a/b", "a/b/c", "a/", "d", "d/x/y", "d/"} {
		put(t, s, "bkt", k, "body of "+k, Meta{})
	}
	want := map[string]string{"a": "file a", "d/x": "in d"}
	for _, k := range []string{"a/b", "a/b/c", "a/", "d", "d/x/y", "d/"} {
		want[k] = "body of " + k
	}
	for k, v := range want {
		if got, _ := get(t, s, "bkt", k); got != v {
			t.Errorf("get %q = %q, want %q", k, got, v)
		}
	}
	b := s.mustBucket(t, "bkt")
	for _, name := range []string{"a", ".xfs3.o.a", "d", ".xfs3.o.d"} {
		if _, err := s.v.Names().Lookup(b, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, k := range []string{"a/b/c", "a/b", "a/"} {
		if err := s.DeleteObject("bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	// The prefix a/ is gone: the object a is the plain file again.
	ino, err := s.v.Names().Lookup(b, "a")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := s.v.Stat(ino); !isFile(&st) {
		t.Fatal("a is still a directory")
	}
	if _, err := s.v.Names().Lookup(b, ".xfs3.o.a"); err == nil {
		t.Fatalf(".xfs3.o.a: %v", err)
	}
	if got, _ := get(t, s, "bkt", "a"); got != "file a" {
		t.Fatalf("a = %q", got)
	}
	for _, k := range []string{"a/b", "x/", "e/"} {
		if _, err := s.HeadObject("bkt", k); !errors.Is(err, ErrNoSuchKey) {
			t.Errorf("head %q: %v", k, err)
		}
	}
}

func TestFolderMarkers(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	// A marker with content is a file in its directory; an empty one
	// replaces it with the directory's attribute, and the other way round.
	put(t, s, "bkt", "photos/", "data", Meta{})
	if got, _ := get(t, s, "bkt", "photos/"); got != "data" {
		t.Fatalf("marker content %q", got)
	}
	put(t, s, "bkt", "photos/", "", Meta{ContentType: "application/x-directory"})
	hi, err := s.HeadObject("bkt", "photos/")
	if err != nil || hi.Size != 0 || hi.ETag != emptyETag || hi.Meta.ContentType != "application/x-directory" || hi.LastModified.IsZero() {
		t.Fatalf("head marker %+v %v", hi, err)
	}
	put(t, s, "bkt", "photos/2024/a.jpg", "jpg", Meta{})
	if err := s.DeleteObject("bkt", "photos/2024/a.jpg"); err != nil {
		t.Fatal(err)
	}
	// photos/2024 was pruned, the marker photos/ stays.
	if _, err := s.HeadObject("bkt", "photos/"); err != nil {
		t.Fatalf("marker gone: %v", err)
	}
	res, err := s.ListObjects("bkt", ListOptions{})
	if err != nil || len(res.Objects) != 1 || res.Objects[0].Key != "photos/" || res.Objects[0].Size != 0 {
		t.Fatalf("list %+v %v", res, err)
	}
	// A marker over objects keeps them when deleted.
	put(t, s, "bkt", "photos/b.jpg", "b", Meta{})
	if err := s.DeleteObject("bkt", "photos/"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HeadObject("bkt", "photos/"); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("marker still there: %v", err)
	}
	if got, _ := get(t, s, "bkt", "photos/b.jpg"); got != "b" {
		t.Fatal("object under the marker lost")
	}
	if err := s.DeleteObject("bkt", "photos/b.jpg"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("bkt"); err != nil {
		t.Fatalf("bucket not empty after deleting everything: %v", err)
	}
}

func TestDeletePrunesEmptyParents(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "a/b/c/d", "1", Meta{})
	put(t, s, "bkt", "a/x", "2", Meta{})
	if err := s.DeleteObject("bkt", "a/b/c/d"); err != nil {
		t.Fatal(err)
	}
	b := s.mustBucket(t, "bkt")
	a, err := s.v.Names().Lookup(b, "a")
	if err != nil {
		t.Fatal("a removed while a/x exists")
	}
	if _, err := s.v.Names().Lookup(a, "b"); err == nil {
		t.Fatal("a/b not removed")
	}
	if err := s.DeleteObject("bkt", "a/x"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := s.v.Names().ReadDir(b); len(ents) != 0 {
		t.Fatalf("bucket not empty: %v", ents)
	}
}

// TestConcurrentDeletesPrune: goroutines delete the keys of shared
// prefixes at once, each looking at its own directory without locks
// first; whichever removes a directory's last key must still see it
// empty, so nothing is left behind, round after round.
func TestConcurrentDeletesPrune(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	const deleters, perDir = 4, 6
	for round := 0; round < 20; round++ {
		var keys []string
		for d := 0; d < 3; d++ {
			for k := 0; k < perDir; k++ {
				keys = append(keys, fmt.Sprintf("p%d/q/k%d", d, k), fmt.Sprintf("p%d/k%d", d, k))
			}
		}
		for _, k := range keys {
			put(t, s, "bkt", k, "v", Meta{})
		}
		if err := inParallel(deleters, func(w int) error {
			for i := w; i < len(keys); i += deleters {
				if err := s.DeleteObject("bkt", keys[i]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if ents, err := s.v.Names().ReadDir(s.mustBucket(t, "bkt")); err != nil || len(ents) != 0 {
			t.Fatalf("round %d: bucket holds %v (%v) after every key was deleted", round, ents, err)
		}
	}
}

func TestReaderKeepsContent(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	old := strings.Repeat("o", 100000)
	put(t, s, "bkt", "k", old, Meta{})
	o, err := s.GetObject("bkt", "k")
	if err != nil {
		t.Fatal(err)
	}
	o2, err := s.GetObject("bkt", "k")
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "k", "new", Meta{})
	if err := s.DeleteObject("bkt", "k"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ { // churn inodes
		put(t, s, "bkt", "other", strings.Repeat("x", 100000), Meta{})
	}
	for _, r := range []*Object{o, o2} {
		b, err := io.ReadAll(r.Reader())
		if err != nil || !bytes.Equal(b, []byte(old)) {
			t.Fatalf("open reader lost its content: %v", err)
		}
	}
	o.Close()
	s.gc.Flush()
	if n := s.v.Space().Unlinked(); n != 1 {
		t.Fatalf("%d inodes waiting to be freed while a reader is open, want 1", n)
	}
	o2.Close()
	s.gc.Flush()
	if n := s.v.Space().Unlinked(); n != 0 {
		t.Fatalf("%d inodes not freed after the last reader closed", n)
	}
}

// TestDurability: by default a change is durable when it returns, so
// nothing is left queued for the log; with AckBeforeDurable it returns
// first and the store's flusher makes it durable shortly after.
func TestDurability(t *testing.T) {
	for _, early := range []bool{false, true} {
		img := filepath.Join(t.TempDir(), "vol.xfs")
		if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
			t.Fatal(err)
		}
		s, err := OpenWith(img, Options{AckBeforeDurable: early})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateBucket("bkt"); err != nil {
			t.Fatal(err)
		}
		pending := func() int64 { return s.Volume().LogStats().Pending }
		put(t, s, "bkt", "k", "body", Meta{})
		if !early && pending() != 0 {
			t.Fatalf("a PUT returned with %d commits not yet durable", pending())
		}
		if early {
			deadline := time.Now().Add(10 * AckBeforeDurableWindow)
			for pending() != 0 && time.Now().Before(deadline) {
				time.Sleep(AckBeforeDurableWindow / 10)
			}
			if n := pending(); n != 0 {
				t.Fatalf("%d commits still not durable %v after the PUT", n, 10*AckBeforeDurableWindow)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = Open(img)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := get(t, s, "bkt", "k"); got != "body" {
			t.Fatalf("after reopening: %q", got)
		}
		s.Close()
	}
}

// TestDeleteObjects: each key is deleted or reports its own error, and the
// lot is made durable with one log force.
func TestDeleteObjects(t *testing.T) {
	// Inactivation inside the deletes (gc.Sync): a background collector's
	// own lazy commits would show as pending whenever they happen to run.
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(img, Options{GC: gc.Options{Mode: gc.Sync}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	keys := []string{"a", "dir/b", "c"}
	for _, k := range keys {
		put(t, s, "bkt", k, "body of "+k, Meta{})
	}
	before := s.Volume().LogStats()
	errs := s.DeleteObjects("bkt", []string{"a", "missing", "dir/b", "", "c"})
	after := s.Volume().LogStats()
	for i, want := range []error{nil, nil, nil, ErrInvalidKey, nil} {
		if !errors.Is(errs[i], want) || (want == nil && errs[i] != nil) {
			t.Errorf("key %d: %v, want %v", i, errs[i], want)
		}
	}
	for _, k := range keys {
		if _, err := s.HeadObject("bkt", k); !errors.Is(err, ErrNoSuchKey) {
			t.Errorf("%s after the delete: %v", k, err)
		}
	}
	// One batch: a single device write, or two when it wraps at the end
	// of the log; three deletes forced one by one would take three.
	if n := after.Writes - before.Writes; after.Pending != 0 || n < 1 || n > 2 {
		t.Errorf("%d log writes for the deletes, %d commits left pending; want one batch", n, after.Pending)
	}
}
