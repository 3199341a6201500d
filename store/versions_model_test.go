package store

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// mVersion is the model's version of a key: its ID ("" before
// versioning, "null" after), and its body or a delete marker.
type mVersion struct {
	id     string
	body   string
	marker bool
}

// versionModel is S3's versioning semantics over one bucket: each key's
// versions, newest first.
type versionModel struct {
	state string
	keys  map[string][]mVersion
}

func (m *versionModel) add(k string, v mVersion) {
	vs := m.keys[k]
	switch m.state {
	case "":
		vs = nil
	case VersioningSuspended:
		vs = slices.DeleteFunc(slices.Clone(vs), func(o mVersion) bool { return o.id == NullVersion || o.id == "" })
	}
	m.keys[k] = append([]mVersion{v}, vs...)
	if len(m.keys[k]) == 0 {
		delete(m.keys, k)
	}
}

func (m *versionModel) remove(k, id string) {
	vs := slices.DeleteFunc(slices.Clone(m.keys[k]), func(o mVersion) bool { return o.modelID() == id })
	if len(vs) == 0 {
		delete(m.keys, k)
		return
	}
	m.keys[k] = vs
}

// modelID is the ID S3 reports for the version.
func (v mVersion) modelID() string {
	if v.id == "" {
		return NullVersion
	}
	return v.id
}

func (m *versionModel) find(k, id string) (mVersion, bool) {
	for _, v := range m.keys[k] {
		if v.modelID() == id {
			return v, true
		}
	}
	return mVersion{}, false
}

func (m *versionModel) sortedKeys() []string {
	keys := make([]string, 0, len(m.keys))
	for k := range m.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// list is the reference version listing.
func (m *versionModel) list(opt VersionListOptions) VersionListResult {
	type ent struct {
		key, id, cp string
		v           mVersion
		latest      bool
	}
	var all []ent
	seenCP := map[string]bool{}
	for _, k := range m.sortedKeys() {
		if !strings.HasPrefix(k, opt.Prefix) {
			continue
		}
		if d := opt.Delimiter; d != "" {
			if i := strings.Index(k[len(opt.Prefix):], d); i >= 0 {
				cp := k[:len(opt.Prefix)+i+len(d)]
				if !seenCP[cp] {
					seenCP[cp] = true
					all = append(all, ent{key: cp, cp: cp})
				}
				continue
			}
		}
		for i, v := range m.keys[k] {
			all = append(all, ent{key: k, id: v.modelID(), v: v, latest: i == 0})
		}
	}
	start := 0
	for start < len(all) {
		e := all[start]
		if opt.VersionIDMarker == "" {
			if e.key > opt.KeyMarker {
				break
			}
		} else if e.key > opt.KeyMarker {
			break
		}
		start++
	}
	if opt.VersionIDMarker != "" {
		// The versions of the key marker after the version marker.
		for i, e := range all {
			if e.key == opt.KeyMarker && e.cp == "" && e.id == opt.VersionIDMarker {
				start = i + 1
				break
			}
		}
	}
	max := opt.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	var res VersionListResult
	for _, e := range all[start:] {
		if len(res.Versions)+len(res.CommonPrefixes) == max {
			res.IsTruncated = true
			break
		}
		if e.cp != "" {
			res.CommonPrefixes = append(res.CommonPrefixes, e.cp)
			res.NextKeyMarker, res.NextVersionIDMarker = e.cp, ""
			continue
		}
		info := ObjectInfo{Key: e.key, VersionID: e.id, DeleteMarker: e.v.marker, IsLatest: e.latest}
		if !e.v.marker {
			sum := md5.Sum([]byte(e.v.body))
			info.ETag, info.Size = hex.EncodeToString(sum[:]), int64(len(e.v.body))
		}
		res.Versions = append(res.Versions, info)
		res.NextKeyMarker, res.NextVersionIDMarker = e.key, e.id
	}
	if !res.IsTruncated {
		res.NextKeyMarker, res.NextVersionIDMarker = "", ""
	}
	return res
}

// stripVersions keeps of a version listing what the model knows.
func stripVersions(r VersionListResult) VersionListResult {
	out := r
	out.Versions = nil
	for _, v := range r.Versions {
		out.Versions = append(out.Versions, ObjectInfo{Key: v.Key, VersionID: v.VersionID, DeleteMarker: v.DeleteMarker,
			IsLatest: v.IsLatest, ETag: v.ETag, Size: v.Size})
	}
	return out
}

// TestVersioningModel runs seeded random S3 versioning operations (puts,
// copies from versions, deletes, deletes of versions one by one and in
// batches, state changes) against versionModel, reading keys and
// versions back as it goes, then compares version listings with every
// page size, prefix and delimiter; the volume must then be clean for
// xfs_repair, and a kernel mount must show exactly the current objects
// at their keys and the other versions in the versions tree.
func TestVersioningModel(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { versioningModel(t, seed, 600) })
	}
}

func versioningModel(t *testing.T, seed int64, ops int) {
	s, img := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	m := &versionModel{keys: map[string][]mVersion{}}
	g := &keyGen{rng: rand.New(rand.NewSource(seed))}
	rng := g.rng
	// A small key space, so that keys gather many versions.
	var keys []string
	for len(keys) < 24 {
		keys = append(keys, g.key())
		g.seen = keys
	}
	keys = append(keys, "v/a", "v/a/b", "v/", "v")
	anyKey := func() string { return keys[rng.Intn(len(keys))] }
	someVersion := func(k string) string {
		vs := m.keys[k]
		if len(vs) == 0 || rng.Intn(8) == 0 {
			return []string{NullVersion, newSeq("")}[rng.Intn(2)]
		}
		return vs[rng.Intn(len(vs))].modelID()
	}
	body := func(k string) string {
		if strings.HasSuffix(k, "/") && rng.Intn(2) == 0 {
			return ""
		}
		return fmt.Sprintf("%x:%s", rng.Int63(), k[:min(len(k), 20)])
	}
	checkPut := func(k string, info ObjectInfo, b string) {
		t.Helper()
		switch {
		case m.state == "" && info.VersionID != "":
			t.Fatalf("put %q without versioning: version %q", k, info.VersionID)
		case m.state == VersioningSuspended && info.VersionID != NullVersion:
			t.Fatalf("put %q suspended: version %q", k, info.VersionID)
		case m.state == VersioningEnabled && checkVersionID(info.VersionID) != nil:
			t.Fatalf("put %q: version %q", k, info.VersionID)
		case m.state == VersioningEnabled:
			for _, vs := range m.keys {
				for _, v := range vs {
					if v.id == info.VersionID {
						t.Fatalf("put %q: version %q reused", k, v.id)
					}
				}
			}
		}
		id := info.VersionID
		m.add(k, mVersion{id: id, body: b})
	}
	for i := 0; i < ops; i++ {
		switch op := rng.Intn(20); {
		case op == 0 || (i == 40 && m.state == ""):
			state := []string{VersioningEnabled, VersioningEnabled, VersioningSuspended}[rng.Intn(3)]
			if i < 40 && rng.Intn(2) == 0 {
				continue // some writes before versioning
			}
			if err := s.Versions().SetState("bkt", state); err != nil {
				t.Fatal(err)
			}
			m.state = state
		case op < 8:
			k, b := anyKey(), ""
			b = body(k)
			checkPut(k, put(t, s, "bkt", k, b, Meta{}), b)
		case op < 9:
			src, dst := anyKey(), anyKey()
			id := someVersion(src)
			info, err := s.Versions().Copy("bkt", src, id, "bkt", dst, nil)
			v, ok := m.find(src, id)
			switch {
			case !ok && !errors.Is(err, ErrNoSuchVersion) && !errors.Is(err, ErrNoSuchKey):
				t.Fatalf("copy of missing %q %s: %v", src, id, err)
			case ok && v.marker && !errors.Is(err, ErrMethodNotAllowed):
				t.Fatalf("copy of marker %q %s: %v", src, id, err)
			case ok && !v.marker && err != nil:
				t.Fatalf("copy %q %s to %q: %v", src, id, dst, err)
			case ok && !v.marker:
				checkPut(dst, info, v.body)
			}
		case op < 12:
			k := anyKey()
			res, err := s.Versions().Delete("bkt", k, "")
			if err != nil {
				t.Fatalf("delete %q: %v", k, err)
			}
			switch m.state {
			case "":
				delete(m.keys, k)
			default:
				if !res.DeleteMarker || checkVersionID(res.VersionID) != nil {
					t.Fatalf("delete %q: %+v", k, res)
				}
				m.add(k, mVersion{id: res.VersionID, marker: true})
			}
		case op < 15:
			k := anyKey()
			id := someVersion(k)
			v, ok := m.find(k, id)
			res, err := s.Versions().Delete("bkt", k, id)
			if err != nil || res.VersionID != id || res.DeleteMarker != (ok && v.marker) {
				t.Fatalf("delete %q version %s: %+v %v (model %v %+v)", k, id, res, err, ok, v)
			}
			m.remove(k, id)
		case op < 16:
			var objs []ObjectVersion
			for range 1 + rng.Intn(5) {
				k := anyKey()
				o := ObjectVersion{Key: k}
				if rng.Intn(2) == 0 {
					o.VersionID = someVersion(k)
				}
				objs = append(objs, o)
			}
			res, errs := s.Versions().DeleteMany("bkt", objs)
			for j, o := range objs {
				if errs[j] != nil {
					t.Fatalf("delete many %+v: %v", o, errs[j])
				}
				switch {
				case o.VersionID != "":
					m.remove(o.Key, o.VersionID)
				case m.state == "":
					delete(m.keys, o.Key)
				default:
					m.add(o.Key, mVersion{id: res[j].VersionID, marker: true})
				}
			}
		default:
			k := anyKey()
			checkKey(t, s, m, k)
			checkVersion(t, s, m, k, someVersion(k))
		}
	}
	// Keys whose one version is current take a marker, which leaves
	// their versions in file form (package doc) for the checks below.
	// So do new keys, one with a name long enough to be hashed.
	if err := s.Versions().SetState("bkt", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	m.state = VersioningEnabled
	for _, k := range []string{"held/a", "held/b/c", "held", strings.Repeat("h", 250)} {
		b := body(k)
		info, err := s.PutObject("bkt", k, strings.NewReader(b), int64(len(b)), Meta{})
		if err != nil {
			t.Fatal(err)
		}
		checkPut(k, info, b)
		keys = append(keys, k)
	}
	held := 0
	for _, k := range keys {
		if vs := m.keys[k]; len(vs) != 1 || vs[0].marker {
			continue
		}
		held++
		res, err := s.Versions().Delete("bkt", k, "")
		if err != nil || !res.DeleteMarker {
			t.Fatalf("delete %q: %+v %v", k, res, err)
		}
		m.add(k, mVersion{id: res.VersionID, marker: true})
	}
	t.Logf("%d keys in file form", held)
	for _, k := range keys {
		checkKey(t, s, m, k)
		for _, v := range m.keys[k] {
			checkVersion(t, s, m, k, v.modelID())
		}
	}
	checkVersionListings(t, s, m, rng)
	checkProjects(t, s, "bkt")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	oracle.Repair(t, img)
	snap, err := oracle.SnapshotDir(oracle.Mount(t, img, true))
	if err != nil {
		t.Fatal(err)
	}
	checkKernelVersions(t, snap, m)
}

// checkKey reads a key without a version ID.
func checkKey(t *testing.T, s *Store, m *versionModel, k string) {
	t.Helper()
	vs := m.keys[k]
	o, err := s.GetObject("bkt", k)
	var me *MarkerError
	switch {
	case len(vs) == 0:
		if !errors.Is(err, ErrNoSuchKey) || errors.As(err, &me) {
			t.Fatalf("get %q (absent): %v", k, err)
		}
		return
	case vs[0].marker:
		if !errors.As(err, &me) || !me.Latest || me.VersionID != vs[0].id {
			t.Fatalf("get %q (deleted by marker %s): %v", k, vs[0].id, err)
		}
		return
	case err != nil:
		t.Fatalf("get %q: %v", k, err)
	}
	defer o.Close()
	b, _ := io.ReadAll(o.Reader())
	want := vs[0]
	if string(b) != want.body || (m.state != "" && o.Info.VersionID != want.modelID()) {
		t.Fatalf("get %q: %q version %q, want %q version %q", k, b, o.Info.VersionID, want.body, want.modelID())
	}
}

// checkVersion reads version id of a key.
func checkVersion(t *testing.T, s *Store, m *versionModel, k, id string) {
	t.Helper()
	v, ok := m.find(k, id)
	b, info, err := getVersion(t, s, k, id)
	switch {
	case !ok:
		if !errors.Is(err, ErrNoSuchVersion) && !errors.Is(err, ErrNoSuchKey) {
			t.Fatalf("get %q version %s (absent): %v", k, id, err)
		}
	case v.marker:
		var me *MarkerError
		if !errors.As(err, &me) || me.Latest || !errors.Is(err, ErrMethodNotAllowed) {
			t.Fatalf("get %q marker %s: %v", k, id, err)
		}
	case err != nil || b != v.body || info.VersionID != id:
		t.Fatalf("get %q version %s: %q %q %v, want %q", k, id, b, info.VersionID, err, v.body)
	}
}

// checkVersionListings walks version listings page by page for several
// prefixes, delimiters and page sizes, and the plain listing once.
func checkVersionListings(t *testing.T, s *Store, m *versionModel, rng *rand.Rand) {
	t.Helper()
	keys := m.sortedKeys()
	prefixes := []string{"", "v", "v/", "a", "."}
	for range 6 {
		if len(keys) == 0 {
			break
		}
		k := keys[rng.Intn(len(keys))]
		prefixes = append(prefixes, k[:rng.Intn(len(k)+1)])
	}
	pages := 0
	for _, p := range prefixes {
		for _, d := range []string{"", "/", "a"} {
			for _, max := range []int{1, 2, 3, 7, 1000} {
				opt := VersionListOptions{Prefix: p, Delimiter: d, MaxKeys: max}
				for n := 0; ; n++ {
					got, err := s.Versions().List("bkt", opt)
					if err != nil {
						t.Fatalf("list %+v: %v", opt, err)
					}
					if want := m.list(opt); !reflect.DeepEqual(stripVersions(got), want) {
						t.Fatalf("list versions %+v:\n got %+v\nwant %+v", opt, stripVersions(got), want)
					}
					pages++
					if !got.IsTruncated || n > 500 {
						break
					}
					opt.KeyMarker, opt.VersionIDMarker = got.NextKeyMarker, got.NextVersionIDMarker
				}
			}
		}
	}
	var current []string
	for _, k := range keys {
		if !m.keys[k][0].marker {
			current = append(current, k)
		}
	}
	got, err := s.ListObjects("bkt", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := modelList(current, ListOptions{}); !reflect.DeepEqual(strip(got), want) {
		t.Fatalf("list objects:\n got %v\nwant %v", describe(got), describe(want))
	}
	t.Logf("%d keys, %d version pages compared", len(keys), pages)
}

// checkKernelVersions compares a kernel view of the bucket with the
// model: the current objects at their keys (kernelKeys), and every other
// version in the versions tree, decoded by the layout in the package
// doc: .xfs3.versions/<prefix directories>/<key's beside name>/<version>,
// or in file form the file <key's beside name> with its marker.
func checkKernelVersions(t *testing.T, snap oracle.Snapshot, m *versionModel) {
	t.Helper()
	got := kernelKeys(t, snap, "bkt")
	for k, vs := range m.keys {
		if vs[0].marker {
			continue
		}
		sum := sha256.Sum256([]byte(vs[0].body))
		if got[k] != hex.EncodeToString(sum[:]) {
			t.Errorf("kernel view of %q: sha256 %q, want %x", k, got[k], sum)
		}
		delete(got, k)
	}
	for k := range got {
		t.Errorf("kernel shows key %q that the model does not hold", k)
	}
	byPath := map[string]oracle.Entry{}
	for _, e := range snap {
		byPath[e.Path] = e
	}
	root := "bkt/.xfs3.versions"
	type kv struct{ key, id string }
	type found struct {
		marker bool
		sha256 string
	}
	seen := map[kv]found{}
	for _, e := range snap {
		if e.Type != oracle.TypeFile || !strings.HasPrefix(e.Path, root+"/") {
			continue
		}
		rel := strings.Split(strings.TrimPrefix(e.Path, root+"/"), "/")
		var key string
		for i, seg := range rel {
			c, beside := kernelComponent(t, seg, byPath[root+"/"+strings.Join(rel[:i+1], "/")])
			key += c
			if !beside {
				key += "/"
				continue
			}
			switch i {
			case len(rel) - 1: // a key's versions in file form
				by, ok := e.Xattrs[xattrDeletedBy]
				if !ok {
					t.Fatalf("%s: a key's versions in file form without %s", e.Path, xattrDeletedBy)
				}
				seen[kv{key, kernelVersionID(string(e.Xattrs[xattrVersion]))}] = found{false, e.SHA256}
				seen[kv{key, kernelVersionID(string(by))}] = found{marker: true}
			case len(rel) - 2: // a key's directory: its versions by name
				_, marker := e.Xattrs[xattrDeleteMarker]
				seen[kv{key, kernelVersionID(rel[i+1])}] = found{marker, e.SHA256}
			default:
				t.Fatalf("%s: a versions directory must be named beside, its parents not", e.Path)
			}
			break
		}
	}
	for k, vs := range m.keys {
		for i, v := range vs {
			if i == 0 && !v.marker {
				continue // the current version, at its key
			}
			f, ok := seen[kv{k, v.modelID()}]
			if !ok {
				t.Errorf("kernel: version %s of %q missing from the versions tree", v.modelID(), k)
				continue
			}
			delete(seen, kv{k, v.modelID()})
			sum := sha256.Sum256([]byte(v.body))
			if f.marker != v.marker || (!f.marker && f.sha256 != hex.EncodeToString(sum[:])) {
				t.Errorf("kernel: version %s of %q: marker %v, sha256 %s; want %+v", v.modelID(), k, f.marker, f.sha256, v)
			}
		}
	}
	for k := range seen {
		t.Errorf("kernel: versions tree holds %+v, which the model does not", k)
	}
}

// kernelVersionID is the version ID of a version's name.
func kernelVersionID(name string) string {
	if _, null := strings.CutSuffix(name, nullSuffix); null {
		return NullVersion
	}
	return name
}
