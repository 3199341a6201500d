package ialloc

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Alloc picks a free inode and marks it in use in the inode trees,
// allocating a chunk when needed: new directories start in the next AG
// of a rotor, everything else near its parent. The inode itself is still
// free on disk; the caller initialises it.
func (t *Tx) Alloc(parent format.Ino, isDir bool) (format.Ino, error) {
	g := t.Geo()
	if len(t.agis) > 0 {
		return t.allocHeld(parent)
	}
	start, _ := g.InoToAg(parent)
	if isDir {
		start = format.AgNumber(t.in.dirRotor.Add(1) % g.AgCount)
	}
	// Choose the AG from the committed headers without locking any, so
	// that the transaction locks one AGI and its AGF only (locking a
	// second AG's AGI after a first AG's AGF would invert the lock order).
	for i := uint32(0); i < g.AgCount; i++ {
		ag := format.AgNumber((uint32(start) + i) % g.AgCount)
		if t.Space.IsSick(ag) || !t.in.mayHaveInode(ag) {
			continue
		}
		ino, err := t.allocInAG(ag, parent)
		if errors.Is(err, errAGFull) {
			return 0, fmt.Errorf("%w: AG %d filled up meanwhile", format.ErrNoSpace, ag)
		}
		return ino, err
	}
	return 0, fmt.Errorf("%w: no free inode and no room for a new inode chunk", format.ErrNoSpace)
}

// mayHaveInode tells from AG ag's committed headers whether it has a
// free inode or room for a new chunk, past what the AG keeps back for its
// refcount btree (package alloc). Unreadable headers say yes, so the
// locked read reports the problem.
func (in *Inodes) mayHaveInode(ag format.AgNumber) bool {
	agi, err := in.committedAGI(ag)
	if err != nil || agi.FreeCount > 0 {
		return true
	}
	agf, err := in.committedAGF(ag)
	if err != nil {
		return true
	}
	chunk := BlocksPerAlloc(in.geo)
	kept := max(in.refcountAsk[ag], agf.RefcountBlocks) - agf.RefcountBlocks
	return agf.Longest >= chunk+in.alignMt-1 && agf.FreeBlks >= kept+chunk+in.alignMt-1
}

// allocHeld allocates in an AG whose AGI the transaction holds already,
// lowest first: a change that makes several inodes takes them from the
// AG of its first, since locking another AGI after that AG's AGF would
// invert the lock order. When those AGs have neither a free inode nor
// room for a chunk, it fails with ErrNoSpace although others may have.
func (t *Tx) allocHeld(parent format.Ino) (format.Ino, error) {
	held := make([]format.AgNumber, 0, len(t.agis))
	for _, a := range t.agis {
		held = append(held, a.ag)
	}
	slices.Sort(held)
	for _, ag := range held {
		ino, err := t.allocInAG(ag, parent)
		if !errors.Is(err, errAGFull) {
			return ino, err
		}
	}
	return 0, fmt.Errorf("%w: no free inode and no room for a chunk in AGs %v, which this change holds", format.ErrNoSpace, held)
}

func (t *Tx) allocInAG(ag format.AgNumber, parent format.Ino) (format.Ino, error) {
	a, err := t.Lock(ag)
	if err != nil {
		return 0, err
	}
	if a.h.FreeCount == 0 {
		if err := a.newChunk(parent); err != nil {
			return 0, err
		}
	}
	return a.takeFree(parent)
}

// takeFree marks the free inode nearest the parent in use.
func (a *AGI) takeFree(parent format.Ino) (format.Ino, error) {
	g := a.t.Geo()
	cur := a.Tree(g.Finobt).NewCursor()
	ok := false
	var err error
	if pag, pino := g.InoToAg(parent); pag == a.ag {
		if ok, err = cur.Lookup(btree.LE, encodeRec(format.InobtRec{StartIno: pino})); err != nil {
			return 0, err
		}
	}
	for !ok || decodeRec(cur).FreeCount == 0 {
		if !ok {
			if ok, err = cur.First(); err != nil {
				return 0, err
			}
			if !ok {
				return 0, format.Corrupt("AGI", fmt.Sprintf("AG %d", a.ag), "%d free inodes but no chunk has one", a.h.FreeCount)
			}
			continue
		}
		if ok, err = cur.Increment(); err != nil {
			return 0, err
		}
		if !ok {
			return 0, format.Corrupt("AGI", fmt.Sprintf("AG %d", a.ag), "%d free inodes but no chunk has one", a.h.FreeCount)
		}
	}
	rec := decodeRec(cur)
	idx := bits.TrailingZeros64(rec.Free)
	if idx >= format.InodesPerChunk || !rec.Present(idx) {
		return 0, format.Corrupt("inobt", fmt.Sprintf("AG %d chunk %d", a.ag, rec.StartIno), "free mask %#x does not match free count %d", rec.Free, rec.FreeCount)
	}
	updated := rec
	updated.Free &^= 1 << idx
	updated.FreeCount--
	for _, free := range a.trees() {
		c := a.Tree(free).NewCursor()
		found, err := c.Lookup(btree.EQ, encodeRec(rec))
		if err != nil {
			return 0, err
		}
		if !found || decodeRec(c) != rec {
			return 0, format.Corrupt(a.Tree(free).Kind.Shape.Name, fmt.Sprintf("AG %d", a.ag), "chunk %d differs between inode trees", rec.StartIno)
		}
		if free && updated.FreeCount == 0 {
			err = c.Delete()
		} else {
			err = c.Update(encodeRec(updated))
		}
		if err != nil {
			return 0, err
		}
	}
	a.h.FreeCount--
	a.log()
	in := a.t.in
	a.t.OnCommit(func() { in.ifree.Add(-1) })
	return g.AgInoToIno(a.ag, rec.StartIno+format.AgIno(idx)), nil
}

// Free marks ino free in the inode trees (the caller has already turned
// its core into a free inode). Chunks stay allocated, as with the
// kernel's ikeep; returning empty chunks to free space comes with
// inodegc.
func (t *Tx) Free(ino format.Ino) error {
	ag, agino := t.Geo().InoToAg(ino)
	return t.freeInChunk(ag, agino&^(format.InodesPerChunk-1), 1<<(agino%format.InodesPerChunk))
}

// FreeInodes is Free for each of inos, in any order: the inodes of one
// chunk share one lookup and one record update in each inode tree.
func (t *Tx) FreeInodes(inos []format.Ino) error {
	g := t.Geo()
	sorted := slices.Clone(inos)
	slices.Sort(sorted)
	for i := 0; i < len(sorted); {
		ag, agino := g.InoToAg(sorted[i])
		start := agino &^ (format.InodesPerChunk - 1)
		var mask uint64
		for ; i < len(sorted); i++ {
			a, n := g.InoToAg(sorted[i])
			if a != ag || n&^(format.InodesPerChunk-1) != start {
				break
			}
			bit := uint64(1) << (n % format.InodesPerChunk)
			if mask&bit != 0 { // as a second Free of it would find it
				return format.Corrupt("inobt", fmt.Sprintf("AG %d chunk %d", ag, start), "inode %d is already free", sorted[i])
			}
			mask |= bit
		}
		if err := t.freeInChunk(ag, start, mask); err != nil {
			return err
		}
	}
	return nil
}

// freeInChunk marks free the inodes of mask in the chunk of AG ag that
// starts at inode start, updating its inobt and finobt records once.
func (t *Tx) freeInChunk(ag format.AgNumber, start format.AgIno, mask uint64) error {
	a, err := t.Lock(ag)
	if err != nil {
		return err
	}
	key := encodeRec(format.InobtRec{StartIno: start})
	c := a.Tree(false).NewCursor()
	found, err := c.Lookup(btree.EQ, key)
	if err != nil {
		return err
	}
	if !found {
		return format.Corrupt("inobt", fmt.Sprintf("AG %d", ag), "no chunk holds inode %d", start+format.AgIno(bits.TrailingZeros64(mask)))
	}
	rec := decodeRec(c)
	for m := mask; m != 0; m &= m - 1 {
		idx := bits.TrailingZeros64(m)
		if rec.Free&(1<<idx) != 0 || !rec.Present(idx) {
			return format.Corrupt("inobt", fmt.Sprintf("AG %d chunk %d", ag, rec.StartIno), "inode %d is already free", rec.StartIno+format.AgIno(idx))
		}
	}
	n := bits.OnesCount64(mask)
	updated := rec
	updated.Free |= mask
	updated.FreeCount += uint8(n)
	if err := c.Update(encodeRec(updated)); err != nil {
		return err
	}
	if t.Geo().Finobt {
		fc := a.Tree(true).NewCursor()
		found, err := fc.Lookup(btree.EQ, key)
		if err != nil {
			return err
		}
		if found {
			err = fc.Update(encodeRec(updated))
		} else {
			err = fc.Insert(encodeRec(updated))
		}
		if err != nil {
			return err
		}
	}
	a.h.FreeCount += uint32(n)
	a.log()
	in := t.in
	t.OnCommit(func() { in.ifree.Add(int64(n)) })
	return nil
}
