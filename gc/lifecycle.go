package gc

import (
	"context"
	"errors"
	"time"
)

// Expirer is what the lifecycle scanner needs of a store: bounded
// batches of a pass over the buckets that have lifecycle rules, and a
// place to keep where a pass stands across restarts.
type Expirer interface {
	// ExpireBatch does one batch of a pass from cursor ("" starts a
	// pass) judged at now, and returns the cursor of the next batch (""
	// when the pass has ended) and what the batch did. A batch looks at
	// a bounded number of versions and uploads.
	ExpireBatch(ctx context.Context, cursor string, now time.Time) (next string, c LifecycleCounts, err error)
	// SaveCursor records cursor durably; LoadCursor returns the last
	// one saved ("" when none, or when the last pass ended).
	SaveCursor(cursor string) error
	LoadCursor() (string, error)
}

// LifecycleCounts is what lifecycle passes did.
type LifecycleCounts struct {
	Scanned  int64 // versions and uploads looked at
	Expired  int64 // current objects expired: deleted, or a delete marker put on top
	Versions int64 // noncurrent versions (and noncurrent markers) deleted
	Markers  int64 // expired delete markers (nothing left below) removed
	Uploads  int64 // abandoned multipart uploads aborted
	// Locked counts expiries object lock refused: the version stays.
	Locked     int64
	BytesFreed int64 // bytes of the objects and versions deleted
	Errors     int64 // expiries that failed otherwise (the pass goes on)
}

// Add adds o to c.
func (c *LifecycleCounts) Add(o LifecycleCounts) {
	c.Scanned += o.Scanned
	c.Expired += o.Expired
	c.Versions += o.Versions
	c.Markers += o.Markers
	c.Uploads += o.Uploads
	c.Locked += o.Locked
	c.BytesFreed += o.BytesFreed
	c.Errors += o.Errors
}

// Lifecycle scanner defaults.
const (
	// DefaultLifecycleBackoffRatio: while the foreground changes things,
	// a pass pauses 39 times as long as each batch took, so it works a
	// fortieth of the time. A batch costs the writers more than its own
	// time (its deletes' inode frees run on the gc workers, its listing
	// and cursor save contend for the same locks and log): at 9, 14 and
	// 24, 8 PUT writers lost a median around 10%, with rounds past 20%
	// (docs/benchmarks.md, Lifecycle); at 39 a median of 3.8%. With no
	// writers a pass does not pause at all.
	DefaultLifecycleBackoffRatio = 39
	DefaultLifecycleBackoffMin   = 5 * time.Millisecond
	DefaultLifecycleBackoffMax   = 2 * time.Second
)

// LifecycleOptions configure a Lifecycle scanner; zero values take the
// defaults above. Now is also the clock rules are judged by.
type LifecycleOptions = PassOptions[LifecycleCounts]

// LifecyclePass is one lifecycle pass, running or done.
type LifecyclePass = Pass[LifecycleCounts]

// LifecycleStatus is the pass under way, the last one that ended, and
// the totals since the scanner started.
type LifecycleStatus = Status[LifecycleCounts]

// ErrLifecycleClosed: the scanner (its store) is closing.
var ErrLifecycleClosed = errors.New("the lifecycle scanner is closed")

// Lifecycle runs lifecycle passes one at a time: every Interval, and on
// demand (Start). A pass resumes from the cursor its Expirer saved, so a
// restart in the middle of a pass goes on where it stopped. Close stops
// the pass under way (its cursor is saved after each batch) and waits.
type Lifecycle struct {
	*passes[LifecycleCounts, *LifecycleCounts]
}

// NewLifecycle starts a scanner over e; Close it before the store.
func NewLifecycle(e Expirer, opt LifecycleOptions) *Lifecycle {
	opt = opt.withDefaults(DefaultLifecycleBackoffRatio, DefaultLifecycleBackoffMin, DefaultLifecycleBackoffMax)
	src := batches[LifecycleCounts]{
		batch: func(ctx context.Context, cursor string) (string, LifecycleCounts, error) {
			return e.ExpireBatch(ctx, cursor, opt.Now()) // rules are judged by the pass's clock
		},
		save: e.SaveCursor,
		load: e.LoadCursor,
	}
	return &Lifecycle{startPasses[LifecycleCounts, *LifecycleCounts](src, opt, ErrLifecycleClosed)}
}
