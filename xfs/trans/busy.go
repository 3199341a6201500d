package trans

import (
	"cmp"
	"slices"
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
)

// Extent is a run of blocks inside one AG.
type Extent struct {
	AG    format.AgNumber
	Start format.AgBlock
	Len   uint32
}

// End is the first block after the extent.
func (e Extent) End() uint64 { return uint64(e.Start) + uint64(e.Len) }

// Busy tracks extents freed by committed transactions that are not yet
// durable. Allocators must not hand them out again until then, or a crash
// could leave the old owner's metadata pointing at new data. Trim skips
// them as well.
type Busy struct {
	mu   sync.Mutex // guards byAG
	byAG map[format.AgNumber][]busyExtent
}

type busyExtent struct {
	Extent
	seq uint64 // the log ticket of the commit that freed it
}

func (b *Busy) init() { b.byAG = make(map[format.AgNumber][]busyExtent) }

// add records extents freed by the commit with log ticket seq.
func (b *Busy) add(exts []Extent, seq uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	touched := map[format.AgNumber]bool{}
	for _, e := range exts {
		b.byAG[e.AG] = append(b.byAG[e.AG], busyExtent{e, seq})
		touched[e.AG] = true
	}
	// One sort per AG and commit: an inactivation frees hundreds of
	// extents at once, and a list may hold thousands until the log is
	// forced.
	for ag := range touched {
		slices.SortStableFunc(b.byAG[ag], func(x, y busyExtent) int { return cmp.Compare(x.Start, y.Start) })
	}
}

// Clear forgets extents freed by commits up to ticket seq, once those
// commits are durable.
func (b *Busy) Clear(seq uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ag, list := range b.byAG {
		kept := list[:0]
		for _, e := range list {
			if e.seq > seq {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(b.byAG, ag)
		} else {
			b.byAG[ag] = kept
		}
	}
}

// Overlap returns the busy extents of ag that overlap [start, start+n).
func (b *Busy) Overlap(ag format.AgNumber, start format.AgBlock, n uint32) []Extent {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Extent
	end := uint64(start) + uint64(n)
	for _, e := range b.byAG[ag] {
		if uint64(e.Start) >= end {
			break
		}
		if e.End() > uint64(start) {
			out = append(out, e.Extent)
		}
	}
	return out
}

// Len counts busy extents (for tests and statistics).
func (b *Busy) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, l := range b.byAG {
		n += len(l)
	}
	return n
}
