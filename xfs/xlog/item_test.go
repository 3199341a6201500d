package xlog

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestBufItemLogsDirectoryBlocksWhole: a change to one chunk of a
// directory or attribute block makes an image item, logged whole unless
// its epoch has logged the block whole already (see wholeImage), with the
// changed chunk as its partial form; an unchanged one logs nothing; a
// btree block logs the one chunk, always.
func TestBufItemLogsDirectoryBlocksWhole(t *testing.T) {
	be := binary.BigEndian
	blocks := map[string]func(b []byte){
		"dir3 block": func(b []byte) { be.PutUint32(b, format.Dir3BlockMagic) },
		"dir3 data":  func(b []byte) { be.PutUint32(b, format.Dir3DataMagic) },
		"dir3 free":  func(b []byte) { be.PutUint32(b, format.Dir3FreeMagic) },
		"dir3 leaf1": func(b []byte) { be.PutUint16(b[8:], format.Dir3Leaf1Magic) },
		"dir3 leafn": func(b []byte) { be.PutUint16(b[8:], format.Dir3LeafNMagic) },
		"da3 node":   func(b []byte) { be.PutUint16(b[8:], format.Da3NodeMagic) },
		"attr3 leaf": func(b []byte) { be.PutUint16(b[8:], format.Attr3LeafMagic) },
		"bnobt":      func(b []byte) { be.PutUint32(b, format.BnobtMagic) },
	}
	runsOf := func(regions [][]byte) [][2]int {
		f, err := format.DecodeBufLogFormat(regions[0])
		if err != nil {
			t.Fatal(err)
		}
		return f.Runs()
	}
	chunk := [2]int{3000 / format.BlfChunk, 3000/format.BlfChunk + 1}
	all := [2]int{0, 4096 / format.BlfChunk}
	for name, stamp := range blocks {
		old := make([]byte, 4096)
		stamp(old)
		if _, ok := BufItem(64, bytes.Clone(old), old); ok {
			t.Errorf("%s: an unchanged block was logged", name)
		}
		data := bytes.Clone(old)
		data[3000]++
		it, ok := BufItem(64, data, old)
		if !ok {
			t.Fatalf("%s: a changed block was not logged", name)
		}
		image := name != "bnobt"
		if got, want := it.kind == imageItem, image; got != want {
			t.Fatalf("%s: image item %v, want %v", name, got, want)
		}
		want := all
		if !image {
			want = chunk
		}
		if got := runsOf(it.Regions); len(got) != 1 || got[0] != want {
			t.Errorf("%s: logged runs %v, want %v", name, got, want)
		}
		if !image {
			continue
		}
		if got := runsOf(it.partial); len(got) != 1 || got[0] != chunk || it.block != 64 {
			t.Errorf("%s: partial form logs runs %v of block %d, want %v of 64", name, got, it.block, chunk)
		}
		if fresh, _ := BufItem(64, data, nil); fresh.partial != nil {
			t.Errorf("%s: a block without an older copy has a partial form", name)
		}
	}
}

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
