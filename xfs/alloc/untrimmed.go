package alloc

import (
	"math/bits"
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
)

// untrimmed records, per AG, where free space may be that no trim has
// discarded since it was freed: one bit per granule of 2^shift blocks,
// set by every free and cleared by trim as it walks a range. It lives in
// memory only; at open every granule is set, so the first pass trims all
// free space once. Granules bound its size whatever the fragmentation: at
// most maxGranules bits per AG (32 KiB). A pass discards only inside
// marked granules, so a granule's size is how much already discarded
// free space next to a freed extent it may discard again: one block on
// AGs up to 1 GiB of 4 KiB blocks, and 2^shift blocks on larger ones.
type untrimmed struct {
	shift uint // immutable

	mu   sync.Mutex // guards bits
	bits [][]uint64 // per AG, one bit per granule
}

// maxGranules bounds the granules of one AG.
const maxGranules = 1 << 18

func newUntrimmed(g *format.Geometry) *untrimmed {
	shift := uint(0)
	for uint64(g.AgBlocks)>>shift > maxGranules {
		shift++
	}
	return newUntrimmedShift(g, shift)
}

// newUntrimmedShift records with granules of 2^shift blocks, all marked.
func newUntrimmedShift(g *format.Geometry, shift uint) *untrimmed {
	u := &untrimmed{shift: shift, bits: make([][]uint64, g.AgCount)}
	for ag := range u.bits {
		n := (uint64(g.AgSize(format.AgNumber(ag))) + 1<<shift - 1) >> shift
		words := make([]uint64, (n+63)/64)
		for i := range words {
			words[i] = ^uint64(0)
		}
		if r := n % 64; r != 0 {
			words[len(words)-1] = 1<<r - 1
		}
		u.bits[ag] = words
	}
	return u
}

// granules returns the granules [first, last] that [start, start+n)
// touches.
func (u *untrimmed) granules(start format.AgBlock, n uint64) (first, last uint64) {
	return uint64(start) >> u.shift, (uint64(start) + n - 1) >> u.shift
}

// mark records that [start, start+n) of ag may hold untrimmed free space.
func (u *untrimmed) mark(ag format.AgNumber, start format.AgBlock, n uint32) {
	if n == 0 || int(ag) >= len(u.bits) {
		return
	}
	first, last := u.granules(start, uint64(n))
	u.mu.Lock()
	defer u.mu.Unlock()
	w := u.bits[ag]
	for gr := first; gr <= last && gr/64 < uint64(len(w)); gr++ {
		w[gr/64] |= 1 << (gr % 64)
	}
}

// take returns the parts of [start, end) of ag inside marked granules,
// in order and merged, and clears the granules wholly inside the range:
// their space is about to be walked. Granules the range only partly
// covers stay marked, for the part outside it.
func (u *untrimmed) take(ag format.AgNumber, start, end format.AgBlock) [][2]format.AgBlock {
	if end <= start || int(ag) >= len(u.bits) {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	w := u.bits[ag]
	var runs [][2]format.AgBlock
	first, last := u.granules(start, uint64(end-start))
	for gr := first; gr <= last && gr/64 < uint64(len(w)); gr++ {
		if w[gr/64]&(1<<(gr%64)) == 0 {
			continue
		}
		gs, ge := gr<<u.shift, (gr+1)<<u.shift
		if gs >= uint64(start) && ge <= uint64(end) {
			w[gr/64] &^= 1 << (gr % 64)
		}
		rs, re := format.AgBlock(max(gs, uint64(start))), format.AgBlock(min(ge, uint64(end)))
		if n := len(runs); n > 0 && runs[n-1][1] == rs {
			runs[n-1][1] = re
		} else {
			runs = append(runs, [2]format.AgBlock{rs, re})
		}
	}
	return runs
}

// count returns how many blocks of ag lie in marked granules.
func (u *untrimmed) count(ag format.AgNumber) uint64 {
	if int(ag) >= len(u.bits) {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, x := range u.bits[ag] {
		n += bits.OnesCount64(x)
	}
	return uint64(n) << u.shift
}

// MarkUntrimmed records that [start, end) of ag may hold free space that
// was not discarded: a walk that stopped before its end gives back what
// it did not finish.
func (s *Space) MarkUntrimmed(ag format.AgNumber, start, end format.AgBlock) {
	if end > start {
		s.untrimmed.mark(ag, start, uint32(end-start))
	}
}

// TakeUntrimmed returns the parts of [start, end) of ag where free space
// may not have been discarded since it was freed (all of it after open),
// and forgets them: the caller walks them now, and gives back with
// MarkUntrimmed what it does not finish. Frees meanwhile mark their space
// again, and so does a walk for the busy extents it skips.
func (s *Space) TakeUntrimmed(ag format.AgNumber, start, end format.AgBlock) [][2]format.AgBlock {
	return s.untrimmed.take(ag, start, end)
}

// Untrimmed returns how many blocks of ag lie where free space may not
// have been discarded since it was freed: an upper bound of trim's
// backlog, in whole granules.
func (s *Space) Untrimmed(ag format.AgNumber) uint64 { return s.untrimmed.count(ag) }
