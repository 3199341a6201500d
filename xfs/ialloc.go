package xfs

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Inode allocation: the inobt indexes every inode chunk of an AG, the
// finobt only the chunks with free inodes; the AGI counts both.
//
// Lock order inside one AG: AGI, then AGF (chunks and inobt blocks come
// from the AG's free space).

// agiCtx is a transaction's locked view of one AG's inode header.
type agiCtx struct {
	t     *txn
	ag    format.AgNumber
	daddr format.Daddr
	buf   []byte
	h     *format.Agi
	agf   *alloc.AG // locked on first need
}

var agiFinish = func(b []byte) { format.SetCRC(b, format.AgiCRCOff) }

func (t *txn) readAgi(ag format.AgNumber) (*agiCtx, error) {
	if a, ok := t.agis[ag]; ok {
		return a, nil
	}
	g := &t.v.geo
	d := g.AgHeaderDaddr(ag, 2)
	ops := &trans.Ops{Name: "AGI", Finish: agiFinish, Verify: func(b []byte, _ format.Daddr) error {
		_, err := format.VerifyAgi(g, ag, b)
		return err
	}}
	buf, err := t.Read(d, g.SectSize, ops)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("AG %d AGI", ag))
	}
	h, err := format.DecodeAgi(buf)
	if err != nil {
		return nil, err
	}
	a := &agiCtx{t: t, ag: ag, daddr: d, buf: buf, h: h}
	t.agis[ag] = a
	return a, nil
}

func (a *agiCtx) log() {
	a.h.Encode(a.buf)
	a.t.Dirty(a.daddr)
}

func (a *agiCtx) freeSpace() (*alloc.AG, error) {
	if a.agf == nil {
		agf, err := a.t.alloc.Lock(a.ag)
		if err != nil {
			return nil, err
		}
		a.agf = agf
	}
	return a.agf, nil
}

// tree returns the inobt (free false) or the finobt (free true). Their
// blocks are ordinary allocations from the AG, counted in agi_iblocks and
// agi_fblocks.
func (a *agiCtx) tree(free bool) *btree.Tree {
	kind, root, levels, count := btree.Inobt, &a.h.Root, &a.h.Level, &a.h.IBlocks
	if free {
		kind, root, levels, count = btree.Finobt, &a.h.FreeRoot, &a.h.FreeLevel, &a.h.FBlocks
	}
	tr := &btree.Tree{Kind: kind, Geo: &a.t.v.geo, AG: a.ag, Root: uint64(*root), Levels: int(*levels)}
	tr.Store = alloc.NewStore(a.t.Tx, a.t.v.w.space, tr,
		func(near uint64) (uint64, error) {
			agf, err := a.freeSpace()
			if err != nil {
				return 0, err
			}
			bno, _, err := agf.Alloc(alloc.Request{MinLen: 1, MaxLen: 1, Goal: format.AgBlock(near)})
			if err != nil {
				return 0, err
			}
			if err := a.t.UseBlocks(1); err != nil {
				return 0, err
			}
			if a.t.v.geo.InobtCount {
				*count++
				a.log()
			}
			return uint64(bno), nil
		},
		func(ptr uint64) error {
			agf, err := a.freeSpace()
			if err != nil {
				return err
			}
			if err := agf.Free(format.AgBlock(ptr), 1); err != nil {
				return err
			}
			a.t.FreeBlocks(1)
			if a.t.v.geo.InobtCount {
				*count--
				a.log()
			}
			return nil
		})
	tr.RootChanged = func() {
		*root, *levels = format.AgBlock(tr.Root), uint32(tr.Levels)
		a.log()
	}
	return tr
}

func encodeInobt(r format.InobtRec) []byte {
	b := make([]byte, 16)
	r.Encode(b)
	return b
}

func decodeInobt(c *btree.Cursor) format.InobtRec {
	rec, _ := c.Get()
	return format.DecodeInobtRec(rec)
}

// inodesPerAlloc is how many inodes one chunk allocation creates: 64, or
// a whole block when a block holds more.
func (v *Volume) inodesPerAlloc() int { return max(format.InodesPerChunk, v.geo.InoPBlock) }

// blocksPerAlloc is the size of an inode chunk allocation in blocks.
func (v *Volume) blocksPerAlloc() uint32 { return uint32(v.inodesPerAlloc() / v.geo.InoPBlock) }

// allocInode picks a free inode, allocating a chunk when needed: new
// directories start in the next AG of a rotor, everything else near its
// parent. It returns the inode number; the inode is still free on disk
// and its in-memory version is returned for initialisation.
func (t *txn) allocInode(parent format.Ino, isDir bool) (*inode, error) {
	g := &t.v.geo
	start, _ := g.InoToAg(parent)
	if isDir {
		start = format.AgNumber(t.v.w.dirRotor.Add(1) % g.AgCount)
	}
	// Choose the AG from the committed headers without locking any, so
	// that the transaction locks one AGI and its AGF only (locking a
	// second AG's AGI after a first AG's AGF would invert the lock order).
	for i := uint32(0); i < g.AgCount; i++ {
		ag := format.AgNumber((uint32(start) + i) % g.AgCount)
		if !t.v.agMayHaveInode(ag) {
			continue
		}
		ip, err := t.allocInodeInAG(ag, parent)
		if errors.Is(err, errAGFull) {
			return nil, fmt.Errorf("%w: AG %d filled up meanwhile", ErrNoSpace, ag)
		}
		return ip, err
	}
	return nil, fmt.Errorf("%w: no free inode and no room for a new inode chunk", ErrNoSpace)
}

// agMayHaveInode tells from AG ag's committed headers whether it has a
// free inode or room for a new chunk. Unreadable headers say yes, so the
// locked read reports the problem.
func (v *Volume) agMayHaveInode(ag format.AgNumber) bool {
	g := &v.geo
	agiBuf, err := v.w.cache.Read(g.AgHeaderDaddr(ag, 2), g.SectSize, nil)
	if err != nil {
		return true
	}
	agi, err := format.DecodeAgi(agiBuf)
	if err != nil || agi.FreeCount > 0 {
		return true
	}
	agf, err := alloc.Committed(v.readCommitted, g, ag)
	if err != nil {
		return true
	}
	blks := v.blocksPerAlloc()
	return agf.Longest >= blks+max(v.sb.InoAlignMt, 1)-1
}

func (t *txn) allocInodeInAG(ag format.AgNumber, parent format.Ino) (*inode, error) {
	a, err := t.readAgi(ag)
	if err != nil {
		return nil, err
	}
	if a.h.FreeCount == 0 {
		if err := a.newChunk(parent); err != nil {
			return nil, err
		}
	}
	return a.takeFree(parent)
}

// errAGFull says an AG cannot take an allocation; nothing was changed.
var errAGFull = fmt.Errorf("%w: allocation group is full", ErrNoSpace)

// newChunk allocates and initialises an inode chunk and indexes it.
func (a *agiCtx) newChunk(parent format.Ino) error {
	v := a.t.v
	g := &v.geo
	if max := v.maxInodes(); max > 0 && uint64(v.w.counters.icount.Load())+uint64(v.inodesPerAlloc()) > max {
		return fmt.Errorf("%w: the inode limit (imaxpct) is reached", errAGFull)
	}
	agf, err := a.freeSpace()
	if err != nil {
		return err
	}
	blks := v.blocksPerAlloc()
	align := max(v.sb.InoAlignMt, 1)
	// Room for the chunk, splits of both inode trees to a new root, and
	// the free list: checked before anything changes.
	treeBlocks := 2 * (a.h.Level + a.h.FreeLevel + 2)
	if agf.Header().Longest < blks+align-1 || agf.Header().FreeBlks < blks+align+treeBlocks+agf.MinFreelist() {
		return errAGFull
	}
	goal := format.AgBlock(0)
	if pag, pino := g.InoToAg(parent); pag == a.ag {
		goal, _ = g.AgInoToAgBlock(pino)
	}
	bno, _, err := agf.Alloc(alloc.Request{MinLen: blks, MaxLen: blks, Goal: goal, Align: align})
	if err != nil {
		return err
	}
	if err := a.t.UseBlocks(int64(blks)); err != nil {
		return err
	}
	for i := uint32(0); i < blks; i++ {
		d := g.AgbToDaddr(a.ag, bno+format.AgBlock(i))
		b, err := a.t.Get(d, g.BlockSize, inodeBufOps)
		if err != nil {
			return err
		}
		v.encodeFreeChunkBlock(b, g.AgInoToIno(a.ag, g.AgBlockToAgIno(bno+format.AgBlock(i))))
	}
	n := v.inodesPerAlloc()
	first := g.AgBlockToAgIno(bno)
	for c := 0; c < n; c += format.InodesPerChunk {
		rec := format.InobtRec{StartIno: first + format.AgIno(c), Count: format.InodesPerChunk,
			FreeCount: format.InodesPerChunk, Free: ^uint64(0)}
		for _, free := range a.trees() {
			cur := a.tree(free).NewCursor()
			if _, err := cur.Lookup(btree.EQ, encodeInobt(rec)); err != nil {
				return err
			}
			if err := cur.Insert(encodeInobt(rec)); err != nil {
				return err
			}
		}
	}
	a.h.Count += uint32(n)
	a.h.FreeCount += uint32(n)
	a.h.NewIno = first
	a.log()
	a.t.OnCommit(func() {
		v.w.counters.icount.Add(int64(n))
		v.w.counters.ifree.Add(int64(n))
	})
	return nil
}

// trees lists the inode trees to keep in step: the inobt, and the finobt
// when the filesystem has one.
func (a *agiCtx) trees() []bool {
	if a.t.v.geo.Finobt {
		return []bool{false, true}
	}
	return []bool{false}
}

// takeFree marks the free inode nearest the parent in use.
func (a *agiCtx) takeFree(parent format.Ino) (*inode, error) {
	g := &a.t.v.geo
	search := a.tree(a.t.v.geo.Finobt)
	cur := search.NewCursor()
	ok := false
	var err error
	if pag, pino := g.InoToAg(parent); pag == a.ag {
		if ok, err = cur.Lookup(btree.LE, encodeInobt(format.InobtRec{StartIno: pino})); err != nil {
			return nil, err
		}
	}
	for !ok || decodeInobt(cur).FreeCount == 0 {
		if !ok {
			if ok, err = cur.First(); err != nil {
				return nil, err
			}
			if !ok {
				return nil, format.Corrupt("AGI", fmt.Sprintf("AG %d", a.ag), "%d free inodes but no chunk has one", a.h.FreeCount)
			}
			continue
		}
		if ok, err = cur.Increment(); err != nil {
			return nil, err
		}
		if !ok {
			return nil, format.Corrupt("AGI", fmt.Sprintf("AG %d", a.ag), "%d free inodes but no chunk has one", a.h.FreeCount)
		}
	}
	rec := decodeInobt(cur)
	idx := bits.TrailingZeros64(rec.Free)
	if idx >= format.InodesPerChunk || !rec.Present(idx) {
		return nil, format.Corrupt("inobt", fmt.Sprintf("AG %d chunk %d", a.ag, rec.StartIno), "free mask %#x does not match free count %d", rec.Free, rec.FreeCount)
	}
	updated := rec
	updated.Free &^= 1 << idx
	updated.FreeCount--
	for _, free := range a.trees() {
		c := a.tree(free).NewCursor()
		found, err := c.Lookup(btree.EQ, encodeInobt(rec))
		if err != nil {
			return nil, err
		}
		if !found || decodeInobt(c) != rec {
			return nil, format.Corrupt(a.tree(free).Kind.Shape.Name, fmt.Sprintf("AG %d", a.ag), "chunk %d differs between inode trees", rec.StartIno)
		}
		if free && updated.FreeCount == 0 {
			err = c.Delete()
		} else {
			err = c.Update(encodeInobt(updated))
		}
		if err != nil {
			return nil, err
		}
	}
	a.h.FreeCount--
	a.log()
	v := a.t.v
	a.t.OnCommit(func() { v.w.counters.ifree.Add(-1) })
	ino := g.AgInoToIno(a.ag, rec.StartIno+format.AgIno(idx))
	return a.t.freeInode(ino)
}

// freeInode returns the bytes of a free inode (from this transaction's new
// chunk, or as committed) as a version to initialise. It does not lock the
// inode's block: blocks of inodes are locked only while a commit copies
// inodes into them, in address order, so they never take part in a
// deadlock with the AG headers.
func (t *txn) freeInode(ino format.Ino) (*inode, error) {
	g := &t.v.geo
	ag, agino := g.InoToAg(ino)
	bno, slot := g.AgInoToAgBlock(agino)
	d := g.AgbToDaddr(ag, bno)
	b, held := t.Held(d)
	if !held {
		var err error
		if b, err = t.v.w.cache.Read(d, g.BlockSize, inodeBufOps); err != nil {
			return nil, err
		}
	}
	raw := append([]byte(nil), b[slot*g.InodeSize:(slot+1)*g.InodeSize]...)
	core, err := format.VerifyInode(g, ino, raw)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("inode %d", ino))
	}
	if core.Mode != 0 {
		return nil, format.Corrupt("inode", fmt.Sprintf("inode %d", ino), "the inode btree says free, the inode is in use")
	}
	return &inode{ino: ino, core: core, raw: raw}, nil
}

// maxInodes is the imax_pct limit in inodes (0: none).
func (v *Volume) maxInodes() uint64 {
	if v.sb.IMaxPct == 0 {
		return 0
	}
	return v.geo.DBlocks * uint64(v.sb.IMaxPct) / 100 << v.geo.InoPBLog
}

// releaseInode marks ino free in the inode trees (the caller has already
// turned its core into a free inode). Chunks stay allocated, as with the
// kernel's ikeep; returning empty chunks to free space comes with inodegc.
func (t *txn) releaseInode(ino format.Ino) error {
	g := &t.v.geo
	ag, agino := g.InoToAg(ino)
	a, err := t.readAgi(ag)
	if err != nil {
		return err
	}
	key := encodeInobt(format.InobtRec{StartIno: agino &^ (format.InodesPerChunk - 1)})
	c := a.tree(false).NewCursor()
	found, err := c.Lookup(btree.EQ, key)
	if err != nil {
		return err
	}
	if !found {
		return format.Corrupt("inobt", fmt.Sprintf("AG %d", ag), "no chunk holds inode %d", ino)
	}
	rec := decodeInobt(c)
	idx := int(agino - rec.StartIno)
	if rec.Free&(1<<idx) != 0 || !rec.Present(idx) {
		return format.Corrupt("inobt", fmt.Sprintf("AG %d chunk %d", ag, rec.StartIno), "inode %d is already free", ino)
	}
	updated := rec
	updated.Free |= 1 << idx
	updated.FreeCount++
	if err := c.Update(encodeInobt(updated)); err != nil {
		return err
	}
	if g.Finobt {
		fc := a.tree(true).NewCursor()
		found, err := fc.Lookup(btree.EQ, key)
		if err != nil {
			return err
		}
		if found {
			err = fc.Update(encodeInobt(updated))
		} else {
			err = fc.Insert(encodeInobt(updated))
		}
		if err != nil {
			return err
		}
	}
	a.h.FreeCount++
	a.log()
	v := t.v
	t.OnCommit(func() { v.w.counters.ifree.Add(1) })
	return nil
}
