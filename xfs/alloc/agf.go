package alloc

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/btree"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// AG is a transaction's locked view of one AG's free space: its AGF and,
// once needed, its AGFL. Every field is owned by the transaction.
type AG struct {
	t        *Tx
	ag       format.AgNumber
	daddr    format.Daddr
	buf      []byte      // the transaction's copy of the AGF sector
	h        *format.Agf // decoded buf; log() encodes it back
	fl       []byte      // the AGFL sector, read on first use
	busyOnly bool        // the last search skipped busy extents
}

// AgfOps verifies AG ag's AGF on read and sets its CRC on write.
func AgfOps(g *format.Geometry, ag format.AgNumber) *trans.Ops {
	return &trans.Ops{Name: "AGF", Finish: func(b []byte) { format.SetCRC(b, format.AgfCRCOff) },
		Verify: func(b []byte, _ format.Daddr) error {
			_, err := format.VerifyAgf(g, ag, b)
			return err
		}}
}

func agflOps(g *format.Geometry, ag format.AgNumber) *trans.Ops {
	return &trans.Ops{Name: "AGFL", Finish: func(b []byte) { format.SetCRC(b, format.AgflCRCOff) },
		Verify: func(b []byte, _ format.Daddr) error {
			_, err := format.VerifyAgfl(g, ag, b)
			return err
		}}
}

// Reader returns committed metadata outside any transaction, verified
// with ops (the engine's buffer cache, on writable and read-only volumes
// alike).
type Reader func(d format.Daddr, size int, ops *trans.Ops) ([]byte, error)

// Committed reads AG ag's AGF as last committed, without locking it: for
// counters and hints that tolerate a change racing with them.
func Committed(read Reader, g *format.Geometry, ag format.AgNumber) (*format.Agf, error) {
	d := g.AgHeaderDaddr(ag, 1)
	b, err := read(d, g.SectSize, AgfOps(g, ag))
	if err != nil {
		return nil, locateAgf(err, ag, d)
	}
	return format.DecodeAgf(b)
}

func locateAgf(err error, ag format.AgNumber, d format.Daddr) error {
	return format.Located(err, fmt.Sprintf("AG %d AGF (daddr %d)", ag, d))
}

// Lock locks AG ag's AGF for the transaction (once; later calls return
// the same view).
func (t *Tx) Lock(ag format.AgNumber) (*AG, error) {
	a, _, err := t.lock(ag, false)
	return a, err
}

// TryLock is Lock that gives up instead of waiting when another
// transaction holds the AGF.
func (t *Tx) TryLock(ag format.AgNumber) (*AG, bool, error) { return t.lock(ag, true) }

func (t *Tx) lock(ag format.AgNumber, try bool) (*AG, bool, error) {
	if a := t.heldAGF(ag); a != nil {
		return a, true, nil
	}
	if len(t.agfs) > 0 && ag < t.highest() {
		// Below an AGF held: waiting could deadlock.
		a, got, err := t.lockOne(ag, true)
		if err == nil && !got && !try {
			err = &LockOrderError{AG: ag}
		}
		return a, got, err
	}
	for _, p := range t.prelock {
		if p >= ag {
			break
		}
		if t.heldAGF(p) != nil || (len(t.agfs) > 0 && p < t.highest()) {
			continue
		}
		if _, _, err := t.lockOne(p, false); err != nil {
			return nil, false, err
		}
	}
	return t.lockOne(ag, try)
}

// lockOne locks the AGF of ag, or with try gives up (false) when another
// transaction holds it.
func (t *Tx) lockOne(ag format.AgNumber, try bool) (*AG, bool, error) {
	if t.Space.IsSick(ag) {
		if try {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("AG %d: %w", ag, format.ErrSick)
	}
	g := t.Geo()
	d := g.AgHeaderDaddr(ag, 1)
	ops := t.Space.agHeaders(ag).agf
	var buf []byte
	var err error
	if try {
		var got bool
		if buf, got, err = t.TryRead(d, g.SectSize, ops); err == nil && !got {
			return nil, false, nil
		}
	} else {
		buf, err = t.Read(d, g.SectSize, ops)
	}
	if err != nil {
		return nil, false, locateAgf(err, ag, d)
	}
	h, err := format.DecodeAgf(buf)
	if err != nil {
		return nil, false, err
	}
	a := &AG{t: t, ag: ag, daddr: d, buf: buf, h: h}
	t.agfs = append(t.agfs, a)
	return a, true, nil
}

// Header is the locked AGF; callers may read it, only this package
// changes it.
func (a *AG) Header() *format.Agf { return a.h }

// SetRefcountRoot records a new root block and height of the AG's refcount
// btree (agf_refcount_root, agf_refcount_level). Package refcount owns
// that tree; the AGF is this package's, so its fields change here.
func (a *AG) SetRefcountRoot(root format.AgBlock, levels uint32) {
	a.h.RefcountRoot, a.h.RefcountLevel = root, levels
	a.log()
}

// AddRefcountBlocks adds n (negative: takes away) to agf_refcount_blocks,
// the number of refcount btree blocks, root included. Those blocks are
// ordinary allocations from the AG (Alloc, Free), not part of
// agf_btreeblks.
func (a *AG) AddRefcountBlocks(n int) {
	a.h.RefcountBlocks = uint32(int64(a.h.RefcountBlocks) + int64(n))
	a.log()
}

// log re-encodes the header into the transaction's copy.
func (a *AG) log() {
	a.h.Encode(a.buf)
	a.t.Dirty(a.daddr)
}

// Tree returns the bnobt (format.BtBno) or cntbt (format.BtCnt) of the
// AG; blocks for splits come from the AGFL and go back to it.
func (a *AG) Tree(which int) *btree.Tree {
	kind := btree.Bnobt
	if which == format.BtCnt {
		kind = btree.Cntbt
	}
	tr := &btree.Tree{Kind: kind, Geo: a.t.Geo(), AG: a.ag,
		Root: uint64(a.h.Roots[which]), Levels: int(a.h.Levels[which])}
	tr.Store = NewStore(a.t.Tx, a.t.Space, tr,
		func(uint64) (uint64, error) {
			bno, err := a.agflGet()
			if err != nil {
				return 0, err
			}
			a.h.BtreeBlks++
			a.log()
			return uint64(bno), nil
		},
		func(ptr uint64) error {
			if err := a.agflPut(format.AgBlock(ptr)); err != nil {
				return err
			}
			a.h.BtreeBlks--
			a.log()
			return nil
		})
	tr.RootChanged = func() {
		a.h.Roots[which], a.h.Levels[which] = format.AgBlock(tr.Root), uint32(tr.Levels)
		a.log()
	}
	return tr
}
