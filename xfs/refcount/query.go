package refcount

import (
	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
)

// Shared returns the shared parts of [bno, bno+n) with their counts, in
// block order, records cut to the range: what a write must copy first
// and what stat reports as shared (the kernel's xfs_refcount_find_shared
// finds the first of them). Blocks not returned count 1.
func (t *Tree) Shared(bno format.AgBlock, n uint32) ([]Rec, error) {
	if err := t.checkRange(bno, n); err != nil {
		return nil, err
	}
	end := bno + format.AgBlock(n)
	c, r, ok, err := t.lookup(btree.LE, Shared, bno)
	if err != nil {
		return nil, err
	}
	switch {
	case !ok:
		// Nothing of the domain at or before bno: start from the first
		// record after it.
		c, r, ok, err = t.lookup(btree.GE, Shared, bno)
	case r.End() <= bno:
		r, ok, err = t.step(c, true, Shared)
	}
	var out []Rec
	for ; err == nil && ok && r.Start < end; r, ok, err = t.step(c, true, Shared) {
		lo, hi := max(r.Start, bno), min(r.End(), end)
		out = append(out, Rec{Start: lo, Len: uint32(hi - lo), Count: r.Count, Domain: Shared})
	}
	return out, err
}

// CoWStaging returns the CoW staging extents of the AG, in block order.
func (t *Tree) CoWStaging() ([]Extent, error) {
	var out []Extent
	c, r, ok, err := t.lookup(btree.GE, CoW, 0)
	for ; err == nil && ok; r, ok, err = t.step(c, true, CoW) {
		out = append(out, Extent{r.Start, r.Len})
	}
	return out, err
}

// CleanCoWStaging removes every CoW staging record of the AG and returns
// their extents, which the caller frees in the same transaction: what
// the kernel does for each AG when a mount recovers the log
// (xfs_refcount_recover_cow_leftovers), since no file's CoW fork
// survives a crash. The kernel takes one transaction per record; this
// takes the caller's.
func (t *Tree) CleanCoWStaging() ([]Extent, error) {
	exts, err := t.CoWStaging()
	if err != nil {
		return nil, err
	}
	for _, e := range exts {
		if err := t.remove(Rec{Start: e.Start, Len: e.Len, Count: 1, Domain: CoW}); err != nil {
			return nil, err
		}
	}
	return exts, nil
}

// Walk calls fn with every record, shared ones first, each domain in
// block order. An error from fn stops the walk and is returned.
func (t *Tree) Walk(fn func(Rec) error) error {
	c := t.bt.NewCursor()
	ok, err := c.First()
	for ; err == nil && ok; ok, err = c.Increment() {
		r, err := t.get(c)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return err
}

// Stats sums up an AG's refcount btree.
type Stats struct {
	Records    int    // shared records
	Shared     uint64 // blocks with a count of 2 or more (sum of the records' lengths)
	Saved      uint64 // blocks sharing saves: sum of length × (count − 1)
	CoWRecords int    // CoW staging records
	CoW        uint64 // blocks staged for copy-on-write
}

func (s *Stats) add(r Rec) {
	if r.Domain == CoW {
		s.CoWRecords++
		s.CoW += uint64(r.Len)
		return
	}
	s.Records++
	s.Shared += uint64(r.Len)
	s.Saved += uint64(r.Len) * uint64(r.Count-1)
}

// Stats walks the records and sums them up.
func (t *Tree) Stats() (Stats, error) {
	var s Stats
	err := t.Walk(func(r Rec) error {
		s.add(r)
		return nil
	})
	return s, err
}

// Check verifies the whole tree: the structure (btree.Check: headers,
// order, keys, fill), every record as Rec.Check does, records that never
// overlap and, in the shared domain, never sit next to each other with
// equal counts (xfs_repair compares the tree with the records it derives
// from the files' mappings, which are always merged so; a record pinned
// at MaxRefcount is the exception), and agf_refcount_blocks against the
// blocks found.
func (t *Tree) Check() (Stats, error) {
	var s Stats
	var prev Rec
	have := false
	bs, err := t.bt.Check(func(b []byte) error {
		r := DecodeRec(b)
		if err := r.Check(t.geo, t.ag); err != nil {
			return format.Located(err, t.where())
		}
		if have && prev.Domain == r.Domain && prev.End() > r.Start {
			return t.corrupt("%v overlaps %v", prev, r)
		}
		if have && r.Domain == Shared && prev.Domain == Shared && prev.End() == r.Start &&
			prev.Count == r.Count && r.Count != MaxRefcount && fits(prev.Len, r.Len) {
			return t.corrupt("%v and %v are not merged", prev, r)
		}
		prev, have = r, true
		s.add(r)
		return nil
	})
	if err != nil {
		return s, err
	}
	if t.hdr != nil && uint32(bs.Blocks) != t.hdr.RefcountBlocks {
		return s, t.corrupt("%d tree blocks, agf_refcount_blocks says %d", bs.Blocks, t.hdr.RefcountBlocks)
	}
	return s, nil
}
