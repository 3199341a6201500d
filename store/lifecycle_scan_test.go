package store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store/lifecycle"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// scanRules are the lifecycle rules of TestLifecycleScanModel, as XML
// (the configuration a client would PUT).
const scanRules = `<LifecycleConfiguration>
 <Rule><ID>logs</ID><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>2</Days></Expiration></Rule>
 <Rule><ID>old</ID><Status>Enabled</Status><Filter></Filter><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>
 <Rule><ID>markers</ID><Status>Enabled</Status><Filter><Prefix>tmp/</Prefix></Filter><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
 <Rule><ID>big</ID><Status>Enabled</Status><Filter><And><Prefix>data/</Prefix><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan><Tag><Key>tier</Key><Value>cold</Value></Tag></And></Filter><Expiration><Days>3</Days></Expiration></Rule>
 <Rule><ID>uploads</ID><Status>Enabled</Status><Filter><Prefix></Prefix></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>
 <Rule><ID>off</ID><Status>Disabled</Status><Filter><Prefix>keep/</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule>
</LifecycleConfiguration>`

// scanEntry is a version as the model compares it.
type scanEntry struct {
	Key, VersionID string
	Marker         bool
}

// passExpected is what a pass over page (a bucket's whole version
// listing before the pass, newest first within a key) must leave, by
// the rules' own evaluation of each version: the versions that stay, and
// per key whether a new delete marker lands on top. Locked versions stay.
func passExpected(t *testing.T, s *Store, bucket string, page []ObjectInfo, cfg lifecycle.Config, now time.Time, day time.Duration) (stay []scanEntry, markers map[string]bool) {
	markers = map[string]bool{}
	state, err := s.Versions().State(bucket)
	if err != nil {
		t.Fatal(err)
	}
	var newer int
	var since time.Time
	for i, v := range page {
		if i == 0 || page[i-1].Key != v.Key {
			newer, since = 0, time.Time{}
		}
		o := lifecycle.Object{Key: v.Key, Size: v.Size, ModTime: v.LastModified, IsLatest: v.IsLatest, DeleteMarker: v.DeleteMarker}
		if !v.IsLatest {
			o.NoncurrentSince, o.NewerNoncurrent = since, newer
			newer++
		}
		if v.IsLatest && v.DeleteMarker {
			o.OnlyMarker = i+1 == len(page) || page[i+1].Key != v.Key
		}
		if !v.DeleteMarker {
			tags, err := s.Versions().Tagging(bucket, v.Key, v.VersionID)
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range tags {
				o.Tags = append(o.Tags, lifecycle.Tag{Key: tg.Key, Value: tg.Value})
			}
		}
		since = v.LastModified
		e := scanEntry{v.Key, v.VersionID, v.DeleteMarker}
		action, _ := cfg.Eval(o, now, day)
		locked := false
		if !v.DeleteMarker && state != "" {
			lock, _, err := s.Locks().Get(bucket, v.Key, v.VersionID)
			locked = err == nil && lock.protects(now, false)
		}
		switch {
		case action == lifecycle.ExpireCurrent && state != "":
			markers[v.Key] = true
			stay = append(stay, e)
		case action == lifecycle.None, action == lifecycle.DeleteVersion && locked:
			stay = append(stay, e)
		}
	}
	return stay, markers
}

// listAll is a bucket's whole version listing.
func listAll(t *testing.T, s *Store, bucket string) []ObjectInfo {
	t.Helper()
	page, err := s.Versions().List(bucket, VersionListOptions{MaxKeys: 100000})
	if err != nil || page.IsTruncated {
		t.Fatalf("list %s: %v (truncated %v)", bucket, err, page.IsTruncated)
	}
	return page.Versions
}

// runPass runs a whole lifecycle pass by hand, batch after batch.
func runPass(t *testing.T, s *Store, now time.Time) LifecycleCounts {
	t.Helper()
	var total LifecycleCounts
	cursor := ""
	for i := 0; ; i++ {
		next, c, err := s.Lifecycle().ExpireBatch(context.Background(), cursor, now)
		if err != nil {
			t.Fatalf("batch %d from %q: %v", i, cursor, err)
		}
		total.Add(c)
		if next == "" {
			return total
		}
		if next == cursor || i > 100000 {
			t.Fatalf("the pass does not advance from %q", cursor)
		}
		cursor = next
	}
}

// TestLifecycleScanModel: random writes, deletes, uploads and time
// passing over an unversioned, a versioned and an object-lock bucket
// with rules; after each pass (in batches of three, so keys' versions
// span batches) every bucket holds exactly what the rules leave of what
// it held before, and at the end xfs_repair is clean.
func TestLifecycleScanModel(t *testing.T) {
	defer func(n int) { lifecycleBatch = n }(lifecycleBatch)
	lifecycleBatch = 3
	for _, seed := range []int64{1, 2} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { lifecycleScanModel(t, seed) })
	}
}

func lifecycleScanModel(t *testing.T, seed int64) {
	s, img, clock := newLockStore(t) // "bkt" has object lock
	rng := rand.New(rand.NewSource(seed))
	cfg, err := lifecycle.Parse([]byte(scanRules))
	if err != nil {
		t.Fatal(err)
	}
	buckets := []string{"bkt", "plain", "ver"}
	for _, b := range buckets[1:] {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Versions().SetState("ver", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		if err := s.BucketConfigs().Put(b, LifecycleConfig, cfg.Encode()); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"logs/a", "logs/b", "tmp/x", "data/big", "data/small", "keep/k", "other"}
	uploads := map[string]UploadInfo{}
	for step := 0; step < 12; step++ {
		for i := 0; i < 15; i++ {
			b, k := buckets[rng.Intn(len(buckets))], keys[rng.Intn(len(keys))]
			switch op := rng.Intn(10); {
			case op < 6:
				m := Meta{}
				if rng.Intn(2) == 0 {
					m.Tags = []Tag{{"tier", "cold"}}
				}
				if b == "bkt" && rng.Intn(3) == 0 {
					m.Lock = ObjectLock{Retention: Retention{LockCompliance, clock.now().Add(time.Duration(1+rng.Intn(4)) * day)}}
				}
				body := strings.Repeat("x", []int{10, 200}[rng.Intn(2)])
				if _, err := s.PutObject(b, k, strings.NewReader(body), int64(len(body)), m); err != nil {
					t.Fatal(err)
				}
			case op < 9:
				if _, err := s.Versions().Delete(b, k, ""); err != nil {
					t.Fatal(err)
				}
			default:
				up, err := s.Uploads().Create(b, k, Meta{})
				if err != nil {
					t.Fatal(err)
				}
				uploads[up.UploadID] = up
			}
		}
		clock.advance(time.Duration(rng.Intn(40)) * time.Hour)
		now := clock.now()
		want := map[string][]scanEntry{}
		markers := map[string]map[string]bool{}
		for _, b := range buckets {
			want[b], markers[b] = passExpected(t, s, b, listAll(t, s, b), cfg, now, DefaultLifecycleDay)
		}
		c := runPass(t, s, now)
		for _, b := range buckets {
			var got []scanEntry
			added := map[string]bool{}
			after := listAll(t, s, b)
			for i, v := range after {
				e := scanEntry{v.Key, v.VersionID, v.DeleteMarker}
				if markers[b][v.Key] && v.IsLatest && v.DeleteMarker && !slices.Contains(want[b], e) {
					added[v.Key] = true // the marker this pass put on top
					continue
				}
				got = append(got, e)
				_ = i
			}
			if !slices.Equal(got, want[b]) {
				t.Fatalf("step %d, bucket %s at %v: after the pass\n%v\nwant\n%v", step, b, now, got, want[b])
			}
			for k := range markers[b] {
				if !added[k] {
					t.Fatalf("step %d, bucket %s: no delete marker over expired %q", step, b, k)
				}
			}
		}
		for id, up := range uploads {
			_, abort := cfg.AbortUpload(up.Key, up.Initiated, now, DefaultLifecycleDay)
			_, err := s.Uploads().Get(up.Bucket, up.Key, id)
			if abort != (err != nil) {
				t.Fatalf("step %d: upload %s of %s initiated %v at %v: abort %v, store %v", step, id, up.Key, up.Initiated, now, abort, err)
			}
			if abort {
				delete(uploads, id)
			}
		}
		t.Logf("step %d: %+v", step, c)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, img)
}

// TestLifecyclePowerCut cuts power at every write of a lifecycle pass
// (objects expired, markers put on top, noncurrent versions and a lone
// marker deleted, uploads aborted) and checks what our recovery makes of
// each crash image: every version the rules keep is there and reads
// whole, nothing is there that was not before the pass (but the markers
// it adds), and xfs_repair -n is clean.
func TestLifecyclePowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	defer func(n int) { lifecycleBatch = n }(lifecycleBatch)
	lifecycleBatch = 3 // batches of a few versions, each saved as the scanner saves them
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	dry := runLifecycleCut(t, base, 0)
	writes, _ := dry.f.Stats()
	if dry.expired < 10 {
		t.Fatalf("the pass expired %d things: too few to test", dry.expired)
	}
	for at := dry.start + 1; at <= writes; at++ {
		lifecycleCut(t, base, at)
		if t.Failed() {
			t.Fatalf("cut at write %d of %d", at, writes)
		}
	}
	t.Logf("%d cuts over a pass that expired %d things", writes-dry.start, dry.expired)
}

type lifecycleCutRun struct {
	f       *dev.Fault
	start   int
	expired int64
	// before is each bucket's listing before the pass, stay what the
	// rules keep of it.
	before, stay map[string][]scanEntry
}

// lifecycleCutWorkload fills a store: expired and kept objects in an
// unversioned and a versioned bucket, noncurrent versions, a lone
// marker, an upload; then moves the clock past their days.
func lifecycleCutWorkload(t *testing.T, s *Store, clock *testClock) {
	cfg, err := lifecycle.Parse([]byte(scanRules))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"plain", "ver"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		if err := s.BucketConfigs().Put(b, LifecycleConfig, cfg.Encode()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Versions().SetState("ver", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"plain", "ver"} {
		for i := 0; i < 6; i++ {
			for _, k := range []string{fmt.Sprintf("logs/%d", i), fmt.Sprintf("keep/%d", i), fmt.Sprintf("other%d", i)} {
				for v := 0; v < 3; v++ {
					body := fmt.Sprintf("%s v%d %s", k, v, strings.Repeat("y", 300*v))
					if _, err := s.PutObject(b, k, strings.NewReader(body), int64(len(body)), Meta{}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if _, err := s.PutObject(b, "tmp/gone", strings.NewReader("t"), 1, Meta{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Versions().Delete(b, "tmp/gone", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Uploads().Create(b, "big/upload", Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(3 * day)
}

func runLifecycleCut(t *testing.T, base string, cutAt int) *lifecycleCutRun {
	t.Helper()
	f := openFault(t, base)
	v, err := xfs.OpenDevice(f, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	clock := &testClock{t: time.Now().UTC()}
	s, err := NewWith(v, Options{Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close() // its workers stop; after a cut the device takes no more writes
	lifecycleCutWorkload(t, s, clock)
	r := &lifecycleCutRun{f: f, before: map[string][]scanEntry{}, stay: map[string][]scanEntry{}}
	cfg, _ := lifecycle.Parse([]byte(scanRules))
	for _, b := range []string{"plain", "ver"} {
		page := listAll(t, s, b)
		for _, v := range page {
			r.before[b] = append(r.before[b], scanEntry{v.Key, v.VersionID, v.DeleteMarker})
		}
		r.stay[b], _ = passExpected(t, s, b, page, cfg, clock.now(), DefaultLifecycleDay)
	}
	if err := s.v.Force(); err != nil {
		t.Fatal(err)
	}
	r.start, _ = f.Stats()
	if cutAt > 0 {
		f.CutAt(cutAt)
	}
	cursor := ""
	for {
		next, c, err := s.Lifecycle().ExpireBatch(context.Background(), cursor, clock.now())
		r.expired += c.Expired + c.Versions + c.Markers + c.Uploads
		if err == nil {
			err = s.Lifecycle().SaveCursor(next) // durable, as the scanner makes each batch
		}
		if err != nil || next == "" || f.IsCut() {
			break
		}
		cursor = next
	}
	f.Cut()
	return r
}

func lifecycleCut(t *testing.T, base string, cutAt int) {
	r := runLifecycleCut(t, base, cutAt)
	img := filepath.Join(t.TempDir(), "crash.img")
	oracle.CopySparse(t, base, img)
	if err := r.f.Image(img, randomCrash(rand.New(rand.NewSource(int64(cutAt))), r.f, int64(cutAt)*7)); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img)
	if err != nil {
		t.Fatalf("cut at %d: reopen: %v", cutAt, err)
	}
	for _, b := range []string{"plain", "ver"} {
		after := listAll(t, s, b)
		have := map[scanEntry]bool{}
		for _, v := range after {
			e := scanEntry{v.Key, v.VersionID, v.DeleteMarker}
			have[e] = true
			if !slices.Contains(r.before[b], e) && !(v.DeleteMarker && v.IsLatest) {
				t.Errorf("cut at %d: %s holds %+v, which it did not before the pass", cutAt, b, e)
			}
			if !v.DeleteMarker {
				o, err := s.Versions().Get(b, v.Key, v.VersionID)
				if err != nil {
					t.Errorf("cut at %d: %s %+v: %v", cutAt, b, e, err)
					continue
				}
				got, err := io.ReadAll(o.Reader())
				o.Close()
				if sum := md5.Sum(got); err != nil || hex.EncodeToString(sum[:]) != v.ETag {
					t.Errorf("cut at %d: %s %+v does not read whole: %v", cutAt, b, e, err)
				}
			}
		}
		for _, e := range r.stay[b] {
			if !have[e] {
				t.Errorf("cut at %d: %s lost %+v, which the rules keep", cutAt, b, e)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestLifecycleBadCursor: a saved cursor that does not decode (a damaged
// system file) starts the pass over instead of failing every pass.
func TestLifecycleBadCursor(t *testing.T) {
	s, _, clock := newLockStore(t)
	cfg, err := lifecycle.Parse([]byte(scanRules))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BucketConfigs().Put("bkt", LifecycleConfig, cfg.Encode()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject("bkt", "logs/old", strings.NewReader("x"), 1, Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"{not json", `{"bucket":7}`, "\x00\xff"} {
		if err := s.Lifecycle().SaveCursor(bad); err != nil {
			t.Fatal(err)
		}
		cursor, err := s.Lifecycle().LoadCursor()
		if err != nil || cursor != bad {
			t.Fatalf("cursor %q back as %q, %v", bad, cursor, err)
		}
		next, _, err := s.Lifecycle().ExpireBatch(context.Background(), cursor, clock.now())
		if err != nil {
			t.Fatalf("batch from %q: %v", bad, err)
		}
		var cur lifecycleCursor
		if err := json.Unmarshal([]byte(next), &cur); err != nil || cur.Bucket != "bkt" {
			t.Fatalf("batch from %q went on to %q (%v), want a pass from the start", bad, next, err)
		}
	}
	clock.advance(4 * DefaultLifecycleDay)
	var expired int64
	for cursor := "{not json"; ; {
		next, c, err := s.Lifecycle().ExpireBatch(context.Background(), cursor, clock.now())
		if err != nil {
			t.Fatal(err)
		}
		if expired += c.Expired; next == "" {
			break
		}
		cursor = next
	}
	if expired != 1 {
		t.Fatalf("a pass from a bad cursor expired %d objects, want 1", expired)
	}
}

// TestLifecycleFolderMarker: an empty folder marker of a bucket without
// versioning, kept in its directory's attributes, expires as an object
// does, and a newer marker put meanwhile stays.
func TestLifecycleFolderMarker(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("fold"); err != nil {
		t.Fatal(err)
	}
	cfg, err := lifecycle.Parse([]byte(scanRules)) // logs/ expire after 2 days
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BucketConfigs().Put("fold", LifecycleConfig, cfg.Encode()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"logs/old/", "logs/old/inside"} {
		if _, err := s.PutObject("fold", k, strings.NewReader(""), 0, Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	c := runPass(t, s, time.Now().Add(3*DefaultLifecycleDay))
	if c.Expired != 2 || c.Errors != 0 {
		t.Fatalf("pass: %+v, want both objects expired", c)
	}
	if got := listAll(t, s, "fold"); len(got) != 0 {
		t.Fatalf("left after the pass: %+v", got)
	}
}
