package gc

import (
	"context"
	"errors"
	"time"
)

// Scrubbable is what the scrubber needs of a store: bounded batches of a
// pass over the volume's metadata and the objects' bytes, and a place to
// keep where a pass stands across restarts.
type Scrubbable interface {
	// ScrubBatch does one batch of a pass from cursor ("" starts a
	// pass) and returns the cursor of the next batch ("" when the pass
	// has ended) and what the batch did. Damage it finds is counted and
	// recorded by the store, not returned as an error.
	ScrubBatch(ctx context.Context, cursor string) (next string, c ScrubCounts, err error)
	// SaveCursor records cursor durably; LoadCursor returns the last
	// one saved ("" when none, or when the last pass ended).
	SaveCursor(cursor string) error
	LoadCursor() (string, error)
}

// ScrubCounts is what scrub passes did.
type ScrubCounts struct {
	// Metadata: AG header sectors, btree, directory and xattr blocks and
	// in-use inodes checked, and structures found sick.
	AGHeaders      int64 `json:"ag_headers"`
	Blocks         int64 `json:"blocks"`
	Inodes         int64 `json:"inodes"`
	SickStructures int64 `json:"sick_structures"`
	// Objects (every version) read and checked against their stored
	// checksums, their bytes, those found rotten, and those that could
	// not be read (an I/O error, a sick inode: the pass goes on).
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
	Rotten  int64 `json:"rotten"`
	Errors  int64 `json:"errors"`
}

// Add adds o to c.
func (c *ScrubCounts) Add(o ScrubCounts) {
	c.AGHeaders += o.AGHeaders
	c.Blocks += o.Blocks
	c.Inodes += o.Inodes
	c.SickStructures += o.SickStructures
	c.Objects += o.Objects
	c.Bytes += o.Bytes
	c.Rotten += o.Rotten
	c.Errors += o.Errors
}

// Damaged reports whether the counts hold damage found.
func (c ScrubCounts) Damaged() bool { return c.SickStructures > 0 || c.Rotten > 0 }

// Scrubber defaults.
const (
	// DefaultScrubBackoffRatio: while the foreground changes things, a
	// pass pauses 19 times as long as each batch took, so it works a
	// twentieth of the time. A batch only reads, but it holds an AG
	// header or an inode shared and competes for the storage, the
	// caches and the CPU the writers need (docs/benchmarks.md, Scrub).
	DefaultScrubBackoffRatio = 19
	DefaultScrubBackoffMin   = 5 * time.Millisecond
	DefaultScrubBackoffMax   = 2 * time.Second
)

// ScrubOptions configure a Scrubber; zero values take the defaults
// above.
type ScrubOptions = PassOptions[ScrubCounts]

// ScrubPass is one scrub pass, running or done.
type ScrubPass = Pass[ScrubCounts]

// ScrubStatus is the pass under way, the last one that ended, and the
// totals since the scrubber started.
type ScrubStatus = Status[ScrubCounts]

// ErrScrubClosed: the scrubber (its store) is closing.
var ErrScrubClosed = errors.New("the scrubber is closed")

// Scrubber runs scrub passes one at a time: every Interval, and on
// demand (Start). It has the Lifecycle scanner's shape (passes.go): a
// pass resumes from the cursor its Scrubbable saved, is paced by the
// shared pacer between batches, and Close stops it after the batch
// under way.
type Scrubber struct {
	*passes[ScrubCounts, *ScrubCounts]
}

// NewScrubber starts a scrubber over src; Close it before the store.
func NewScrubber(src Scrubbable, opt ScrubOptions) *Scrubber {
	opt = opt.withDefaults(DefaultScrubBackoffRatio, DefaultScrubBackoffMin, DefaultScrubBackoffMax)
	b := batches[ScrubCounts]{batch: src.ScrubBatch, save: src.SaveCursor, load: src.LoadCursor}
	return &Scrubber{startPasses[ScrubCounts, *ScrubCounts](b, opt, ErrScrubClosed)}
}
