package ialloc

import (
	"fmt"
	"math/rand/v2"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// BufOps describe a block of inodes: every slot must look like a v3
// inode (each inode's own CRC is checked when it is read).
var BufOps = &trans.Ops{Name: "inode block"}

// InodesPerAlloc is how many inodes one chunk allocation creates: 64, or
// a whole block when a block holds more.
func InodesPerAlloc(g *format.Geometry) int { return max(format.InodesPerChunk, g.InoPBlock) }

// BlocksPerAlloc is the size of an inode chunk allocation in blocks.
func BlocksPerAlloc(g *format.Geometry) uint32 { return uint32(InodesPerAlloc(g) / g.InoPBlock) }

// FreeInodeCore is what an unused inode slot of an allocated chunk holds:
// a valid v3 inode with mode 0, as mkfs.xfs and the kernel write them.
func FreeInodeCore(g *format.Geometry, ino format.Ino) *format.Dinode {
	d := &format.Dinode{
		Magic: format.InodeMagic, Version: 3, Format: format.FmtExtents,
		NextUnlinked: format.NullAgIno, Ino: ino, UUID: g.UUID,
		Gen: rand.Uint32(),
	}
	if g.Bigtime {
		d.Flags2 |= format.Diflag2Bigtime
	}
	return d
}

// encodeFreeChunkBlock fills one block of a new inode chunk with free
// inodes starting at first.
func encodeFreeChunkBlock(g *format.Geometry, b []byte, first format.Ino) {
	for i := 0; i < g.InoPBlock; i++ {
		raw := b[i*g.InodeSize : (i+1)*g.InodeSize]
		clear(raw)
		FreeInodeCore(g, first+format.Ino(i)).Encode(raw)
		format.SetCRC(raw, format.InodeCRCOff)
	}
}

// errAGFull says an AG cannot take an allocation; nothing was changed.
var errAGFull = fmt.Errorf("%w: allocation group is full", format.ErrNoSpace)

// newChunk allocates and initialises an inode chunk near the parent's and
// indexes it in both inode trees.
func (a *AGI) newChunk(parent format.Ino) error {
	in := a.t.in
	g := in.geo
	perAlloc := InodesPerAlloc(g)
	if in.limit > 0 && uint64(in.icount.Load())+uint64(perAlloc) > in.limit {
		return fmt.Errorf("%w: the inode limit (imaxpct) is reached", errAGFull)
	}
	agf, err := a.freeSpace()
	if err != nil {
		return err
	}
	blks := BlocksPerAlloc(g)
	// Room for the chunk, splits of both inode trees to a new root, and
	// the free list: checked before anything changes.
	treeBlocks := 2 * (a.h.Level + a.h.FreeLevel + 2)
	if agf.Header().Longest < blks+in.alignMt-1 || agf.Header().FreeBlks < blks+in.alignMt+treeBlocks+agf.MinFreelist() {
		return errAGFull
	}
	goal := format.AgBlock(0)
	if pag, pino := g.InoToAg(parent); pag == a.ag {
		goal, _ = g.AgInoToAgBlock(pino)
	}
	bno, _, err := agf.Alloc(alloc.Request{MinLen: blks, MaxLen: blks, Goal: goal, Align: in.alignMt})
	if err != nil {
		return err
	}
	if err := a.t.Use(int64(blks)); err != nil {
		return err
	}
	for i := uint32(0); i < blks; i++ {
		d := g.AgbToDaddr(a.ag, bno+format.AgBlock(i))
		b, err := a.t.Get(d, g.BlockSize, BufOps)
		if err != nil {
			return err
		}
		encodeFreeChunkBlock(g, b, g.AgInoToIno(a.ag, g.AgBlockToAgIno(bno+format.AgBlock(i))))
	}
	first := g.AgBlockToAgIno(bno)
	for c := 0; c < perAlloc; c += format.InodesPerChunk {
		rec := format.InobtRec{StartIno: first + format.AgIno(c), Count: format.InodesPerChunk,
			FreeCount: format.InodesPerChunk, Free: ^uint64(0)}
		for _, free := range a.trees() {
			cur := a.Tree(free).NewCursor()
			if _, err := cur.Lookup(btree.EQ, encodeRec(rec)); err != nil {
				return err
			}
			if err := cur.Insert(encodeRec(rec)); err != nil {
				return err
			}
		}
	}
	a.h.Count += uint32(perAlloc)
	a.h.FreeCount += uint32(perAlloc)
	a.h.NewIno = first
	a.log()
	a.t.OnCommit(func() {
		in.icount.Add(int64(perAlloc))
		in.ifree.Add(int64(perAlloc))
	})
	return nil
}
