package main

import (
	"strings"
	"testing"

	"github.com/xfs3/xfs3/config"
	"github.com/xfs3/xfs3/s3api/sigv4"
)

// TestRegionRule: a region the configuration accepts is one the S3 layer
// accepts, and the other way round (the rule is written twice, since
// config imports nothing of ours).
func TestRegionRule(t *testing.T) {
	if config.MaxRegion != sigv4.MaxRegion {
		t.Fatalf("MaxRegion: config %d, sigv4 %d", config.MaxRegion, sigv4.MaxRegion)
	}
	names := []string{"", "us-east-1", "EU", "zone_group", "eu/west", "eu west", "a.b", "é", "x:y",
		strings.Repeat("r", config.MaxRegion), strings.Repeat("r", config.MaxRegion+1)}
	for c := 0; c < 128; c++ {
		names = append(names, "r"+string(rune(c)))
	}
	for _, n := range names {
		if config.ValidRegion(n) != sigv4.ValidRegion(n) {
			t.Errorf("%q: config %v, sigv4 %v", n, config.ValidRegion(n), sigv4.ValidRegion(n))
		}
	}
}
