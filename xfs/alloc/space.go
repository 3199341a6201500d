package alloc

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// ErrBusyOnly says an AG has room, but only in extents freed by commits
// that are not durable yet.
var ErrBusyOnly = errors.New("free space is busy")

// Space is the allocator's state for one writable volume.
type Space struct {
	geo       *format.Geometry // immutable
	busy      *trans.Busy      // has its own lock
	maxLevels uint32           // tallest a free-space tree can get; immutable
	treeOps   sync.Map         // treeOpsKey -> *trans.Ops; safe for concurrent use
	headerOps []agHeaderOps    // per AG; immutable
	untrimmed *untrimmed       // freed since trimmed; has its own lock
	neverFree []trans.Extent   // the internal log; set before sharing
	sick      []atomic.Bool    // per AG: its metadata failed verification
}

// MarkSick marks AG ag sick: from now on no transaction locks its AGF
// (allocations go elsewhere, frees into it fail with format.ErrSick). It
// reports whether the AG was not sick before.
func (s *Space) MarkSick(ag format.AgNumber) bool {
	return int(ag) < len(s.sick) && !s.sick[ag].Swap(true)
}

// IsSick reports whether AG ag is marked sick.
func (s *Space) IsSick(ag format.AgNumber) bool {
	return int(ag) < len(s.sick) && s.sick[ag].Load()
}

// NewSpace returns the allocator of a volume whose transactions record
// freed extents in busy.
func NewSpace(geo *format.Geometry, busy *trans.Busy) *Space {
	s := &Space{geo: geo, busy: busy, maxLevels: maxLevels(geo), untrimmed: newUntrimmed(geo),
		sick: make([]atomic.Bool, geo.AgCount)}
	s.headerOps = make([]agHeaderOps, geo.AgCount)
	for ag := range s.headerOps {
		s.headerOps[ag] = newAgHeaderOps(geo, format.AgNumber(ag))
	}
	return s
}

// agHeaderOps are the buffer ops of an AG's AGF and AGFL: one value each
// per volume, so that locking a header neither allocates ops nor changes
// the kind its buffer records.
type agHeaderOps struct{ agf, agfl *trans.Ops }

func newAgHeaderOps(g *format.Geometry, ag format.AgNumber) agHeaderOps {
	return agHeaderOps{AgfOps(g, ag), agflOps(g, ag)}
}

// agHeaders returns AG ag's header ops.
func (s *Space) agHeaders(ag format.AgNumber) agHeaderOps {
	if int(ag) < len(s.headerOps) {
		return s.headerOps[ag]
	}
	return newAgHeaderOps(s.geo, ag) // an AG past the end fails its check on read
}

// maxLevels is the tallest a free-space tree can get in an AG.
func maxLevels(g *format.Geometry) uint32 {
	leafMin := uint64(format.BnobtShape.MaxRecs(g.BlockSize, true) / 2)
	nodeMin := uint64(format.BnobtShape.MaxRecs(g.BlockSize, false) / 2)
	recs := (uint64(g.AgBlocks) + 1) / 2
	blocks := (recs + leafMin - 1) / leafMin
	levels := uint32(1)
	for blocks > 1 {
		blocks = (blocks + nodeMin - 1) / nodeMin
		levels++
	}
	return levels
}

// Reservation is the engine transaction's block budget: allocations of
// blocks leaving the free-space trees are charged to it, frees credited.
type Reservation interface {
	UseBlocks(n int64) error
	FreeBlocks(n int64)
}

// Tx is one transaction's view of free space. It is used by the
// transaction's goroutine only.
type Tx struct {
	*trans.Tx
	Space *Space
	res   Reservation
	agfs  []*AG // the AGFs the transaction holds, in the order taken
	// prelock are AGFs taken, in ascending order, as soon as the
	// transaction's AGF locking passes them (Prelock).
	prelock []format.AgNumber
}

// LockOrderError is returned when a transaction needs the AGF of AG
// below one it holds and another transaction has it: waiting could close
// a cycle (AGFs are taken in ascending order; lock order: see package xfs
// doc). The caller cancels the transaction and runs it again with the AG
// prelocked (Prelock), which takes it in order.
type LockOrderError struct{ AG format.AgNumber }

func (e *LockOrderError) Error() string {
	return fmt.Sprintf("AGF %d is held by another transaction and lies below an AGF this one holds", e.AG)
}

// Prelock makes the transaction take the AGFs of ags, in ascending
// order, ahead of any higher AGF it locks: for a transaction run again
// after a LockOrderError.
func (t *Tx) Prelock(ags []format.AgNumber) {
	t.prelock = append(t.prelock[:0], ags...)
	slices.Sort(t.prelock)
}

// Begin starts the allocator's view of transaction tx.
func (s *Space) Begin(tx *trans.Tx, res Reservation) *Tx {
	t := new(Tx)
	s.BeginIn(t, tx, res)
	return t
}

// BeginIn is Begin into t, which the caller keeps in a value of its own:
// one allocation less a transaction.
func (s *Space) BeginIn(t *Tx, tx *trans.Tx, res Reservation) {
	*t = Tx{Tx: tx, Space: s, res: res}
}

// Geo returns the volume's geometry.
func (t *Tx) Geo() *format.Geometry { return t.Space.geo }

// Use charges n blocks to the transaction's reservation.
func (t *Tx) Use(n int64) error { return t.res.UseBlocks(n) }

// Freed credits n blocks to the free count when the transaction commits.
func (t *Tx) Freed(n int64) { t.res.FreeBlocks(n) }

// AllocBlocks allocates between minLen and maxLen blocks anywhere, trying
// the goal's AG first; other AGs are tried without waiting, or waited for
// only above every AGF held (lock order: see package xfs doc).
func (t *Tx) AllocBlocks(goal format.FsBlock, minLen, maxLen uint32, align uint32) (format.FsBlock, uint32, error) {
	g := t.Geo()
	startAG, goalBno := g.FsbToAg(goal)
	if !g.ValidFsb(goal) {
		startAG, goalBno = 0, 0
	}
	busy := false
	for pass := 0; pass < 2; pass++ {
		for i := uint32(0); i < g.AgCount; i++ {
			ag := format.AgNumber((uint32(startAG) + i) % g.AgCount)
			if t.Space.IsSick(ag) {
				continue
			}
			var a *AG
			if pass == 0 {
				var ok bool
				var err error
				if a, ok, err = t.TryLock(ag); err != nil {
					return 0, 0, err
				} else if !ok {
					continue
				}
			} else {
				if t.heldAGF(ag) == nil && ag < t.highest() {
					continue
				}
				var err error
				if a, err = t.Lock(ag); err != nil {
					return 0, 0, err
				}
			}
			if a.h.Longest < minLen+align {
				continue
			}
			r := Request{MinLen: minLen, MaxLen: maxLen, Align: align}
			if ag == startAG {
				r.Goal = goalBno
			}
			bno, n, err := a.Alloc(r)
			if errors.Is(err, ErrBusyOnly) {
				busy = true
				continue
			}
			if errors.Is(err, format.ErrNoSpace) {
				continue
			}
			if err != nil {
				return 0, 0, err
			}
			if err := t.Use(int64(n)); err != nil {
				return 0, 0, err
			}
			return g.AgToFsb(ag, bno), n, nil
		}
	}
	if busy {
		return 0, 0, ErrBusyOnly
	}
	return 0, 0, fmt.Errorf("%w: no free extent of %d blocks", format.ErrNoSpace, minLen)
}

// highest is the highest AG whose AGF the transaction holds.
func (t *Tx) highest() format.AgNumber {
	var hi format.AgNumber
	for _, a := range t.agfs {
		hi = max(hi, a.ag)
	}
	return hi
}

// heldAGF returns AG ag's AGF if the transaction holds it (a transaction
// holds a few at most).
func (t *Tx) heldAGF(ag format.AgNumber) *AG {
	for _, a := range t.agfs {
		if a.ag == ag {
			return a
		}
	}
	return nil
}

// FreeExtents frees extents of any AGs, taking AGFs in ascending order.
func (t *Tx) FreeExtents(exts []format.Extent) error {
	g := t.Geo()
	sorted := append([]format.Extent(nil), exts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].StartBlock < sorted[j].StartBlock })
	for _, e := range sorted {
		ag, bno := g.FsbToAg(e.StartBlock)
		a, err := t.Lock(ag)
		if err != nil {
			return err
		}
		if err := a.Free(bno, uint32(e.BlockCount)); err != nil {
			return err
		}
		t.Freed(int64(e.BlockCount))
	}
	return nil
}
