package oracle

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestPatternFormat: pattern writes the lines fmt's "%s %012d\n" would,
// each numbered with its offset, cut at n bytes; the golden images hold
// files written with them, so the bytes must never change.
func TestPatternFormat(t *testing.T) {
	spelled := func(tag string, off int64, n int) []byte {
		var sb strings.Builder
		for sb.Len() < n {
			fmt.Fprintf(&sb, "%s %012d\n", tag, off+int64(sb.Len()))
		}
		return []byte(sb.String()[:n])
	}
	for _, c := range []struct {
		tag string
		off int64
		n   int
	}{
		{"sparse", 1 << 20, 64 << 10},
		{"prealloc", 0, 1},
		{"btree piece 7", 0, 4096},
		{"x", 999_999_999_990, 100}, // past 12 digits
		{"", 5, 0},
	} {
		got, want := pattern(c.tag, c.off, c.n), spelled(c.tag, c.off, c.n)
		if !bytes.Equal(got, want) {
			t.Errorf("pattern(%q, %d, %d) differs from its fmt spelling: %.40q… against %.40q…", c.tag, c.off, c.n, got, want)
		}
	}
	if got := string(pattern("t", 12, 36)); got != "t 000000000012\nt 000000000027\nt 0000" {
		t.Errorf("pattern(t, 12, 36) = %q", got)
	}
}
