package store

import (
	"math/rand"
	"strings"
	"testing"
)

// TestIsIPv4: four dot-separated runs of one to three digits, nothing
// else, against a reference written with strings.Split over random
// strings of digits, dots and a letter.
func TestIsIPv4(t *testing.T) {
	reference := func(s string) bool {
		parts := strings.Split(s, ".")
		if len(parts) != 4 {
			return false
		}
		for _, p := range parts {
			if len(p) == 0 || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
				return false
			}
		}
		return true
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		b := make([]byte, rng.Intn(17))
		for j := range b {
			b[j] = "0129..a"[rng.Intn(7)]
		}
		if got, want := isIPv4(string(b)), reference(string(b)); got != want {
			t.Fatalf("isIPv4(%q) = %v, want %v", b, got, want)
		}
	}
	if !isIPv4("192.168.1.10") || isIPv4("192.168.1") {
		t.Fatal("isIPv4 misreads plain addresses")
	}
}
