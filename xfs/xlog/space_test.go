package xlog

import (
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
		for _, b := range c.live {
			w.live[format.MakeLSN(c.cycle, b)] = &liveCounts{}
		}
		for _, b := range c.liveBefore {
			w.live[format.MakeLSN(c.cycle-1, b)] = &liveCounts{}
		}
		used, size := w.Space()
		if used != c.want || size != 1000 {
			t.Errorf("head %d/%d, live %v: used %d of %d, want %d of 1000", c.cycle, c.block, c.live, used, size, c.want)
		}
	}
}
