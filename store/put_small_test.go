package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestSmallPutCommits: a PUT of at most smallObjectMax bytes to a new key
// is one commit (created whole); an overwrite, a larger body and a body
// of unknown size go through a staging file (three). Each reads back
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
		{"a key that exists", "d/new", 5000, false, 3},
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
	checkNoStagingLeft(t, s)
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
	checkNoStagingLeft(t, s)
}

// checkNoStagingLeft fails if a staging directory holds a file.
func checkNoStagingLeft(t *testing.T, s *Store) {
	t.Helper()
	for i := range stagingDirs {
		ents, err := s.v.ReadDir(s.staging[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				t.Errorf("staging directory %d holds %q", i, e.Name)
			}
		}
	}
}
