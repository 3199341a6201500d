package quota

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/trans"
	"github.com/xfs3/xfs3/xfs/xlog"
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
//
// Whoever uses a *Dquot holds a reference (refs) from the lookup that
// returned it until it is done; refs is negative once the evictor has
// claimed it (dead), and then no one can take a reference any more.
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
	refs             atomic.Int32
	used             atomic.Bool // referenced since the evictor last looked

	// rec is the record as last logged (or read): what the next dquot
	// item starts from. Only the log's order lock changes it once the
	// dquot is shared.
	rec atomic.Pointer[Record]
	// unwritten counts logged records not yet written into the block;
	// tickets are the log tickets of the commits that logged them, in
	// log order (see txCommit.WriteBack).
	unwritten atomic.Int32
	ticketsMu sync.Mutex
	tickets   []xlog.Ticket
}

// writtenBack drops the commit at ticket own from d's commits waiting for
// write-back, and reports whether a later one up to durable logged d
// again (then that one writes the record).
func (d *Dquot) writtenBack(own, durable xlog.Ticket) (later bool) {
	d.ticketsMu.Lock()
	defer d.ticketsMu.Unlock()
	if i := slices.Index(d.tickets, own); i >= 0 {
		d.tickets = slices.Delete(d.tickets, i, i+1)
	}
	return len(d.tickets) > 0 && d.tickets[0] > own && d.tickets[0] <= durable
}

// dead is the reference count of a dquot being evicted or gone.
const dead = math.MinInt32 / 2

// tryGet takes a reference unless d is dead, with a compare-and-swap
// loop and no lock.
func (d *Dquot) tryGet() bool {
	for {
		n := d.refs.Load()
		if n < 0 {
			return false
		}
		if d.refs.CompareAndSwap(n, n+1) {
			if !d.used.Load() {
				d.used.Store(true)
			}
			return true
		}
	}
}

// put drops a reference.
func (d *Dquot) put() { d.refs.Add(-1) }

// clean reports whether memory holds nothing the record in its block
// lacks: no reservation in flight (committed counters equal the checked
// ones) and every logged record written back.
func (d *Dquot) clean() bool {
	return d.blocks.Load() == d.cblocks.Load() && d.inodes.Load() == d.cinodes.Load() && d.unwritten.Load() == 0
}

// ID returns the project ID.
func (d *Dquot) ID() uint32 { return d.id }

// Limits returns the project's own limits (zero fields: the defaults).
func (d *Dquot) Limits() Limits { return *d.limits.Load() }

// Usage returns the committed usage and timers.
func (d *Dquot) Usage() Usage {
	return Usage{Blocks: d.cblocks.Load(), Inodes: d.cinodes.Load(), BTimer: d.btimer.Load(), ITimer: d.itimer.Load()}
}

// DefaultCacheBound is how many dquots a Manager keeps by default before
// it evicts unreferenced, clean ones.
const DefaultCacheBound = 4096

// Loader reads project id's record as committed, and the disk address
// of its quota file block; ok is false when the project has none.
type Loader func(id uint32) (r Record, daddr format.Daddr, ok bool, err error)

// Manager holds the dquots of a volume's projects. Lookups read a
// concurrent map and take a reference with an atomic compare-and-swap: no
// lock on the path of a write. Inserting and evicting dquots take mu.
type Manager struct {
	g       *format.Geometry
	enforce bool
	ops     trans.Ops
	now     func() time.Time
	load    Loader // nil: every project is in the table (no eviction)
	bound   int64

	mu       sync.Mutex // serialises inserts, record updates and evictions
	table    sync.Map   // project ID → *Dquot
	def      atomic.Pointer[Dquot]
	cached   atomic.Int64
	gen      atomic.Uint64 // moves under mu when a dquot goes or a record is re-read
	evicting atomic.Bool
	evicted  atomic.Int64
	// sick holds the quota file blocks that failed verification (file
	// block → true); nsick counts them, so that lookups skip the map
	// while there are none.
	sick   sync.Map
	nsick  atomic.Int32
	drifts atomic.Int64 // counts that would have gone negative
}

// NewManager returns an empty manager; enforce says whether limits are
// enforced (sb_qflags PQUOTA_ENFD) or only accounted. It keeps every
// dquot added until SetLoader gives it a way to read records back.
func NewManager(g *format.Geometry, enforce bool) *Manager {
	m := &Manager{g: g, enforce: enforce, now: time.Now, bound: DefaultCacheBound}
	m.ops = trans.Ops{
		Name:   "dquot block",
		Verify: func(b []byte, _ format.Daddr) error { return VerifyBlock(g, b) },
		Finish: FinishBlock,
	}
	return m
}

// SetLoader lets m evict dquots beyond bound (≤ 0: DefaultCacheBound)
// and read their records back with load when they are used again. Call
// it before the manager is shared.
func (m *Manager) SetLoader(load Loader, bound int) {
	if bound <= 0 {
		bound = DefaultCacheBound
	}
	m.load, m.bound = load, int64(bound)
	m.maybeEvict()
}

// Ops is the buffer ops of quota file blocks.
func (m *Manager) Ops() *trans.Ops { return &m.ops }

// Enforcing reports whether limits are enforced.
func (m *Manager) Enforcing() bool { return m.enforce }

// Add puts a project's record, read from the quota file block at daddr,
// into the table, or brings the project's dquot up to date with it (a
// new block, or quotacheck at open: no dquot item of the block is in
// flight, so the record is the latest): limits and timers are taken as
// they are, and a change of the counts moves the checked-against
// counters by as much, keeping the reservations in flight.
func (m *Manager) Add(r Record, daddr format.Daddr) {
	lim := Limits{BlkHard: r.BlkHard, BlkSoft: r.BlkSoft, InoHard: r.InoHard, InoSoft: r.InoSoft}
	m.mu.Lock()
	defer m.mu.Unlock()
	// A load that read the record before this change must not insert it.
	m.gen.Add(1)
	// Under mu no dquot in the table is dead: the evictor marks and
	// removes them within one hold of mu.
	if v, ok := m.table.Load(r.ID); ok {
		d := v.(*Dquot)
		d.limits.Store(&lim)
		d.blocks.Add(int64(r.BCount) - d.cblocks.Swap(int64(r.BCount)))
		d.inodes.Add(int64(r.ICount) - d.cinodes.Swap(int64(r.ICount)))
		d.btimer.Store(r.BTimer)
		d.itimer.Store(r.ITimer)
		d.rec.Store(&r)
		return
	}
	m.insertLocked(r, daddr, 0)
}

// insertLocked makes a dquot from r with refs references; mu is held.
func (m *Manager) insertLocked(r Record, daddr format.Daddr, refs int32) *Dquot {
	_, off := Locate(m.g, r.ID)
	d := &Dquot{id: r.ID, daddr: daddr, off: off}
	d.limits.Store(&Limits{BlkHard: r.BlkHard, BlkSoft: r.BlkSoft, InoHard: r.InoHard, InoSoft: r.InoSoft})
	d.blocks.Store(int64(r.BCount))
	d.inodes.Store(int64(r.ICount))
	d.cblocks.Store(int64(r.BCount))
	d.cinodes.Store(int64(r.ICount))
	d.btimer.Store(r.BTimer)
	d.itimer.Store(r.ITimer)
	d.rec.Store(&r)
	d.refs.Store(refs)
	m.table.Store(r.ID, d)
	if r.ID == 0 {
		// Project 0 holds the defaults every commit reads: never evicted.
		m.def.Store(d)
	}
	m.cached.Add(1)
	m.maybeEvict()
	return d
}

// peek returns project id's dquot with a reference taken, or nil when
// it is not in the table. A dead dquot is on its way out of the table:
// peek waits for that (the evictor holds it dead only briefly).
func (m *Manager) peek(id uint32) *Dquot {
	for {
		v, ok := m.table.Load(id)
		if !ok {
			return nil
		}
		if d := v.(*Dquot); d.tryGet() {
			return d
		}
		runtime.Gosched()
	}
}

// MarkSick records that quota file block fileBlock failed verification:
// from now on every change to a project whose record it holds fails
// with format.ErrSick (its counts cannot be kept), but for project 0's,
// which has no limits and is left uncharged; those projects are left
// out of listings, and project 0's default limits are not enforced.
func (m *Manager) MarkSick(fileBlock uint64) {
	if _, loaded := m.sick.LoadOrStore(fileBlock, true); !loaded {
		m.nsick.Add(1)
	}
}

// Sick reports whether project id's record lies in a block marked sick.
func (m *Manager) Sick(id uint32) bool {
	if m.nsick.Load() == 0 {
		return false
	}
	fb, _ := Locate(m.g, id)
	_, ok := m.sick.Load(fb)
	return ok
}

// get returns project id's dquot with a reference taken, reading its
// record back when it was evicted; nil when the project has no record.
// The caller drops the reference with put.
func (m *Manager) get(id uint32) (*Dquot, error) {
	if m.Sick(id) {
		if id == 0 {
			// Project 0 has no limits to enforce: its changes go on
			// uncharged (its record is never written while sick, and
			// the repair that mends it has the usage recounted).
			return nil, nil
		}
		return nil, fmt.Errorf("the quota record of project %d: %w", id, format.ErrSick)
	}
	for {
		if d := m.peek(id); d != nil || m.load == nil {
			return d, nil
		}
		gen := m.gen.Load()
		r, daddr, ok, err := m.load(id)
		if err != nil || !ok {
			return nil, err
		}
		if d := m.insertLoaded(r, daddr, gen); d != nil {
			return d, nil
		}
	}
}

// insertLoaded puts a record read back from disk into the table unless
// it may be stale (a dquot was evicted or a record re-read since gen:
// nil, read it again); a dquot another load inserted meanwhile wins.
func (m *Manager) insertLoaded(r Record, daddr format.Daddr, gen uint64) *Dquot {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.table.Load(r.ID); ok {
		if d := v.(*Dquot); d.tryGet() {
			return d
		}
	}
	if m.gen.Load() != gen {
		return nil
	}
	return m.insertLocked(r, daddr, 1)
}

// Has reports whether project id has a record.
func (m *Manager) Has(id uint32) (bool, error) {
	d, err := m.get(id)
	if d != nil {
		d.put()
	}
	return d != nil, err
}

// Cached returns the number of dquots in memory and how many were
// evicted so far.
func (m *Manager) Cached() (cached, evicted int64) { return m.cached.Load(), m.evicted.Load() }

// maybeEvict starts an eviction pass when the table is over its bound
// and none runs; it never waits for one.
func (m *Manager) maybeEvict() {
	if m.load == nil || m.cached.Load() <= m.bound || !m.evicting.CompareAndSwap(false, true) {
		return
	}
	go m.evict()
}

// evict drops unreferenced, clean dquots (not project 0) until the table
// is a quarter below its bound, sparing once those used since the last
// pass. Claiming a dquot is a compare-and-swap of its count from 0 to
// dead, so a reference taken first keeps it, and none can be taken after.
func (m *Manager) evict() {
	defer m.evicting.Store(false)
	target := m.bound - m.bound/4
	m.mu.Lock()
	defer m.mu.Unlock()
	removed := false
	m.table.Range(func(_, v any) bool {
		if m.cached.Load() <= target {
			return false
		}
		d := v.(*Dquot)
		if d.id == 0 || d.used.Swap(false) || !d.refs.CompareAndSwap(0, dead) {
			return true
		}
		if !d.clean() {
			// Counts that drifted from the record: keep them.
			d.refs.Store(0)
			return true
		}
		m.table.CompareAndDelete(d.id, d)
		m.cached.Add(-1)
		m.evicted.Add(1)
		removed = true
		return true
	})
	if removed {
		m.gen.Add(1)
	}
}

// Peek calls fn with project id's dquot if it is in memory, holding a
// reference meanwhile; it reports whether it was.
func (m *Manager) Peek(id uint32, fn func(d *Dquot)) bool {
	d := m.peek(id)
	if d == nil {
		return false
	}
	defer d.put()
	fn(d)
	return true
}

// Drifts counts the times a count would have gone below zero and was
// held at zero: the on-disk counts can no longer be trusted.
func (m *Manager) Drifts() int64 { return m.drifts.Load() }

// effective returns the limits that apply to d: its own, or the
// defaults of project 0 for those it leaves at zero.
func (m *Manager) effective(d *Dquot) Limits { return m.Effective(d.id, *d.limits.Load()) }

// Grace returns the block and inode grace periods (project 0's timers,
// or the kernel's default of 7 days).
func (m *Manager) Grace() (blocks, inodes time.Duration) {
	blocks, inodes = DefaultGrace, DefaultGrace
	if def := m.def.Load(); def != nil {
		if t := def.btimer.Load(); t > 0 {
			blocks = time.Duration(t) * time.Second
		}
		if t := def.itimer.Load(); t > 0 {
			inodes = time.Duration(t) * time.Second
		}
	}
	return blocks, inodes
}

// Effective returns the limits that apply to a project with own limits
// own: those, else the defaults.
func (m *Manager) Effective(id uint32, own Limits) Limits {
	if def := m.def.Load(); def != nil && id != 0 {
		return mergeDefaults(own, *def.limits.Load())
	}
	return own
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
// project with no record at commit is not charged: quotacheck counts it
// when it gets one. The dquots are looked up (and referenced) at commit.
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
	if blocks == 0 && inodes == 0 {
		return
	}
	delta, first := tx.Quota(id)
	delta.Blocks += blocks
	delta.Inodes += inodes
	delta.Unchecked = delta.Unchecked || force
	if first {
		m.register(tx)
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
// when it cannot fit. Release gives it back; until then the project's
// dquot stays referenced.
func (m *Manager) Reserve(id uint32, blocks, inodes int64) error {
	d, err := m.get(id)
	if d == nil {
		return err
	}
	if err := m.reserve(d, blocks, inodes, m.enforce && id != 0); err != nil {
		d.put()
		return err
	}
	return nil
}

// Release gives back a successful Reserve.
func (m *Manager) Release(id uint32, blocks, inodes int64) {
	// The Reserve's reference keeps the dquot in the table.
	if d := m.peek(id); d != nil {
		d.blocks.Add(-blocks)
		d.inodes.Add(-inodes)
		d.put()
		d.put()
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

// SetLimits records in tx that project id's own limits become l (zero
// fields: the defaults). They take effect, and are logged, when tx
// commits; a project with no record then is left alone.
func (m *Manager) SetLimits(tx *trans.Tx, id uint32, l Limits) {
	m.admin(tx, id).limits = &l
}

// SetGrace records in tx new grace periods in seconds (project 0's
// timers; 0 keeps the current one).
func (m *Manager) SetGrace(tx *trans.Tx, blocks, inodes int64) {
	a := m.admin(tx, 0)
	a.bgrace, a.igrace = blocks, inodes
}

// adminChange is an administrator's change to a record.
type adminChange struct {
	limits         *Limits
	bgrace, igrace int64
}

func (m *Manager) admin(tx *trans.Tx, id uint32) *adminChange {
	delta, first := tx.Quota(id)
	if first {
		m.register(tx)
	}
	a, _ := delta.Admin.(*adminChange)
	if a == nil {
		a = &adminChange{}
		delta.Admin = a
	}
	return a
}

// txCommit carries one transaction's quota changes through its commit,
// holding a reference on every dquot it changes from apply until the
// commit or cancel is done with it. Its records reach the log as dquot
// items, formatted when the transaction takes its place in the log, and
// reach their blocks when the commit is durable (WriteBack): no dquot
// block is locked by a transaction, as in the kernel, whose dquot items
// are copied into their buffers when the log is pushed.
type txCommit struct {
	m      *Manager
	tx     *trans.Tx
	dquots []*Dquot // referenced, in disk order of their records
	logged []loggedRecord
}

// loggedRecord is a record as one commit logged it.
type loggedRecord struct {
	d   *Dquot
	rec [RecordSize]byte
}

// register hooks a transaction's first quota change into its commit.
func (m *Manager) register(tx *trans.Tx) {
	c := &txCommit{m: m, tx: tx}
	tx.OnPrepared(c.apply)
	tx.OnCommit(c.committed)
	tx.OnCancel(c.cancelled)
}

// apply checks the transaction's gains against the limits and reserves
// them, last thing before the commit; it locks nothing.
func (c *txCommit) apply() error {
	m := c.m
	if err := c.hold(c.tx.QuotaDeltas()); err != nil {
		return err
	}
	for _, d := range c.dquots {
		delta := c.tx.QuotaDeltaOf(d.id)
		check := m.enforce && d.id != 0 && !delta.Unchecked
		if err := m.reserve(d, max(delta.Blocks, 0), max(delta.Inodes, 0), check); err != nil {
			return fmt.Errorf("project %d: %w", d.id, err)
		}
		delta.ResBlocks, delta.ResInodes = max(delta.Blocks, 0), max(delta.Inodes, 0)
	}
	if len(c.dquots) > 0 {
		c.tx.LogLate(c)
	}
	return nil
}

// Format writes the changes into the records and returns them as dquot
// items. It runs under the lock that orders the log, so records are
// logged in the order of their values, and nothing else changes a
// shared dquot's record meanwhile.
func (c *txCommit) Format() []xlog.Item {
	m := c.m
	now := m.now().Unix()
	items := make([]xlog.Item, 0, len(c.dquots))
	c.logged = make([]loggedRecord, len(c.dquots))
	for i, d := range c.dquots {
		delta := c.tx.QuotaDeltaOf(d.id)
		r := *d.rec.Load()
		if a, ok := delta.Admin.(*adminChange); ok {
			if a.limits != nil {
				r.BlkHard, r.BlkSoft, r.InoHard, r.InoSoft = a.limits.BlkHard, a.limits.BlkSoft, a.limits.InoHard, a.limits.InoSoft
				d.limits.Store(a.limits)
			}
			if a.bgrace > 0 {
				r.BTimer = a.bgrace
			}
			if a.igrace > 0 {
				r.ITimer = a.igrace
			}
		}
		r.BCount = m.add(r.BCount, delta.Blocks)
		r.ICount = m.add(r.ICount, delta.Inodes)
		m.Retime(&r, now)
		lr := &c.logged[i]
		lr.d = d
		r.Encode(lr.rec[:])
		// As stored: a bigtime timer is rounded up on disk, and memory
		// must enforce the same instant (else every later commit would
		// push the grace end out again).
		r = Decode(lr.rec[:])
		d.rec.Store(&r)
		d.cblocks.Store(int64(r.BCount))
		d.cinodes.Store(int64(r.ICount))
		d.btimer.Store(r.BTimer)
		d.itimer.Store(r.ITimer)
		d.unwritten.Add(1)
		f := format.DqLogFormat{ID: d.id, Blkno: int64(d.daddr), Len: 1, Boffset: uint32(d.off)}
		items = append(items, xlog.DquotItem(&f, lr.rec[:]))
	}
	return items
}

// Queued notes the commit's ticket on its dquots, still in log order.
func (c *txCommit) Queued(t xlog.Ticket) {
	for _, lr := range c.logged {
		d := lr.d
		d.ticketsMu.Lock()
		d.tickets = append(d.tickets, t)
		d.ticketsMu.Unlock()
	}
}

// WriteBack copies the records this commit logged into their blocks and
// writes them in place, once the commit is durable: the commit's log
// space is kept until then. A record a later durable commit logged again
// is left to that commit, whose write-back comes later in the same
// batch: a hot project's record is written once a batch, not once a
// commit.
func (c *txCommit) WriteBack(cache *trans.Cache, own, durable xlog.Ticket) error {
	for _, lr := range c.logged {
		d := lr.d
		if d.writtenBack(own, durable) {
			d.unwritten.Add(-1)
			continue
		}
		err := cache.WriteInPlace(d.daddr, c.m.g.BlockSize, &c.m.ops, func(b []byte) {
			copy(b[d.off:d.off+RecordSize], lr.rec[:])
		})
		d.unwritten.Add(-1)
		if err != nil {
			return fmt.Errorf("project %d: %w", d.id, err)
		}
	}
	return nil
}

// hold references the dquots of the projects the transaction changes,
// reading back evicted ones, and orders them as their records lie.
func (c *txCommit) hold(deltas []*trans.QuotaDelta) error {
	for _, delta := range deltas {
		id := delta.Project
		if delta.Blocks == 0 && delta.Inodes == 0 && delta.Admin == nil {
			continue
		}
		d, err := c.m.get(id)
		if err != nil {
			return fmt.Errorf("project %d: %w", id, err)
		}
		if d != nil {
			c.dquots = append(c.dquots, d)
		}
	}
	ds := c.dquots
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].daddr != ds[j].daddr {
			return ds[i].daddr < ds[j].daddr
		}
		return ds[i].off < ds[j].off
	})
	return nil
}

// committed turns reservations into usage and drops the references (the
// committed counters moved when the records were logged).
func (c *txCommit) committed() {
	for _, d := range c.dquots {
		delta := c.tx.QuotaDeltaOf(d.id)
		d.blocks.Add(delta.Blocks - delta.ResBlocks)
		d.inodes.Add(delta.Inodes - delta.ResInodes)
		d.put()
	}
	c.dquots = nil
}

// cancelled gives reservations back and drops the references.
func (c *txCommit) cancelled() {
	for _, d := range c.dquots {
		delta := c.tx.QuotaDeltaOf(d.id)
		d.blocks.Add(-delta.ResBlocks)
		d.inodes.Add(-delta.ResInodes)
		d.put()
	}
	c.dquots = nil
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
	if def := m.def.Load(); def != nil {
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
