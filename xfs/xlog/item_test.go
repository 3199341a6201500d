package xlog

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestBufItemLogsChangedChunks checks, over random block sizes and random
// changes, that a buffer item names exactly the 128-byte chunks that
// differ, in runs, and that replaying its regions over the old block
// gives the new one.
func TestBufItemLogsChangedChunks(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	sizes := []int{512, 1024, 4096, 8192, 65536}
	for i := 0; i < 500; i++ {
		n := sizes[rng.Intn(len(sizes))]
		old := make([]byte, n)
		rng.Read(old)
		data := bytes.Clone(old)
		for k := rng.Intn(6); k > 0; k-- {
			at := rng.Intn(n)
			end := min(n, at+1+rng.Intn(600))
			rng.Read(data[at:end])
		}
		chunks := n / format.BlfChunk
		var want [][2]int
		for c := 0; c < chunks; c++ {
			lo := c * format.BlfChunk
			if bytes.Equal(old[lo:lo+format.BlfChunk], data[lo:lo+format.BlfChunk]) {
				continue
			}
			if len(want) > 0 && want[len(want)-1][1] == c {
				want[len(want)-1][1]++
			} else {
				want = append(want, [2]int{c, c + 1})
			}
		}
		it, ok := BufItem(format.Daddr(8*i), data, old)
		if ok != (len(want) > 0) {
			t.Fatalf("case %d: ok %v with %d changed runs", i, ok, len(want))
		}
		if !ok {
			continue
		}
		f, err := format.DecodeBufLogFormat(it.Regions[0])
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if f.Blkno != int64(8*i) || int(f.Len)*format.BBSize != n || int(f.Size) != len(it.Regions) {
			t.Fatalf("case %d: format %+v for %d regions of a %d-byte block", i, f, len(it.Regions), n)
		}
		got := f.Runs()
		if len(got) != len(want) || len(it.Regions) != 1+len(want) {
			t.Fatalf("case %d: runs %v, %d regions, want %v", i, got, len(it.Regions), want)
		}
		replayed := bytes.Clone(old)
		for r, run := range got {
			if run != want[r] {
				t.Fatalf("case %d: runs %v, want %v", i, got, want)
			}
			copy(replayed[run[0]*format.BlfChunk:], it.Regions[1+r])
		}
		if !bytes.Equal(replayed, data) {
			t.Fatalf("case %d: replaying the item does not give the new block", i)
		}
	}
	// Without an old copy the whole block is one run.
	data := make([]byte, 4096)
	it, ok := BufItem(8, data, nil)
	if !ok || len(it.Regions) != 2 || len(it.Regions[1]) != 4096 {
		t.Fatalf("whole block: ok %v, %d regions", ok, len(it.Regions))
	}
}
