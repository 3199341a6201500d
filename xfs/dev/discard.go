package dev

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
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
	return DiscardRangesWith(d, ranges, DiscardOptions{})
}

// DiscardOptions shape the requests of DiscardRangesWith.
type DiscardOptions struct {
	// MaxRequest bounds the bytes of one request (0: no bound); it is
	// rounded down to whole granules, and is at least one. A request
	// holds the storage's lock of what it discards (a volume file's
	// inode) for its whole length, so writes to the volume wait for it.
	MaxRequest int64
	// After, when set, is called after every request with what it
	// covered, how long it took and its error: a caller may pause in it
	// to leave the storage to others between requests.
	After func(r Range, took time.Duration, err error)
}

// DiscardRangesWith is DiscardRanges with requests of at most
// o.MaxRequest bytes, each reported to o.After.
func DiscardRangesWith(d Device, ranges []Range, o DiscardOptions) (DiscardStats, error) {
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
		for _, piece := range SplitRange(a, o.MaxRequest, gran) {
			st.Requests++
			start := time.Now()
			err := dd.Discard(piece.Off, piece.Len)
			if o.After != nil {
				o.After(piece, time.Since(start), err)
			}
			if errors.Is(err, ErrDiscardUnsupported) {
				return st, err
			}
			if err != nil {
				st.Errors++
				if first == nil {
					first = fmt.Errorf("discard %d bytes at %d: %w", piece.Len, piece.Off, err)
				}
				continue
			}
			st.Bytes += piece.Len
		}
	}
	return st, first
}

// SplitRange cuts r into consecutive pieces of at most limit bytes (0: one
// piece), limit rounded down to a multiple of gran and at least gran; an
// empty r gives none.
func SplitRange(r Range, limit, gran int64) []Range {
	if r.Len <= 0 {
		return nil
	}
	if limit <= 0 || limit >= r.Len {
		return []Range{r}
	}
	gran = max(gran, 1)
	limit = max(limit/gran*gran, gran)
	out := make([]Range, 0, (r.Len+limit-1)/limit)
	for off := r.Off; off < r.End(); off += limit {
		out = append(out, Range{Off: off, Len: min(limit, r.End()-off)})
	}
	return out
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
