package store

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
)

// TestConditionalPutRace: of many writers putting one key with
// IfNoneMatch, exactly one succeeds and the object holds its body; every
// other gets ErrPreconditionFailed. Repeated with a seeded random writer
// count and key depth.
func TestConditionalPutRace(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(14))
	for round := 0; round < 6; round++ {
		writers := 8 + rng.Intn(24)
		key := fmt.Sprintf("r%d/%s", round, strings.Repeat("d/", rng.Intn(3))) + "obj"
		if rng.Intn(3) == 0 {
			key += "/" // a folder marker: the same rule applies
		}
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := ""
				if !strings.HasSuffix(key, "/") {
					body = fmt.Sprintf("writer %d", w)
				}
				_, errs[w] = s.PutObjectIf("bkt", key, strings.NewReader(body), int64(len(body)), Meta{}, Precondition{IfNoneMatch: true})
			}()
		}
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, ErrPreconditionFailed):
				t.Fatalf("round %d: writer %d: %v, want ErrPreconditionFailed", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		if !strings.HasSuffix(key, "/") {
			if got, _ := get(t, s, "bkt", key); got != fmt.Sprintf("writer %d", winner) {
				t.Fatalf("round %d: object holds %q, winner was %d", round, got, winner)
			}
		}
	}
}

// TestConditionalPutIfMatch: IfMatch replaces only the object with that
// ETag; without an object it is ErrNoSuchKey; a failed write stores nothing.
func TestConditionalPutIfMatch(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	putIf := func(key, body string, cond Precondition) error {
		_, err := s.PutObjectIf("bkt", key, strings.NewReader(body), int64(len(body)), Meta{}, cond)
		return err
	}
	if err := putIf("k", "x", Precondition{IfMatch: `"abc"`}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("IfMatch without object: %v, want ErrNoSuchKey", err)
	}
	first := put(t, s, "bkt", "k", "one", Meta{})
	if err := putIf("k", "two", Precondition{IfMatch: "0123"}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("IfMatch with another ETag: %v", err)
	}
	if err := putIf("k", "two", Precondition{IfNoneMatch: true}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("IfNoneMatch over an object: %v", err)
	}
	if got, _ := get(t, s, "bkt", "k"); got != "one" {
		t.Fatalf("failed conditional writes changed the object: %q", got)
	}
	if err := putIf("k", "two", Precondition{IfMatch: `"` + first.ETag + `"`}); err != nil {
		t.Fatalf("IfMatch with the current ETag: %v", err)
	}
	if got, _ := get(t, s, "bkt", "k"); got != "two" {
		t.Fatalf("object after IfMatch put: %q", got)
	}
	if err := s.CheckPrecondition("bkt", "k", Precondition{IfNoneMatch: true}); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("CheckPrecondition: %v", err)
	}
	if err := s.CheckPrecondition("bkt", "absent", Precondition{IfNoneMatch: true}); err != nil {
		t.Fatalf("CheckPrecondition on a missing key: %v", err)
	}
}

// TestConditionalComplete: a completion that fails its condition before
// joining leaves the upload intact, so it can complete unconditionally.
func TestConditionalComplete(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "mp", "old", Meta{})
	up, parts := uploadParts(t, s, "bkt", "mp", Meta{}, []byte("new content"))
	_, err := s.multipart().CompleteWith("bkt", "mp", up.UploadID, parts, CompleteOptions{If: Precondition{IfNoneMatch: true}})
	if !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("complete over an object with IfNoneMatch: %v", err)
	}
	if got, _ := get(t, s, "bkt", "mp"); got != "old" {
		t.Fatalf("failed completion changed the object: %q", got)
	}
	if _, err := s.multipart().CompleteWith("bkt", "mp", up.UploadID, parts, CompleteOptions{If: Precondition{IfMatch: multipartETagOf(t, s)}}); err != nil {
		t.Fatalf("complete with IfMatch of the current ETag: %v", err)
	}
	if got, _ := get(t, s, "bkt", "mp"); got != "new content" {
		t.Fatalf("object after completion: %q", got)
	}
}

func multipartETagOf(t *testing.T, s *Store) string {
	t.Helper()
	info, err := s.HeadObject("bkt", "mp")
	if err != nil {
		t.Fatal(err)
	}
	return info.ETag
}
