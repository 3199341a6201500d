package store

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// stressKeys overlap as objects and prefixes at several depths, with
// escaped, hashed and folder-marker forms, so that PUTs and DELETEs of
// different keys make, promote and prune the same directories.
var stressKeys = []string{
	"a", "a/b", "a/b/c", "a/b/c/d", "a/", "a/b/", "a/x", "a//b", "x", "x/y",
	"..", "../a", strings.Repeat("l", 300), strings.Repeat("l", 300) + "/x",
}

// TestNamespaceStress races PUT, overwrite, DELETE, GET, HEAD and LIST
// on overlapping keys of two buckets while another goroutine creates and
// deletes one of them. Each key has one writer, so a per-key model is
// exact: a writer's own reads must match it, anybody's reads must find a
// version written for that key, a missing bucket must mean the writer's
// keys in it are absent, and at the end every listing and GET matches the
// model and xfs_repair -n finds the volume clean. Run it with -race.
func TestNamespaceStress(t *testing.T) {
	const writers = 6
	// 1000 rounds caught a place without its directory lock in two runs
	// of three; -short runs fewer.
	rounds := 1000
	if testing.Short() {
		rounds = 300
	}
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	buckets := []string{"stable", "churn"}
	for _, b := range buckets {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	// models[w][bucket][key]: the content writer w last stored.
	models := make([]map[string]map[string]string, writers)
	var (
		writersDone, churnDone sync.WaitGroup
		stop                   atomic.Bool
		bucketsGone            atomic.Int64
		errMu                  sync.Mutex
		firstErr               error
		fail                   = func(err error) {
			errMu.Lock()
			defer errMu.Unlock()
			if firstErr == nil {
				firstErr = err
			}
			stop.Store(true)
		}
	)
	for w := range writers {
		models[w] = map[string]map[string]string{"stable": {}, "churn": {}}
		writersDone.Add(1)
		go func() {
			defer writersDone.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			if err := stressWriter(s, rng, w, writers, rounds, models[w], &stop); err != nil {
				fail(fmt.Errorf("writer %d: %w", w, err))
			}
		}()
	}
	churnDone.Add(1)
	go func() { // bucket churn: succeeds whenever "churn" is empty
		defer churnDone.Done()
		for !stop.Load() {
			err := s.DeleteBucket("churn")
			if err == nil {
				bucketsGone.Add(1)
			} else if !errors.Is(err, ErrBucketNotEmpty) && !errors.Is(err, ErrNoSuchBucket) {
				fail(fmt.Errorf("delete bucket: %w", err))
				return
			}
			if err := s.CreateBucket("churn"); err != nil && !errors.Is(err, ErrBucketExists) {
				fail(fmt.Errorf("create bucket: %w", err))
				return
			}
			if _, err := s.ListBuckets(); err != nil {
				fail(fmt.Errorf("list buckets: %w", err))
				return
			}
		}
	}()
	writersDone.Wait()
	stop.Store(true) // the churner ends
	churnDone.Wait()
	if firstErr != nil {
		t.Fatalf("seed %d: %v", seed, firstErr)
	}
	t.Logf("the churn bucket was deleted %d times", bucketsGone.Load())

	for _, b := range buckets {
		want := map[string]string{}
		for w := range writers {
			for k, v := range models[w][b] {
				want[k] = v
			}
		}
		checkStressBucket(t, s, b, want)
	}
	closed = true
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// stressWriter runs rounds random operations: writes and deletes of its
// own keys (those with index ≡ w mod writers), reads of any key.
func stressWriter(s *Store, rng *rand.Rand, w, writers, rounds int, model map[string]map[string]string, stop *atomic.Bool) error {
	var own []string
	for i, k := range stressKeys {
		if i%writers == w {
			own = append(own, k)
		}
	}
	for i := 0; i < rounds && !stop.Load(); i++ {
		// "churn" gets one key per writer ("a", "a/b", ... nested) and
		// mostly deletes, so that it is often empty and its deletion
		// races with PUTs.
		bucket, puts, deletes := "stable", 4, 6
		k := own[rng.IntN(len(own))]
		if rng.IntN(3) == 0 {
			bucket, puts, deletes, k = "churn", 2, 8, own[0]
		}
		m := model[bucket]
		var err error
		switch op := rng.IntN(10); {
		case op < puts:
			body := fmt.Sprintf("%s#%d.%d", k, w, i)
			_, err = s.PutObject(bucket, k, strings.NewReader(body), int64(len(body)), Meta{})
			switch {
			case err == nil:
				m[k] = body
			case errors.Is(err, ErrNoSuchBucket) && len(m) == 0:
				err = nil // the bucket was empty, so it could go
			}
		case op < deletes:
			err = s.DeleteObject(bucket, k)
			if err == nil || (errors.Is(err, ErrNoSuchBucket) && len(m) == 0) {
				delete(m, k)
				err = nil
			}
		case op < 8:
			err = checkOwnKey(s, bucket, k, m)
		default:
			err = checkAnyReads(s, bucket, stressKeys[rng.IntN(len(stressKeys))], own, m)
		}
		if err != nil {
			return fmt.Errorf("round %d, %s/%q: %w", i, bucket, k, err)
		}
	}
	return nil
}

// checkOwnKey reads one of the caller's keys, which nobody else changes:
// it must match the model exactly.
func checkOwnKey(s *Store, bucket, k string, m map[string]string) error {
	want, ok := m[k]
	got, err := getString(s, bucket, k)
	switch {
	case errors.Is(err, ErrNoSuchBucket) && len(m) == 0, errors.Is(err, ErrNoSuchKey) && !ok:
		return nil
	case err != nil:
		return fmt.Errorf("get (model: %q, present %v): %w", want, ok, err)
	case !ok:
		return fmt.Errorf("get found %q, the model has no object", got)
	case got != want:
		return fmt.Errorf("get found %q, the model has %q", got, want)
	}
	return nil
}

// checkAnyReads reads a key any writer may be changing and lists the
// bucket: whatever is found must be some version of its key, the listing
// must be in order and hold only known keys, and of the caller's own keys
// (own, whose contents m has) exactly those in the model.
func checkAnyReads(s *Store, bucket, k string, own []string, m map[string]string) error {
	got, err := getString(s, bucket, k)
	switch {
	case errors.Is(err, ErrNoSuchBucket), errors.Is(err, ErrNoSuchKey):
	case err != nil:
		return err
	case !strings.HasPrefix(got, k+"#"):
		return fmt.Errorf("get %q found %q", k, got)
	}
	if _, err := s.HeadObject(bucket, k); err != nil && !errors.Is(err, ErrNoSuchBucket) && !errors.Is(err, ErrNoSuchKey) {
		return fmt.Errorf("head: %w", err)
	}
	for _, opt := range []ListOptions{{}, {Prefix: "a/", Delimiter: "/"}, {MaxKeys: 3, StartAfter: "a/b"}} {
		res, err := s.ListObjects(bucket, opt)
		if errors.Is(err, ErrNoSuchBucket) && len(m) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list %+v: %w", opt, err)
		}
		listed := map[string]bool{}
		for j, o := range res.Objects {
			if !slices.Contains(stressKeys, o.Key) {
				return fmt.Errorf("list %+v: unknown key %q", opt, o.Key)
			}
			if j > 0 && res.Objects[j-1].Key >= o.Key {
				return fmt.Errorf("list %+v: %q before %q", opt, res.Objects[j-1].Key, o.Key)
			}
			listed[o.Key] = true
		}
		if opt != (ListOptions{}) {
			continue
		}
		for _, k := range own {
			if _, ok := m[k]; ok != listed[k] {
				return fmt.Errorf("list: own key %q listed %v, in the model %v", k, listed[k], ok)
			}
		}
	}
	return nil
}

func getString(s *Store, bucket, key string) (string, error) {
	o, err := s.GetObject(bucket, key)
	if err != nil {
		return "", err
	}
	defer o.Close()
	b, err := io.ReadAll(o.Reader())
	return string(b), err
}

// checkStressBucket compares a quiet bucket with the model: its listing
// holds exactly the model's keys and each reads as its content. A bucket
// that is gone must have had no object.
func checkStressBucket(t *testing.T, s *Store, bucket string, want map[string]string) {
	t.Helper()
	res, err := s.ListObjects(bucket, ListOptions{})
	if errors.Is(err, ErrNoSuchBucket) && len(want) == 0 {
		return
	}
	if err != nil {
		t.Fatalf("list %s (model %v): %v", bucket, want, err)
	}
	var listed, keys []string
	for _, o := range res.Objects {
		listed = append(listed, o.Key)
	}
	for k, v := range want {
		keys = append(keys, k)
		got, err := getString(s, bucket, k)
		if err != nil || got != v {
			t.Errorf("%s/%q: got %q, %v; the model has %q", bucket, k, got, err, v)
		}
	}
	slices.Sort(keys)
	if !reflect.DeepEqual(listed, keys) {
		t.Errorf("%s lists %q, the model has %q", bucket, listed, keys)
	}
}
