package xlog

import (
	"slices"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestSpaceFollowsHeadAndTail: the space Space reports is what
// usedLocked computes, within the log's size, for a writer whose head
// and live commits are placed by hand (the writer's own tests drive the
// real movements; this pins the accessor).
func TestSpaceFollowsHeadAndTail(t *testing.T) {
	for _, c := range []struct {
		cycle, block uint32
		live         []uint32 // blocks of live commits in the head's cycle
		liveBefore   []uint32 // blocks of live commits in the cycle before
		want         uint32
	}{
		{cycle: 1, block: 0, want: 0},
		{cycle: 1, block: 100, want: 0},
		{cycle: 1, block: 100, live: []uint32{40, 70}, want: 60},
		{cycle: 2, block: 10, live: nil, want: 0},
		{cycle: 2, block: 10, live: []uint32{5}, liveBefore: []uint32{900, 950}, want: 110},
	} {
		w := &Writer{blocks: 1000, cycle: c.cycle, block: c.block, live: map[format.LSN]*liveCounts{}}
		// Newest first: the order addLiveLocked keeps must not depend
		// on the order of the calls.
		for _, b := range slices.Backward(c.live) {
			w.addLiveLocked(format.MakeLSN(c.cycle, b))
		}
		for _, b := range c.liveBefore {
			w.addLiveLocked(format.MakeLSN(c.cycle-1, b))
		}
		used, size := w.Space()
		if used != c.want || size != 1000 {
			t.Errorf("head %d/%d, live %v: used %d of %d, want %d of 1000", c.cycle, c.block, c.live, used, size, c.want)
		}
	}
}

// TestTailSkipsRetiredCommits: the tail is the oldest commit still live,
// whichever commits retired before it and in whatever order.
func TestTailSkipsRetiredCommits(t *testing.T) {
	w := &Writer{blocks: 1000, cycle: 3, block: 500, live: map[format.LSN]*liveCounts{}}
	head := format.MakeLSN(3, 500)
	lsn := func(b uint32) format.LSN { return format.MakeLSN(3, b) }
	for _, b := range []uint32{100, 200, 300, 400} {
		w.addLiveLocked(lsn(b))
	}
	w.addLiveLocked(lsn(200)) // a second commit in the same record
	for _, step := range []struct {
		retire uint32
		want   format.LSN
	}{
		{300, lsn(100)}, {100, lsn(200)}, {200, lsn(400)}, {400, head},
	} {
		delete(w.live, lsn(step.retire))
		if got := w.tailLocked(head); got != step.want {
			t.Fatalf("after retiring block %d: tail %d/%d, want %d/%d", step.retire, got.Cycle(), got.Block(), step.want.Cycle(), step.want.Block())
		}
	}
	w.addLiveLocked(lsn(450))
	if got := w.tailLocked(head); got != lsn(450) {
		t.Fatalf("tail %d/%d, want block 450", got.Cycle(), got.Block())
	}
}
