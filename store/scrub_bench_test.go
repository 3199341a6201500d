package store

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/xfs3/xfs3/gc"
)

// BenchmarkScrubPass is BenchmarkLifecyclePass's measurement for the
// scrubber: 8 clients PUT 4 KiB objects into "live" alone (side A) and
// while a scrub pass on demand reads and checks the volume's metadata
// and the 100,000 objects of "old" (side B), paced as the store paces it
// by default (gc.ScrubOptions). The same image, rounds, rotation and
// report, with XFS3_SCRUB_BENCH_OBJECTS, _WINDOW, _ROUNDS and _CONTROL.
// XFS3_SCRUB_BENCH_FROM=objects starts each pass at the objects of "old"
// (a saved cursor, as a pass resumed after a restart), so that a window
// under writers measures the phase that reads and hashes object data
// rather than the metadata walk ahead of it.
//
//	go test ./store -run XXX -bench BenchmarkScrubPass -benchtime 1x -timeout 60m
func BenchmarkScrubPass(b *testing.B) {
	kind := scrubBenchPass
	switch from := os.Getenv("XFS3_SCRUB_BENCH_FROM"); from {
	case "", "metadata":
	case "objects":
		kind.name = "scrub (objects)"
		kind.start = func(s *Store) error {
			cur, err := json.Marshal(scrubCursor{Phase: scrubPhaseObjects, Bucket: lcBenchOld})
			if err != nil {
				return err
			}
			if err := s.Scrub().SaveCursor(string(cur)); err != nil {
				return err
			}
			return scrubBenchPass.start(s)
		}
	default:
		b.Fatalf("XFS3_SCRUB_BENCH_FROM=%q: want metadata or objects", from)
	}
	runPassBench(b, kind, "SCRUB")
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
