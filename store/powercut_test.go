package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The S3-level power-cut test: a random object workload (PUTs of every
// size class, overwrites, DELETEs, copies, tagging and multipart uploads,
// on plain keys and on keys the store maps to reserved names: objects that
// become prefixes and back, markers with content, escaped components)
// runs on a device with a volatile write cache (dev.Fault), with no Sync
// other than what the store itself does: an operation that returned is
// acknowledged. The power is cut at a random write, the disk keeps a random
// part of what was not flushed (the last write torn or not), and the store
// reopens the image, which recovers the log. Then every acknowledged
// operation must be there, the one in flight must be all there or not at
// all, and xfs_repair -n must be clean.
//
// XFS3_STORE_POWERCUT_CASES (default 8) and XFS3_STORE_POWERCUT_OPS
// (default 40) size the run; XFS3_STORE_POWERCUT_SEED picks the first seed.

// cutObject is what the model expects of a key.
type cutObject struct {
	etag string // MD5 hex of the content
	tags int
}

// cutModel is the acknowledged state: bucket "cut", key -> object.
type cutModel map[string]cutObject

func (m cutModel) clone() cutModel {
	c := make(cutModel, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestStorePowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	cases := envInt(t, "XFS3_STORE_POWERCUT_CASES", 8)
	ops := envInt(t, "XFS3_STORE_POWERCUT_OPS", 40)
	seed0 := int64(envInt(t, "XFS3_STORE_POWERCUT_SEED", 1))
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < cases; i++ {
		seed := seed0 + int64(i)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { storePowerCutCase(t, base, seed, ops) })
	}
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// cutRun is one run of the workload until the cut.
type cutRun struct {
	f        *dev.Fault
	before   cutModel // acknowledged state before the operation in flight
	after    cutModel // the state that operation would have made
	inFlight string   // what it was ("" when the cut came after the last)
	// bulk holds the keys of a DeleteObjects in flight: each goes whole
	// or not at all, but not all together, so any share of them may be
	// gone after the cut.
	bulk []string
}

func storePowerCutCase(t *testing.T, base string, seed int64, ops int) {
	dry := runCutWorkload(t, base, seed, ops, 0)
	writes, _ := dry.f.Stats()
	rng := rand.New(rand.NewSource(seed * 104729))
	cutAt := 1 + rng.Intn(writes+1)
	r := runCutWorkload(t, base, seed, ops, cutAt)
	crash := randomCrash(rng, r.f, seed)
	t.Logf("seed %d: cut at write %d of %d during %q; keeping %d of %d unflushed writes, tear %v",
		seed, cutAt, writes, r.inFlight, crash.Keep, r.f.Pending(), crash.Tear)

	img := filepath.Join(t.TempDir(), "crash.img")
	oracle.CopySparse(t, base, img)
	if err := r.f.Image(img, crash); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img) // recovers the log
	if err != nil {
		t.Fatalf("reopen after the cut: %v", err)
	}
	got := cutModel{}
	if _, err := s.HeadBucket("cut"); err == nil || r.inFlight != "setup" && r.inFlight != "open" {
		got = readBucketState(t, s, "cut", "") // the bucket was acknowledged
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !equalCut(got, r.before) && !equalCut(got, r.after) && !bulkDeleted(got, r.before, r.bulk) {
		t.Errorf("after recovery the bucket holds %v;\nacknowledged before %q: %v\nafter it: %v", got, r.inFlight, r.before, r.after)
	}
	oracle.Repair(t, img)
}

// openFault opens the image base behind a Fault device, closed when the
// test ends.
func openFault(t *testing.T, base string) *dev.Fault {
	t.Helper()
	f, closeBase, err := dev.OpenFault(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBase() })
	return f
}

// randomCrash picks what the disk of f keeps of its unflushed writes: a
// random prefix, or half the time a random subset (drawn from pickSeed),
// the last write kept torn or not.
func randomCrash(rng *rand.Rand, f *dev.Fault, pickSeed int64) dev.Crash {
	crash := dev.Crash{Keep: rng.Intn(f.Pending() + 1), Tear: rng.Intn(2) == 0}
	if rng.Intn(2) == 0 {
		pick := rand.New(rand.NewSource(pickSeed))
		crash.Subset = func(int) bool { return pick.Intn(2) == 0 }
	}
	return crash
}

// runCutWorkload runs the seeded workload over base on a Fault device,
// cutting the power at write cutAt (0: after the last operation).
func runCutWorkload(t *testing.T, base string, seed int64, ops, cutAt int) *cutRun {
	t.Helper()
	f := openFault(t, base)
	r := &cutRun{f: f, before: cutModel{}}
	if cutAt > 0 {
		r.f.CutAt(cutAt)
	}
	r.after = r.before
	// Lazy commits as store.Open uses them; the store forces the log at
	// every acknowledgement.
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
		err = s.CreateBucket("cut")
	}
	if err != nil {
		if r.f.IsCut() {
			r.inFlight = "setup"
			return r
		}
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < ops; i++ {
		next := r.before.clone()
		name, bulk, err := cutStep(s, rng, next)
		if err != nil {
			if !r.f.IsCut() {
				t.Fatalf("op %d %s: %v", i, name, err)
			}
			r.after, r.inFlight, r.bulk = next, name, bulk
			return r
		}
		r.before, r.after = next, next
	}
	r.f.Cut()
	return r
}

// cutStep runs one random operation, recording in m the state it makes
// when it succeeds (set first, so that m is that state even when the power
// cut makes it fail); bulk lists the keys of a DeleteObjects.
func cutStep(s *Store, rng *rand.Rand, m cutModel) (name string, bulk []string, err error) {
	if rng.Intn(8) == 0 {
		for range 2 + rng.Intn(12) {
			bulk = append(bulk, cutKey(rng))
		}
		for _, k := range bulk {
			delete(m, k)
		}
		for _, err := range s.DeleteObjects("cut", bulk) {
			if err != nil {
				return fmt.Sprintf("delete objects %q", bulk), bulk, err
			}
		}
		return fmt.Sprintf("delete objects %q", bulk), bulk, nil
	}
	name, err = cutOp(s, rng, m)
	return name, nil, err
}

// cutOp is cutStep's operation on one key.
func cutOp(s *Store, rng *rand.Rand, m cutModel) (string, error) {
	key := cutKey(rng)
	switch op := rng.Intn(10); {
	case op < 5:
		sizes := []int{0, 100, 4096, 70000, 1<<20 + 333, 3 << 20}
		body := make([]byte, sizes[rng.Intn(len(sizes))])
		rng.Read(body)
		meta := Meta{ContentType: "application/x-cut", User: map[string]string{"n": strconv.Itoa(rng.Int())}}
		if rng.Intn(3) == 0 {
			meta.Tags = []Tag{{"t", "v"}}
		}
		m[key] = cutObject{etag: md5Hex(body), tags: len(meta.Tags)}
		_, err := s.PutObject("cut", key, bytes.NewReader(body), int64(len(body)), meta)
		return "put " + key, err
	case op < 7:
		err := s.DeleteObject("cut", key)
		delete(m, key)
		return "delete " + key, err
	case op < 8:
		src, ok := m[key]
		dst := fmt.Sprintf("copies/k%d", rng.Intn(4))
		if !ok {
			return "no-op", nil
		}
		m[dst] = src
		_, err := s.CopyObject("cut", key, "cut", dst, nil)
		return "copy " + key + " " + dst, err
	case op < 9:
		if _, ok := m[key]; !ok {
			return "no-op", nil
		}
		tags := []Tag{{"a", "1"}, {"b", "2"}}[:1+rng.Intn(2)]
		o := m[key]
		o.tags = len(tags)
		m[key] = o
		return "tag " + key, s.PutObjectTagging("cut", key, tags)
	default:
		// Two parts: 5 MiB + 1 byte (copied after it) and a small last one.
		up, err := s.multipart().Create("cut", key, Meta{})
		if err != nil {
			return "create upload " + key, err
		}
		p1 := make([]byte, MinPartSize+1)
		p2 := make([]byte, 1000)
		rng.Read(p1)
		rng.Read(p2)
		var parts []CompletePart
		for i, p := range [][]byte{p1, p2} {
			info, err := s.multipart().UploadPart("cut", key, up.UploadID, i+1, bytes.NewReader(p), int64(len(p)), Checksums{})
			if err != nil {
				return "upload part " + key, err
			}
			parts = append(parts, CompletePart{PartNumber: i + 1, ETag: info.ETag})
		}
		m[key] = cutObject{etag: md5Hex(append(p1, p2...))}
		_, err = s.multipart().Complete("cut", key, up.UploadID, parts)
		return "complete " + key, err
	}
}

// bulkDeleted tells whether got is before with some of keys deleted
// (none, all, or any share: a DeleteObjects cut short) and nothing else
// changed.
func bulkDeleted(got, before cutModel, keys []string) bool {
	if keys == nil {
		return false
	}
	for k, o := range before {
		g, ok := got[k]
		if ok && g != o || !ok && !slices.Contains(keys, k) {
			return false
		}
	}
	for k := range got {
		if _, ok := before[k]; !ok {
			return false
		}
	}
	return true
}

// cutKey draws a key: mostly plain ones, else keys that make them objects
// and prefixes at once, markers (with content or not) and keys stored
// under reserved names.
func cutKey(rng *rand.Rand) string {
	if rng.Intn(3) > 0 {
		return fmt.Sprintf("d%d/k%d", rng.Intn(3), rng.Intn(12))
	}
	awkward := []string{"d0", "d1/k1/x", "d1/k1/x/y", "d2/", "d2//k", "..", "x/../y", "/lead",
		strings.Repeat("L", 300) + "/k", "d0/" + strings.Repeat("é", 200)}
	return awkward[rng.Intn(len(awkward))]
}

// readBucketState reads every object of bucket whole into a model, its
// keys prefixed with prefix.
func readBucketState(t *testing.T, s *Store, bucket, prefix string) cutModel {
	t.Helper()
	got := cutModel{}
	opt := ListOptions{}
	for {
		page, err := s.ListObjects(bucket, opt)
		if err != nil {
			t.Fatalf("list after recovery: %v", err)
		}
		for _, oi := range page.Objects {
			o, err := s.GetObject(bucket, oi.Key)
			if err != nil {
				t.Fatalf("get %s after recovery: %v", oi.Key, err)
			}
			h := md5.New()
			if _, err := io.Copy(h, o.Reader()); err != nil {
				t.Fatalf("read %s after recovery: %v", oi.Key, err)
			}
			got[prefix+oi.Key] = cutObject{etag: hex.EncodeToString(h.Sum(nil)), tags: len(o.Info.Meta.Tags)}
			o.Close()
		}
		if !page.IsTruncated {
			return got
		}
		opt.StartAfter = page.NextMarker
	}
}

func equalCut(a, b cutModel) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
