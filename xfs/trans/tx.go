package trans

import (
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// ErrShutdown is returned once a write failed part-way through a commit:
// the on-disk state can no longer be trusted to match memory.
var ErrShutdown = errors.New("volume shut down after a failed metadata write")

// Tx is a transaction: a set of buffers it has locked and privately
// modified, plus the side effects to apply when it commits. A Tx is used
// by one goroutine.
type Tx struct {
	c     *Cache
	held  []*txBuf                // in the order they were locked
	index map[format.Daddr]*txBuf // of held, once it outgrows inline
	// inline holds the first blocks' state, so that a small transaction
	// (an unlink holds 7 blocks) costs no allocation and no map per block.
	inline    [heldInline]txBuf
	heldSpace [heldInline]*txBuf
	freed     []Extent
	quota     []*QuotaDelta // one a project, in the order first changed

	forget []format.Daddr // freed blocks not held: dropped at commit
	// loggedBlocks are the blocks its buffer items log.
	loggedBlocks []format.Daddr
	owner        Owner
	onPrepare    []func() error
	onPrepared   []func() error
	onCommit     []func()
	onCancel     []func()
	late         []LateItem
	done         bool
	// The first quota deltas (a change charges one or two projects) and
	// the first hooks, without an allocation each.
	quotaSpace   [2]QuotaDelta
	quotaPtrs    [2]*QuotaDelta
	prepareSpace [hooksInline]func() error
	commitSpace  [hooksInline]func()
	cancelSpace  [hooksInline]func()
}

// hooksInline is how many hooks of a kind a transaction keeps inline.
const hooksInline = 4

// A LateItem is logged with a transaction but formatted only at the
// moment the transaction takes its place in the log, under the lock that
// orders the log: items whose content is a running total (a dquot's
// counts) are then logged in the order of their values, with no lock of
// their own held through the commit. The item is not a buffer: it writes
// itself in place once its commit is durable, and the commit's log space
// is kept until it has.
type LateItem interface {
	// Format returns the log items, in the log's order.
	Format() []xlog.Item
	// Queued gives the commit's ticket, still in the log's order.
	Queued(t xlog.Ticket)
	// WriteBack runs once the commit at ticket own is durable, with
	// every commit up to durable, in log order (see xlog.Queue).
	WriteBack(c *Cache, own, durable xlog.Ticket) error
}

// QuotaDelta is what one transaction changes in one project's usage:
// the net change, and the part of it already reserved against the
// project's limits (released if the transaction is cancelled).
type QuotaDelta struct {
	Project              uint32
	Blocks, Inodes       int64
	ResBlocks, ResInodes int64
	Unchecked            bool // not checked against the project's limits
	// Admin is an administrator's change to the project's record (its
	// limits), of the quota layer's type, applied when it is logged.
	Admin any
}

// heldInline is how many blocks a transaction tracks without a map.
const heldInline = 8

type txBuf struct {
	b     *Buf
	data  []byte // the transaction's private copy, or the shared version of a view
	dirty bool
	stale bool // freed metadata: never written, dropped from the cache
	fresh bool // initialised by Get, not read: logged whole
	// view: data is the cache's published version, read-only (View); the
	// first Read or Get of the block in the transaction replaces it with
	// a private copy. viewSum is its checksum under testChecks, to catch
	// a write to a view when the transaction ends.
	view    bool
	viewSum uint32
	// ver is the version data becomes at commit, prev the one it
	// replaces; lent: the commit's log item diffs against prev, which it
	// borrowed until the commit's write-back.
	ver, prev *version
	lent      bool
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// testAfterQueue, set by tests, runs in Commit between the transaction's
// place in the log and the publication of its blocks.
var testAfterQueue func(*Cache)

// Begin starts a transaction. It fails once the cache is shut down.
func (c *Cache) Begin() (*Tx, error) {
	if err := c.shutdownErr(); err != nil {
		return nil, err
	}
	tx := &Tx{c: c}
	tx.held = tx.heldSpace[:0]
	tx.onPrepare, tx.onCommit, tx.onCancel = tx.prepareSpace[:0], tx.commitSpace[:0], tx.cancelSpace[:0]
	return tx, nil
}

// Err returns why the cache shut down (a metadata write failed), or nil
// while it accepts transactions.
func (c *Cache) Err() error { return c.shutdownErr() }

func (c *Cache) shutdownErr() error {
	c.shutMu.Lock()
	defer c.shutMu.Unlock()
	return c.shutErr
}

func (c *Cache) shutDown(err error) {
	c.shutMu.Lock()
	defer c.shutMu.Unlock()
	if c.shutErr == nil {
		c.shutErr = fmt.Errorf("%w: %v", ErrShutdown, err)
	}
}

// TryRead is Read that returns ok false instead of waiting when another
// transaction holds the block.
func (tx *Tx) TryRead(daddr format.Daddr, size int, ops *Ops) (data []byte, ok bool, err error) {
	tb, err := tx.holdTry(daddr, size, ops, true, true)
	if err != nil || tb == nil {
		return nil, false, err
	}
	return tb.data, true, nil
}

// hold locks the buffer for this transaction and gives it a private copy.
func (tx *Tx) hold(daddr format.Daddr, size int, ops *Ops, read bool) (*txBuf, error) {
	return tx.holdTry(daddr, size, ops, read, false)
}

// View locks a block for the transaction, reading and verifying it first
// if needed, like Read, but returns the cache's current version itself
// instead of a private copy: the caller must not change it. Lookups that
// usually only pass through a block (the upper levels of a btree) view
// it; a Read or Get of the same block later in the transaction turns the
// view into a private copy, which the caller then uses in its place.
func (tx *Tx) View(daddr format.Daddr, size int, ops *Ops) ([]byte, error) {
	tb, err := tx.take(daddr, size, ops, holdView, false)
	if err != nil {
		return nil, err
	}
	return tb.data, nil
}

// How a transaction takes a block.
type holdMode int

const (
	holdRead holdMode = iota // read it, private copy
	holdNew                  // about to initialise it, zeroed private copy
	holdView                 // read it, shared read-only version
)

func (tx *Tx) holdTry(daddr format.Daddr, size int, ops *Ops, read, try bool) (*txBuf, error) {
	mode := holdRead
	if !read {
		mode = holdNew
	}
	return tx.take(daddr, size, ops, mode, try)
}

func (tx *Tx) take(daddr format.Daddr, size int, ops *Ops, mode holdMode, try bool) (*txBuf, error) {
	if tx.done {
		panic("trans: use of a finished transaction")
	}
	if tb, ok := tx.find(daddr); ok {
		if len(tb.data) != size {
			return nil, format.Corrupt("buffer", fmt.Sprintf("daddr %d", daddr), "used with %d and %d bytes in one transaction", len(tb.data), size)
		}
		if tb.view && mode != holdView {
			tx.checkView(tb)
			tb.data, tb.view = tx.c.blocks.clone(tb.data), false
		}
		if ops != nil {
			// A block this transaction freed can come back in it as
			// metadata of another kind (a free-space btree block
			// reused for a bmbt): its new holder decides how it is
			// finished, or it would get the old kind's CRC.
			tb.b.setOps(ops)
		}
		return tb, nil
	}
	read := mode != holdNew
	b, loaded, err := tx.c.lookup(daddr, size, ops)
	if err != nil {
		return nil, err
	}
	if try {
		if !b.lock.TryLock() {
			tx.c.release(b)
			return nil, nil
		}
		loaded = b.data.Load() != nil
	} else {
		b.lock.Lock()
		loaded = b.data.Load() != nil
	}
	if read {
		var err error
		if loaded {
			err = checkKind(b, b.data.Load(), ops)
		} else {
			_, err = tx.c.load(b, ops)
		}
		if err != nil {
			b.lock.Unlock()
			tx.c.release(b)
			return nil, err
		}
	}
	tb := tx.newTxBuf(b)
	switch mode {
	case holdView:
		tb.data, tb.view = b.Bytes(), true
		if testChecks() {
			tb.viewSum = crc32.Checksum(tb.data, castagnoli)
		}
	case holdRead:
		tb.data = tx.c.blocks.clone(b.Bytes())
	default:
		tb.data = tx.c.blocks.get(size)
		clear(tb.data)
		tb.dirty = true
	}
	if ops != nil {
		// The holder decides what the block is now: a freed block may
		// come back as metadata of another kind.
		b.setOps(ops)
	}
	tx.held = append(tx.held, tb)
	switch {
	case tx.index != nil:
		tx.index[daddr] = tb
	case len(tx.held) > heldInline:
		tx.index = make(map[format.Daddr]*txBuf, 2*len(tx.held))
		for _, h := range tx.held {
			tx.index[h.b.daddr] = h
		}
	}
	return tb, nil
}

// find returns the transaction's state of a block it holds.
func (tx *Tx) find(daddr format.Daddr) (*txBuf, bool) {
	if tx.index != nil {
		tb, ok := tx.index[daddr]
		return tb, ok
	}
	for _, tb := range tx.held {
		if tb.b.daddr == daddr {
			return tb, true
		}
	}
	return nil, false
}

// newTxBuf returns a zeroed state for the next block taken.
func (tx *Tx) newTxBuf(b *Buf) *txBuf {
	if n := len(tx.held); n < heldInline {
		tx.inline[n] = txBuf{b: b}
		return &tx.inline[n]
	}
	return &txBuf{b: b}
}

// checkView panics, under testChecks, when the view tb was written to:
// such a write would change the cache's published version behind the log.
func (tx *Tx) checkView(tb *txBuf) {
	if tb.view && testChecks() && crc32.Checksum(tb.data, castagnoli) != tb.viewSum {
		panic(fmt.Sprintf("trans: daddr %d was changed through a view (View gives read-only bytes; Read gives a copy to change)", tb.b.daddr))
	}
}

// Read locks a block for the transaction and returns its private copy,
// reading and verifying it first if needed. Changes to the slice take
// effect at Commit, once marked with Dirty.
func (tx *Tx) Read(daddr format.Daddr, size int, ops *Ops) ([]byte, error) {
	tb, err := tx.hold(daddr, size, ops, true)
	if err != nil {
		return nil, err
	}
	return tb.data, nil
}

// Get locks a block the transaction is about to initialise (newly
// allocated metadata) and returns a zeroed private copy, already dirty.
func (tx *Tx) Get(daddr format.Daddr, size int, ops *Ops) ([]byte, error) {
	tb, err := tx.hold(daddr, size, ops, false)
	if err != nil {
		return nil, err
	}
	if !tb.dirty {
		clear(tb.data)
		tb.dirty = true
	}
	tb.fresh = true
	tb.stale = false
	return tb.data, nil
}

// Held returns the transaction's copy of a block it holds, if any.
func (tx *Tx) Held(daddr format.Daddr) ([]byte, bool) {
	tb, ok := tx.find(daddr)
	if !ok {
		return nil, false
	}
	return tb.data, true
}

// Dirty marks a held block as modified.
func (tx *Tx) Dirty(daddr format.Daddr) {
	tb, ok := tx.find(daddr)
	if !ok {
		panic(fmt.Sprintf("trans: Dirty of daddr %d not held by the transaction", daddr))
	}
	if tb.view {
		panic(fmt.Sprintf("trans: Dirty of daddr %d, which the transaction only viewed", daddr))
	}
	tb.dirty = true
}

// Forget marks a block as freed metadata: it is dropped from the cache at
// commit and, if held, never written (its disk blocks may become file data).
func (tx *Tx) Forget(daddr format.Daddr) {
	if tb, ok := tx.find(daddr); ok {
		tb.stale = true
		return
	}
	tx.forget = append(tx.forget, daddr)
}

// FreeExtent records blocks this transaction frees; they stay busy until
// the commit is durable.
func (tx *Tx) FreeExtent(e Extent) { tx.freed = append(tx.freed, e) }

// Quota returns the transaction's change to a project's usage, for the
// quota layer to fill in; first is true for the transaction's first
// quota change, when that layer registers its hooks.
func (tx *Tx) Quota(projid uint32) (d *QuotaDelta, first bool) {
	if d = tx.QuotaDeltaOf(projid); d != nil {
		return d, false
	}
	first = len(tx.quota) == 0
	if n := len(tx.quota); n < len(tx.quotaSpace) {
		d = &tx.quotaSpace[n]
	} else {
		d = new(QuotaDelta)
	}
	*d = QuotaDelta{Project: projid}
	if tx.quota == nil {
		tx.quota = tx.quotaPtrs[:0]
	}
	tx.quota = append(tx.quota, d)
	return d, first
}

// QuotaDeltas returns the per-project changes, one a project.
func (tx *Tx) QuotaDeltas() []*QuotaDelta { return tx.quota }

// QuotaDeltaOf returns the change to project projid, nil if none.
func (tx *Tx) QuotaDeltaOf(projid uint32) *QuotaDelta {
	for _, d := range tx.quota {
		if d.Project == projid {
			return d
		}
	}
	return nil
}

// An Owner is the layer that began a transaction (SetOwner), told of its
// phases before any hook of the same phase.
type Owner interface {
	Prepare() error // as an OnPrepare hook
	Committed()     // as an OnCommit hook
	Cancelled()     // as an OnCancel hook
}

// SetOwner makes o the transaction's owner: as hooks registered first,
// without a function value each.
func (tx *Tx) SetOwner(o Owner) { tx.owner = o }

// OnPrepare registers fn to run at the start of Commit, before anything is
// written: items kept outside buffers (inode cores) copy themselves into
// their buffers here. An error cancels the transaction.
func (tx *Tx) OnPrepare(fn func() error) { tx.onPrepare = append(tx.onPrepare, fn) }

// OnPrepared registers fn to run after every OnPrepare hook: the last
// checks before anything is written (quota limits); it may lock blocks no
// other hook touches afterwards, so they are the last a transaction locks.
func (tx *Tx) OnPrepared(fn func() error) { tx.onPrepared = append(tx.onPrepared, fn) }

// OnCommit registers fn to run after a successful commit, before the
// transaction's buffers are unlocked (in-core counter updates, cache
// changes); OnCancel registers fn for a cancel.
func (tx *Tx) OnCommit(fn func()) { tx.onCommit = append(tx.onCommit, fn) }

// OnCancel registers fn to run when the transaction is cancelled.
func (tx *Tx) OnCancel(fn func()) { tx.onCancel = append(tx.onCancel, fn) }

// LogLate adds an item formatted when the transaction is queued in the
// log (see LateItem). The cache must have a log.
func (tx *Tx) LogLate(it LateItem) { tx.late = append(tx.late, it) }

// Commit makes every change visible. With a log, it queues the
// transaction for the log, publishes its blocks and unlocks them at once;
// the change is durable after Force (or Sync), and its blocks are written
// in place by the log's leader once it is. Without a log it writes the
// blocks in place before returning.
func (tx *Tx) Commit() error {
	if tx.done {
		panic("trans: commit of a finished transaction")
	}
	if tx.owner != nil {
		if err := tx.owner.Prepare(); err != nil {
			tx.Cancel()
			return err
		}
	}
	for i := 0; i < len(tx.onPrepare); i++ { // hooks may add hooks
		if err := tx.onPrepare[i](); err != nil {
			tx.Cancel()
			return err
		}
	}
	for _, fn := range tx.onPrepared {
		if err := fn(); err != nil {
			tx.Cancel()
			return err
		}
	}
	tx.done = true
	for _, tb := range tx.held {
		if tb.dirty && !tb.stale {
			ops := tb.b.ops.Load()
			if ops != nil && ops.Finish != nil {
				ops.Finish(tb.data)
			}
			tb.ver, tb.prev = newVersion(tb.data, ops), tb.b.data.Load()
		}
	}
	var err error
	switch {
	case tx.c.log != nil:
		err = tx.queue()
	case len(tx.late) > 0:
		err = errors.New("trans: a late log item needs a log")
	default:
		err = tx.writeInPlace()
	}
	if err != nil {
		tx.c.shutDown(err)
		tx.unlockAll(false)
		return tx.c.shutdownErr()
	}
	if testAfterQueue != nil {
		testAfterQueue(tx.c)
	}
	for _, tb := range tx.held {
		if tb.dirty && !tb.stale {
			tb.b.data.Store(tb.ver)
			tb.ver.published.Store(true)
		}
	}
	// Hooks run while the buffers are still locked, so that whatever they
	// publish (new inode versions, counters) is in place before another
	// transaction can act on this one's results.
	if tx.owner != nil {
		tx.owner.Committed()
	}
	for _, fn := range tx.onCommit {
		fn()
	}
	if len(tx.forget) == 0 {
		tx.unlockAll(true)
		return nil
	}
	live := make(map[format.Daddr]bool)
	for _, d := range tx.forget {
		if tb, ok := tx.find(d); ok && tb.dirty && !tb.stale {
			live[d] = true
		}
	}
	tx.unlockAll(true)
	for _, d := range tx.forget {
		if !live[d] {
			tx.c.Invalidate(d)
		}
	}
	return nil
}

// queue puts the transaction in the log's line while its buffers are
// still locked, which orders it after every earlier change to them and
// before every later one. The blocks are pinned in the cache until the
// log's leader has written them in place.
func (tx *Tx) queue() error {
	c := tx.c
	items := tx.logItems()
	if len(items) == 0 && len(tx.late) == 0 {
		return nil
	}
	wb := make([]writeBack, 0, len(items))
	for _, tb := range tx.held {
		if tb.dirty && !tb.stale {
			wb = append(wb, writeBack{tb.b, tb.data, tb.ver, tb.prev, tb.lent})
		}
	}
	c.pin(wb)
	t, err := c.queueLogged(items, wb, tx.late)
	if err != nil {
		c.unpin(wb)
		return fmt.Errorf("log commit: %w", err)
	}
	c.setLoggedTicket(tx.loggedBlocks, t)
	// Freed metadata: a pending write-back of an older version must not
	// land after the block is reused.
	for _, tb := range tx.held {
		if tb.stale {
			tb.b.newest.Store(uint64(t))
		}
	}
	c.markFreed(tx.forget, t)
	if len(tx.freed) > 0 {
		c.busy.add(tx.freed, uint64(t))
	}
	return nil
}

// writeInPlace is the commit of a cache without a log (tests of this
// package): the blocks go straight to the device.
func (tx *Tx) writeInPlace() error {
	for _, tb := range tx.held {
		if !tb.dirty || tb.stale {
			continue
		}
		if _, err := tx.c.dev.WriteAt(tb.data, format.DaddrToByte(tb.b.daddr)); err != nil {
			return fmt.Errorf("write daddr %d: %w", tb.b.daddr, err)
		}
	}
	if len(tx.freed) > 0 {
		tx.c.busy.add(tx.freed, 0)
	}
	return nil
}

// Cancel drops every private change and unlocks the buffers.
func (tx *Tx) Cancel() {
	if tx.done {
		return
	}
	tx.done = true
	tx.unlockAll(false)
	if tx.owner != nil {
		tx.owner.Cancelled()
	}
	for _, fn := range tx.onCancel {
		fn()
	}
}

func (tx *Tx) unlockAll(committed bool) {
	for i := len(tx.held) - 1; i >= 0; i-- {
		tb := tx.held[i]
		tx.checkView(tb)
		if committed && tb.stale {
			tb.b.data.Store(nil)
		}
		tb.b.lock.Unlock()
		tx.c.release(tb.b)
		if committed && tb.stale {
			tx.c.Invalidate(tb.b.daddr)
		}
	}
	tx.held, tx.index = nil, nil
}

// Sync makes everything committed so far durable, in the log and in
// place, and releases every busy extent. With a log, it also lets the
// log tail move past every commit written back so far.
func (c *Cache) Sync() error {
	c.waitPush()
	if c.log == nil {
		if err := c.dev.Sync(); err != nil {
			c.shutDown(err)
			return err
		}
		c.busy.Clear(^uint64(0))
		return nil
	}
	if err := c.log.Sync(); err != nil {
		c.shutDown(err)
		return err
	}
	c.durableTold(c.log.Durable()) // a pass begun since may be open
	return nil
}

// Force returns once every transaction committed so far is durable, and
// file data written so far too. Their blocks may still be on their way
// to their places on disk; the log covers them until then.
func (c *Cache) Force() error {
	if c.log == nil {
		return c.Sync()
	}
	if err := c.log.ForceAll(); err != nil {
		c.shutDown(err)
		return err
	}
	return nil
}

// Push starts a Force in a goroutine of its own, unless one is under way,
// and returns at once: background work (inactivation) and lazy committers
// keep the log's queue short without waiting for the log's writes, so
// they go on with their next change while the writes run. A failed write
// shuts the cache down, as with Force; Sync waits for the push under way.
func (c *Cache) Push() {
	if c.log == nil {
		return
	}
	c.pushMu.Lock()
	defer c.pushMu.Unlock()
	if c.pushDone != nil {
		return
	}
	done := make(chan struct{})
	c.pushDone = done
	go func() {
		c.Force() // an error shuts the cache down: later commits see it
		c.pushMu.Lock()
		c.pushDone = nil
		c.pushMu.Unlock()
		close(done)
	}()
}

// waitPush waits for the Push under way, if any.
func (c *Cache) waitPush() {
	c.pushMu.Lock()
	done := c.pushDone
	c.pushMu.Unlock()
	if done != nil {
		<-done
	}
}

// Pushable reports whether enough commits are waiting for the log that a
// caller not forcing every commit should force now.
func (c *Cache) Pushable() bool { return c.log != nil && c.log.Pushable() }

// Backlogged reports whether so much waits for the log that a caller not
// forcing every commit should wait for a force rather than start one.
func (c *Cache) Backlogged() bool { return c.log != nil && c.log.Backlogged() }

// BackgroundPushable reports whether background work has left enough
// commits waiting for the log that it should force them itself.
func (c *Cache) BackgroundPushable() bool { return c.log != nil && c.log.BackgroundPushable() }

// logItems formats the transaction for the log: a buffer item per changed
// block and a cancel item per freed block that was logged before, so
// recovery never replays it over what the block holds next. A changed
// block's item is a diff item (xlog.DiffItem): the log's leader finds
// its changed 128-byte chunks (all of a newly initialised block) against
// the version it replaces, which stays borrowed until the commit's
// write-back (see recycle.go).
func (tx *Tx) logItems() []xlog.Item {
	// Room for the late items' own (queueLogged appends them): a dquot
	// item or two each.
	items := make([]xlog.Item, 0, len(tx.held)+len(tx.forget)+2*len(tx.late))
	c := tx.c
	c.loggedMu.Lock()
	defer c.loggedMu.Unlock()
	pastTail := c.log.PastTail()
	cancel := func(d format.Daddr) {
		if l, ok := c.logged[d]; ok {
			if l.ticket > pastTail {
				items = append(items, xlog.CancelItem(d, l.size))
			}
			delete(c.logged, d)
		}
	}
	for _, tb := range tx.held {
		switch {
		case tb.stale:
			cancel(tb.b.daddr)
		case tb.dirty:
			var old []byte
			if tb.prev != nil && !tb.fresh {
				old = tb.prev.b
				tb.prev.borrowed.Add(1)
				tb.lent = true
			}
			items = append(items, xlog.DiffItem(tb.b.daddr, tb.data, old))
			c.logged[tb.b.daddr] = loggedBlock{len(tb.data), ticketUnknown}
			tx.loggedBlocks = append(tx.loggedBlocks, tb.b.daddr)
		}
	}
	for _, d := range tx.forget {
		// A block freed and then taken again as metadata by this same
		// transaction is logged above: cancelling it would make
		// recovery skip that very item.
		if tb, ok := tx.find(d); ok && tb.dirty && !tb.stale {
			continue
		}
		cancel(d)
	}
	return items
}
