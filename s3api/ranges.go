package s3api

import (
	"strconv"
	"strings"
)

// byteRange is a resolved, satisfiable range of an object: first and last
// byte offsets, inclusive.
type byteRange struct{ first, last int64 }

func (b byteRange) length() int64 { return b.last - b.first + 1 }

// contentRange is the Content-Range header value of b in an object of size.
func (b byteRange) contentRange(size int64) string {
	return "bytes " + strconv.FormatInt(b.first, 10) + "-" + strconv.FormatInt(b.last, 10) + "/" + strconv.FormatInt(size, 10)
}

// rangeSpec is one parsed "first-last", "first-" or "-suffix" range.
type rangeSpec struct {
	first, last int64 // last -1: to the end; first -1: suffix of length last
}

// parseRangeSpec parses a single "bytes=…" range. ok is false for anything
// S3 ignores (and serves the whole object for): a syntax error, another
// unit, several ranges, last before first.
func parseRangeSpec(h string) (spec rangeSpec, ok bool) {
	v, found := strings.CutPrefix(h, "bytes=")
	if !found {
		return rangeSpec{}, false
	}
	v = strings.TrimSpace(v)
	a, b, found := strings.Cut(v, "-")
	if !found {
		return rangeSpec{}, false
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "" && b == "":
		return rangeSpec{}, false
	case a == "":
		n, ok := parseOffset(b)
		if !ok {
			return rangeSpec{}, false
		}
		return rangeSpec{first: -1, last: n}, true
	}
	first, ok := parseOffset(a)
	if !ok {
		return rangeSpec{}, false
	}
	if b == "" {
		return rangeSpec{first: first, last: -1}, true
	}
	last, ok := parseOffset(b)
	if !ok || last < first {
		return rangeSpec{}, false
	}
	return rangeSpec{first: first, last: last}, true
}

// parseOffset accepts decimal digits only (no sign, no spaces inside).
func parseOffset(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// resolve applies spec to an object of size. ok is false when the range
// cannot be satisfied (416 InvalidRange).
func (spec rangeSpec) resolve(size int64) (byteRange, bool) {
	switch {
	case spec.first < 0: // suffix
		if spec.last == 0 || size == 0 {
			return byteRange{}, false
		}
		n := min(spec.last, size)
		return byteRange{first: size - n, last: size - 1}, true
	case spec.first >= size:
		return byteRange{}, false
	case spec.last < 0 || spec.last >= size:
		return byteRange{first: spec.first, last: size - 1}, true
	}
	return byteRange{first: spec.first, last: spec.last}, true
}

// requestRange reads the Range header against an object of size: the
// range, whether one applies, and InvalidRange when it is unsatisfiable.
func requestRange(h string, size int64) (byteRange, bool, error) {
	if h == "" {
		return byteRange{}, false, nil
	}
	spec, ok := parseRangeSpec(h)
	if !ok {
		return byteRange{}, false, nil
	}
	br, ok := spec.resolve(size)
	if !ok {
		return byteRange{}, false, &s3Error{code: "InvalidRange"}
	}
	return br, true, nil
}
