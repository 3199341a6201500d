package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The versioned power-cut test: TestStorePowerCut's machinery (a Fault
// device with a volatile write cache, the power cut at a write of a
// seeded run, a random part of the unflushed writes kept, the image
// reopened by our recovery) over a workload of versioned operations on
// one bucket: versioning Enabled first, then switched to Suspended and
// back now and then; PUTs of small and larger than 1 MiB bodies over a
// few keys that nest ("a", "a/", "a/b", ...); DELETEs without a version
// (delete markers); DELETEs by version ID, the latest one (an object or
// a delete marker, so that the next newest is promoted) or any other;
// DeleteMany batches mixing both; and copies of older versions. Each
// seed is cut at every write of its operations in turn (most make only
// their log write), each time keeping a random part of what was not
// flushed.
//
// The model holds every key's versions, newest first (versionModel).
// After the cut:
//
//   - the bucket's versioning state is the one before the operation in
//     flight or after it (SetState is one attribute set);
//   - each key's versions, as a full version listing shows them (and a
//     listing paged two at a time, which must agree), are those of the
//     model before the operation in flight or after it. A DeleteMany
//     applies its entries one by one and makes them durable together:
//     each key may hold its versions after any prefix of the batch, and
//     all keys together those after one prefix, since the log replays
//     its transactions in order. A version the operation in flight made
//     has an ID nobody was told: any ID new to the key matches it.
//     Acknowledged versions are all there, with their IDs, in order;
//   - a GET without a version reads the latest version (its MD5 is the
//     listed ETag) or answers the latest delete marker, and a GET of
//     each listed version reads it or answers that it is a marker;
//   - the recovered store takes a new version of every key on top;
//   - xfs_repair -n is clean.
//
// XFS3_VPOWERCUT_CASES (default 6) seeds of XFS3_VPOWERCUT_OPS (default
// 30) operations, from seed XFS3_VPOWERCUT_SEED (default 1); each seed
// is cut at every write of its operations, or at XFS3_VPOWERCUT_CUTS=n
// writes, one in each stretch of the run, or only at write
// XFS3_VPOWERCUT_AT=n (to replay a failure; version IDs are random, so
// a run may make a write or two more or less than the one that failed).

const vcutBucket = "vcut"

// vcutPending is the model's ID for a version the operation in flight
// made in a bucket with versioning Enabled: its ID was never returned.
const vcutPending = "?"

// vcutMissingID is a well-formed version ID no version has.
const vcutMissingID = "00000000000000000000000000"

// vcutKeys are the keys of the workload: objects that are prefixes of
// others, a folder marker, a key below a marker.
var vcutKeys = []string{"a", "a/", "a/b", "a/b/c", "k", "d/k"}

// vcutSizes are the body sizes PUTs draw from.
var vcutSizes = []int{0, 1, 100, 4096, 70000, 1<<20 + 333, 2<<20 + 5}

func TestVersionedPowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	cases := envInt(t, "XFS3_VPOWERCUT_CASES", 6)
	ops := envInt(t, "XFS3_VPOWERCUT_OPS", 30)
	cuts := envInt(t, "XFS3_VPOWERCUT_CUTS", 0)
	only := envInt(t, "XFS3_VPOWERCUT_AT", 0)
	seed0 := int64(envInt(t, "XFS3_VPOWERCUT_SEED", 1))
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < cases; i++ {
		seed := seed0 + int64(i)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { versionedPowerCutCase(t, base, seed, ops, cuts, only) })
	}
}

// vcutRun is one run of the versioned workload until the cut.
type vcutRun struct {
	f      *dev.Fault
	before *versionModel // acknowledged state before the operation in flight
	// cands are the states the operation in flight may leave: before it,
	// after it, and for a DeleteMany those after each prefix of its
	// batch, in order (cands[0] is before).
	cands    []*versionModel
	inFlight string // "" when the cut came after the last operation
	start    int    // writes before the first operation
	acked    int    // operations acknowledged
}

func versionedPowerCutCase(t *testing.T, base string, seed int64, ops, cuts, only int) {
	dry := runVersionedCut(t, base, seed, ops, 0)
	writes, _ := dry.f.Stats()
	var at []int
	switch {
	case only > 0:
		at = []int{only}
	case cuts > 0:
		// One cut in each of cuts equal stretches of the run.
		rng := rand.New(rand.NewSource(seed * 7919))
		for c := 0; c < cuts; c++ {
			lo, hi := writes*c/cuts, writes*(c+1)/cuts
			at = append(at, 1+lo+rng.Intn(max(hi-lo, 1)))
		}
	default:
		// Every write of the operations, and past the last.
		for n := dry.start + 1; n <= writes+1; n++ {
			at = append(at, n)
		}
	}
	states := map[string]int{}
	for _, cutAt := range at {
		states[versionedCut(t, base, seed, ops, cutAt, writes)]++
		if t.Failed() {
			return
		}
	}
	t.Logf("seed %d: %d cuts over %d writes (the operations from write %d); recovered to %v", seed, len(at), writes, dry.start+1, states)
}

// versionedCut runs the workload of seed cut at write cutAt, checks what
// our recovery makes of the crash image, and tells which state it holds.
func versionedCut(t *testing.T, base string, seed int64, ops, cutAt, writes int) string {
	r := runVersionedCut(t, base, seed, ops, cutAt)
	rng := rand.New(rand.NewSource(seed*15485863 + int64(cutAt)))
	crash := randomCrash(rng, r.f, seed+int64(cutAt))
	defer func() {
		if t.Failed() {
			t.Logf("seed %d: cut at write %d of %d after %d operations, during %q; keeping %d of %d unflushed writes, tear %v, subset %v",
				seed, cutAt, writes, r.acked, r.inFlight, crash.Keep, r.f.Pending(), crash.Tear, crash.Subset != nil)
		}
	}()

	img := filepath.Join(t.TempDir(), "crash.img")
	oracle.CopySparse(t, base, img)
	if err := r.f.Image(img, crash); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img) // recovers the log
	if err != nil {
		t.Fatalf("reopen after the cut: %v", err)
	}
	recovered := "no bucket"
	if _, err := s.HeadBucket(vcutBucket); err == nil || r.inFlight != "setup" && r.inFlight != "open" {
		recovered = checkVersionedCut(t, s, r)
		if !t.Failed() {
			writeAfterCut(t, s)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	os.Remove(img)
	return recovered
}

// runVersionedCut runs the seeded workload over base on a Fault device,
// cutting the power at write cutAt (0: after the last operation).
func runVersionedCut(t *testing.T, base string, seed int64, ops, cutAt int) *vcutRun {
	t.Helper()
	f := openFault(t, base)
	empty := &versionModel{keys: map[string][]mVersion{}}
	r := &vcutRun{f: f, before: empty, cands: []*versionModel{empty}}
	if cutAt > 0 {
		r.f.CutAt(cutAt)
	}
	v, err := xfs.OpenDevice(r.f, xfs.Options{LazyCommits: true})
	if err != nil {
		if r.f.IsCut() {
			r.inFlight = "open"
			return r
		}
		t.Fatal(err)
	}
	defer v.Close() // fails after a cut; the image is built from the device
	s, err := New(v)
	if err == nil {
		defer s.Close() // its workers stop; after a cut the device takes no more writes
		err = s.CreateBucket(vcutBucket)
	}
	if err != nil {
		if r.f.IsCut() {
			r.inFlight = "setup"
			return r
		}
		t.Fatal(err)
	}
	r.start, _ = r.f.Stats()
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < ops; i++ {
		name, cands, err := vcutStep(t, s, rng, r.before, i == 0)
		if err != nil {
			if !r.f.IsCut() {
				t.Fatalf("op %d %s: %v", i, name, err)
			}
			r.cands, r.inFlight = cands, name
			return r
		}
		r.before = cands[len(cands)-1]
		r.cands = []*versionModel{r.before}
		r.acked++
	}
	r.f.Cut()
	return r
}

// cloneVersions copies a model; its version lists are copied too.
func cloneVersions(m *versionModel) *versionModel {
	c := &versionModel{state: m.state, keys: make(map[string][]mVersion, len(m.keys))}
	for k, vs := range m.keys {
		c.keys[k] = slices.Clone(vs)
	}
	return c
}

// vcutNewID is the model's ID of a version a write made in state: the
// ID returned when the write was acknowledged (checked for its form),
// else vcutPending, or "null" when versioning is suspended.
func vcutNewID(t *testing.T, what, state, id string, err error) string {
	t.Helper()
	switch {
	case state == VersioningSuspended:
		if err == nil && id != NullVersion {
			t.Fatalf("%s (suspended): version %q, want null", what, id)
		}
		return NullVersion
	case err != nil:
		return vcutPending
	case !validSeq(id):
		t.Fatalf("%s: version %q is no version ID", what, id)
	}
	return id
}

// vcutStep runs one random operation on m's state and returns its name
// and the states it may leave, the last the one it makes when it
// succeeds. The draws depend only on the shape of m, not on its IDs,
// which change from run to run.
func vcutStep(t *testing.T, s *Store, rng *rand.Rand, m *versionModel, first bool) (string, []*versionModel, error) {
	t.Helper()
	next := cloneVersions(m)
	one := func(name string, err error) (string, []*versionModel, error) {
		return name, []*versionModel{m, next}, err
	}
	if first {
		next.state = VersioningEnabled
		return one("set Enabled", s.Versions().SetState(vcutBucket, VersioningEnabled))
	}
	key := vcutKeys[rng.Intn(len(vcutKeys))]
	switch op := rng.Intn(15); {
	case op == 0:
		state := VersioningEnabled
		if m.state == VersioningEnabled {
			state = VersioningSuspended
		}
		next.state = state
		return one("set "+state, s.Versions().SetState(vcutBucket, state))
	case op < 6:
		body := make([]byte, vcutSizes[rng.Intn(len(vcutSizes))])
		rng.Read(body)
		name := fmt.Sprintf("put %q (%d bytes)", key, len(body))
		info, err := s.PutObject(vcutBucket, key, bytes.NewReader(body), int64(len(body)), Meta{ContentType: "application/x-vcut"})
		if err == nil && info.ETag != md5Hex(body) {
			t.Fatalf("%s: etag %q, want %q", name, info.ETag, md5Hex(body))
		}
		next.add(key, mVersion{id: vcutNewID(t, name, m.state, info.VersionID, err), body: string(body)})
		return one(name, err)
	case op < 8:
		name := fmt.Sprintf("delete %q", key)
		res, err := s.Versions().Delete(vcutBucket, key, "")
		if err == nil && !res.DeleteMarker {
			t.Fatalf("%s: %+v, want a delete marker", name, res)
		}
		next.add(key, mVersion{id: vcutNewID(t, name, m.state, res.VersionID, err), marker: true})
		return one(name, err)
	case op < 11:
		vs := m.keys[key]
		var id, what string
		var marker bool
		switch {
		case len(vs) == 0 || rng.Intn(10) == 0:
			id = []string{vcutMissingID, NullVersion}[rng.Intn(2)]
			what = "absent version " + id
			if v, ok := m.find(key, id); ok {
				marker = v.marker
				what = "version " + id
			}
		default:
			i := 0
			if rng.Intn(2) == 0 {
				i = rng.Intn(len(vs))
			}
			id, marker = vs[i].modelID(), vs[i].marker
			what = fmt.Sprintf("version %d of %d", i+1, len(vs))
			if marker {
				what += " (a delete marker)"
			}
		}
		name := fmt.Sprintf("delete %s of %q", what, key)
		res, err := s.Versions().Delete(vcutBucket, key, id)
		if err == nil && (res.VersionID != id || res.DeleteMarker != marker) {
			t.Fatalf("%s: %+v, want version %s, marker %v", name, res, id, marker)
		}
		next.remove(key, id)
		return one(name, err)
	case op < 13:
		vs := m.keys[key]
		var objects []int
		for i, v := range vs {
			if !v.marker {
				objects = append(objects, i)
			}
		}
		if len(objects) == 0 {
			return one("no-op", nil)
		}
		// Mostly an older version than the current one.
		if len(objects) > 1 && objects[0] == 0 && rng.Intn(4) > 0 {
			objects = objects[1:]
		}
		i := objects[rng.Intn(len(objects))]
		dst := vcutKeys[rng.Intn(len(vcutKeys))]
		name := fmt.Sprintf("copy version %d of %d of %q to %q", i+1, len(vs), key, dst)
		info, err := s.Versions().Copy(vcutBucket, key, vs[i].modelID(), vcutBucket, dst, nil)
		if err == nil && info.ETag != md5Hex([]byte(vs[i].body)) {
			t.Fatalf("%s: etag %q, want %q", name, info.ETag, md5Hex([]byte(vs[i].body)))
		}
		next.add(dst, mVersion{id: vcutNewID(t, name, m.state, info.VersionID, err), body: vs[i].body})
		return one(name, err)
	default:
		return vcutDeleteMany(t, s, rng, m)
	}
}

// vcutDeleteMany runs a DeleteMany of a few keys and versions of them.
// Its entries are applied one after the other: the states it may leave
// are those after each prefix of the batch.
func vcutDeleteMany(t *testing.T, s *Store, rng *rand.Rand, m *versionModel) (string, []*versionModel, error) {
	t.Helper()
	var objs []ObjectVersion
	var what []string
	for range 2 + rng.Intn(5) {
		o := ObjectVersion{Key: vcutKeys[rng.Intn(len(vcutKeys))]}
		if vs := m.keys[o.Key]; len(vs) > 0 && rng.Intn(3) > 0 {
			i := rng.Intn(len(vs))
			o.VersionID = vs[i].modelID()
			what = append(what, fmt.Sprintf("%q version %d of %d", o.Key, i+1, len(vs)))
		} else {
			what = append(what, fmt.Sprintf("%q", o.Key))
		}
		objs = append(objs, o)
	}
	name := "delete many " + strings.Join(what, ", ")
	res, errs := s.Versions().DeleteMany(vcutBucket, objs)
	err := errors.Join(errs...)
	cands := []*versionModel{m}
	cur := m
	for j, o := range objs {
		next := cloneVersions(cur)
		if o.VersionID != "" {
			if err == nil && res[j].VersionID != o.VersionID {
				t.Fatalf("%s: entry %d: %+v", name, j, res[j])
			}
			next.remove(o.Key, o.VersionID)
		} else {
			if err == nil && !res[j].DeleteMarker {
				t.Fatalf("%s: entry %d: %+v, want a delete marker", name, j, res[j])
			}
			next.add(o.Key, mVersion{id: vcutNewID(t, name, m.state, res[j].VersionID, err), marker: true})
		}
		cands = append(cands, next)
		cur = next
	}
	return name, cands, err
}

// vcutEtags memoises the MD5 of model bodies, some of them MiBs.
type vcutEtags map[string]string

func (e vcutEtags) of(body string) string {
	if s, ok := e[body]; ok {
		return s
	}
	sum := md5.Sum([]byte(body))
	e[body] = hex.EncodeToString(sum[:])
	return e[body]
}

// vcutMatch tells whether a key's listed versions are want: the same
// versions in the same order, the first latest, with the same IDs (a
// pending one matching any ID the key's other versions do not have) and
// contents.
func vcutMatch(got []ObjectInfo, want []mVersion, etags vcutEtags) bool {
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		g := got[i]
		if g.IsLatest != (i == 0) || g.DeleteMarker != w.marker {
			return false
		}
		if !w.marker && (g.ETag != etags.of(w.body) || g.Size != int64(len(w.body))) {
			return false
		}
		if w.id != vcutPending {
			if g.VersionID != w.modelID() {
				return false
			}
			continue
		}
		if !validSeq(g.VersionID) || slices.ContainsFunc(want, func(o mVersion) bool { return o.modelID() == g.VersionID }) {
			return false
		}
	}
	return true
}

// vcutListing lists every version of the bucket, max a page.
func vcutListing(t *testing.T, s *Store, max int) []ObjectInfo {
	t.Helper()
	opt := VersionListOptions{MaxKeys: max}
	var out []ObjectInfo
	for n := 0; ; n++ {
		page, err := s.Versions().List(vcutBucket, opt)
		if err != nil {
			t.Fatalf("list versions %+v after recovery: %v", opt, err)
		}
		if len(page.CommonPrefixes) > 0 {
			t.Fatalf("list versions %+v after recovery: common prefixes %q without a delimiter", opt, page.CommonPrefixes)
		}
		out = append(out, stripVersions(page).Versions...)
		if !page.IsTruncated {
			return out
		}
		if n > 10000 {
			t.Fatalf("list versions by %d does not end", max)
		}
		opt.KeyMarker, opt.VersionIDMarker = page.NextKeyMarker, page.NextVersionIDMarker
	}
}

// vcutShow prints a key's versions for a failure.
func vcutShow(got []ObjectInfo) string {
	var parts []string
	for _, v := range got {
		p := v.VersionID
		if v.DeleteMarker {
			p += "(marker)"
		} else {
			p += fmt.Sprintf("(%.8s %d)", v.ETag, v.Size)
		}
		if v.IsLatest {
			p += "*"
		}
		parts = append(parts, p)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func vcutShowModel(vs []mVersion, etags vcutEtags) string {
	var parts []string
	for _, v := range vs {
		p := v.modelID()
		if v.marker {
			p += "(marker)"
		} else {
			p += fmt.Sprintf("(%.8s %d)", etags.of(v.body), len(v.body))
		}
		parts = append(parts, p)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// checkVersionedCut compares the recovered bucket with the states the
// operation in flight may have left, and tells which it holds.
func checkVersionedCut(t *testing.T, s *Store, r *vcutRun) string {
	t.Helper()
	etags := vcutEtags{}
	state, err := s.Versions().State(vcutBucket)
	if err != nil {
		t.Fatalf("versioning state after recovery: %v", err)
	}
	if !slices.ContainsFunc(r.cands, func(c *versionModel) bool { return c.state == state }) {
		t.Errorf("versioning state after recovery %q; before %q: %q, after it: %q", state, r.inFlight, r.cands[0].state, r.cands[len(r.cands)-1].state)
	}
	all := vcutListing(t, s, 1000)
	if paged := vcutListing(t, s, 2); !reflect.DeepEqual(all, paged) {
		t.Errorf("versions listed two at a time:\n%v\nin one page:\n%v", paged, all)
	}
	got := map[string][]ObjectInfo{}
	var order []string
	for _, v := range all {
		if len(order) == 0 || order[len(order)-1] != v.Key {
			if _, seen := got[v.Key]; seen || len(order) > 0 && v.Key < order[len(order)-1] {
				t.Errorf("version listing out of key order at %q: %v", v.Key, all)
			}
			order = append(order, v.Key)
		}
		got[v.Key] = append(got[v.Key], v)
	}
	keys := slices.Clone(vcutKeys)
	for _, c := range r.cands {
		for k := range c.keys {
			keys = append(keys, k)
		}
	}
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	// Each key must hold the versions of one of the states; all keys
	// together, those of one state.
	whole := make([]bool, len(r.cands))
	for i := range whole {
		whole[i] = r.cands[i].state == state
	}
	for _, k := range keys {
		ok := false
		for i, c := range r.cands {
			if vcutMatch(got[k], c.keys[k], etags) {
				ok = true
			} else {
				whole[i] = false
			}
		}
		if !ok {
			var want []string
			for i, c := range r.cands {
				want = append(want, fmt.Sprintf("  state %d: %s", i, vcutShowModel(c.keys[k], etags)))
			}
			t.Errorf("after recovery key %q has versions %s; during %q it may have\n%s",
				k, vcutShow(got[k]), r.inFlight, strings.Join(want, "\n"))
		}
	}
	if !t.Failed() && !slices.Contains(whole, true) {
		t.Errorf("after recovery each key holds the versions of a state %q may leave, but not all of the same one", r.inFlight)
	}
	recovered := "a mixture"
	switch last := len(whole) - 1; {
	case r.inFlight == "":
		recovered = "all acknowledged"
	case whole[0] && whole[last]:
		recovered = "before = after"
	case whole[0]:
		recovered = "before"
	case whole[last]:
		recovered = "after"
	case slices.Contains(whole, true):
		recovered = "part of the batch"
	}
	for _, k := range keys {
		checkLatestAfterCut(t, s, k, got[k])
		for _, v := range got[k] {
			checkVersionAfterCut(t, s, k, v)
		}
	}
	return recovered
}

// checkLatestAfterCut reads key without a version ID: vs are its listed
// versions.
func checkLatestAfterCut(t *testing.T, s *Store, key string, vs []ObjectInfo) {
	t.Helper()
	o, err := s.GetObject(vcutBucket, key)
	var me *MarkerError
	switch {
	case len(vs) == 0:
		if !errors.Is(err, ErrNoSuchKey) || errors.As(err, &me) {
			t.Errorf("get %q, which has no versions: %v", key, err)
		}
	case vs[0].DeleteMarker:
		if !errors.As(err, &me) || !me.Latest || me.VersionID != vs[0].VersionID || !errors.Is(err, ErrNoSuchKey) {
			t.Errorf("get %q, whose latest version is delete marker %s: %v", key, vs[0].VersionID, err)
		}
	case err != nil:
		t.Errorf("get %q (latest version %s): %v", key, vs[0].VersionID, err)
	}
	if err != nil || o == nil {
		return
	}
	defer o.Close()
	h := md5.New()
	if _, err := io.Copy(h, o.Reader()); err != nil {
		t.Errorf("read %q: %v", key, err)
		return
	}
	if len(vs) == 0 || vs[0].DeleteMarker {
		t.Errorf("get %q reads version %s, but the listing shows %s", key, o.Info.VersionID, vcutShow(vs))
		return
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != vs[0].ETag || o.Info.VersionID != vs[0].VersionID {
		t.Errorf("get %q: md5 %s version %s; the latest version is %s, etag %s", key, sum, o.Info.VersionID, vs[0].VersionID, vs[0].ETag)
	}
}

// checkVersionAfterCut reads a listed version of key by its ID.
func checkVersionAfterCut(t *testing.T, s *Store, key string, v ObjectInfo) {
	t.Helper()
	o, err := s.Versions().Get(vcutBucket, key, v.VersionID)
	var me *MarkerError
	if v.DeleteMarker {
		if !errors.As(err, &me) || me.Latest || !errors.Is(err, ErrMethodNotAllowed) {
			t.Errorf("get %q version %s, a delete marker: %v", key, v.VersionID, err)
		}
		if err == nil {
			o.Close()
		}
		return
	}
	if err != nil {
		t.Errorf("get %q version %s: %v", key, v.VersionID, err)
		return
	}
	defer o.Close()
	h := md5.New()
	n, err := io.Copy(h, o.Reader())
	if sum := hex.EncodeToString(h.Sum(nil)); err != nil || sum != v.ETag || n != v.Size || o.Info.VersionID != v.VersionID {
		t.Errorf("get %q version %s: %d bytes, md5 %s, version %s, %v; listed %d bytes, etag %s",
			key, v.VersionID, n, sum, o.Info.VersionID, err, v.Size, v.ETag)
	}
}

// writeAfterCut checks that the recovered store goes on: with versioning
// enabled, a PUT on every key makes a new latest version above those the
// recovery left.
func writeAfterCut(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Versions().SetState(vcutBucket, VersioningEnabled); err != nil {
		t.Fatalf("enable versioning after recovery: %v", err)
	}
	before := map[string][]ObjectInfo{}
	for _, v := range vcutListing(t, s, 1000) {
		before[v.Key] = append(before[v.Key], v)
	}
	after := map[string][]ObjectInfo{}
	for _, k := range vcutKeys {
		body := []byte("after the cut: " + k)
		info, err := s.PutObject(vcutBucket, k, bytes.NewReader(body), int64(len(body)), Meta{})
		if err != nil {
			t.Fatalf("put %q after recovery: %v", k, err)
		}
		after[k] = append([]ObjectInfo{{Key: k, VersionID: info.VersionID, IsLatest: true, ETag: md5Hex(body), Size: int64(len(body))}}, before[k]...)
		if len(after[k]) > 1 {
			after[k][1].IsLatest = false
		}
	}
	for _, v := range vcutListing(t, s, 1000) {
		vs := after[v.Key]
		if len(vs) == 0 || !reflect.DeepEqual(vs[0], v) {
			t.Fatalf("after recovery and a put on every key: listed %+v, want %+v", v, vs)
		}
		after[v.Key] = vs[1:]
	}
	for k, vs := range after {
		if len(vs) > 0 {
			t.Fatalf("after recovery and a put on every key: %q lacks %v", k, vs)
		}
	}
}
