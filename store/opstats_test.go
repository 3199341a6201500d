package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestVolumeStatsFollowWrites: space used grows by the objects' blocks,
// free space shrinks as much, the log and cache counters move, and a
// deleted object's space is back in the next reading.
func TestVolumeStatsFollowWrites(t *testing.T) {
	s, _ := newTestStore(t)
	if s.AcksBeforeDurable() {
		t.Error("a store opened with Open acknowledges before durable")
	}
	if err := s.CreateBucket("stats"); err != nil {
		t.Fatal(err)
	}
	before, err := s.VolumeStats()
	if err != nil {
		t.Fatal(err)
	}
	if before.BlockSize != 4096 || before.Blocks*4096 != 512<<20 || before.AgBlocks == 0 || before.InodeSize == 0 ||
		before.LogSizeBytes != int64(before.LogBlocks)*4096 || before.LogUsedBytes > before.LogSizeBytes {
		t.Fatalf("geometry: %+v", before)
	}
	const n, size = 10, 3 * 4096
	for i := 0; i < n; i++ {
		put(t, s, "stats", fmt.Sprintf("k%d", i), strings.Repeat("z", size), Meta{})
	}
	after, err := s.VolumeStats()
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(after.UsedBlocks()-before.UsedBlocks()) * 4096
	if grew < n*size || grew > n*size+64<<10 || after.FreeBlocks+after.UsedBlocks()+after.LogBlocks != after.Blocks {
		t.Errorf("used grew %d bytes for %d bytes of objects; %+v", grew, n*size, after.Statfs)
	}
	if after.Log.Commits <= before.Log.Commits || after.Log.Writes <= before.Log.Writes ||
		after.Cache.Buffers.Hits <= before.Cache.Buffers.Hits || after.Inodes-after.FreeInodes < before.Inodes-before.FreeInodes+n {
		t.Errorf("counters did not move: before %+v after %+v", before, after)
	}
	for i := 0; i < n; i++ {
		if err := s.DeleteObject("stats", fmt.Sprintf("k%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	freed, err := s.VolumeStats()
	if err != nil {
		t.Fatal(err)
	}
	if d := int64(freed.UsedBlocks()) - int64(before.UsedBlocks()); d < 0 || d > 16 {
		t.Errorf("after deleting every object, %d blocks more in use than before", d)
	}
	if g := s.GCStats(); g.Pending != 0 {
		t.Errorf("reading the volume's space left %d inodes to free", g.Pending)
	}
}
