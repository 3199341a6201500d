package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ParseSize parses a byte count: plain digits, or digits followed by one
// of the binary suffixes K, M, G, T, P, E (also written KiB, MiB, ..., or
// KB, MB, ..., all meaning powers of 1024; case does not matter). A single
// trailing "B" is accepted after plain digits ("512B").
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional K, M, G, T or P suffix", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	suffix := strings.ToUpper(strings.TrimFunc(t[i:], unicode.IsSpace))
	shift := 0
	switch strings.TrimSuffix(strings.TrimSuffix(suffix, "IB"), "B") {
	case "":
	case "K":
		shift = 10
	case "M":
		shift = 20
	case "G":
		shift = 30
	case "T":
		shift = 40
	case "P":
		shift = 50
	case "E":
		shift = 60
	default:
		return 0, fmt.Errorf("size %q: unknown suffix %q (use K, M, G, T or P)", s, t[i:])
	}
	if suffix == "IB" {
		return 0, fmt.Errorf("size %q: unknown suffix %q (use K, M, G, T or P)", s, t[i:])
	}
	if n > (1<<63-1)>>shift {
		return 0, fmt.Errorf("size %q does not fit in 64 bits", s)
	}
	return n << shift, nil
}
