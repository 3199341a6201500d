package dev

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrDiscardUnsupported says the storage under a device cannot take
// discards back: the host filesystem of a volume file cannot punch holes,
// or a block device has no discard (EOPNOTSUPP). It is a kind, not a
// failure: trim reports it instead of failing.
var ErrDiscardUnsupported = errors.New("discard is not supported by the device")

// Discarder is a device that can give ranges back to the storage under it.
type Discarder interface {
	// Discard says [off, off+n) holds nothing of value: reads of it
	// return zeros or the old bytes afterwards, never anything else.
	// The range is a multiple of DiscardGranularity (DiscardRanges
	// aligns it).
	Discard(off, n int64) error
	// DiscardGranularity is the unit, in bytes, that the storage frees:
	// a smaller or unaligned request frees nothing, or writes zeros.
	DiscardGranularity() int64
}

// Range is a byte range of a device.
type Range struct{ Off, Len int64 }

// End is the first byte after the range.
func (r Range) End() int64 { return r.Off + r.Len }

// DiscardStats counts what DiscardRanges did.
type DiscardStats struct {
	Requests  int64 // discard requests issued (after merging)
	Bytes     int64 // bytes those requests covered
	Unaligned int64 // bytes left out because they fill no whole granule
	Errors    int64 // requests that failed
}

// Add adds o's counts to s.
func (s *DiscardStats) Add(o DiscardStats) {
	s.Requests += o.Requests
	s.Bytes += o.Bytes
	s.Unaligned += o.Unaligned
	s.Errors += o.Errors
}

// DiscardRanges discards ranges on d: sorted, merged where they touch or
// overlap, and each shrunk inwards to d's granularity, so that nothing
// outside the ranges is ever discarded. A failed request is counted and
// the others still go out; the first error is returned. A device that
// cannot discard fails at once with ErrDiscardUnsupported.
func DiscardRanges(d Device, ranges []Range) (DiscardStats, error) {
	var st DiscardStats
	dd, ok := d.(Discarder)
	if !ok {
		return st, ErrDiscardUnsupported
	}
	gran := max(dd.DiscardGranularity(), 1)
	var first error
	for _, r := range MergeRanges(ranges) {
		a := Align(r, gran)
		st.Unaligned += r.Len - a.Len
		if a.Len == 0 {
			continue
		}
		st.Requests++
		if err := dd.Discard(a.Off, a.Len); err != nil {
			if errors.Is(err, ErrDiscardUnsupported) {
				return st, err
			}
			st.Errors++
			if first == nil {
				first = fmt.Errorf("discard %d bytes at %d: %w", a.Len, a.Off, err)
			}
			continue
		}
		st.Bytes += a.Len
	}
	return st, first
}

// MergeRanges returns ranges sorted by offset, with ranges that touch or
// overlap merged and empty ones dropped.
func MergeRanges(ranges []Range) []Range {
	out := make([]Range, 0, len(ranges))
	for _, r := range ranges {
		if r.Len > 0 {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Range) int { return cmp.Compare(a.Off, b.Off) })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && r.Off <= merged[n-1].End() {
			merged[n-1].Len = max(merged[n-1].End(), r.End()) - merged[n-1].Off
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// Align shrinks r to the whole granules of size gran inside it; the
// result is empty (Len 0) when it holds none.
func Align(r Range, gran int64) Range {
	start := (r.Off + gran - 1) / gran * gran
	end := r.End() / gran * gran
	if end <= start {
		return Range{Off: start}
	}
	return Range{Off: start, Len: end - start}
}
