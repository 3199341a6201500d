package xfs

import (
	"math/rand"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
)

// TestExtentListModel checks insert and remove against a per-block model.
func TestExtentListModel(t *testing.T) {
	v := &mount{geo: format.Geometry{AgBlkLog: 16, AgBlocks: 65536, AgCount: 4, DBlocks: 4 * 65536}}
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		model := map[format.FileOff]format.FsBlock{} // file block -> disk block
		var ext []format.Extent
		nextDisk := format.FsBlock(100)
		for op := 0; op < 2000; op++ {
			off := format.FileOff(rng.Intn(4000))
			n := uint64(1 + rng.Intn(40))
			if rng.Intn(3) > 0 {
				// Map the holes of [off, off+n) to new disk blocks.
				for b := off; b < off+format.FileOff(n); b++ {
					if _, ok := model[b]; ok {
						continue
					}
					d := nextDisk
					if rng.Intn(4) == 0 {
						nextDisk += 7 // sometimes break disk contiguity
					}
					nextDisk++
					model[b] = d
					ext = v.extentsInsert(ext, format.Extent{StartOff: b, StartBlock: d, BlockCount: 1})
				}
			} else {
				var removed []format.Extent
				ext, removed = extentsRemove(ext, off, n)
				for _, r := range removed {
					for i := uint64(0); i < r.BlockCount; i++ {
						b := r.StartOff + format.FileOff(i)
						if model[b] != r.StartBlock+format.FsBlock(i) {
							t.Fatalf("seed %d: removed block %d maps to %d, model %d", seed, b, r.StartBlock+format.FsBlock(i), model[b])
						}
						delete(model, b)
					}
				}
			}
			if err := v.checkExtents(ext); err != nil {
				t.Fatalf("seed %d op %d: %v", seed, op, err)
			}
			count := 0
			for i, e := range ext {
				if i > 0 && v.contiguous(ext[i-1], e) {
					t.Fatalf("seed %d op %d: extents %d and %d should have merged", seed, op, i-1, i)
				}
				for j := uint64(0); j < e.BlockCount; j++ {
					if model[e.StartOff+format.FileOff(j)] != e.StartBlock+format.FsBlock(j) {
						t.Fatalf("seed %d op %d: block %d mismatch", seed, op, e.StartOff+format.FileOff(j))
					}
					count++
				}
			}
			if count != len(model) {
				t.Fatalf("seed %d op %d: %d mapped blocks, model has %d", seed, op, count, len(model))
			}
		}
	}
}
