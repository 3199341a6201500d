package mkfs

import (
	"fmt"
	"sort"

	"github.com/xfs3/xfs3/xfs/format"
)

// extent is a run of AG blocks.
type extent struct{ bno, len uint32 }

// agLayout is what one AG holds right after formatting.
type agLayout struct {
	ag     uint32
	length uint32
	agfl   []uint32          // blocks on the free list, in slot order from 1
	free   []extent          // free extents by block number
	inodes []format.InobtRec // inode chunk records (AG 0 only)
}

func (a *agLayout) freeBlocks() uint32 {
	var n uint32
	for _, e := range a.free {
		n += e.len
	}
	return n
}

func (a *agLayout) longest() uint32 {
	var n uint32
	for _, e := range a.free {
		n = max(n, e.len)
	}
	return n
}

// byCount orders free extents the way the cntbt does.
func (a *agLayout) byCount() []extent {
	c := append([]extent(nil), a.free...)
	sort.Slice(c, func(i, j int) bool {
		if c[i].len != c[j].len {
			return c[i].len < c[j].len
		}
		return c[i].bno < c[j].bno
	})
	return c
}

// take removes [bno, bno+n) from the free extent that contains it.
func (a *agLayout) take(bno, n uint32) error {
	for i, e := range a.free {
		if bno < e.bno || uint64(bno)+uint64(n) > uint64(e.bno)+uint64(e.len) {
			continue
		}
		var repl []extent
		if bno > e.bno {
			repl = append(repl, extent{e.bno, bno - e.bno})
		}
		if end := bno + n; end < e.bno+e.len {
			repl = append(repl, extent{end, e.bno + e.len - end})
		}
		a.free = append(a.free[:i], append(repl, a.free[i+1:]...)...)
		return nil
	}
	return fmt.Errorf("AG %d: blocks %d+%d are not free", a.ag, bno, n)
}

// layoutAG replays what mkfs.xfs does to one AG: the free space btrees
// start with everything after the btree roots (and after the log in the
// log's AG); the AGFL is filled from the start of the smallest free extent
// that can hold it (the allocator's by-size lookup); AG 0 then gets the
// first inode chunk at its aligned position.
func (g *geometry) layoutAG(ag uint32) (*agLayout, error) {
	a := &agLayout{ag: ag, length: g.agSize(ag)}
	start := g.prealloc
	if ag == g.logAg {
		start = g.prealloc + g.logBlocks
	}
	if start < a.length {
		a.free = []extent{{start, a.length - start}}
	}

	var from *extent
	for _, e := range a.byCount() {
		if e.len >= g.agflCount {
			from = &e
			break
		}
	}
	if from == nil {
		return nil, fmt.Errorf("AG %d has no room for its %d free list blocks", ag, g.agflCount)
	}
	base := from.bno
	if err := a.take(base, g.agflCount); err != nil {
		return nil, err
	}
	for i := uint32(0); i < g.agflCount; i++ {
		a.agfl = append(a.agfl, base+i)
	}

	if ag == 0 {
		if err := a.take(g.chunkBno, g.iallocBlocks); err != nil {
			return nil, fmt.Errorf("first inode chunk: %w", err)
		}
		first := uint32(g.rootIno())
		for i := 0; i < g.iallocInos; i += inodesPerChunk {
			r := format.InobtRec{StartIno: format.AgIno(first + uint32(i)), Count: inodesPerChunk,
				FreeCount: inodesPerChunk, Free: ^uint64(0)}
			if i == 0 {
				// The root directory and the two realtime inodes.
				r.Free &^= 0b111
				r.FreeCount -= 3
			}
			a.inodes = append(a.inodes, r)
		}
	}
	return a, nil
}

// counts sums what the primary superblock reports.
type counts struct {
	icount, ifree, fdblocks uint64
}

func (c *counts) add(a *agLayout) {
	c.fdblocks += uint64(a.freeBlocks()) + uint64(len(a.agfl))
	for _, r := range a.inodes {
		c.icount += uint64(r.Count)
		c.ifree += uint64(r.FreeCount)
	}
}
