package store

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestDeleteObjectsMatchesDeleteObject: DeleteObjects, which removes the
// keys of a directory together, leaves exactly what DeleteObject key by
// key leaves, with the same outcome for every key. Two stores get the
// same objects, keys chosen to collide (an object and a prefix of one
// name, folder markers, empty, escaped and hashed components, so that
// "/x" and "x" differ only in an empty directory name); then random
// batches, with missing, repeated and invalid keys among them, go to one
// store in one call and to the other one key at a time. After each batch
// the listings and the directory trees (pruning included) must agree;
// at the end xfs_repair must find both volumes clean (the commits it saves
// are counted by TestDeleteObjectsSharesCommits).
func TestDeleteObjectsMatchesDeleteObject(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { deleteObjectsMatch(t, seed) })
	}
}

func deleteObjectsMatch(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	bulk, bulkImg := newHeldGCStore(t)
	one, oneImg := newHeldGCStore(t)
	comps := []string{"a", "b", "c", "", ".", ".xfs3.x", strings.Repeat("l", 300)}
	var leaves []string
	for i := range 15 {
		leaves = append(leaves, fmt.Sprintf("k%d", i))
	}
	leaves = append(leaves, comps...)
	var randomKey func() string
	randomKey = func() string {
		parts := make([]string, rng.Intn(3))
		for i := range parts {
			parts[i] = comps[rng.Intn(len(comps))]
		}
		k := strings.Join(append(parts, leaves[rng.Intn(len(leaves))]), "/")
		if rng.Intn(8) == 0 {
			k += "/" // a folder marker
		}
		if k == "" {
			return randomKey() // the one invalid key; deletes get it on purpose
		}
		return k
	}
	for _, s := range []*Store{bulk, one} {
		if err := s.CreateBucket("bkt"); err != nil {
			t.Fatal(err)
		}
	}
	var bulkCommits, oneCommits int64
	for round := range 6 {
		for range 150 {
			k := randomKey()
			for _, s := range []*Store{bulk, one} {
				if _, err := s.PutObject("bkt", k, strings.NewReader(k), int64(len(k)), Meta{}); err != nil {
					t.Fatalf("put %q: %v", k, err)
				}
			}
		}
		var keys []string
		for range 20 + rng.Intn(40) {
			keys = append(keys, randomKey())
		}
		keys = append(keys, keys[rng.Intn(len(keys))], "", "c/"+strings.Repeat("x", MaxKeyLen))
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		bulkBefore, oneBefore := bulk.Volume().LogStats().Commits, one.Volume().LogStats().Commits
		errs := bulk.DeleteObjects("bkt", keys)
		for i, k := range keys {
			want := one.DeleteObject("bkt", k)
			if !sameOutcome(errs[i], want) {
				t.Errorf("round %d, key %q: DeleteObjects gave %v, DeleteObject %v", round, k, errs[i], want)
			}
		}
		bulkCommits += bulk.Volume().LogStats().Commits - bulkBefore
		oneCommits += one.Volume().LogStats().Commits - oneBefore
		if got, want := allKeys(t, bulk), allKeys(t, one); !slices.Equal(got, want) {
			t.Fatalf("round %d: keys left differ:\nDeleteObjects %q\nDeleteObject  %q", round, got, want)
		}
		if got, want := volumeTree(t, bulk.Volume()), volumeTree(t, one.Volume()); !slices.Equal(got, want) {
			t.Fatalf("round %d: trees differ:\nDeleteObjects %q\nDeleteObject  %q", round, got, want)
		}
	}
	t.Logf("deletes in %d commits, one by one %d", bulkCommits, oneCommits)
	for _, s := range []*Store{bulk, one} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	oracle.Repair(t, bulkImg)
	oracle.Repair(t, oneImg)
}

// TestDeleteObjectsSharesCommits: the keys of one prefix leave their
// directory together, in a handful of commits, and the emptied prefix
// is pruned.
func TestDeleteObjectsSharesCommits(t *testing.T) {
	s, _ := newHeldGCStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 200 {
		k := fmt.Sprintf("photos/2026/img-%03d.jpg", i)
		if i%2 == 1 {
			k = fmt.Sprintf("top-%03d", i)
		}
		put(t, s, "bkt", k, k, Meta{})
		keys = append(keys, k)
	}
	put(t, s, "bkt", "kept", "kept", Meta{})
	before := s.Volume().LogStats().Commits
	for i, err := range s.DeleteObjects("bkt", keys) {
		if err != nil {
			t.Errorf("%s: %v", keys[i], err)
		}
	}
	commits := s.Volume().LogStats().Commits - before
	t.Logf("%d keys deleted in %d commits", len(keys), commits)
	if commits*8 > int64(len(keys)) {
		t.Errorf("%d keys deleted in %d commits, want fewer than an eighth as many", len(keys), commits)
	}
	if got := volumeTree(t, s.Volume()); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("bucket holds %q, want only kept", got)
	}
}

// newHeldGCStore opens a store on a fresh volume whose inode gc queues
// released inodes until Close: its only commits are then the changes'
// own, which the test counts.
func newHeldGCStore(t *testing.T) (*Store, string) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenWith(img, Options{GC: gc.Options{Mode: gc.PerCPU, Batch: 1 << 20, Backlog: 1 << 20, Delay: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, img
}

// sameOutcome tells whether two deletes of one key ended alike: both
// well, or both with the same store error.
func sameOutcome(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	for _, e := range []error{ErrInvalidKey, ErrKeyTooLong, ErrNoSuchBucket, ErrNoSuchKey} {
		if errors.Is(a, e) != errors.Is(b, e) {
			return false
		}
	}
	return true
}

func allKeys(t *testing.T, s *Store) []string {
	t.Helper()
	var keys []string
	opt := ListOptions{MaxKeys: 1000}
	for {
		res, err := s.ListObjects("bkt", opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Objects {
			keys = append(keys, o.Key)
		}
		if !res.IsTruncated {
			return keys
		}
		opt.StartAfter = res.NextMarker
	}
}

// volumeTree lists every path under the bucket's directory, directories
// with a trailing "/".
func volumeTree(t *testing.T, v *xfs.Volume) []string {
	t.Helper()
	bkt, err := v.Names().Lookup(v.Root(), "bkt")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(dir format.Ino, prefix string)
	walk = func(dir format.Ino, prefix string) {
		ents, err := v.Names().ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			p := filepath.Join(prefix, e.Name)
			st, err := v.Stat(e.Ino)
			if err != nil {
				t.Fatal(err)
			}
			if st.IsDir() {
				paths = append(paths, p+"/")
				walk(e.Ino, p)
				continue
			}
			paths = append(paths, p)
		}
	}
	walk(bkt, "")
	slices.Sort(paths)
	return paths
}
