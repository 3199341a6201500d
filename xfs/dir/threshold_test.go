package dir_test

import (
	"fmt"
	"testing"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
)

// TestThresholds adds 15-character names ("obj000000000001", 32-byte data
// entries, 23-byte short-form entries) one by one and checks the count at
// which each conversion happens: short form holds (space-6)/23 entries; a
// block holds n entries while 96 + 32n + 8(n+2) + 8 <= block size; with
// 4 KiB blocks the leaf1 block fills at 500 entries (TestKernelThresholds
// checks the kernel agrees). Removing the names in reverse order converts
// back at the kernel's shrink rules: node to leaf when the leaf entries and
// bests fit one leaf1 block, leaf to block when block 0's last free region
// holds the leaf array and tail, block to short form when it fits.
func TestThresholds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		gc         geoCase
		leafToNode int // entries at which a 4 KiB leaf fills (0: not checked)
	}{
		{geo("4k-attrfork"), 501},
		{geo("4k"), 501},
		{geo("i2k"), 501},
		{geo("b1k"), 501},
		{geo("n16k"), 0},
	} {
		t.Run(c.gc.name, func(t *testing.T) {
			m := newDir(t, c.gc, 128)
			blk := testGeometry(c.gc).DirBlkSize
			sfMax := (c.gc.space - 6) / 23
			blockMax := (blk - 120) / 40
			var seen []string
			prev := dir.ShortForm
			for n := 1; n <= 2100; n++ {
				m.Begin()
				if err := dir.Add(m, []byte(fmt.Sprintf("obj%012d", n)), format.Ino(5000+n), format.FTReg); err != nil {
					t.Fatal(err)
				}
				m.Commit()
				f, err := dir.GetForm(m)
				if err != nil {
					t.Fatal(err)
				}
				want := prev
				switch {
				case n == sfMax+1:
					want = dir.BlockForm
				case n == blockMax+1:
					want = dir.LeafForm
				case n == c.leafToNode:
					want = dir.NodeForm
				}
				if c.leafToNode == 0 && f == dir.NodeForm && prev == dir.LeafForm {
					want = f
				}
				if f != want {
					t.Fatalf("%d entries: %v, want %v (short form holds %d, a block %d)", n, f, want, sfMax, blockMax)
				}
				if f != prev {
					seen = append(seen, fmt.Sprintf("%d:%v", n, f))
				}
				prev = f
			}
			for n := 2100; n >= 1; n-- {
				m.Begin()
				if _, err := dir.Remove(m, []byte(fmt.Sprintf("obj%012d", n))); err != nil {
					t.Fatal(err)
				}
				m.Commit()
				f, err := dir.GetForm(m)
				if err != nil {
					t.Fatal(err)
				}
				if f > prev {
					t.Fatalf("removing to %d entries grew the format to %v", n-1, f)
				}
				if f != prev {
					seen = append(seen, fmt.Sprintf("%d:%v", n-1, f))
				}
				prev = f
			}
			if prev != dir.ShortForm {
				t.Fatalf("empty directory in %v form", prev)
			}
			t.Logf("conversions: %v", seen)
		})
	}
}
