package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
)

// TestOverwriteAtomic overwrites one key with uniform bodies of alternating
// bytes while readers check that every read sees one whole body.
func TestOverwriteAtomic(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	const size = 2*chunkSize + 12345 // several chunks
	body := func(c byte) []byte { return bytes.Repeat([]byte{c}, size) }
	if _, err := s.PutObject("bkt", "k/obj", bytes.NewReader(body('A')), size, Meta{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				o, err := s.GetObject("bkt", "k/obj")
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(o.Reader())
				o.Close()
				if err != nil {
					errs <- err
					return
				}
				if len(b) != size || !bytes.Equal(b, body(b[0])) {
					errs <- fmt.Errorf("read a mixed or short body (%d bytes, first %q)", len(b), b[0])
					return
				}
			}
		}()
	}
	for i := 0; i < 30; i++ {
		c := byte('A' + i%3)
		if _, err := s.PutObject("bkt", "k/obj", bytes.NewReader(body(c)), -1, Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.gc.Flush()
	if n := s.v.Space().Unlinked(); n != 0 {
		t.Fatalf("%d replaced objects not freed after their readers closed", n)
	}
}

// TestConcurrentPutDelete runs puts and deletes of keys sharing parent
// directories from several goroutines: parent creation and pruning must
// not race.
func TestConcurrentPutDelete(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	if err := inParallel(4, func(g int) error {
		for i := 0; i < 40; i++ {
			key := fmt.Sprintf("p/q/%d-%d", g, i%3)
			if _, err := s.PutObject("bkt", key, bytes.NewReader([]byte(key)), int64(len(key)), Meta{}); err != nil {
				return err
			}
			if err := s.DeleteObject("bkt", key); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if err := s.DeleteBucket("bkt"); err != nil && !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("bucket not empty at the end: %v", err)
	}
}

// inParallel runs fn(0) to fn(n-1) in goroutines of their own and returns
// the first error any of them returned.
func inParallel(n int, fn func(w int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- fn(w)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
