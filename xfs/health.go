package xfs

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/quota"
)

// Health. A metadata block that fails its verifier (CRC, magic, owner,
// structure: a *format.CorruptError) marks what it belongs to sick, as
// the kernel's health tracking does: the inode whose fork or core it is
// (a directory, a file, its attributes or extent tree), or else the AG
// whose headers or btrees it is; a block of the project quota file marks
// that block, whose projects' counts can then not be kept. From then on
// no change touches a sick structure: txn.modify refuses a sick inode,
// package alloc never locks a sick AG's AGF (allocations go to other
// AGs) and the quota manager refuses to charge a sick block's projects,
// each with ErrSick; reads that do not need the damaged block go on. The marks
// live in memory for the life of the Volume (the kernel keeps its health
// state in memory too); xfs_repair, run on the stopped volume, is what
// clears them.

// ErrSick: the change would touch a structure marked sick; see Sick.
var ErrSick = format.ErrSick

// SickStructure is a structure marked sick.
type SickStructure struct {
	// Kind is "inode" (Ino is set), "ag" (AG is set) or "quota": a block
	// of the project quota file (Ino is the quota inode, QuotaBlock the
	// file block), holding the records of projects Projects[0] to
	// Projects[1].
	Kind       string
	Ino        format.Ino
	AG         format.AgNumber
	QuotaBlock uint64
	Projects   [2]uint32
	// Structure, Where and Reason are the first verification failure
	// found in it (format.CorruptError).
	Structure, Where, Reason string
	Since                    time.Time
}

func (s SickStructure) String() string {
	switch s.Kind {
	case "ag":
		return fmt.Sprintf("AG %d", s.AG)
	case "quota":
		return fmt.Sprintf("quota file block %d (projects %d to %d)", s.QuotaBlock, s.Projects[0], s.Projects[1])
	}
	return fmt.Sprintf("inode %d", s.Ino)
}

// health holds the sick marks of a volume.
type health struct {
	mu     sync.Mutex // guards below
	inodes map[format.Ino]SickStructure
	ags    map[format.AgNumber]SickStructure
	quota  map[uint64]SickStructure // by quota file block
	onSick func(SickStructure)
}

// markQuotaSick records quota file block fb as sick, in the volume's
// health and in m, the manager of the volume's counts (whose projects in
// the block refuse changes from now on; nil on a read-only volume), and
// returns err marked.
func (v *mount) markQuotaSick(m *quota.Manager, fb uint64, err error) error {
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		return err
	}
	if m != nil {
		m.MarkSick(fb)
	}
	per := uint32(quota.PerBlock(&v.geo))
	s := SickStructure{Kind: "quota", Ino: v.sb.PQuotIno, QuotaBlock: fb,
		Projects:  [2]uint32{uint32(fb) * per, uint32(fb)*per + per - 1},
		Structure: ce.Structure, Where: ce.Where, Reason: ce.Reason, Since: time.Now()}
	h := &v.health
	h.mu.Lock()
	_, known := h.quota[fb]
	if !known {
		if h.quota == nil {
			h.quota = map[uint64]SickStructure{}
		}
		h.quota[fb] = s
	}
	onSick := h.onSick
	h.mu.Unlock()
	if !known && onSick != nil {
		onSick(s)
	}
	c := *ce
	c.Sick = true
	return &c
}

// sickInode reports the mark of inode ino, if it is sick.
func (v *mount) sickInode(ino format.Ino) (SickStructure, bool) {
	v.health.mu.Lock()
	defer v.health.mu.Unlock()
	s, ok := v.health.inodes[ino]
	return s, ok
}

// markSick records the structure err (a verification failure, else
// nothing) belongs to as sick: inode ino when it is not 0, else the AG
// of the failed block. It returns err marked (CorruptError.Sick, so it
// is ErrSick too) with the inode recorded, so that callers up the stack
// do not mark another structure for it.
func (v *mount) markSick(err error, ino format.Ino) error {
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		return err
	}
	if ino == 0 {
		ino = ce.Ino
	}
	if ce.Sick && ce.Ino == ino {
		return err // marked on the way up already
	}
	s := SickStructure{Structure: ce.Structure, Where: ce.Where, Reason: ce.Reason, Since: time.Now()}
	h := &v.health
	h.mu.Lock()
	fresh := false
	switch {
	case ino != 0:
		s.Kind, s.Ino = "inode", ino
		if _, ok := h.inodes[ino]; !ok {
			if h.inodes == nil {
				h.inodes = map[format.Ino]SickStructure{}
			}
			h.inodes[ino], fresh = s, true
		}
	case ce.HasDaddr:
		ag := v.geo.DaddrToAg(ce.Daddr)
		s.Kind, s.AG = "ag", ag
		if _, ok := h.ags[ag]; !ok {
			if h.ags == nil {
				h.ags = map[format.AgNumber]SickStructure{}
			}
			h.ags[ag], fresh = s, true
		}
		if v.w != nil {
			v.w.space.MarkSick(ag)
		}
	}
	onSick := h.onSick
	h.mu.Unlock()
	if fresh && onSick != nil {
		onSick(s)
	}
	if s.Kind != "" && (!ce.Sick || ce.Ino != ino) {
		c := *ce
		c.Ino, c.Sick = ino, true
		return &c
	}
	return err
}

// agFoundSick reports whether err is damage that just marked an AG sick
// (an AG already sick is never read again: its refusals are plain
// ErrSick errors).
func agFoundSick(err error) bool {
	var ce *format.CorruptError
	return errors.As(err, &ce) && ce.Sick && ce.Ino == 0
}

// Sick lists the structures marked sick, AGs first, then inodes, then
// quota file blocks, each kind in order.
func (v *Volume) Sick() []SickStructure {
	h := &v.health
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]SickStructure, 0, len(h.ags)+len(h.inodes)+len(h.quota))
	for _, s := range h.ags {
		out = append(out, s)
	}
	for _, s := range h.inodes {
		out = append(out, s)
	}
	for _, s := range h.quota {
		out = append(out, s)
	}
	rank := map[string]int{"ag": 0, "inode": 1, "quota": 2}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return rank[a.Kind] < rank[b.Kind]
		}
		return a.AG < b.AG || a.AG == b.AG && (a.Ino < b.Ino || a.Ino == b.Ino && a.QuotaBlock < b.QuotaBlock)
	})
	return out
}

// agSick reports whether AG ag is marked sick.
func (v *mount) agSick(ag format.AgNumber) bool {
	v.health.mu.Lock()
	defer v.health.mu.Unlock()
	_, ok := v.health.ags[ag]
	return ok
}

// markDamagedAGs reads every AG's AGF and AGI at a writable open and
// marks sick the AGs whose headers fail verification, so that the open
// goes on without them (Statfs, the unlinked lists and the allocators
// leave sick AGs alone).
func (v *mount) markDamagedAGs() error {
	g := &v.geo
	for ag := format.AgNumber(0); ag < format.AgNumber(g.AgCount); ag++ {
		_, err := alloc.Committed(v.readCommitted, g, ag)
		sector := 1
		if err == nil {
			_, err = ialloc.Committed(v.readCommitted, g, ag)
			sector = 2
		}
		if errors.Is(err, ErrCorrupt) {
			v.markSick(format.AtDaddr(err, g.AgHeaderDaddr(ag, sector)), 0)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// refuseSick fails with ErrSick when inode ino is marked sick.
func (v *mount) refuseSick(ino format.Ino) error {
	if s, ok := v.sickInode(ino); ok {
		return fmt.Errorf("inode %d (%s at %s: %s): %w", ino, s.Structure, s.Where, s.Reason, ErrSick)
	}
	return nil
}
