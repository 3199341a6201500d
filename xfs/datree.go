package xfs

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// daTree reads the da-btree that indexes large directories and attribute
// forks by name hash. Block numbers are fork offsets in filesystem blocks.
type daTree struct {
	v          *Volume
	ext        []format.Extent
	fsbs       int // filesystem blocks per da block
	owner      format.Ino
	what       string
	leafMagics []uint16
}

// read returns a verified da block: a node or one of the leaf magics.
func (t *daTree) read(da uint32) ([]byte, *format.DaBlkinfo, error) {
	b, daddr, err := t.v.readForkBlocks(t.ext, format.FileOff(da), t.fsbs)
	if err != nil {
		return nil, nil, err
	}
	magics := append([]uint16{format.Da3NodeMagic}, t.leafMagics...)
	info, err := format.VerifyDaBlock(&t.v.geo, t.what, b, daddr, t.owner, magics...)
	if err != nil {
		return nil, nil, format.Located(err, fmt.Sprintf("%s block %d (daddr %d)", t.what, da, daddr))
	}
	return b, info, nil
}

// descend walks from the root at da to the leaf that holds hash (the
// leftmost leaf when leftmost is set) and returns that leaf.
func (t *daTree) descend(da uint32, hash uint32, leftmost bool) (uint32, []byte, *format.DaBlkinfo, error) {
	level := -1
	for depth := 0; depth <= format.MaxBtreeLevels; depth++ {
		b, info, err := t.read(da)
		if err != nil {
			return 0, nil, nil, err
		}
		if info.Magic != format.Da3NodeMagic {
			if level > 1 {
				return 0, nil, nil, format.Corrupt(t.what, fmt.Sprintf("%s block %d", t.what, da), "leaf found below a level-%d node", level)
			}
			return da, b, info, nil
		}
		n, err := format.DecodeDaNode(b, info)
		if err != nil {
			return 0, nil, nil, format.Located(err, fmt.Sprintf("%s block %d", t.what, da))
		}
		if level >= 0 && int(n.Level) != level-1 {
			return 0, nil, nil, format.Corrupt(t.what, fmt.Sprintf("%s block %d", t.what, da), "child node has level %d, want %d", n.Level, level-1)
		}
		level = int(n.Level)
		child := n.Entries[len(n.Entries)-1].Before
		if !leftmost {
			for _, e := range n.Entries {
				if e.HashVal >= hash {
					child = e.Before
					break
				}
			}
		} else {
			child = n.Entries[0].Before
		}
		da = child
	}
	return 0, nil, nil, format.Corrupt(t.what, "", "tree deeper than %d levels", format.MaxBtreeLevels)
}

// leaves calls fn on every leaf from the leftmost one along the forward
// sibling chain, refusing loops and chains longer than the fork.
func (t *daTree) leaves(root uint32, fn func(da uint32, b []byte, info *format.DaBlkinfo) error) error {
	da, b, info, err := t.descend(root, 0, true)
	if err != nil {
		return err
	}
	seen := map[uint32]bool{}
	for {
		if seen[da] {
			return format.Corrupt(t.what, fmt.Sprintf("%s block %d", t.what, da), "leaf sibling chain loops")
		}
		seen[da] = true
		if err := fn(da, b, info); err != nil {
			return err
		}
		if info.Forw == 0 {
			return nil
		}
		prev := da
		da = info.Forw
		if b, info, err = t.read(da); err != nil {
			return err
		}
		if info.Magic == format.Da3NodeMagic {
			return format.Corrupt(t.what, fmt.Sprintf("%s block %d", t.what, da), "leaf sibling is a node")
		}
		if info.Back != prev {
			return format.Corrupt(t.what, fmt.Sprintf("%s block %d", t.what, da), "back pointer %d, want %d", info.Back, prev)
		}
	}
}
