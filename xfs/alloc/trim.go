package alloc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// DefaultTrimBatch is how many free-space records one trim batch examines
// while it holds an AGF (the kernel's XFS_DISCARD_MAX_EXAMINE).
const DefaultTrimBatch = 100

// TrimRange is a range of one AG for trim to walk.
type TrimRange struct {
	AG         format.AgNumber
	Start, End format.AgBlock // [Start, End); End is clipped to the AG
	// MinLen skips free extents (after clipping to the range and around
	// busy extents) shorter than this many blocks.
	MinLen uint32
	// BatchRecords bounds the free-space records examined per batch, that
	// is per hold of the AGF (0: DefaultTrimBatch).
	BatchRecords int
	// BatchBlocks bounds the free blocks one batch walks (0: no bound);
	// a free extent longer than what is left of it is cut, and the next
	// batch resumes inside it. It bounds what a batch holds busy while
	// its discard runs, however large the free extents.
	BatchBlocks uint64
	// Only, when set, are the parts of [Start, End) to discard, sorted
	// and apart: free space outside them is walked past, not discarded
	// (it was discarded since it was last freed). One walk over runs
	// close together batches their records, where a walk per run would
	// take the AGF once per run.
	Only [][2]format.AgBlock
}

// TrimBatch is what one batch gathered under the AGF.
type TrimBatch struct {
	// Extents are the pieces to discard, marked busy ("discarding") so
	// that allocators avoid them; the caller discards them and then calls
	// Space.TrimDone (Space.Trim does both).
	Extents []trans.Extent
	Records int // free-space records examined
	// Free blocks the examined records hold inside the range, and of
	// those the ones skipped: busy (freed by a commit not yet durable, or
	// being discarded by another pass) or in pieces under MinLen.
	Examined, Busy, Short uint64
	Held                  time.Duration  // how long the AGF was held
	Next                  format.AgBlock // where the next batch starts
	Done                  bool           // nothing of the range is left
}

// Blocks counts the blocks of the batch's extents.
func (b *TrimBatch) Blocks() uint64 {
	var n uint64
	for _, e := range b.Extents {
		n += uint64(e.Len)
	}
	return n
}

// noReservation is the block budget of a transaction that changes nothing.
type noReservation struct{}

func (noReservation) UseBlocks(int64) error { return nil }
func (noReservation) FreeBlocks(int64)      {}

// GatherTrim gathers one batch of range r from block from on: it locks the
// AGF in a transaction of its own, walks the bnobt from the free extent
// that holds (or follows) from, examines at most r.BatchRecords records,
// clips each to the range, cuts busy extents out of it, keeps the pieces
// of at least r.MinLen blocks and marks them discarding before it cancels
// the transaction and so releases the AGF. Next is the end of the last
// record examined (or where r.BatchBlocks cut it): the restart cursor of
// the next batch.
func (s *Space) GatherTrim(c *trans.Cache, r TrimRange, from format.AgBlock) (TrimBatch, error) {
	r = s.clipRange(r)
	b := TrimBatch{Next: max(from, r.Start)}
	if b.Next >= r.End {
		b.Next, b.Done = r.End, true
		return b, nil
	}
	tx, err := c.Begin()
	if err != nil {
		return TrimBatch{}, err
	}
	t := s.Begin(tx, noReservation{})
	a, err := t.Lock(r.AG)
	if err != nil {
		tx.Cancel()
		return TrimBatch{}, err
	}
	locked := time.Now()
	err = s.gatherLocked(a, r, &b)
	if err == nil {
		s.busy.MarkDiscarding(b.Extents)
	}
	tx.Cancel()
	b.Held = time.Since(locked)
	if err != nil {
		return TrimBatch{}, err
	}
	return b, nil
}

// gatherLocked is GatherTrim's walk, with the AGF held.
func (s *Space) gatherLocked(a *AG, r TrimRange, b *TrimBatch) error {
	cur, ok, err := a.trimStart(b.Next)
	if err != nil {
		return err
	}
	var walked uint64
	for ok && b.Records < r.BatchRecords && (r.BatchBlocks == 0 || walked < r.BatchBlocks) {
		rec := decodeRec(cur)
		if uint64(rec.StartBlock) >= uint64(r.End) {
			ok = false
			break
		}
		b.Records++
		if err := s.checkTrimmable(r.AG, rec); err != nil {
			return err
		}
		start := max(rec.StartBlock, b.Next)
		recEnd := uint64(rec.StartBlock) + uint64(rec.BlockCount)
		end := format.AgBlock(min(recEnd, uint64(r.End)))
		if r.BatchBlocks > 0 && end > start {
			end = format.AgBlock(min(uint64(end), uint64(start)+r.BatchBlocks-walked))
		}
		if end > start {
			s.gatherPiece(b, r, start, end)
			walked += uint64(end - start)
			b.Next = end
		}
		if uint64(end) < min(recEnd, uint64(r.End)) {
			break // cut by BatchBlocks: the next batch resumes in this record
		}
		if ok, err = cur.Increment(); err != nil {
			return err
		}
	}
	if !ok || b.Next >= r.End {
		b.Next, b.Done = r.End, true
	}
	return nil
}

// clipRange bounds r to its AG and fills in the default batch size.
func (s *Space) clipRange(r TrimRange) TrimRange {
	r.End = min(r.End, format.AgBlock(s.geo.AgSize(r.AG)))
	if r.BatchRecords <= 0 {
		r.BatchRecords = DefaultTrimBatch
	}
	return r
}

// trimStart positions a bnobt cursor on the first free extent that holds
// or follows block from.
func (a *AG) trimStart(from format.AgBlock) (*btree.Cursor, bool, error) {
	cur := a.Tree(format.BtBno).NewCursor()
	key := encodeRec(format.AllocRec{StartBlock: from})
	ok, err := cur.Lookup(btree.LE, key)
	if err != nil {
		return nil, false, err
	}
	if ok {
		rec := decodeRec(cur)
		if uint64(rec.StartBlock)+uint64(rec.BlockCount) > uint64(from) {
			return cur, true, nil
		}
		ok, err = cur.Increment()
		return cur, ok, err
	}
	ok, err = cur.Lookup(btree.GE, key)
	return cur, ok, err
}

// gatherPiece adds the parts of free range [start, end) inside r.Only
// (when set) to the batch.
func (s *Space) gatherPiece(b *TrimBatch, r TrimRange, start, end format.AgBlock) {
	if r.Only == nil {
		s.gatherFree(b, r, start, end)
		return
	}
	i, _ := slices.BinarySearchFunc(r.Only, start, func(run [2]format.AgBlock, x format.AgBlock) int {
		return cmp.Compare(run[1], x+1) // the first run that ends past start
	})
	for ; i < len(r.Only) && r.Only[i][0] < end; i++ {
		if from, to := max(start, r.Only[i][0]), min(end, r.Only[i][1]); to > from {
			s.gatherFree(b, r, from, to)
		}
	}
}

// gatherFree adds the parts of free range [start, end) that no busy
// extent overlaps to the batch, those of at least MinLen blocks; busy
// parts go back to the untrimmed record, to be tried once durable.
func (s *Space) gatherFree(b *TrimBatch, r TrimRange, start, end format.AgBlock) {
	b.Examined += uint64(end - start)
	keep := func(from, to format.AgBlock) {
		if to <= from {
			return
		}
		if n := uint32(to - from); n >= max(r.MinLen, 1) {
			b.Extents = append(b.Extents, trans.Extent{AG: r.AG, Start: from, Len: n})
		} else {
			b.Short += uint64(n)
		}
	}
	pos := start
	for _, x := range s.busy.Overlap(r.AG, start, uint32(end-start)) {
		xs := max(x.Start, start)
		xe := format.AgBlock(min(x.End(), uint64(end)))
		if xe <= pos {
			continue
		}
		keep(pos, max(xs, pos))
		from := max(xs, pos)
		b.Busy += uint64(xe - from)
		s.untrimmed.mark(r.AG, from, uint32(xe-from))
		pos = xe
	}
	keep(pos, end)
}

// checkTrimmable refuses a free-space record that covers blocks that are
// never free: the AG headers or the internal log. Discarding it would
// destroy them, so it is reported as corruption instead.
func (s *Space) checkTrimmable(ag format.AgNumber, rec format.AllocRec) error {
	g := s.geo
	hdr := format.AgBlock((4*g.SectSize + g.BlockSize - 1) / g.BlockSize)
	end := uint64(rec.StartBlock) + uint64(rec.BlockCount)
	if rec.StartBlock < hdr || end > uint64(g.AgSize(ag)) {
		return format.Corrupt("bnobt", fmt.Sprintf("AG %d", ag), "free extent %d+%d covers the AG headers or lies past the AG", rec.StartBlock, rec.BlockCount)
	}
	for _, x := range s.neverFree {
		if x.AG == ag && uint64(x.Start) < end && x.End() > uint64(rec.StartBlock) {
			return format.Corrupt("bnobt", fmt.Sprintf("AG %d", ag), "free extent %d+%d overlaps the log at %d+%d", rec.StartBlock, rec.BlockCount, x.Start, x.Len)
		}
	}
	return nil
}

// SetNeverFree names extents that no free-space record may cover (the
// internal log); trim refuses to discard such a record. Set it before the
// volume is shared.
func (s *Space) SetNeverFree(exts ...trans.Extent) { s.neverFree = exts }

// TrimDone ends the discarding state of a batch's extents once their
// discard has completed or was given up.
func (s *Space) TrimDone(b TrimBatch) { s.busy.ClearDiscarding(b.Extents) }

// Trim walks range r batch by batch (GatherTrim). Each batch is handed to
// discard on a goroutine of its own, which ends the batch's busy state as
// soon as discard returns; the next batch is gathered meanwhile, and at
// most one batch is being discarded at a time. batchDone sees each batch
// once its discard is over and the next one's has started, so a caller
// that pauses in it (pacing) holds no extent busy but those being
// discarded. Discard counts the failures it tolerates and returns an
// error only to stop the walk (a device that cannot discard). Trim stops
// between batches once ctx is done. It returns where a later walk should
// resume: r.End once the range is done, else the start of the first
// batch not discarded.
func (s *Space) Trim(ctx context.Context, c *trans.Cache, r TrimRange, discard func([]trans.Extent) error, batchDone func(TrimBatch)) (format.AgBlock, error) {
	r = s.clipRange(r)
	type inFlight struct {
		b     TrimBatch
		start format.AgBlock
		errc  chan error
	}
	send := func(b TrimBatch, start format.AgBlock) *inFlight {
		f := &inFlight{b: b, start: start, errc: make(chan error, 1)}
		if len(b.Extents) == 0 {
			f.errc <- nil
			return f
		}
		go func() {
			err := discard(b.Extents)
			s.TrimDone(b)
			f.errc <- err
		}()
		return f
	}
	report := func(b TrimBatch) {
		if batchDone != nil {
			batchDone(b)
		}
	}
	var prev *inFlight
	cursor := r.Start
	for {
		var b TrimBatch
		err := ctx.Err()
		if err == nil {
			b, err = s.GatherTrim(c, r, cursor)
		}
		if prev != nil {
			// The batch in flight completes whatever happens next; if
			// it failed, the walk resumes at its start.
			if perr := <-prev.errc; perr != nil {
				if err == nil {
					s.TrimDone(b)
				}
				return prev.start, perr
			}
		}
		if err != nil {
			if prev != nil {
				report(prev.b)
			}
			return cursor, err
		}
		next := send(b, cursor)
		if prev != nil {
			report(prev.b)
		}
		prev, cursor = next, b.Next
		if b.Done {
			if err := <-prev.errc; err != nil {
				return prev.start, err
			}
			report(prev.b)
			return r.End, nil
		}
	}
}
