package admin

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/xfs3/xfs3/store"
)

// Counts are the objects of every bucket as a walk of their version
// listings found them. Nothing on the write path counts objects (a
// bucket's quota counts inodes, prefix directories and upload parts
// among them), so the counts come from a walk, kept between requests
// (Counter).
type Counts struct {
	Objects       uint64 // keys whose current version is an object: what ListObjects lists
	Versions      uint64 // versions that are objects, current or not (without delete markers)
	DeleteMarkers uint64
	// Started and Ended bound the walk: the counts are of keys as the
	// walk passed them. Took is the time spent walking, which is less
	// than Ended-Started when the walk was resumed by several requests.
	Started, Ended time.Time
	Took           time.Duration
}

// ErrCounting: no walk has ended yet; one is under way.
var ErrCounting = errors.New("counting objects: the first walk of the buckets is under way; ask again")

// Counter keeps the last counts and the walk that will replace them.
// A request that finds the counts stale walks for at most its budget
// and leaves the walk where it stopped for the next request, so no
// request walks longer than the budget, no goroutine outlives a request
// and the time spent walking stays a tenth of the time between walks
// (see refreshAfter). Its zero value is ready; it is safe for concurrent
// use, one request walking at a time (the others take the last counts).
type Counter struct {
	// PageSize is the versions read per listing call (0: 1000).
	PageSize int

	mu      sync.Mutex // guards the fields below
	last    *Counts    // the last walk that ended; nil before the first
	next    *walk      // the walk under way, between requests; nil: none
	walking bool       // a request is walking next now (it is not in next meanwhile)
}

// walk is a walk of the buckets' version listings under way.
type walk struct {
	counts  Counts
	buckets []string // the buckets left, the first being walked
	key, id string   // where the listing of buckets[0] resumes
}

// MinCountAge is the least time counts are kept before a request walks
// again; longer when walks are long (refreshAfter).
const MinCountAge = time.Minute

// refreshAfter is how long counts stay fresh: at least MinCountAge, and
// ten times the walk that made them, so walking takes at most a tenth
// of the time however often the document is asked for.
func refreshAfter(c *Counts) time.Duration { return max(MinCountAge, 10*c.Took) }

// Get returns the counts, walking first when they are stale or when
// fresh asks for a new walk (mc's no-cache=true): at least one listing
// page, then until budget has passed. When the walk does not end in
// time, Get returns the last counts that did, or ErrCounting before the
// first; a failed walk is dropped and its error returned (with the last
// counts, if any).
func (c *Counter) Get(st *store.Store, now func() time.Time, budget time.Duration, fresh bool) (Counts, error) {
	c.mu.Lock()
	if c.walking || c.last != nil && c.next == nil && !fresh && now().Sub(c.last.Started) < refreshAfter(c.last) {
		defer c.mu.Unlock()
		return c.lastLocked()
	}
	w := c.next
	c.next, c.walking = nil, true
	c.mu.Unlock()

	err := c.advance(st, &w, now, budget)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.walking = false
	switch {
	case err != nil:
		last, _ := c.lastLocked()
		return last, err
	case len(w.buckets) == 0:
		w.counts.Ended = now()
		c.last = &w.counts
	default:
		c.next = w
	}
	return c.lastLocked()
}

func (c *Counter) lastLocked() (Counts, error) {
	if c.last == nil {
		return Counts{}, ErrCounting
	}
	return *c.last, nil
}

// advance walks *w (a new walk when nil) for at least one page and
// until budget has passed or the walk has ended.
func (c *Counter) advance(st *store.Store, w **walk, now func() time.Time, budget time.Duration) error {
	start := now()
	if *w == nil {
		bs, err := st.ListBuckets()
		if err != nil {
			return fmt.Errorf("counting objects: %w", err)
		}
		nw := &walk{counts: Counts{Started: start}}
		for _, b := range bs {
			nw.buckets = append(nw.buckets, b.Name)
		}
		*w = nw
	}
	page := c.PageSize
	if page <= 0 {
		page = 1000
	}
	cur := *w
	defer func() { cur.counts.Took += now().Sub(start) }()
	for len(cur.buckets) > 0 {
		res, err := st.Versions().List(cur.buckets[0], store.VersionListOptions{
			KeyMarker: cur.key, VersionIDMarker: cur.id, MaxKeys: page})
		if errors.Is(err, store.ErrNoSuchBucket) {
			res, err = store.VersionListResult{}, nil // deleted since the walk began
		}
		if err != nil {
			return fmt.Errorf("counting objects in bucket %q: %w", cur.buckets[0], err)
		}
		for _, v := range res.Versions {
			switch {
			case v.DeleteMarker:
				cur.counts.DeleteMarkers++
			case v.IsLatest:
				cur.counts.Objects++
				cur.counts.Versions++
			default:
				cur.counts.Versions++
			}
		}
		if res.IsTruncated && res.NextKeyMarker == "" {
			return fmt.Errorf("counting objects in bucket %q: a truncated listing without a next marker", cur.buckets[0])
		}
		if res.IsTruncated {
			cur.key, cur.id = res.NextKeyMarker, res.NextVersionIDMarker
		} else {
			cur.buckets, cur.key, cur.id = cur.buckets[1:], "", ""
		}
		if now().Sub(start) >= budget {
			break
		}
	}
	return nil
}
