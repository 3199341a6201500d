package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestGOGCForFloor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, roots, floor uint64
		want               int
	}{
		{0, 0, 128 * mib, 3200},                       // no collection yet: Go's heap minimum bounds it
		{35 * mib, 0, 256 * mib, 631},                 // a server whose cache is far from full
		{35 * mib, 35 * mib, 256 * mib, 315},          // roots count towards Go's goal too
		{2 * mib, 2 * mib, 128 * mib, 3150},           // a small heap, as much stack as heap
		{1 * mib, 0, 128 * mib, 3200},                 // smaller still: the heap minimum again
		{128 * mib, 0, 256 * mib, defaultGOGC},        // at the floor: Go's own goal
		{100 * mib, 28 * mib, 228 * mib, defaultGOGC}, // at it with roots
		{200 * mib, 0, 256 * mib, defaultGOGC},        // past it
		{300 * mib, 0, 256 * mib, defaultGOGC},        // live past the floor itself
		{100 * mib, 0, 201 * mib, 101},                // just past Go's goal
		{1 * mib, 0, 2 * mib, defaultGOGC},            // a floor below Go's heap minimum
		{1 * mib, 0, 1 << 50, 1_024_000},              // a huge cache size: bounded, GOGC stays an int32
		{0, 0, 1 << 62, 1_024_000},                    // even before the first collection
	} {
		if got := gogcForFloor(c.live, c.roots, c.floor); got != c.want {
			t.Errorf("gogcForFloor(%d, %d, %d) = %d, want %d", c.live, c.roots, c.floor, got, c.want)
		}
	}
}

// waitGOGC runs collections until GOGC is what ok accepts, or fails.
func waitGOGC(t *testing.T, what string, ok func(int) bool) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		g := currentGOGC()
		if ok(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is still %d, want %s", g, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// goalAtFloor fails unless Go's heap goal settles within a tenth of
// floor: a collection's cleanup sets GOGC from that cycle's heap a moment
// after it, so a goal read at once may still come from the cycle before.
func goalAtFloor(t *testing.T, floor uint64) {
	t.Helper()
	var goal uint64
	for range 100 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if goal = readMetric("/gc/heap/goal:bytes"); goal >= floor*9/10 && goal <= floor*11/10 {
			return
		}
	}
	t.Errorf("heap goal %d with a floor of %d", goal, floor)
}

// gogcStays runs a few collections, giving cleanups time to run, and
// fails unless GOGC is still want.
func gogcStays(t *testing.T, want int, what string) {
	t.Helper()
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if g := currentGOGC(); g != want {
		t.Fatalf("GOGC %d, want %d (%s)", g, want, what)
	}
}

// TestHeapFloorRaisesGoalAndRestores: while held, each collection sets
// GOGC so the next goal reaches the floor; the last release restores
// Go's GOGC and no later collection changes it again.
func TestHeapFloorRaisesGoalAndRestores(t *testing.T) {
	prior := currentGOGC()
	const floor = 512 << 20
	stop1 := holdHeapFloor(floor)
	stop2 := holdHeapFloor(floor)
	waitGOGC(t, "above the default", func(g int) bool { return g > defaultGOGC })
	// The goal lands at the floor, not past it: goroutine stacks, globals
	// and Go's heap minimum count towards it.
	goalAtFloor(t, floor)
	stop1()
	stop1() // a second stop of one holder changes nothing
	waitGOGC(t, "still above the default with one holder left", func(g int) bool { return g > defaultGOGC })
	stop2()
	if g := currentGOGC(); g != prior {
		t.Fatalf("GOGC %d after the last release, want %d", g, prior)
	}
	gogcStays(t, prior, "after collections past the release")
}

// TestHeapFloorLeavesOperatorsGOGC: with GOGC in the environment the
// floor is not held at all.
func TestHeapFloorLeavesOperatorsGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	prior := currentGOGC()
	stop, held := startHeapFloor(512 << 20)
	defer stop()
	if held {
		t.Fatal("the floor is held although GOGC is set")
	}
	gogcStays(t, prior, "the operator's")
}

// TestServeHoldsHeapFloor: serve holds a floor of its cache size
// while it runs, says so in its log, and lets go of it when it stops.
func TestServeHoldsHeapFloor(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	prior := currentGOGC()
	cfg := testConfig(t)
	cfg.CacheSizeText = "64M"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	_, stop := startServeLogging(t, cfg, &logs)
	waitGOGC(t, "above the default while serving", func(g int) bool { return g > defaultGOGC })
	goalAtFloor(t, 64<<20)
	if !strings.Contains(logs.String(), `"heap_floor_bytes":67108864`) {
		t.Errorf("no heap floor of 64 MiB logged:\n%s", logs.String())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if g := currentGOGC(); g != prior {
		t.Fatalf("GOGC %d after serve stopped, want %d", g, prior)
	}
}
