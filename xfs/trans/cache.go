package trans

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/reclaim"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Cache holds metadata buffers by disk address, bounded by a memory
// budget. Buffers held by a transaction are never evicted.
//
// The buffers are spread over shards by a hash of their address, each
// with its own lock and LRU list: a lookup locks one shard for the
// lookup itself, so lookups of different blocks rarely wait for each
// other. When the cache is over budget one goroutine at a time reclaims
// (package reclaim), visiting the shards in turn.
type Cache struct {
	dev    dev.Device
	budget int64

	shards  [cacheShards]cacheShard
	bytes   atomic.Int64 // of every shard's buffers
	reclaim *reclaim.Reclaimer

	busy Busy

	// unwritten holds the blocks of queued commits until they are written
	// in place, for readers that bypass the cache (ReadAt).
	unwritten unwrittenBlocks

	// log receives every commit before its blocks are written in place
	// (nil: blocks are written in place directly, for tests of this
	// package; a read-only volume's cache has none and never commits).
	// logged holds every block logged by a transaction that recovery may
	// still replay, so that freeing one logs a cancel; entries the log
	// tail has passed are pruned once there are loggedPruneAt of them.
	log           *xlog.Writer
	loggedMu      sync.Mutex // guards logged and loggedPruneAt
	logged        map[format.Daddr]loggedBlock
	loggedPruneAt int
	// noWriteback leaves committed blocks only in the log (tests of
	// recovery).
	noWriteback bool

	// pass gathers the writes of the write-back pass under way.
	pass wbPass
	// blocks holds retired block copies for transactions to reuse.
	blocks blockPool

	pushMu   sync.Mutex    // guards pushDone
	pushDone chan struct{} // closed when the Push under way ends; nil if none

	shutMu  sync.Mutex // guards shutErr
	shutErr error      // set once a commit's write failed
}

// cacheShards is a power of two, well above the cores of the machines
// we serve on, so that two lookups rarely meet on one shard lock.
const (
	cacheShardBits = 6
	cacheShards    = 1 << cacheShardBits
)

// cacheShard is one part of the cache: the buffers whose address hashes
// to it. Its lock also guards their refs and wbRefs.
type cacheShard = reclaim.Shard[format.Daddr, Buf]

// NewCache returns a cache over d keeping about budget bytes of buffers.
func NewCache(d dev.Device, budget int) *Cache {
	c := &Cache{dev: d}
	c.setBudget(int64(budget))
	c.busy.init()
	c.unwritten.blocks = make(map[format.Daddr]unwrittenBlock)
	return c
}

// setBudget sets the budget of a cache not yet in use.
func (c *Cache) setBudget(budget int64) {
	c.budget = budget
	c.reclaim = reclaim.ForBudget(cacheShards, budget, &c.bytes, c.scan)
}

// shard returns the shard of the buffer at daddr.
func (c *Cache) shard(daddr format.Daddr) *cacheShard {
	return &c.shards[reclaim.Index(uint64(daddr), cacheShardBits)]
}

// SetLog routes every later commit through w. Blocks a commit frees
// become reusable as soon as it is durable; its write-backs may wait in
// the log's backlog, whose pinned blocks the cache's budget bounds
// (backlogShare).
func (c *Cache) SetLog(w *xlog.Writer) {
	c.log = w
	c.logged = make(map[format.Daddr]loggedBlock)
	c.loggedPruneAt = loggedPruneMin
	w.OnDurable(c.durableTold)
	w.OnPass(xlog.PassHooks{Start: c.passStart, End: c.passEnd})
	w.SetBacklogLimit(int(c.budget / backlogShare))
}

// backlogShare sizes the log's write-back backlog from the cache budget:
// a commit pins whole blocks for the chunks it logs, a few times its log
// bytes in the cache, so a budget/backlogShare of log bytes keeps what
// the backlog pins to a fraction of the budget.
const backlogShare = 32

// Log returns the log writer, if any.
func (c *Cache) Log() *xlog.Writer { return c.log }

// SkipWriteback makes commits stop writing blocks in place: they exist
// only in the log and the cache, as after a crash right after the log
// write. For recovery tests only.
func (c *Cache) SkipWriteback() { c.noWriteback = true }

// Device is the device the cache reads and writes.
func (c *Cache) Device() dev.Device { return c.dev }

// Busy returns the busy-extent tracker shared by this cache's transactions.
func (c *Cache) Busy() *Busy { return &c.busy }

// lookup finds or creates the buffer header for daddr; the caller gets a
// reference that must be dropped with release. loaded reports whether the
// buffer already holds data.
func (c *Cache) lookup(daddr format.Daddr, size int, ops *Ops) (*Buf, bool, error) {
	s := c.shard(daddr)
	s.Mu.Lock()
	b, loaded, added, err := c.lookupLocked(s, daddr, size, ops)
	s.Mu.Unlock()
	if added && c.bytes.Add(int64(size)) > c.budget {
		c.reclaim.Need(int64(size))
	}
	return b, loaded, err
}

// lookupLocked is lookup under the shard's lock; added reports a new
// buffer, whose bytes the caller adds to the cache's.
func (c *Cache) lookupLocked(s *cacheShard, daddr format.Daddr, size int, ops *Ops) (b *Buf, loaded, added bool, err error) {
	if b, ok := s.Peek(daddr); ok && b.size != size && b.refs == b.wbRefs {
		// The block was reused as metadata of another size: forget the
		// old buffer (a pending write-back keeps its own copy).
		c.detachLocked(s, b)
	}
	if b, ok := s.Get(daddr); ok {
		if b.size != size {
			return nil, false, false, fmt.Errorf("buffer at daddr %d is cached with %d bytes, asked for %d: %w",
				daddr, b.size, size, format.Corrupt("buffer", fmt.Sprintf("daddr %d", daddr), "overlapping metadata of different sizes"))
		}
		if ops != nil && b.ops.Load() == nil {
			b.ops.CompareAndSwap(nil, ops)
		}
		b.refs++
		return b, b.data.Load() != nil, false, nil
	}
	b = s.Add(daddr)
	b.daddr, b.size, b.refs = daddr, size, 1
	b.ops.Store(ops)
	return b, false, true, nil
}

// loggedBlock is the size of a logged block and the ticket of the last
// transaction that logged it.
type loggedBlock struct {
	size   int
	ticket xlog.Ticket
}

// ticketUnknown marks a block logged by a transaction not yet queued: as
// far as pruning and cancels go, it is the newest.
const ticketUnknown = ^xlog.Ticket(0)

const loggedPruneMin = 1 << 14

// setLoggedTicket records that the transaction at ticket t logged ds, and
// prunes the blocks whose last logging the tail has passed when there
// are many.
func (c *Cache) setLoggedTicket(ds []format.Daddr, t xlog.Ticket) {
	c.loggedMu.Lock()
	defer c.loggedMu.Unlock()
	for _, d := range ds {
		if l, ok := c.logged[d]; ok && l.ticket == ticketUnknown {
			c.logged[d] = loggedBlock{l.size, t}
		}
	}
	if len(c.logged) < c.loggedPruneAt {
		return
	}
	past := c.log.PastTail()
	for d, l := range c.logged {
		if l.ticket <= past {
			delete(c.logged, d)
		}
	}
	c.loggedPruneAt = max(loggedPruneMin, 2*len(c.logged))
}

// detachLocked takes b out of its shard s; holders keep their pointer.
func (c *Cache) detachLocked(s *cacheShard, b *Buf) {
	s.Remove(b.daddr)
	c.bytes.Add(-int64(b.size))
}

// writeBack is one block of a committed transaction to write in place.
type writeBack struct {
	b    *Buf
	data []byte
	v    *version // data's version, recycled once retired
	prev *version // the version v replaced, recycled then if it was not
	lent bool     // prev is borrowed by the commit's log item until its write-back
}

// pin keeps the blocks of a queued commit in the cache until they are
// written in place: evicting one earlier would let a read see the old
// content on disk.
func (c *Cache) pin(wb []writeBack) {
	for _, e := range wb {
		s := c.shard(e.b.daddr)
		s.Mu.Lock()
		e.b.refs++
		e.b.wbRefs++
		s.Mu.Unlock()
	}
}

func (c *Cache) unpin(wb []writeBack) {
	for _, e := range wb {
		s := c.shard(e.b.daddr)
		s.Mu.Lock()
		e.b.refs--
		e.b.wbRefs--
		s.Mu.Unlock()
	}
	c.reclaimIfOver()
}

// reclaimIfOver reclaims after buffers were let go, in case held ones
// kept the cache over its budget.
func (c *Cache) reclaimIfOver() {
	if c.bytes.Load() > c.budget {
		c.reclaim.Need(0)
	}
}

// queueLogged puts a commit's items in the log's line and records its
// blocks as unwritten, in one step as far as ReadAt and write-backs can
// tell, and returns its ticket.
func (c *Cache) queueLogged(items []xlog.Item, wb []writeBack, late []LateItem) (xlog.Ticket, error) {
	u := &c.unwritten
	u.mu.Lock()
	defer u.mu.Unlock()
	// u.mu orders every commit's place in the log: late items are
	// formatted under it.
	for _, it := range late {
		items = append(items, it.Format()...)
	}
	t, err := c.log.Queue(items, func(own, durable xlog.Ticket) error {
		if err := c.writeBack(own, durable, wb); err != nil {
			return err
		}
		// Every commit of this batch was queued before the batch was
		// cut, under u.mu, which each holds until its late items know
		// their ticket: taking it once orders those Queued calls before
		// these write-backs.
		u.mu.Lock()
		u.mu.Unlock()
		for _, it := range late {
			if err := it.WriteBack(c, own, durable); err != nil {
				c.shutDown(err)
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, it := range late {
		it.Queued(t)
	}
	for _, e := range wb {
		e.b.newest.Store(uint64(t))
		u.blocks[e.b.daddr] = unwrittenBlock{e.data, t}
		s := c.shard(e.b.daddr)
		s.Mu.Lock()
		e.b.queued = append(e.b.queued, t)
		s.Mu.Unlock()
	}
	u.n.Store(int64(len(u.blocks)))
	return t, nil
}

// writtenBack drops the commit at ticket own from b's queued commits and
// returns the next one, if any (0 if none).
func (c *Cache) writtenBack(b *Buf, own xlog.Ticket) (next xlog.Ticket) {
	s := c.shard(b.daddr)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	// Write-backs run in log order, so own is nearly always the first:
	// dropping it must not move the rest (a hot block's list holds
	// every commit of a backlog).
	switch i := slices.Index(b.queued, own); {
	case i == 0:
		b.queued = b.queued[1:]
	case i > 0:
		b.queued = slices.Delete(b.queued, i, i+1)
	}
	if len(b.queued) == 0 {
		b.queued = nil
		return 0
	}
	return b.queued[0]
}

// writeBack writes a durable commit's blocks in place; the log's leader
// calls it in log order once the commit at ticket own is durable, with
// every commit up to durable. A block that a later commit up to durable
// changed again or freed is left to that commit.
//
// The writes join the pass's gathered writes (wbPass); the blocks stay
// pinned and unwritten until the pass has issued them.
func (c *Cache) writeBack(own, durable xlog.Ticket, wb []writeBack) error {
	// The batch is written: its diff items are done with the versions
	// they diffed against.
	returnLent(wb)
	if c.noWriteback {
		c.unpin(wb)
		return errNoWriteback
	}
	for _, e := range wb {
		// A later commit up to durable that changed the block again
		// writes it later in this pass; one that freed it means it must
		// not be written at all.
		if next := c.writtenBack(e.b, own); next > own && next <= durable {
			continue
		}
		if n := xlog.Ticket(e.b.newest.Load()); n > own && n <= durable {
			continue
		}
		c.pass.gather(e.b.daddr, e.data)
	}
	if !c.pass.after(passDone{wb: wb, own: own}) {
		c.unpin(wb)
		return errors.New("trans: write-back outside a pass")
	}
	return nil
}

// returnLent gives back the versions wb's log items diffed against, once:
// the log runs a commit's write-back once. It writes nothing in wb, which
// the committer may still be reading.
func returnLent(wb []writeBack) {
	for i := range wb {
		if wb[i].lent {
			wb[i].prev.borrowed.Add(-1)
		}
	}
}

// unwrittenBlocks are the newest versions of blocks whose commits are
// queued but not yet written in place.
type unwrittenBlocks struct {
	mu     sync.RWMutex // writers: queueing and write-back; readers: ReadAt
	n      atomic.Int64 // len(blocks), for a lock-free look
	blocks map[format.Daddr]unwrittenBlock
}

type unwrittenBlock struct {
	data   []byte
	ticket xlog.Ticket
}

// forget drops the entries of blocks the commit at ticket own has just
// written (or left to a later commit that freed them): those no later
// commit has changed since.
func (u *unwrittenBlocks) forget(wb []writeBack, own xlog.Ticket) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, e := range wb {
		if ub, ok := u.blocks[e.b.daddr]; ok && ub.ticket <= own {
			delete(u.blocks, e.b.daddr)
		}
	}
	u.n.Store(int64(len(u.blocks)))
}

// ReadAt reads the device as it will be once every commit so far is
// written in place: for metadata readers that bypass the cache (inodes,
// directory and attribute blocks, AG headers). File data never needs it.
func (c *Cache) ReadAt(p []byte, off int64) error {
	u := &c.unwritten
	if u.n.Load() == 0 {
		// Entries are added before their commit is visible and removed
		// only after the block is written, so an empty set means the
		// device is current.
		_, err := c.dev.ReadAt(p, off)
		return err
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	if _, err := c.dev.ReadAt(p, off); err != nil {
		return err
	}
	end := off + int64(len(p))
	type hit struct {
		at int64
		ub unwrittenBlock
	}
	var hits []hit
	for d, ub := range u.blocks {
		if at := format.DaddrToByte(d); at < end && at+int64(len(ub.data)) > off {
			hits = append(hits, hit{at, ub})
		}
	}
	// Blocks of different sizes may overlap after a free and a reuse:
	// the newest wins.
	sort.Slice(hits, func(i, j int) bool { return hits[i].ub.ticket < hits[j].ub.ticket })
	for _, h := range hits {
		lo, hi := max(h.at, off), min(h.at+int64(len(h.ub.data)), end)
		copy(p[lo-off:hi-off], h.ub.data[lo-h.at:hi-h.at])
	}
	return nil
}

// errNoWriteback marks commits left only in the log (SkipWriteback).
var errNoWriteback = errors.New("write-back disabled for a recovery test")

// markFreed records that commit t freed the cached blocks at ds, so that
// older versions still waiting for write-back are not written over
// whatever the blocks hold next.
func (c *Cache) markFreed(ds []format.Daddr, t xlog.Ticket) {
	for _, d := range ds {
		s := c.shard(d)
		s.Mu.Lock()
		if b, ok := s.Peek(d); ok {
			b.newest.Store(uint64(t))
		}
		s.Mu.Unlock()
	}
}

func (c *Cache) release(b *Buf) {
	s := c.shard(b.daddr)
	s.Mu.Lock()
	b.refs--
	s.Mu.Unlock()
	c.reclaimIfOver()
}

// scan evicts the least recently used unreferenced buffers of a shard,
// want bytes of them if it has them (the reclaimer's Scan).
func (c *Cache) scan(shard int, want int64) (entries int, bytes int64) {
	s := &c.shards[shard]
	s.Mu.Lock()
	defer s.Mu.Unlock()
	entries, bytes = s.Evict(want, (*Buf).held, (*Buf).bytes)
	c.bytes.Add(-bytes)
	return entries, bytes
}

// SetParallelReclaim makes every lookup that finds the cache over budget
// reclaim by itself instead of leaving it to the one reclaimer at work:
// the old behaviour, for benchmarks to measure against.
func (c *Cache) SetParallelReclaim(on bool) { c.reclaim.SetParallel(on) }

// Stats returns the cache's use of its budget and its counters.
func (c *Cache) Stats() reclaim.Stats {
	st := reclaim.Stats{Bytes: c.bytes.Load(), Budget: c.budget, Counters: c.reclaim.Counters()}
	st.Entries, st.Hits, st.Misses = reclaim.Sum(c.shards[:])
	return st
}

// Read returns the committed content of a block outside any transaction,
// reading and verifying it on a miss. The slice must not be modified.
func (c *Cache) Read(daddr format.Daddr, size int, ops *Ops) ([]byte, error) {
	b, _, err := c.lookup(daddr, size, ops)
	if err != nil {
		return nil, err
	}
	defer c.release(b)
	if v := b.committed(); v != nil {
		if err := checkKind(b, v, ops); err != nil {
			return nil, err
		}
		return v.b, nil
	}
	return c.load(b, ops)
}

// load reads a buffer's block from the device, verifies it as ops (nil:
// as the buffer's ops) and returns its committed content. Concurrent
// loads of the same block are harmless: both read the same committed
// bytes.
func (c *Cache) load(b *Buf, ops *Ops) ([]byte, error) {
	if ops == nil {
		ops = b.ops.Load()
	}
	data := c.blocks.get(b.size)
	if err := c.ReadAt(data, format.DaddrToByte(b.daddr)); err != nil {
		return nil, fmt.Errorf("read daddr %d: %w", b.daddr, err)
	}
	if ops != nil && ops.Verify != nil {
		if err := ops.Verify(data, b.daddr); err != nil {
			return nil, format.AtDaddr(format.Located(err, fmt.Sprintf("daddr %d", b.daddr)), b.daddr)
		}
	}
	if b.data.CompareAndSwap(nil, newVersion(data, ops)) {
		return data, nil
	}
	v := b.committed()
	if err := checkKind(b, v, ops); err != nil {
		return nil, err
	}
	return v.b, nil
}

// checkKind makes sure version v of b passed the verifier of ops' kind,
// verifying it now if it is known only as another kind (or none): the
// cache hands one copy of a block to every reader, and on a corrupt
// volume a block can be reached as two kinds, so each reader's verifier
// must have passed the bytes it decodes.
func checkKind(b *Buf, v *version, ops *Ops) error {
	if ops == nil || ops.Verify == nil {
		return nil
	}
	if k := v.kind.Load(); k == ops || k != nil && k.Name == ops.Name {
		return nil
	}
	if err := ops.Verify(v.b, b.daddr); err != nil {
		return format.AtDaddr(format.Located(err, fmt.Sprintf("daddr %d", b.daddr)), b.daddr)
	}
	v.kind.Store(ops)
	return nil
}

// Invalidate forgets a cached block (used when metadata is freed, so a
// later reuse of the block as file data cannot be shadowed by stale
// metadata). It must not be held by a transaction.
func (c *Cache) Invalidate(daddr format.Daddr) {
	s := c.shard(daddr)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if b, ok := s.Peek(daddr); ok && b.refs == b.wbRefs {
		c.detachLocked(s, b)
	}
}

// WriteInPlace changes a block outside any transaction and writes it to
// its place, at once or with the write-back pass under way: for a late
// item's write-back (a dquot copied into its block), whose change is
// already durable in the log. change must leave
// the block finished (a dquot record comes with its own CRC), so the
// rest of the block is not finished again. The block must not be one
// that transactions change meanwhile, or their copies would undo it; its
// lock is taken only against another such write.
func (c *Cache) WriteInPlace(daddr format.Daddr, size int, ops *Ops, change func(b []byte)) error {
	b, _, err := c.lookup(daddr, size, ops)
	if err != nil {
		return err
	}
	b.lock.Lock()
	defer b.lock.Unlock()
	var cur []byte
	if v := b.data.Load(); v != nil {
		err = checkKind(b, v, ops)
		cur = v.b
	} else {
		cur, err = c.load(b, ops)
	}
	if err != nil {
		c.release(b)
		return err
	}
	data := append([]byte(nil), cur...)
	change(data)
	b.data.Store(newVersion(data, ops))
	// Within a pass (a dquot's write-back) the write joins the pass's, and
	// the reference keeps the block cached, current, until it is issued.
	if c.pass.gather(daddr, data) && c.pass.after(passDone{release: b}) {
		return nil
	}
	defer c.release(b)
	return writeAt(c.dev, data, format.DaddrToByte(daddr))
}
