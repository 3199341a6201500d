package store

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// getVersion reads version id of key whole.
func getVersion(t *testing.T, s *Store, key, id string) (string, ObjectInfo, error) {
	t.Helper()
	o, err := s.Versions().Get("bkt", key, id)
	if err != nil {
		return "", ObjectInfo{}, err
	}
	defer o.Close()
	b, err := io.ReadAll(o.Reader())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), o.Info, nil
}

// versionIDs lists a key's versions as "id" or "id(marker)", newest first.
func versionIDs(t *testing.T, s *Store, key string) []string {
	t.Helper()
	res, err := s.Versions().List("bkt", VersionListOptions{Prefix: key})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range res.Versions {
		if v.Key != key {
			continue
		}
		id := v.VersionID
		if v.DeleteMarker {
			id += "(marker)"
		}
		if v.IsLatest {
			id += "*"
		}
		out = append(out, id)
	}
	return out
}

func TestVersioningLifecycle(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	old := put(t, s, "bkt", "a/k", "before", Meta{})
	if old.VersionID != "" {
		t.Fatalf("unversioned put has version %q", old.VersionID)
	}
	if err := s.Versions().SetState("bkt", "Off"); !errors.Is(err, ErrInvalidVersioning) {
		t.Fatalf("state Off: %v", err)
	}
	if err := s.Versions().SetState("bkt", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v1 := put(t, s, "bkt", "a/k", "one", Meta{})
	v2 := put(t, s, "bkt", "a/k", "two", Meta{})
	if v1.VersionID == "" || v2.VersionID <= v1.VersionID || checkVersionID(v2.VersionID) != nil {
		t.Fatalf("version IDs %q then %q", v1.VersionID, v2.VersionID)
	}
	if got := versionIDs(t, s, "a/k"); len(got) != 3 || got[0] != v2.VersionID+"*" || got[1] != v1.VersionID || got[2] != NullVersion {
		t.Fatalf("versions %v", got)
	}
	for id, want := range map[string]string{NullVersion: "before", v1.VersionID: "one", v2.VersionID: "two", "": "two"} {
		if body, info, err := getVersion(t, s, "a/k", id); err != nil || body != want {
			t.Fatalf("get %q: %q %+v %v, want %q", id, body, info, err, want)
		}
	}
	del, err := s.Versions().Delete("bkt", "a/k", "")
	if err != nil || !del.DeleteMarker || del.VersionID <= v2.VersionID {
		t.Fatalf("delete: %+v %v", del, err)
	}
	var me *MarkerError
	if _, err := s.GetObject("bkt", "a/k"); !errors.As(err, &me) || !me.Latest || me.VersionID != del.VersionID || !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("get after delete: %v", err)
	}
	if _, err := s.Versions().Head("bkt", "a/k", del.VersionID); !errors.Is(err, ErrMethodNotAllowed) {
		t.Fatalf("head of the marker: %v", err)
	}
	if _, err := s.Versions().Head("bkt", "a/k", "00000000000000000000000000"); !errors.Is(err, ErrNoSuchVersion) {
		t.Fatalf("head of a missing version: %v", err)
	}
	if l, _ := s.ListObjects("bkt", ListOptions{}); len(l.Objects) != 0 {
		t.Fatalf("listing shows %v", l.Objects)
	}
	// Deleting the marker brings the object back.
	if r, err := s.Versions().Delete("bkt", "a/k", del.VersionID); err != nil || !r.DeleteMarker {
		t.Fatalf("delete marker: %+v %v", r, err)
	}
	if body, _ := get(t, s, "bkt", "a/k"); body != "two" {
		t.Fatalf("after the marker went: %q", body)
	}
	// Deleting the current version promotes the next.
	if _, err := s.Versions().Delete("bkt", "a/k", v2.VersionID); err != nil {
		t.Fatal(err)
	}
	if body, info := get(t, s, "bkt", "a/k"); body != "one" || info.VersionID != v1.VersionID {
		t.Fatalf("after deleting the current version: %q %q", body, info.VersionID)
	}
	// Suspended: a write replaces the null version.
	if err := s.Versions().SetState("bkt", VersioningSuspended); err != nil {
		t.Fatal(err)
	}
	n1 := put(t, s, "bkt", "a/k", "null-1", Meta{})
	n2 := put(t, s, "bkt", "a/k", "null-2", Meta{})
	if n1.VersionID != NullVersion || n2.VersionID != NullVersion {
		t.Fatalf("suspended puts: %q %q", n1.VersionID, n2.VersionID)
	}
	if got := versionIDs(t, s, "a/k"); len(got) != 2 || got[0] != "null*" || got[1] != v1.VersionID {
		t.Fatalf("versions %v", got)
	}
	d2, err := s.Versions().Delete("bkt", "a/k", "")
	if err != nil || d2.VersionID != NullVersion || !d2.DeleteMarker {
		t.Fatalf("suspended delete: %+v %v", d2, err)
	}
	if got := versionIDs(t, s, "a/k"); len(got) != 2 || got[0] != "null(marker)*" || got[1] != v1.VersionID {
		t.Fatalf("versions %v", got)
	}
	if err := s.DeleteBucket("bkt"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("delete bucket with versions: %v", err)
	}
	for _, id := range []string{NullVersion, v1.VersionID} {
		if _, err := s.Versions().Delete("bkt", "a/k", id); err != nil {
			t.Fatal(err)
		}
	}
	if got := versionIDs(t, s, "a/k"); len(got) != 0 {
		t.Fatalf("versions left: %v", got)
	}
	if err := s.DeleteBucket("bkt"); err != nil {
		t.Fatalf("delete emptied bucket: %v", err)
	}
}

// TestVersionIDForm: every sequence newSeq makes is valid and sorts
// after the one before; validSeq takes exactly the strings that decode
// to 16 bytes and encode back the same.
func TestVersionIDForm(t *testing.T) {
	prev := ""
	for range 1000 {
		s := newSeq("")
		if !validSeq(s) || s <= prev {
			t.Fatalf("sequence %q after %q", s, prev)
		}
		prev = s
	}
	roundTrip := func(s string) bool {
		b, err := seqEncoding.DecodeString(strings.ToUpper(s))
		return err == nil && len(b) == 16 && seqString(b) == s && strings.ToLower(s) == s
	}
	alphabet := "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_."
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		b := []byte(newSeq(""))
		if rng.Intn(2) == 0 {
			b[rng.Intn(len(b))] = alphabet[rng.Intn(len(alphabet))]
		}
		if rng.Intn(10) == 0 {
			b = b[:rng.Intn(len(b)+1)]
		}
		if s := string(b); validSeq(s) != roundTrip(s) {
			t.Fatalf("validSeq(%q) = %v, round trip %v", s, validSeq(s), roundTrip(s))
		}
	}
	if newSeq(prev) <= prev || seqNano(newSeq(prev)) <= seqNano(prev) {
		t.Fatal("newSeq(floor) is not above floor")
	}
	future := seqAt(time.Now().Add(time.Hour))
	if s := newSeq(future); s <= future {
		t.Fatalf("newSeq(%q) = %q, not above a floor in the future", future, s)
	}
}

// FuzzVersionName: a version name or ID from anywhere (a client's
// versionId, a file name in the versions tree) is taken exactly when it
// is one newSeq could make, with or without the null suffix.
func FuzzVersionName(f *testing.F) {
	f.Add(newSeq(""))
	f.Add(newSeq("") + nullSuffix)
	f.Add("null")
	f.Add("00000000000000000000000000")
	f.Add("0000000000000000000000000v")
	f.Fuzz(func(t *testing.T, name string) {
		v, ok := parseVersionName(name)
		seq, _ := strings.CutSuffix(name, nullSuffix)
		b, err := seqEncoding.DecodeString(strings.ToUpper(seq))
		want := err == nil && len(b) == 16 && seqString(b) == seq
		if ok != want {
			t.Fatalf("parseVersionName(%q) ok %v, decoding says %v", name, ok, want)
		}
		if ok && v.name() != name {
			t.Fatalf("%q parses to %+v, named %q", name, v, v.name())
		}
		if (checkVersionID(name) == nil) != (name == NullVersion || (ok && !v.null)) {
			t.Fatalf("checkVersionID(%q) = %v", name, checkVersionID(name))
		}
	})
}

// TestVersioningConcurrent races versioned PUTs, delete markers, deletes
// by version (the latest included, so that the next is promoted), version
// reads and listings over keys that turn objects into prefixes and back,
// while the bucket is suspended and enabled again. Every write's version
// is recorded; once quiet, each key's versions are exactly those written
// and not deleted, the current object is the newest version unless that
// is a delete marker, and xfs_repair finds the volume clean.
func TestVersioningConcurrent(t *testing.T) {
	s, img := newVersionedStore(t, "bkt")
	keys := []string{"p", "p/q", "p/q/r", "p/", "p//", "..", "../p", strings.Repeat("l", 300), strings.Repeat("l", 300) + "/x"}
	var mu sync.Mutex
	made := map[string]map[string]bool{} // key → version IDs made (null included)
	gone := map[string]map[string]bool{} // key → IDs deleted by ID
	record := func(m map[string]map[string]bool, k, id string) {
		mu.Lock()
		defer mu.Unlock()
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][id] = true
	}
	const workers = 6
	done := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(seed int64) {
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < 120; i++ {
				k := keys[rng.Intn(len(keys))]
				var err error
				switch op := rng.Intn(10); {
				case op < 4:
					var info ObjectInfo
					if info, err = s.PutObject("bkt", k, strings.NewReader(k), int64(len(k)), Meta{}); err == nil && info.VersionID != NullVersion {
						record(made, k, info.VersionID)
					}
				case op < 6:
					var res DeleteResult
					if res, err = s.Versions().Delete("bkt", k, ""); err == nil && res.VersionID != NullVersion {
						record(made, k, res.VersionID)
					}
				case op < 8:
					var res VersionListResult
					if res, err = s.Versions().List("bkt", VersionListOptions{Prefix: k}); err == nil {
						var vs []ObjectInfo
						for _, v := range res.Versions {
							if v.Key == k {
								vs = append(vs, v)
							}
						}
						if len(vs) > 0 {
							id := vs[rng.Intn(len(vs))].VersionID
							if _, err = s.Versions().Delete("bkt", k, id); err == nil && id != NullVersion {
								record(gone, k, id)
							}
						}
					}
				case op < 9:
					_, err = s.Versions().Head("bkt", k, "")
					if errors.Is(err, ErrNoSuchKey) {
						err = nil
					}
				default:
					state := []string{VersioningEnabled, VersioningSuspended}[rng.Intn(2)]
					err = s.Versions().SetState("bkt", state)
				}
				if err != nil {
					done <- fmt.Errorf("%q: %w", k, err)
					return
				}
			}
			done <- nil
		}(int64(w))
	}
	for w := 0; w < workers; w++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		res, err := s.Versions().List("bkt", VersionListOptions{Prefix: k})
		if err != nil {
			t.Fatal(err)
		}
		var vs []ObjectInfo
		for _, v := range res.Versions {
			if v.Key == k {
				vs = append(vs, v)
			}
		}
		for i, v := range vs {
			if v.IsLatest != (i == 0) || (i > 0 && v.VersionID != NullVersion && vs[i-1].VersionID != NullVersion && v.VersionID >= vs[i-1].VersionID) {
				t.Errorf("%q: versions out of order or latest wrong: %+v", k, vs)
			}
			if v.VersionID != NullVersion && (!made[k][v.VersionID] || gone[k][v.VersionID]) {
				t.Errorf("%q: version %s listed, made %v, deleted %v", k, v.VersionID, made[k][v.VersionID], gone[k][v.VersionID])
			}
		}
		for id := range made[k] {
			if gone[k][id] {
				continue
			}
			if !slices.ContainsFunc(vs, func(v ObjectInfo) bool { return v.VersionID == id }) {
				t.Errorf("%q: version %s was made and never deleted, but is not listed", k, id)
			}
		}
		info, err := s.Versions().Head("bkt", k, "")
		switch {
		case len(vs) == 0 || vs[0].DeleteMarker:
			if !errors.Is(err, ErrNoSuchKey) {
				t.Errorf("%q: head %v, want missing (latest %+v)", k, err, vs)
			}
		case err != nil || info.VersionID != vs[0].VersionID:
			t.Errorf("%q: head %+v %v, want version %s", k, info, err, vs[0].VersionID)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}

// TestDeleteBucketLeftoverVersionDirs: directories of the versions tree
// left empty (a change that failed or was cut after making its key's
// directory) do not keep a bucket without versions from being deleted;
// one version anywhere in the tree does.
func TestDeleteBucketLeftoverVersionDirs(t *testing.T) {
	s, img := newVersionedStore(t, "bkt")
	put(t, s, "bkt", "a/b", "x", Meta{})
	b := s.mustBucket(t, "bkt")
	kp, _ := parseKey("a/c")
	vp, err := s.openVersions(b, kp, versionsAll) // as a change cut after making its key's directory
	vp.close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Versions().Delete("bkt", "a/b", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("bkt"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("delete bucket with a version and a marker: %v", err)
	}
	res, err := s.Versions().List("bkt", VersionListOptions{})
	if err != nil || len(res.Versions) != 2 {
		t.Fatalf("versions %+v %v", res, err)
	}
	for _, v := range res.Versions {
		if _, err := s.Versions().Delete("bkt", v.Key, v.VersionID); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteBucket("bkt"); err != nil {
		t.Fatalf("delete bucket with only empty version directories left: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}

// TestVersionedCommits: in a bucket with versioning Enabled, each change
// of a key's versions is one engine commit once the key's prefix exists
// in the versions tree: a small PUT over a key (the new version made
// whole where the old one leaves, the key's versions directory made in
// the same commit the first time), and a DELETE (the marker, made where
// it goes). Every version reads back after.
func TestVersionedCommits(t *testing.T) {
	s, _ := newVersionedStore(t, "bkt")
	put(t, s, "bkt", "d/first", "v0", Meta{})
	put(t, s, "bkt", "d/first", "v1", Meta{}) // makes d/ in the versions tree
	put(t, s, "bkt", "d/once", "v0", Meta{})
	commits := func(what string, want int64, change func()) {
		t.Helper()
		if err := s.Volume().Force(); err != nil {
			t.Fatal(err)
		}
		before := s.Volume().LogStats().Commits
		change()
		if n := s.Volume().LogStats().Commits - before; n != want {
			t.Errorf("%s: %d commits, want %d", what, n, want)
		}
	}
	var ids []string
	putVersion := func(body string) func() {
		return func() { ids = append(ids, put(t, s, "bkt", "d/k", body, Meta{}).VersionID) }
	}
	commits("a new key", 1, putVersion("one"))
	commits("the first overwrite", 1, putVersion("two"))
	commits("another overwrite", 1, putVersion("three"))
	commits("a delete marker", 1, func() {
		if _, err := s.Versions().Delete("bkt", "d/k", ""); err != nil {
			t.Fatal(err)
		}
	})
	commits("a delete marker of a key never overwritten", 1, func() {
		if _, err := s.Versions().Delete("bkt", "d/once", ""); err != nil {
			t.Fatal(err)
		}
	})
	for i, body := range []string{"one", "two", "three"} {
		o, err := s.Versions().Get("bkt", "d/k", ids[i])
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(o.Reader())
		o.Close()
		if string(got) != body {
			t.Errorf("version %d reads %q, want %q", i, got, body)
		}
	}
}

// newVersionedStore returns a test store with bucket, versioning Enabled.
func newVersionedStore(t *testing.T, bucket string) (*Store, string) {
	t.Helper()
	s, img := newTestStore(t)
	if err := s.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	if err := s.Versions().SetState(bucket, VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	return s, img
}

// TestVersionsFileForm: a key's first delete marker leaves its versions
// in file form (the version, renamed into the versions tree, naming its
// marker), which costs no inode and reads as the two versions; the next
// change gives the key its directory and keeps both, the marker's time
// too.
func TestVersionsFileForm(t *testing.T) {
	s, _ := newVersionedStore(t, "bkt")
	v1 := put(t, s, "bkt", "p/k", "one", Meta{})
	if err := s.quotas().Set("bkt", BucketQuota{HardObjects: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	objects := func() uint64 {
		t.Helper()
		u, err := s.quotas().Get("bkt")
		if err != nil {
			t.Fatal(err)
		}
		return u.Objects
	}
	// Its prefix's directories in the versions tree, made once, and a
	// key that keeps the bucket's.
	put(t, s, "bkt", "p/stay", "x", Meta{})
	put(t, s, "bkt", "p/first", "x", Meta{})
	if _, err := s.Versions().Delete("bkt", "p/first", ""); err != nil {
		t.Fatal(err)
	}
	before := objects()
	m1, err := s.Versions().Delete("bkt", "p/k", "")
	if err != nil || !m1.DeleteMarker {
		t.Fatalf("delete: %+v %v", m1, err)
	}
	if got := objects(); got != before {
		t.Errorf("the first marker made %d inodes", got-before)
	}
	held := "bkt/" + versionsDir + "/p/" + besideName("k")
	ino, err := s.v.Names().LookupPath(held, false)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.v.Stat(ino); err != nil || !isFile(&st) {
		t.Fatalf("%s: %+v %v; want a file", held, st, err)
	}
	if by, err := s.v.Xattrs().Get(ino, xattrDeletedBy); err != nil || string(by) != m1.VersionID {
		t.Fatalf("%s: %s = %q %v; want %s", held, xattrDeletedBy, by, err, m1.VersionID)
	}
	list := func() []ObjectInfo {
		t.Helper()
		res, err := s.Versions().List("bkt", VersionListOptions{Prefix: "p/k"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Versions
	}
	markerTime := list()[0].LastModified
	if time.Since(markerTime) > time.Minute {
		t.Fatalf("marker time %v", markerTime)
	}
	want := []string{m1.VersionID + "(marker)*", v1.VersionID}
	if got := versionIDs(t, s, "p/k"); !slices.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	var me *MarkerError
	if _, _, err := getVersion(t, s, "p/k", ""); !errors.As(err, &me) || !me.Latest || me.VersionID != m1.VersionID {
		t.Fatalf("get: %v", err)
	}
	if _, _, err := getVersion(t, s, "p/k", m1.VersionID); !errors.As(err, &me) || me.Latest {
		t.Fatalf("get the marker: %v", err)
	}
	if body, info, err := getVersion(t, s, "p/k", v1.VersionID); err != nil || body != "one" || info.VersionID != v1.VersionID {
		t.Fatalf("get %s: %q %+v %v", v1.VersionID, body, info, err)
	}
	if _, _, err := getVersion(t, s, "p/k", NullVersion); !errors.Is(err, ErrNoSuchVersion) {
		t.Fatalf("get the null version: %v", err)
	}

	// A new current version leaves the form as it is.
	v2 := put(t, s, "bkt", "p/k", "two", Meta{})
	want = []string{v2.VersionID + "*", m1.VersionID + "(marker)", v1.VersionID}
	if got := versionIDs(t, s, "p/k"); !slices.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	// A second marker gives the key its directory.
	m2, err := s.Versions().Delete("bkt", "p/k", "")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.v.Stat(mustLookupPath(t, s, held)); err != nil || !st.IsDir() {
		t.Fatalf("%s after a second marker: %+v %v; want a directory", held, st, err)
	}
	want = []string{m2.VersionID + "(marker)*", v2.VersionID, m1.VersionID + "(marker)", v1.VersionID}
	if got := versionIDs(t, s, "p/k"); !slices.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	if got := list()[2].LastModified; !got.Equal(markerTime) {
		t.Errorf("marker time %v in the directory, was %v", got, markerTime)
	}

	// Removals by ID from file form: the marker brings the version back,
	// the version leaves the marker.
	for _, removeMarker := range []bool{true, false} {
		key := fmt.Sprint("r/", removeMarker)
		v := put(t, s, "bkt", key, "kept", Meta{})
		m, err := s.Versions().Delete("bkt", key, "")
		if err != nil {
			t.Fatal(err)
		}
		id, want := v.VersionID, []string{m.VersionID + "(marker)*"}
		if removeMarker {
			id, want = m.VersionID, []string{v.VersionID + "*"}
		}
		if _, err := s.Versions().Delete("bkt", key, id); err != nil {
			t.Fatal(err)
		}
		if got := versionIDs(t, s, key); !slices.Equal(got, want) {
			t.Fatalf("%s after removing %s: versions %v, want %v", key, id, got, want)
		}
		if body, _, err := getVersion(t, s, key, ""); removeMarker && (err != nil || body != "kept") {
			t.Fatalf("%s: %q %v", key, body, err)
		}
		// Undoing the DELETE is one rename back: no directory is made.
		_, err = s.v.Names().LookupPath("bkt/"+versionsDir+"/r/"+besideName(fmt.Sprint(removeMarker)), false)
		if removeMarker != errors.Is(err, xfs.ErrNotFound) {
			t.Fatalf("%s after removing %s: its versions' name: %v", key, id, err)
		}
	}
	// Damage: versions in file form without their marker's name are an
	// error for whoever reads or changes them, and nothing is lost.
	bad := put(t, s, "bkt", "bad", "kept", Meta{})
	if _, err := s.Versions().Delete("bkt", "bad", ""); err != nil {
		t.Fatal(err)
	}
	badIno := mustLookupPath(t, s, "bkt/"+versionsDir+"/"+besideName("bad"))
	by, err := s.v.Xattrs().Get(badIno, xattrDeletedBy)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.v.Xattrs().Remove(badIno, xattrDeletedBy); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Versions().List("bkt", VersionListOptions{Prefix: "bad"}); err == nil || !strings.Contains(err.Error(), xattrDeletedBy) {
		t.Errorf("listing damaged versions: %v", err)
	}
	if _, _, err := getVersion(t, s, "bad", bad.VersionID); err == nil {
		t.Error("reading a damaged version: no error")
	}
	if _, err := s.Versions().Delete("bkt", "bad", ""); err == nil {
		t.Error("a marker over damaged versions: no error")
	}
	if err := s.v.Xattrs().Set(badIno, xattrDeletedBy, by, 0); err != nil {
		t.Fatal(err)
	}
	if body, _, err := getVersion(t, s, "bad", bad.VersionID); err != nil || body != "kept" {
		t.Errorf("the version after the repair: %q %v", body, err)
	}

	// A marker under a current version goes the general way.
	v := put(t, s, "bkt", "s", "old", Meta{})
	m, err := s.Versions().Delete("bkt", "s", "")
	if err != nil {
		t.Fatal(err)
	}
	cur := put(t, s, "bkt", "s", "new", Meta{})
	if _, err := s.Versions().Delete("bkt", "s", m.VersionID); err != nil {
		t.Fatal(err)
	}
	if got, want := versionIDs(t, s, "s"), []string{cur.VersionID + "*", v.VersionID}; !slices.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
}

func mustLookupPath(t *testing.T, s *Store, p string) format.Ino {
	t.Helper()
	ino, err := s.v.Names().LookupPath(p, false)
	if err != nil {
		t.Fatal(err)
	}
	return ino
}

// TestVersionsPruneKeepsBesideName: in the versions tree the name beside
// a prefix directory holds that key's own versions, so pruning the
// prefix directory leaves it where it is (in the bucket the object beside
// a pruned directory takes its plain name again). Before, pruning moved a
// file-form version of "c" to the prefix's name "c", and a later change
// of "c" and of "c/x" then found a directory where that file was to go
// back (ErrIsDir; TestVersioningConcurrent met it at random).
func TestVersionsPruneKeepsBesideName(t *testing.T) {
	s, img := newVersionedStore(t, "bkt")
	put(t, s, "bkt", "c", "c1", Meta{})
	if _, err := s.Versions().Delete("bkt", "c", ""); err != nil { // "c" in file form
		t.Fatal(err)
	}
	put(t, s, "bkt", "c/x", "x1", Meta{})
	marker, err := s.Versions().Delete("bkt", "c/x", "") // makes the prefix "c" in the tree
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Versions().List("bkt", VersionListOptions{Prefix: "c/x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Versions { // "c/x" gone for good: the prefix is pruned
		if _, err := s.Versions().Delete("bkt", "c/x", v.VersionID); err != nil {
			t.Fatalf("delete %s: %v", v.VersionID, err)
		}
	}
	if len(res.Versions) != 2 || res.Versions[0].VersionID != marker.VersionID {
		t.Fatalf("versions of c/x: %+v", res.Versions)
	}
	root := "bkt/" + versionsDir + "/"
	if _, err := s.v.Names().LookupPath(root+besideName("c"), false); err != nil {
		t.Fatalf("c's versions after the prune: %v", err)
	}
	if _, err := s.v.Names().LookupPath(root+"c", false); !errors.Is(err, xfs.ErrNotFound) {
		t.Fatalf("%sc after the prune: %v, want no such name", root, err)
	}
	// A second version of "c" (its directory form) and versions below
	// "c/" again.
	put(t, s, "bkt", "c", "c2", Meta{})
	if _, err := s.Versions().Delete("bkt", "c", ""); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "c/y", "y1", Meta{})
	if _, err := s.Versions().Delete("bkt", "c/y", ""); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{"c": 4, "c/y": 2} {
		res, err := s.Versions().List("bkt", VersionListOptions{Prefix: key})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, v := range res.Versions {
			if v.Key == key {
				n++
			}
		}
		if n != want {
			t.Fatalf("%s has %d versions, want %d: %+v", key, n, want, res.Versions)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}
