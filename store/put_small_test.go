package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs"
)

// TestSmallPutCommits: a PUT of at most smallObjectMax bytes to a new key
// is one commit (created whole); an overwrite goes through a staging
// file made with its body (two), a larger body and a body of unknown
// size through one written after it is made (three). Each reads back
// with its content, ETag and metadata, and no staging file is left.
func TestSmallPutCommits(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "d/first", "makes the directory", Meta{})
	meta := Meta{ContentType: "text/plain", User: map[string]string{"color": "blue"}}
	for _, tc := range []struct {
		what, key string
		size      int
		unsized   bool
		commits   int64
	}{
		{"a new key", "d/new", 4096, false, 1},
		{"an empty body", "d/empty", 0, false, 1},
		{"the largest small body", "d/max", smallObjectMax, false, 1},
		{"a key that exists", "d/new", 5000, false, 2},
		{"a body over smallObjectMax", "d/large", smallObjectMax + 1, false, 3},
		{"a body of unknown size", "d/unsized", 100, true, 3},
	} {
		body := bytes.Repeat([]byte{byte(len(tc.what))}, tc.size)
		size := int64(tc.size)
		if tc.unsized {
			size = -1
		}
		// A replaced object's inactivation commits on its own: make it
		// reach the log before counting.
		s.gc.Flush()
		if err := s.Volume().Force(); err != nil {
			t.Fatal(err)
		}
		before := s.Volume().LogStats().Commits
		info, err := s.PutObject("bkt", tc.key, bytes.NewReader(body), size, meta)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if n := s.Volume().LogStats().Commits - before; n != tc.commits {
			t.Errorf("%s: %d commits, want %d", tc.what, n, tc.commits)
		}
		sum := md5.Sum(body)
		got, gotInfo := get(t, s, "bkt", tc.key)
		if got != string(body) || info.ETag != hex.EncodeToString(sum[:]) || gotInfo.ETag != info.ETag {
			t.Errorf("%s: read %d bytes, ETag %s (put said %s), want %d bytes", tc.what, len(got), gotInfo.ETag, info.ETag, len(body))
		}
		if gotInfo.Meta.ContentType != meta.ContentType || gotInfo.Meta.User["color"] != "blue" {
			t.Errorf("%s: metadata %+v", tc.what, gotInfo.Meta)
		}
	}
	noStaging(t, s)
}

// TestSmallPutsRacingForOneKey: PUTs of one new key from many goroutines
// all succeed (one creates it, the others replace it through a staging
// file) and the key ends with one of their bodies, whole.
func TestSmallPutsRacingForOneKey(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		key := fmt.Sprintf("p/k%d", round)
		var wg sync.WaitGroup
		bodies := map[string]bool{}
		for w := range 8 {
			body := strings.Repeat(fmt.Sprint(w), 1000+w)
			bodies[body] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.PutObject("bkt", key, strings.NewReader(body), int64(len(body)), Meta{}); err != nil {
					t.Errorf("put %s: %v", key, err)
				}
			}()
		}
		wg.Wait()
		if got, _ := get(t, s, "bkt", key); !bodies[got] {
			t.Fatalf("%s holds %d bytes that no PUT sent", key, len(got))
		}
	}
	noStaging(t, s)
}

// TestSmallPutRefusals: a small PUT to a new key refused by a full volume
// or by its bucket's hard quota stores nothing, changes no usage, leaves
// no staging file and keeps what was there; once room is made, it works.
func TestSmallPutRefusals(t *testing.T) {
	s, _ := newTestStore(t)
	for _, b := range []string{"full", "quota"} {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	body := bytes.Repeat([]byte("s"), 100<<10)
	put(t, s, "quota", "keep", string(body), Meta{})
	if err := s.quotas().Set("quota", BucketQuota{HardBytes: 256 << 10}); err != nil {
		t.Fatal(err)
	}
	before, err := s.quotas().Get("quota")
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "quota", "second", string(body), Meta{})
	if _, err := s.PutObject("quota", "third", bytes.NewReader(body), int64(len(body)), Meta{}); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("a small PUT over the hard limit: %v, want ErrQuotaExceeded", err)
	}
	if _, err := s.GetObject("quota", "third"); !errors.Is(err, ErrNoSuchKey) {
		t.Errorf("a refused PUT left its key: %v", err)
	}
	if err := s.DeleteObject("quota", "second"); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.quotas().Get("quota"); after.Bytes != before.Bytes || after.Objects != before.Objects {
		t.Errorf("usage %d bytes, %d objects after the refusal, want %d and %d", after.Bytes, after.Objects, before.Bytes, before.Objects)
	}
	put(t, s, "quota", "third", string(body), Meta{})

	// Fill the volume: one file beside the buckets takes most of it,
	// small PUTs the rest until one is refused.
	v := s.Volume()
	hog, err := v.Names().Create(v.Root(), "hog", xfs.Attrs{Mode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	st, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Files().Preallocate(hog, int64(st.FreeBlocks-st.ReservedBlocks-4000)*int64(st.BlockSize)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if n == 1000 {
			t.Fatal("1000 small PUTs fitted in 16 MB")
		}
		_, err := s.PutObject("full", fmt.Sprintf("k%d", n), bytes.NewReader(body), int64(len(body)), Meta{})
		if errors.Is(err, ErrNoSpace) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetObject("full", fmt.Sprintf("k%d", n)); !errors.Is(err, ErrNoSuchKey) {
		t.Errorf("a PUT refused for space left its key: %v", err)
	}
	if got, _ := get(t, s, "full", "k0"); got != string(body) {
		t.Errorf("an object put before changed to %d bytes", len(got))
	}
	if got, _ := get(t, s, "quota", "keep"); got != string(body) {
		t.Errorf("an object put before changed to %d bytes", len(got))
	}
	noStaging(t, s)
	if err := v.Names().Unlink(v.Root(), "hog"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "full", fmt.Sprintf("k%d", n), string(body), Meta{})
}
