package quota

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
)

// ErrExceeded is returned when a change would pass a project's hard
// limit, or its soft limit after the grace period (the engine's
// ErrQuota). The kernel reports the same condition as ENOSPC.
var ErrExceeded = format.ErrQuota

// Limits are one project's limits in filesystem blocks and inodes; 0 is
// "no limit" (or, for a project other than 0, "the default").
type Limits struct {
	BlkHard, BlkSoft uint64
	InoHard, InoSoft uint64
}

// Usage is a project's usage and running grace timers (unix seconds).
type Usage struct {
	Blocks, Inodes int64
	BTimer, ITimer int64
}

// Dquot is the in-memory quota of one project. Its fields are split by
// how they are used: limits are read on every charge and written only by
// an administrator, so they sit behind an atomic pointer; the counters
// every writer of the project updates come after a padding, on their own
// cache line, and are changed with atomic adds, so charging takes no lock.
type Dquot struct {
	id     uint32
	daddr  format.Daddr // the quota file block holding the record
	off    int          // the record's offset in it
	limits atomic.Pointer[Limits]

	_ [64]byte
	// blocks and inodes are the committed usage plus reservations of
	// transactions in flight: what a new charge is checked against.
	blocks, inodes atomic.Int64
	// committed usage, as on disk.
	cblocks, cinodes atomic.Int64
	btimer, itimer   atomic.Int64
}

// ID returns the project ID.
func (d *Dquot) ID() uint32 { return d.id }

// Limits returns the project's own limits (zero fields: the defaults).
func (d *Dquot) Limits() Limits { return *d.limits.Load() }

// Usage returns the committed usage and timers.
func (d *Dquot) Usage() Usage {
	return Usage{Blocks: d.cblocks.Load(), Inodes: d.cinodes.Load(), BTimer: d.btimer.Load(), ITimer: d.itimer.Load()}
}

// Manager holds the dquots of a volume's projects. Lookups read a
// copy-on-write table through an atomic pointer: no lock on the path of
// a write; adding a project copies the table under mu.
type Manager struct {
	g       *format.Geometry
	enforce bool
	ops     trans.Ops
	now     func() time.Time

	mu     sync.Mutex // serialises table changes
	table  atomic.Pointer[map[uint32]*Dquot]
	drifts atomic.Int64 // counts that would have gone negative
}

// NewManager returns an empty manager; enforce says whether limits are
// enforced (sb_qflags PQUOTA_ENFD) or only accounted.
func NewManager(g *format.Geometry, enforce bool) *Manager {
	m := &Manager{g: g, enforce: enforce, now: time.Now}
	m.ops = trans.Ops{
		Name:   "dquot block",
		Verify: func(b []byte, _ format.Daddr) error { return VerifyBlock(g, b) },
		Finish: FinishBlock,
	}
	empty := map[uint32]*Dquot{}
	m.table.Store(&empty)
	return m
}

// Ops is the buffer ops of quota file blocks.
func (m *Manager) Ops() *trans.Ops { return &m.ops }

// Enforcing reports whether limits are enforced.
func (m *Manager) Enforcing() bool { return m.enforce }

// Add puts a project's record, read from the quota file block at daddr,
// into the table, or brings the project's dquot up to date with it (the
// caller holds that block locked, so the record is the latest): limits
// and timers are taken as they are, and a change of the counts (a
// quotacheck) moves the checked-against counters by as much, keeping the
// reservations in flight.
func (m *Manager) Add(r Record, daddr format.Daddr) {
	lim := Limits{BlkHard: r.BlkHard, BlkSoft: r.BlkSoft, InoHard: r.InoHard, InoSoft: r.InoSoft}
	if d := m.Lookup(r.ID); d != nil {
		d.limits.Store(&lim)
		d.blocks.Add(int64(r.BCount) - d.cblocks.Swap(int64(r.BCount)))
		d.inodes.Add(int64(r.ICount) - d.cinodes.Swap(int64(r.ICount)))
		d.btimer.Store(r.BTimer)
		d.itimer.Store(r.ITimer)
		return
	}
	_, off := Locate(m.g, r.ID)
	d := &Dquot{id: r.ID, daddr: daddr, off: off}
	d.limits.Store(&lim)
	d.blocks.Store(int64(r.BCount))
	d.inodes.Store(int64(r.ICount))
	d.cblocks.Store(int64(r.BCount))
	d.cinodes.Store(int64(r.ICount))
	d.btimer.Store(r.BTimer)
	d.itimer.Store(r.ITimer)
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.table.Load()
	next := make(map[uint32]*Dquot, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[r.ID] = d
	m.table.Store(&next)
}

// Lookup returns a project's dquot, or nil when the project has no
// record yet.
func (m *Manager) Lookup(id uint32) *Dquot { return (*m.table.Load())[id] }

// All returns every dquot, by project ID.
func (m *Manager) All() []*Dquot {
	t := *m.table.Load()
	out := make([]*Dquot, 0, len(t))
	for _, d := range t {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Drifts counts the times a count would have gone below zero and was
// held at zero: the on-disk counts can no longer be trusted.
func (m *Manager) Drifts() int64 { return m.drifts.Load() }

// effective returns the limits that apply to d: its own, or the
// defaults of project 0 for those it leaves at zero.
func (m *Manager) effective(d *Dquot) Limits {
	l := *d.limits.Load()
	if def := m.Lookup(0); def != nil && d.id != 0 {
		l = mergeDefaults(l, *def.limits.Load())
	}
	return l
}

// Grace returns the block and inode grace periods (project 0's timers,
// or the kernel's default of 7 days).
func (m *Manager) Grace() (blocks, inodes time.Duration) {
	blocks, inodes = DefaultGrace, DefaultGrace
	if def := m.Lookup(0); def != nil {
		if t := def.btimer.Load(); t > 0 {
			blocks = time.Duration(t) * time.Second
		}
		if t := def.itimer.Load(); t > 0 {
			inodes = time.Duration(t) * time.Second
		}
	}
	return blocks, inodes
}

// Effective returns the limits that apply to project id.
func (m *Manager) Effective(id uint32) Limits {
	if d := m.Lookup(id); d != nil {
		return m.effective(d)
	}
	return Limits{}
}

// over reports whether count may not grow to next under hard and soft
// limits with the given timer.
func over(next int64, hard, soft uint64, timer, now int64) bool {
	if hard != 0 && next > int64(hard) {
		return true
	}
	return soft != 0 && next > int64(soft) && timer != 0 && now > timer
}

// reserve adds n to counter c unless, with enforcement on, that passes a
// limit. It never locks: a failed compare-and-swap retries.
func reserve(c *atomic.Int64, n int64, hard, soft uint64, timer, now int64) bool {
	for {
		cur := c.Load()
		if over(cur+n, hard, soft, timer, now) {
			return false
		}
		if c.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// Charge records in tx that project id gains blocks and inodes (either
// may be negative). When tx commits, the project's net gain is checked
// against its limits (with enforcement on; project 0 is never limited)
// and the commit fails with ErrExceeded if it does not fit, so changes
// that move blocks within a project (joining parts) never fail on it. A
// project with no record yet is not charged: quotacheck counts it when it
// gets one.
func (m *Manager) Charge(tx *trans.Tx, id uint32, blocks, inodes int64) {
	m.charge(tx, id, blocks, inodes, false)
}

// Force is Charge for a change that must not fail on a quota (space being
// freed, a count moved by an administrator): the project's limits are not
// checked at commit.
func (m *Manager) Force(tx *trans.Tx, id uint32, blocks, inodes int64) {
	m.charge(tx, id, blocks, inodes, true)
}

func (m *Manager) charge(tx *trans.Tx, id uint32, blocks, inodes int64, force bool) {
	if m.Lookup(id) == nil || (blocks == 0 && inodes == 0) {
		return
	}
	delta, first := tx.Quota(id)
	delta.Blocks += blocks
	delta.Inodes += inodes
	delta.Unchecked = delta.Unchecked || force
	if first {
		c := &txCommit{m: m, tx: tx}
		tx.OnPrepared(c.apply)
		tx.OnCommit(c.committed)
		tx.OnCancel(c.cancelled)
	}
}

// reserve takes blocks and inodes from d's headroom.
func (m *Manager) reserve(d *Dquot, blocks, inodes int64, check bool) error {
	var l Limits
	now := int64(0)
	if check {
		l = m.effective(d)
		now = m.now().Unix()
	}
	if blocks > 0 && !reserve(&d.blocks, blocks, l.BlkHard, l.BlkSoft, d.btimer.Load(), now) {
		return ErrExceeded
	}
	if inodes > 0 && !reserve(&d.inodes, inodes, l.InoHard, l.InoSoft, d.itimer.Load(), now) {
		d.blocks.Add(-blocks)
		return ErrExceeded
	}
	return nil
}

// Reserve takes headroom for a write about to happen (the data of an
// upload of known size), so that it fails before anything is written
// when it cannot fit. Release gives it back.
func (m *Manager) Reserve(id uint32, blocks, inodes int64) error {
	d := m.Lookup(id)
	if d == nil {
		return nil
	}
	return m.reserve(d, blocks, inodes, m.enforce && id != 0)
}

// Release gives back a Reserve.
func (m *Manager) Release(id uint32, blocks, inodes int64) {
	if d := m.Lookup(id); d != nil {
		d.blocks.Add(-blocks)
		d.inodes.Add(-inodes)
	}
}

// add applies a signed delta to an unsigned count, holding it at zero
// (and counting the drift) rather than wrapping.
func (m *Manager) add(v uint64, delta int64) uint64 {
	if delta < 0 && uint64(-delta) > v {
		m.drifts.Add(1)
		return 0
	}
	return uint64(int64(v) + delta)
}

// nextTimer returns a grace timer after a count changed: started when the
// count first passes the soft (or hard) limit, cleared once under it.
func nextTimer(timer int64, count, soft, hard uint64, now int64, grace time.Duration) int64 {
	if (soft != 0 && count > soft) || (hard != 0 && count > hard) {
		if timer == 0 {
			return now + int64(grace/time.Second)
		}
		return timer
	}
	return 0
}

// txCommit carries one transaction's quota changes through its commit.
type txCommit struct {
	m       *Manager
	tx      *trans.Tx
	dquots  []*Dquot
	records []Record
}

// apply writes the changes into the on-disk records, last thing before
// the commit: dquot blocks are the last blocks a transaction locks, in
// disk order, so they never take part in a lock cycle.
func (c *txCommit) apply() error {
	m, deltas := c.m, c.tx.QuotaDeltas()
	now := m.now().Unix()
	for _, d := range m.sortedDeltas(c.tx) {
		delta := deltas[d.id]
		if delta.Blocks == 0 && delta.Inodes == 0 {
			continue
		}
		check := m.enforce && d.id != 0 && !delta.Unchecked
		if err := m.reserve(d, max(delta.Blocks, 0), max(delta.Inodes, 0), check); err != nil {
			return fmt.Errorf("project %d: %w", d.id, err)
		}
		delta.ResBlocks, delta.ResInodes = max(delta.Blocks, 0), max(delta.Inodes, 0)
		b, err := c.tx.Read(d.daddr, m.g.BlockSize, &m.ops)
		if err != nil {
			return err
		}
		rec := b[d.off : d.off+RecordSize]
		r := Decode(rec)
		r.BCount = m.add(r.BCount, delta.Blocks)
		r.ICount = m.add(r.ICount, delta.Inodes)
		m.Retime(&r, now)
		r.Encode(rec)
		c.tx.Dirty(d.daddr)
		c.dquots = append(c.dquots, d)
		// As stored: a bigtime timer is rounded up on disk, and memory
		// must enforce the same instant (else every later commit would
		// push the grace end out again).
		c.records = append(c.records, Decode(rec))
	}
	return nil
}

// committed turns reservations into usage.
func (c *txCommit) committed() {
	for id, delta := range c.tx.QuotaDeltas() {
		if d := c.m.Lookup(id); d != nil {
			d.blocks.Add(delta.Blocks - delta.ResBlocks)
			d.inodes.Add(delta.Inodes - delta.ResInodes)
		}
	}
	for i, d := range c.dquots {
		r := &c.records[i]
		d.cblocks.Store(int64(r.BCount))
		d.cinodes.Store(int64(r.ICount))
		d.btimer.Store(r.BTimer)
		d.itimer.Store(r.ITimer)
	}
}

// cancelled gives reservations back.
func (c *txCommit) cancelled() {
	for id, delta := range c.tx.QuotaDeltas() {
		if d := c.m.Lookup(id); d != nil {
			d.blocks.Add(-delta.ResBlocks)
			d.inodes.Add(-delta.ResInodes)
		}
	}
}

// sortedDeltas returns the dquots tx changes, ordered by the disk address
// of their records: the order dquot blocks are locked in.
func (m *Manager) sortedDeltas(tx *trans.Tx) []*Dquot {
	var ds []*Dquot
	for id := range tx.QuotaDeltas() {
		if d := m.Lookup(id); d != nil {
			ds = append(ds, d)
		}
	}
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].daddr != ds[j].daddr {
			return ds[i].daddr < ds[j].daddr
		}
		return ds[i].off < ds[j].off
	})
	return ds
}

// Retime sets a record's grace timers for its counts and limits (its
// own, else the defaults): started where a soft limit is exceeded, cleared
// where none is. Project 0's timer fields are the grace periods
// themselves and are left alone.
func (m *Manager) Retime(r *Record, now int64) {
	if r.ID == 0 {
		return
	}
	l := Limits{BlkHard: r.BlkHard, BlkSoft: r.BlkSoft, InoHard: r.InoHard, InoSoft: r.InoSoft}
	if def := m.Lookup(0); def != nil {
		dl := *def.limits.Load()
		l = mergeDefaults(l, dl)
	}
	bgrace, igrace := m.Grace()
	r.BTimer = nextTimer(r.BTimer, r.BCount, l.BlkSoft, l.BlkHard, now, bgrace)
	r.ITimer = nextTimer(r.ITimer, r.ICount, l.InoSoft, l.InoHard, now, igrace)
}

// mergeDefaults fills the zero fields of l from def.
func mergeDefaults(l, def Limits) Limits {
	if l.BlkHard == 0 {
		l.BlkHard = def.BlkHard
	}
	if l.BlkSoft == 0 {
		l.BlkSoft = def.BlkSoft
	}
	if l.InoHard == 0 {
		l.InoHard = def.InoHard
	}
	if l.InoSoft == 0 {
		l.InoSoft = def.InoSoft
	}
	return l
}
