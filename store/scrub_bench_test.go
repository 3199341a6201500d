package store

import (
	"testing"

	"github.com/xfs3/xfs3/gc"
)

// BenchmarkScrubPass is BenchmarkLifecyclePass's measurement for the
// scrubber: 8 clients PUT 4 KiB objects into "live" alone (side A) and
// while a scrub pass on demand reads and checks the volume's metadata
// and the 100,000 objects of "old" (side B), paced as the store paces it
// by default (gc.ScrubOptions). The same image, rounds, rotation and
// report, with XFS3_SCRUB_BENCH_OBJECTS, _WINDOW, _ROUNDS and _CONTROL.
//
//	go test ./store -run XXX -bench BenchmarkScrubPass -benchtime 1x -timeout 60m
func BenchmarkScrubPass(b *testing.B) {
	runPassBench(b, scrubBenchPass, "SCRUB")
}

var scrubBenchPass = benchPass{
	name: "scrub", unit: "checked",
	options: func(o *Options, busy func() uint64, done func()) {
		o.Scrub = gc.ScrubOptions{Busy: busy, PassDone: func(gc.ScrubPass) { done() }}
	},
	start: func(s *Store) error { _, err := s.Scrub().Start(); return err },
	status: func(s *Store) (benchPassStatus, bool) {
		return passStatusOf(s.Scrub().Status(), func(c ScrubCounts) (int64, int64) { return c.Objects, c.Errors })
	},
}
