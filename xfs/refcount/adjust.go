package refcount

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Adjust adds delta (+1 or -1) to the count of every block of
// [bno, bno+n), as the kernel's xfs_refcount_adjust does for a file
// extent gaining or losing a mapping (see the package doc for the
// model). Every block of the range must be in use, mapped by at least
// one file extent: a block without a record counts 1.
//
// For delta -1 it returns the parts of the range whose count fell to 0,
// in block order: no file maps them any more and the caller frees them
// (alloc's AG.Free, in the same transaction, credited with Tx.Freed).
// For delta +1 it returns nothing.
func (t *Tree) Adjust(bno format.AgBlock, n uint32, delta int) ([]Extent, error) {
	if delta != 1 && delta != -1 {
		return nil, fmt.Errorf("%w: refcount adjustment %d (want +1 or -1)", format.ErrInvalid, delta)
	}
	if err := t.checkRange(bno, n); err != nil {
		return nil, err
	}
	return t.adjust(Shared, bno, n, delta)
}

// AddCoWStaging records [bno, bno+n), blocks just allocated for
// copy-on-write that no file maps yet, as CoW staging (the kernel's
// __xfs_refcount_cow_alloc), merging with staging records beside it. The
// range must not overlap any staging record.
func (t *Tree) AddCoWStaging(bno format.AgBlock, n uint32) error {
	if err := t.checkRange(bno, n); err != nil {
		return err
	}
	// The kernel finds an overlap only past the merges; look first, so
	// that a bad range changes nothing.
	staged, err := t.cowIn(bno, n)
	if err != nil {
		return err
	}
	if staged != nil {
		return t.corrupt("staging %d+%d over staging record %v", bno, n, *staged)
	}
	_, err = t.adjust(CoW, bno, n, 0)
	return err
}

// cowIn returns a staging record that overlaps [bno, bno+n), if any.
func (t *Tree) cowIn(bno format.AgBlock, n uint32) (*Rec, error) {
	_, r, ok, err := t.lookup(btree.LE, CoW, bno)
	if err != nil {
		return nil, err
	}
	if ok && r.End() > bno {
		return &r, nil
	}
	_, r, ok, err = t.lookup(btree.GE, CoW, bno)
	if err != nil {
		return nil, err
	}
	if ok && r.Start < bno+format.AgBlock(n) {
		return &r, nil
	}
	return nil, nil
}

// RemoveCoWStaging forgets the staging of [bno, bno+n), once a file maps
// those blocks or they are freed (the kernel's __xfs_refcount_cow_free).
// The range must be staged: a part of one staging record, split off if
// need be.
func (t *Tree) RemoveCoWStaging(bno format.AgBlock, n uint32) error {
	if err := t.checkRange(bno, n); err != nil {
		return err
	}
	_, err := t.adjust(CoW, bno, n, -1)
	return err
}

// adjust changes the counts of [bno, bno+n) in domain d by adj: +1 or -1
// for shared blocks, 0 (stage) or -1 (unstage) for CoW blocks. It works
// as the kernel does: split the records that cross either end of the
// range, merge the range's ends with the records beside it where their
// counts will match, then adjust what lies between.
func (t *Tree) adjust(d Domain, bno format.AgBlock, n uint32, adj int) ([]Extent, error) {
	if err := t.splitAt(d, bno); err != nil {
		return nil, err
	}
	if err := t.splitAt(d, bno+format.AgBlock(n)); err != nil {
		return nil, err
	}
	bno, n, err := t.mergeEdges(d, bno, n, adj)
	if err != nil || n == 0 {
		return nil, err
	}
	if d == CoW {
		return nil, t.adjustCoW(bno, n, adj)
	}
	return t.adjustShared(bno, n, adj)
}

// splitAt cuts the record of domain d that covers block at and the block
// before it in two, so that no record crosses at
// (xfs_refcount_split_extent).
func (t *Tree) splitAt(d Domain, at format.AgBlock) error {
	_, r, ok, err := t.lookup(btree.LE, d, at)
	if err != nil || !ok || r.Start == at || r.End() <= at {
		return err
	}
	if r.Start > at {
		return t.corrupt("looking for block %d found %v", at, r)
	}
	right := r
	right.Start, right.Len = at, uint32(r.End()-at)
	if err := t.update(r, right); err != nil {
		return err
	}
	left := r
	left.Len = uint32(at - r.Start)
	return t.insert(left)
}

// edge is what lies at one end of the range being adjusted: a record, or
// a stretch without a record (hole) taken as a record of count 1, as the
// kernel synthesizes one.
type edge struct {
	Rec
	valid bool // found at all
	hole  bool // no record: synthesized
}

func holeEdge(d Domain, bno format.AgBlock, n uint32) edge {
	return edge{Rec: Rec{Start: bno, Len: n, Count: 1, Domain: d}, valid: true, hole: true}
}

// newCount is what adj makes of r's count; MaxRefcount stays where it is.
func newCount(r Rec, adj int) uint32 {
	if r.Count == MaxRefcount {
		return MaxRefcount
	}
	return uint32(int64(r.Count) + int64(adj))
}

// findLeft returns the record that ends where the range starts (left)
// and what starts the range (cleft), after splitAt made the range's start
// a record boundary (xfs_refcount_find_left_extents). Both are invalid
// when no record ends at bno.
func (t *Tree) findLeft(d Domain, bno format.AgBlock, n uint32) (left, cleft edge, err error) {
	c, r, ok, err := t.lookup(btree.LE, d, bno-1)
	if err != nil || !ok || r.End() != bno {
		return edge{}, edge{}, err
	}
	left = edge{Rec: r, valid: true}
	next, ok, err := t.step(c, true, d)
	switch {
	case err != nil:
		return edge{}, edge{}, err
	case !ok:
		cleft = holeEdge(d, bno, n)
	case next.Start < bno:
		return edge{}, edge{}, t.corrupt("%v follows %v, which ends after its start", next, r)
	case next.Start == bno:
		cleft = edge{Rec: next, valid: true}
	default:
		cleft = holeEdge(d, bno, min(n, uint32(next.Start-bno)))
	}
	return left, cleft, nil
}

// findRight is findLeft's mirror at the range's end
// (xfs_refcount_find_right_extents): right starts at bno+n, cright ends
// there.
func (t *Tree) findRight(d Domain, bno format.AgBlock, n uint32) (right, cright edge, err error) {
	end := bno + format.AgBlock(n)
	c, r, ok, err := t.lookup(btree.GE, d, end)
	if err != nil || !ok || r.Start != end {
		return edge{}, edge{}, err
	}
	right = edge{Rec: r, valid: true}
	prev, ok, err := t.step(c, false, d)
	switch {
	case err != nil:
		return edge{}, edge{}, err
	case !ok:
		cright = holeEdge(d, bno, n)
	case prev.End() > end:
		return edge{}, edge{}, t.corrupt("%v precedes %v, which starts before its end", prev, r)
	case prev.End() == end:
		cright = edge{Rec: prev, valid: true}
	default:
		start := max(bno, prev.End())
		cright = holeEdge(d, start, uint32(end-start))
	}
	return right, cright, nil
}

// fits reports whether records of these lengths may become one.
func fits(lens ...uint32) bool {
	var sum uint64
	for _, l := range lens {
		sum += uint64(l)
	}
	return sum < MaxExtentLen
}

// mergeEdges joins the ends of the range with the records beside it when
// the adjusted count will equal theirs (xfs_refcount_merge_extents): all
// three when the range is one record or hole between two matching
// records, else the left end, then the right end. It returns the part of
// the range still to adjust.
func (t *Tree) mergeEdges(d Domain, bno format.AgBlock, n uint32, adj int) (format.AgBlock, uint32, error) {
	left, cleft, err := t.findLeft(d, bno, n)
	if err != nil {
		return bno, n, err
	}
	right, cright, err := t.findRight(d, bno, n)
	if err != nil || (!left.valid && !right.valid) {
		return bno, n, err
	}
	single := cleft.Start == cright.Start && cleft.Len == cright.Len

	if left.valid && right.valid && single && left.Count == newCount(cleft.Rec, adj) &&
		right.Count == left.Count && fits(left.Len, cleft.Len, right.Len) {
		if !cleft.hole {
			if err := t.remove(cleft.Rec); err != nil {
				return bno, n, err
			}
		}
		if err := t.remove(right.Rec); err != nil {
			return bno, n, err
		}
		merged := left.Rec
		merged.Len += cleft.Len + right.Len
		return bno, 0, t.update(left.Rec, merged)
	}

	if left.valid && cleft.valid && left.Count == newCount(cleft.Rec, adj) && fits(left.Len, cleft.Len) {
		if !cleft.hole {
			if err := t.remove(cleft.Rec); err != nil {
				return bno, n, err
			}
		}
		merged := left.Rec
		merged.Len += cleft.Len
		if err := t.update(left.Rec, merged); err != nil {
			return bno, n, err
		}
		bno += format.AgBlock(cleft.Len)
		n -= cleft.Len
		if single {
			return bno, n, nil
		}
	}

	if right.valid && cright.valid && right.Count == newCount(cright.Rec, adj) && fits(right.Len, cright.Len) {
		if !cright.hole {
			if err := t.remove(cright.Rec); err != nil {
				return bno, n, err
			}
		}
		merged := right.Rec
		merged.Start -= format.AgBlock(cright.Len)
		merged.Len += cright.Len
		if err := t.update(right.Rec, merged); err != nil {
			return bno, n, err
		}
		n -= cright.Len
	}
	return bno, n, nil
}

// adjustShared adjusts the shared records and holes of [bno, bno+n),
// whose ends no record crosses any more (xfs_refcount_adjust_extents): a
// hole becomes a record of count 2 (+1) or is freed (-1); a record
// changes its count, and one that falls to 1 goes away.
func (t *Tree) adjustShared(bno format.AgBlock, n uint32, adj int) ([]Extent, error) {
	var free []Extent
	for n > 0 {
		_, r, ok, err := t.lookup(btree.GE, Shared, bno)
		if err != nil {
			return nil, err
		}
		next := format.AgBlock(t.geo.AgSize(t.ag))
		if ok {
			next = r.Start
		}
		if next < bno {
			return nil, t.corrupt("looking for block %d found %v", bno, r)
		}
		if next != bno {
			hole := Rec{Start: bno, Len: min(n, uint32(next-bno)), Count: 2, Domain: Shared}
			if adj > 0 {
				if err := t.insert(hole); err != nil {
					return nil, err
				}
			} else {
				free = append(free, Extent{hole.Start, hole.Len})
			}
			bno += format.AgBlock(hole.Len)
			n -= hole.Len
			continue
		}
		if r.Len > n {
			return nil, t.corrupt("%v crosses the end of the range being adjusted", r)
		}
		switch c := newCount(r, adj); {
		case c == r.Count: // pinned at MaxRefcount
		case c >= 2:
			nr := r
			nr.Count = c
			if err := t.update(r, nr); err != nil {
				return nil, err
			}
		default:
			if err := t.remove(r); err != nil {
				return nil, err
			}
		}
		bno += format.AgBlock(r.Len)
		n -= r.Len
	}
	return free, nil
}

// adjustCoW stages (adj 0) or unstages (adj -1) the part of the range
// the merges left (xfs_refcount_adjust_cow_extents): staging inserts one
// record where none may be; unstaging deletes the one record that is
// exactly the range.
func (t *Tree) adjustCoW(bno format.AgBlock, n uint32, adj int) error {
	_, r, ok, err := t.lookup(btree.GE, CoW, bno)
	if err != nil {
		return err
	}
	if adj == 0 {
		if ok && r.Start < bno+format.AgBlock(n) {
			return t.corrupt("staging %d+%d over staging record %v", bno, n, r)
		}
		return t.insert(Rec{Start: bno, Len: n, Count: 1, Domain: CoW})
	}
	if !ok || r.Start != bno || r.Len != n {
		return t.corrupt("unstaging %d+%d, which is not a staged extent", bno, n)
	}
	return t.remove(r)
}
