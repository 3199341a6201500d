package admin

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	img := filepath.Join(t.TempDir(), "count.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func put(t *testing.T, st *store.Store, bucket, key string) {
	t.Helper()
	if _, err := st.PutObject(bucket, key, strings.NewReader(key), int64(len(key)), store.Meta{}); err != nil {
		t.Fatal(err)
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestCounterWalk: the counts are those of the version listings (a key
// whose newest version is a delete marker is no object); a walk longer
// than the budget is resumed by the next calls, one page each, and the
// last counts are kept until they are stale or a fresh walk is asked.
func TestCounterWalk(t *testing.T) {
	st := newStore(t)
	for _, b := range []string{"plain", "versioned", "empty"} {
		if err := st.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a", "p/", "p/q", "p/r/s"} {
		put(t, st, "plain", k)
	}
	if err := st.Versions().SetState("versioned", store.VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	put(t, st, "versioned", "k")
	put(t, st, "versioned", "k")
	put(t, st, "versioned", "gone")
	if _, err := st.Versions().Delete("versioned", "gone", ""); err != nil {
		t.Fatal(err)
	}
	want := Counts{Objects: 5, Versions: 7, DeleteMarkers: 1}

	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	c := &Counter{PageSize: 1}
	// Budget 0: one page of one version per call. 8 versions and
	// markers, then the end of each of three buckets' listings.
	calls := 0
	var got Counts
	for {
		calls++
		var err error
		got, err = c.Get(st, clock.now, 0, false)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrCounting) || calls > 20 {
			t.Fatalf("call %d: %v", calls, err)
		}
		clock.t = clock.t.Add(time.Second)
	}
	if calls < 8 {
		t.Errorf("the walk ended after %d calls of one page", calls)
	}
	if got.Objects != want.Objects || got.Versions != want.Versions || got.DeleteMarkers != want.DeleteMarkers {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if !got.Started.Equal(time.Unix(1_800_000_000, 0)) || !got.Ended.Equal(clock.t) {
		t.Errorf("walk from %v to %v", got.Started, got.Ended)
	}

	// Fresh counts are kept; stale ones, or a fresh walk asked for, are
	// walked again (here within the budget).
	put(t, st, "empty", "new")
	if again, err := c.Get(st, clock.now, time.Hour, false); err != nil || again != got {
		t.Errorf("fresh counts walked again: %+v, %v", again, err)
	}
	if again, err := c.Get(st, clock.now, time.Hour, true); err != nil || again.Objects != want.Objects+1 {
		t.Errorf("no-cache: %+v, %v", again, err)
	}
	put(t, st, "empty", "newer")
	clock.t = clock.t.Add(MinCountAge)
	if again, err := c.Get(st, clock.now, time.Hour, false); err != nil || again.Objects != want.Objects+2 {
		t.Errorf("after %v: %+v, %v", MinCountAge, again, err)
	}
}

// TestCounterRefreshAfter: a long walk is repeated at most every ten
// times its length.
func TestCounterRefreshAfter(t *testing.T) {
	for _, c := range []struct {
		took, want time.Duration
	}{
		{0, MinCountAge},
		{time.Second, MinCountAge},
		{time.Minute, 10 * time.Minute},
	} {
		if got := refreshAfter(&Counts{Took: c.took}); got != c.want {
			t.Errorf("walk of %v: refreshed after %v, want %v", c.took, got, c.want)
		}
	}
}

// TestCounterBucketGone: a bucket removed during a paused walk is
// skipped, not an error.
func TestCounterBucketGone(t *testing.T) {
	st := newStore(t)
	for i := range 3 {
		b := fmt.Sprintf("bucket%d", i)
		if err := st.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		put(t, st, b, "k")
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	c := &Counter{PageSize: 1}
	if _, err := c.Get(st, clock.now, 0, false); !errors.Is(err, ErrCounting) {
		t.Fatalf("first page: %v", err)
	}
	if err := st.DeleteObject("bucket2", "k"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteBucket("bucket2"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(st, clock.now, time.Hour, false)
	if err != nil || got.Objects != 2 || got.Versions != 2 {
		t.Errorf("counts %+v, %v; want the 2 objects left", got, err)
	}
}

// TestCounterConcurrent: requests asking at once never walk together
// (the others get the last counts or ErrCounting), and the walk they
// share ends with the exact counts. Run under -race.
func TestCounterConcurrent(t *testing.T) {
	st := newStore(t)
	if err := st.CreateBucket("many"); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		put(t, st, "many", fmt.Sprintf("k%02d", i))
	}
	c := &Counter{PageSize: 3}
	done := make(chan error)
	for range 8 {
		go func() {
			var err error
			for range 20 {
				if _, e := c.Get(st, time.Now, 0, true); e != nil && !errors.Is(e, ErrCounting) {
					err = e
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	got, err := c.Get(st, time.Now, time.Hour, true)
	if err != nil || got.Objects != 40 || got.Versions != 40 || got.DeleteMarkers != 0 {
		t.Errorf("counts %+v, %v; want 40 objects", got, err)
	}
}

// BenchmarkCounterWalk is one whole walk of a bucket of 5,000 objects
// under 50 prefixes: what a stale count costs an info request.
func BenchmarkCounterWalk(b *testing.B) {
	img := filepath.Join(b.TempDir(), "bench.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		b.Fatal(err)
	}
	st, err := store.OpenWith(img, store.Options{AckBeforeDurable: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateBucket("bench"); err != nil {
		b.Fatal(err)
	}
	const n = 5000
	for i := range n {
		if _, err := st.PutObject("bench", fmt.Sprintf("p%02d/k%05d", i%50, i), strings.NewReader("x"), 1, store.Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		var c Counter
		got, err := c.Get(st, time.Now, time.Hour, false)
		if err != nil || got.Objects != n {
			b.Fatalf("%+v, %v", got, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/version")
}
