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
// them as well: a discard must not destroy what the old owner still holds
// until its free is durable.
//
// Trim also marks the free extents it is discarding (MarkDiscarding, under
// the AG's AGF lock), so that allocators avoid them until the discard has
// completed and ClearDiscarding drops them: a block must not be handed out
// and written while a discard of it is still on its way.
type Busy struct {
	mu          sync.Mutex // guards byAG and discarding
	byAG        map[format.AgNumber][]busyExtent
	discarding  int        // entries marked by trim
	discardGen  uint64     // ClearDiscarding calls so far
	discardDone *sync.Cond // on mu: broadcast when discards complete
}

type busyExtent struct {
	Extent
	seq        uint64 // the log ticket of the commit that freed it
	discarding bool   // marked by trim, not by a free; Clear leaves it
}

func (b *Busy) init() {
	b.byAG = make(map[format.AgNumber][]busyExtent)
	b.discardDone = sync.NewCond(&b.mu)
}

// add records extents freed by the commit with log ticket seq.
func (b *Busy) add(exts []Extent, seq uint64) { b.insert(exts, busyExtent{seq: seq}) }

// insert records exts, each like proto.
func (b *Busy) insert(exts []Extent, proto busyExtent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	touched := map[format.AgNumber]bool{}
	for _, e := range exts {
		x := proto
		x.Extent = e
		b.byAG[e.AG] = append(b.byAG[e.AG], x)
		touched[e.AG] = true
	}
	if proto.discarding {
		b.discarding += len(exts)
	}
	// One sort per AG and commit: an inactivation frees hundreds of
	// extents at once, and a list may hold thousands until the log is
	// forced.
	for ag := range touched {
		slices.SortStableFunc(b.byAG[ag], func(x, y busyExtent) int { return cmp.Compare(x.Start, y.Start) })
	}
}

// MarkDiscarding makes free extents busy while trim discards them. The
// caller holds the AGF of every AG involved, and has checked that none of
// them overlaps a busy extent.
func (b *Busy) MarkDiscarding(exts []Extent) {
	if len(exts) > 0 {
		b.insert(exts, busyExtent{discarding: true})
	}
}

// ClearDiscarding ends the busy state MarkDiscarding gave exts, once
// their discard has completed (or was given up).
func (b *Busy) ClearDiscarding(exts []Extent) {
	if len(exts) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	drop := make(map[Extent]int, len(exts))
	ags := map[format.AgNumber]bool{}
	for _, e := range exts {
		drop[e]++
		ags[e.AG] = true
	}
	for ag := range ags {
		list := b.byAG[ag]
		kept := list[:0]
		for _, x := range list {
			if x.discarding && drop[x.Extent] > 0 {
				drop[x.Extent]--
				b.discarding--
				continue
			}
			kept = append(kept, x)
		}
		if len(kept) == 0 {
			delete(b.byAG, ag)
		} else {
			b.byAG[ag] = kept
		}
	}
	b.discardGen++
	b.discardDone.Broadcast()
}

// WaitDiscards returns once trim has completed a discard since the call,
// or none is marked: for an allocation that found only busy space after
// making every free durable. Trim marks at most a couple of batches at a
// time, so the wait is about one discard, however long the pass.
func (b *Busy) WaitDiscards() {
	b.mu.Lock()
	defer b.mu.Unlock()
	gen := b.discardGen
	for b.discarding > 0 && b.discardGen == gen {
		b.discardDone.Wait()
	}
}

// Discarding counts the extents trim has marked (for tests and statistics).
func (b *Busy) Discarding() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.discarding
}

// Clear forgets extents freed by commits up to ticket seq, once those
// commits are durable.
func (b *Busy) Clear(seq uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ag, list := range b.byAG {
		kept := list[:0]
		for _, e := range list {
			if e.seq > seq || e.discarding {
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
