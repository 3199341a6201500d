package xlog

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
)

// Device is what the writer needs from the volume.
type Device interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
}

// durableWriter is a device that can make one write durable without
// flushing the rest of its volatile writes (pwritev2 with RWF_DSYNC).
type durableWriter interface {
	WriteAtDurable(p []byte, off int64) (int, error)
}

// ErrLogFull is returned for a transaction larger than the log can hold.
var ErrLogFull = errors.New("transaction does not fit in the log")

// recPayloadMax is the payload of one record: with h_size 32 KiB a record
// needs a single header sector, and the kernel sizes its recovery buffer
// from the first header it reads, so every record keeps this size.
const recPayloadMax = format.LogBigRecordSize

// splitMin is the smallest op data split across records: format regions
// and headers are smaller and always kept whole, because recovery reads
// their size field from the first piece.
const splitMin = 256

// Ticket numbers queued transactions in log order, from 1.
type Ticket uint64

// Writer appends transactions to the log with group commit. Queue puts a
// transaction in line without any I/O, so the caller can let go of its
// buffers at once; whoever then forces the log and finds no write in
// progress becomes the leader: it writes every queued transaction in one
// device write and one flush, releases every waiter it made durable, and
// then runs their write-back functions in log order.
//
// One batch is written at a time, on purpose. Letting up to four be in
// flight (laid out in order, durable in order, all within the kernel's
// 2 MiB recovery window for holes) shrank batches and lowered DELETE
// throughput at 8 clients: a durable write costs CPU besides its
// latency, so fewer, larger writes win (docs/benchmarks.md).
//
// Nor does a leader hand the next batch to a goroutine of its own so as
// to return at once: measured the same day with BenchmarkGroupCommit,
// 4 committers made 2,100-2,350 commits/s that way against 2,750-2,850.
// The new goroutine waits for a P like any waiter it was meant to spare.
//
// Tail: a transaction's log space is needed until its write-back has run
// and a later flush has made those in-place writes durable. Each record's
// h_tail_lsn is the start of the epoch that holds the oldest such
// transaction, and a batch that would overrun it first flushes the device
// to retire them.
//
// Epochs: the log is cut into epochs, each beginning with a batch, and
// the tail only ever sits at an epoch's start. A directory or attribute
// block (an image item, see wholeImage) is logged whole the first time an
// epoch logs it and by its changed chunks after that, so whatever a
// recovery finds such a block holding in place, newer or torn, the first
// item of it that the recovery replays is whole. An epoch begins with a
// batch that finds an eighth of the log (epochBytes) behind the head
// since the epoch under way began, and with the first batch after Sync;
// the tail can then move to that batch once everything before it is
// retired. A block changed every commit is logged whole about once an
// eighth of the log rather than once a commit.
type Writer struct {
	dev    Device
	start  int64  // byte offset of the log
	blocks uint32 // log size in BBs
	uuid   [16]byte

	mu   sync.Mutex // guards everything below
	cond *sync.Cond // signalled when a leader finishes or durability advances

	cycle, block uint32 // where the next record goes
	prevBlock    int32  // header block of the last record written
	tid          uint32
	queue        []*pending
	queuedBytes  int    // estimated log bytes of the queue
	queued       Ticket // tickets handed out
	durable      Ticket // every ticket up to this one is durable; written under mu and while busy
	busy         bool   // a leader owns the log device
	err          error
	live         map[format.LSN]*liveCounts // commits still needed by recovery
	// liveOrder holds live's LSNs in log order, from the oldest; LSNs
	// retired since stay until they reach the front. The tail is its
	// first live LSN, found without a walk over the map (which held
	// hundreds of commits and cost 1.6% of a server's CPU under the lock).
	liveOrder []format.LSN

	// dataGen counts writes of file data; dataFlushed is the count a
	// finished flush covers. A batch with data written since flushes it
	// before writing its records, so that no record that maps new blocks
	// can reach the disk before their data.
	dataGen     atomic.Uint64
	dataFlushed uint64
	queuedData  uint64 // dataGen when the newest transaction was queued

	// failed is set when a write-back failed: that commit's log space
	// can never be released, so waiting for it is futile.
	failed error

	// backlog holds durable transactions whose write-backs have not run
	// yet, in log order; backlogBytes is their log bytes (upper bounds),
	// and backlogLimit the amount past which a leader runs them.
	backlog      []*pending
	backlogBytes int
	backlogLimit int
	// pushing is set while a pass of write-backs runs (one at a time,
	// in log order, beside batches); pushStarted while a goroutine is
	// on its way to start one.
	pushing, pushStarted bool
	idleArmed            bool          // a timer will run the backlog
	idleAfter            time.Duration // when, after it is armed (0: never)
	// onDurable, if set, is told the newest durable ticket each time a
	// batch makes more transactions durable.
	onDurable func(Ticket)
	// pass, if set, is told when each write-back pass starts and ends.
	pass PassHooks

	// window lists logged transactions in ticket order until the tail
	// passes their start; pastTail is the newest ticket it dropped,
	// stored under mu and read without it: every commit asks for it, and
	// waiting for mu there behind a leader's bookkeeping held up commits
	// (and the cache's lock of logged blocks they hold meanwhile).
	window   []windowEntry
	pastTail atomic.Uint64

	// Epochs (see the Writer doc): epochStarts holds the LSN where each
	// epoch began, oldest first, from the one the tail is in (or before
	// it); newEpoch asks for one to begin with the next batch;
	// wholeLogged holds the image blocks logged whole in the current one.
	epochStarts []format.LSN
	newEpoch    bool
	wholeLogged map[format.Daddr]struct{}

	// out holds the batch being written, laid out record after record as
	// it goes to the device; recs describes its records. Both belong to
	// the leader and are reused from batch to batch, so a commit costs no
	// allocation proportional to the bytes it logs.
	out    []byte
	recs   []record
	merger merger // the leader's, like out

	stats Stats
}

type liveCounts struct{ unwritten, written int }

type windowEntry struct {
	ticket Ticket
	lsn    format.LSN
}

type pending struct {
	items []Item
	// bound is an upper bound of its log bytes, headers included; size
	// is what it is taken to log, its diff items guessed (regionBytes):
	// the measure of the queue and the backlog.
	bound, size int
	ticket      Ticket
	lsn         format.LSN
	writeBack   WriteBack
	// barrier stands for file data written after the last transaction
	// queued: it logs nothing, but its batch flushes that data.
	barrier bool
}

// Stats counts the writer's work.
type Stats struct {
	Commits, Records, Writes, Flushes int64
	Checkpoints                       int64 // commits are logged in (see checkpoints)
	DurableWrites                     int64 // record writes durable on their own (no flush)
	Bytes                             int64
	DataFlushes                       int64 // flushes of file data ahead of a batch
	Pending                           int64 // queued transactions not yet durable
}

// NewWriter continues a clean log whose next record goes at BB block with
// the given cycle; prev is the header block of the record before it (the
// unmount record).
func NewWriter(d Device, l *Log, uuid [16]byte, cycle, block uint32, prev int32) *Writer {
	w := &Writer{dev: d, start: l.Start, blocks: l.Blocks, uuid: uuid, cycle: cycle, block: block, prevBlock: prev,
		live: make(map[format.LSN]*liveCounts), newEpoch: true, wholeLogged: make(map[format.Daddr]struct{})}
	w.cond = sync.NewCond(&w.mu)
	w.backlogLimit = w.backlogMax()
	w.idleAfter = IdleWriteBack
	return w
}

// SetIdleWriteBack sets how long after a batch its write-backs wait at
// most, however quiet the log (IdleWriteBack by default; 0: until the
// backlog is full or Sync).
func (w *Writer) SetIdleWriteBack(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.idleAfter = max(d, 0)
}

// WriteBackBytes is the most log data whose write-backs wait before a
// leader runs them (see SetBacklogLimit).
const WriteBackBytes = 1 << 20

// backlogMax bounds the backlog to WriteBackBytes and an eighth of the
// log, so that it never takes the log to a quarter full, where commits
// lose their durable writes (see writeBatchLocked).
func (w *Writer) backlogMax() int { return min(WriteBackBytes, int(w.blocks)*format.BBSize/8) }

// SetBacklogLimit sets how much log data may wait for its write-backs,
// at most backlogMax. Write-backs wait so that a block many commits
// change (an AG header, a directory block, an inode cluster) is written
// in place once for all of them rather than once a batch: a write-back
// leaves alone a block that a later durable commit changed again. What
// waits pins its blocks in the cache and its log space, so a small cache
// asks for a small limit; 0 runs every batch's write-backs at once.
func (w *Writer) SetBacklogLimit(bytes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.backlogLimit = min(max(bytes, 0), w.backlogMax())
}

// OnDurable registers fn to be told, by the leader and with no lock of
// the writer held, the newest durable ticket each time a batch becomes
// durable: what waits only for durability (blocks freed by a commit)
// need not wait for the write-backs.
func (w *Writer) OnDurable(fn func(Ticket)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onDurable = fn
}

// PassHooks let the owner of the write-backs batch a whole pass: Start
// is called with the writer's lock held as a pass takes its durable
// ticket (which it is told), before any of its write-backs; End once all
// of them have run, with no lock held, before any of its commits counts
// as written back. A failed End leaves every commit of the pass
// unwritten, its log space pinned for good.
type PassHooks struct {
	Start func(durable Ticket)
	End   func() error
}

// OnPass registers the pass hooks.
func (w *Writer) OnPass(h PassHooks) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pass = h
}

// Stats returns the counters so far.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.stats
	st.Pending = int64(w.queued - w.durable)
	return st
}

// Head returns the LSN where the next record goes.
func (w *Writer) Head() format.LSN {
	w.mu.Lock()
	defer w.mu.Unlock()
	return format.MakeLSN(w.cycle, w.block)
}

// Queue puts a transaction in line for the log and returns its ticket;
// nothing is written yet. Transactions reach the log in the order they
// were queued, so a caller that queues while it still holds the buffers
// it changed orders its commit before any later change to them.
//
// writeBack (may be nil: nothing to write in place) is called once the
// transaction is durable, with its own ticket and the newest durable one,
// by the goroutine that wrote it, after every earlier transaction's and
// before any later one's. It writes the transaction's blocks in place; an
// error keeps its log space pinned for good.
func (w *Writer) Queue(items []Item, writeBack WriteBack) (Ticket, error) {
	p, err := w.queueOne(items, writeBack)
	if err != nil {
		return 0, err
	}
	return p.ticket, nil
}

// WriteBack writes a durable transaction's blocks in place (see Queue).
type WriteBack func(own, durable Ticket) error

func (w *Writer) queueOne(items []Item, writeBack WriteBack) (*pending, error) {
	p := &pending{items: items, writeBack: writeBack, bound: transBytes(items, false), size: transBytes(items, true)}
	if p.bound > w.transBytesMax() {
		// Too large if its diff items logged whole blocks: diff them
		// now and go by what they log.
		p.items = formatDiffs(nil, items, nil)
		p.bound = transBytes(p.items, false)
		p.size = p.bound
	}
	if p.bound > w.transBytesMax() {
		return nil, fmt.Errorf("%w: about %d bytes in a log of %d", ErrLogFull, p.bound, int(w.blocks)*format.BBSize)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	w.queueLocked(p)
	return p, nil
}

func (w *Writer) queueLocked(p *pending) {
	w.queued++
	p.ticket = w.queued
	w.queue = append(w.queue, p)
	w.queuedBytes += p.size
	// Its batch flushes every data write seen so far before writing.
	w.queuedData = w.dataGen.Load()
}

// transBytes bounds the log bytes of one transaction, or of one
// checkpoint's items: their op headers and regions, START, the
// transaction header and COMMIT, a record header for every record they
// may span, and the padding of a split. With guess, diff items count
// what they are likely to log rather than their most (regionBytes).
func transBytes(items []Item, guess bool) int {
	n := 3*format.LogOpHeaderSize + format.LogTransHeaderSize + format.LogOpHeaderSize
	for i := range items {
		n += items[i].regionBytes(guess)
	}
	// A record wastes at most its header sector, the padding of its
	// payload to a whole BB and an unsplit op that did not fit.
	const waste = 2*format.BBSize + splitMin + format.LogOpHeaderSize
	records := n/(recPayloadMax-waste) + 2
	return n + records*waste
}

// batchBytesMax is the most a leader writes in one batch (unless a single
// transaction is larger): a quarter of the log.
func (w *Writer) batchBytesMax() int { return int(w.blocks) * format.BBSize / 4 }

// transBytesMax bounds one transaction to half the log, so that it always
// fits once the transactions before it retire.
func (w *Writer) transBytesMax() int { return int(w.blocks) * format.BBSize / 2 }

// PushBytes is the amount of queued log data beyond which committers
// should force the log rather than let the queue grow (see Pushable).
const PushBytes = 1 << 20

// Pushable reports whether the queue has grown past PushBytes or a
// quarter of the log: committers that do not force each commit force the
// log then, keeping the transactions (and the buffers they pin) in memory
// bounded.
func (w *Writer) Pushable() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queuedBytes >= min(PushBytes, w.batchBytesMax())
}

// Backlogged reports whether the queue has grown to twice what makes it
// Pushable: committers that start log writes without waiting for them
// have outrun the writes and should wait for one, which bounds the
// memory the queue pins.
func (w *Writer) Backlogged() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queuedBytes >= 2*min(PushBytes, w.batchBytesMax())
}

// BackgroundPushBytes is the amount of queued log data beyond which
// background work (inode inactivation) forces the log itself. Whoever
// forces next writes everything queued before its own commit, in log
// order; without this a foreground change after a large inactivation
// would write and flush that whole backlog before it could return.
const BackgroundPushBytes = 64 << 10

// BackgroundPushable reports whether the queue has grown past
// BackgroundPushBytes (see there).
func (w *Writer) BackgroundPushable() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queuedBytes >= min(BackgroundPushBytes, w.batchBytesMax())
}

// Commit queues a transaction that needs no write-back (or whose caller
// writes back on its own) and returns once it is durable, with its LSN.
func (w *Writer) Commit(items []Item) (format.LSN, error) {
	p, err := w.queueOne(items, nil)
	if err != nil {
		return 0, err
	}
	if err := w.Force(p.ticket); err != nil {
		return 0, err
	}
	return p.lsn, nil
}

// Force returns once every transaction up to ticket t is durable
// (writing the queue itself if no other goroutine is writing). Their
// write-backs may still be running.
func (w *Writer) Force(t Ticket) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.durable < t {
		if w.err != nil {
			return w.err
		}
		if w.busy {
			w.cond.Wait()
			continue
		}
		w.gatherLocked()
		if err := w.leadLocked(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return w.err
}

// ForceAll makes every transaction queued so far durable, and file data
// written so far as well. Data written before a transaction was queued is
// flushed by that transaction's batch; data written since is covered by a
// barrier that rides in the next batch, so concurrent callers still share
// one flush.
func (w *Writer) ForceAll() error {
	w.mu.Lock()
	if w.dataGen.Load() > max(w.queuedData, w.dataFlushed) {
		w.queueLocked(&pending{barrier: true})
	}
	t := w.queued
	w.mu.Unlock()
	return w.Force(t)
}

// gatherLocked lets the committers of a concurrent load join the batch a
// leader is about to take: it yields the processor once, owning the log
// meanwhile, so that a goroutine that was about to queue (its transaction
// nearly done, or waiting for a P) rides in this write instead of needing
// the next one. With nothing else runnable it returns at once. It cut log
// writes per DELETE at 8 and 32 clients and left a lone client's latency
// unchanged; a 100 µs sleep did as well under load but would cost a lone
// committer that much (docs/benchmarks.md).
func (w *Writer) gatherLocked() {
	w.busy = true // others queue and wait; none leads meanwhile
	w.mu.Unlock()
	runtime.Gosched()
	w.mu.Lock()
	w.busy = false // leadLocked takes the log next and wakes the waiters
}

// Durable returns the newest ticket up to which everything is durable.
func (w *Writer) Durable() Ticket {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.durable
}

// PastTail returns a ticket such that no recovery will replay that
// transaction or any before it: every record written from now on names a
// tail past their start. A block logged only by such transactions needs
// no cancel item when it is freed.
func (w *Writer) PastTail() Ticket {
	return Ticket(w.pastTail.Load())
}

// leadLocked writes one batch from the front of the queue, makes it
// durable, wakes its waiters and runs its write-backs. Called with the
// lock held and no leader; it drops the lock for I/O.
func (w *Writer) leadLocked() error {
	n, bound, bytes := 0, 0, 0
	for n < len(w.queue) && (n == 0 || bound+w.queue[n].bound <= w.batchBytesMax()) {
		bound += w.queue[n].bound
		bytes += w.queue[n].size
		n++
	}
	if n == 0 {
		return errors.New("xlog: internal error: force with nothing queued")
	}
	last := w.queue[n-1].ticket
	var batch []*pending
	for _, p := range w.queue[:n] {
		if !p.barrier {
			batch = append(batch, p)
		}
	}
	w.queue = w.queue[n:]
	w.queuedBytes -= bytes
	w.busy = true
	defer func() { w.busy = false; w.cond.Broadcast() }()
	if len(batch) == 0 {
		// Only barriers: flush the file data written before them.
		if w.dataGen.Load() > w.dataFlushed {
			w.stats.DataFlushes++
			if err := w.flushLocked(); err != nil {
				return err
			}
		}
		w.durable = last
		return nil
	}
	if err := w.writeBatchLocked(batch); err != nil {
		return err
	}
	w.durable = last
	w.cond.Broadcast()
	for _, p := range batch {
		// The items are written: their bytes (blocks' committed
		// versions) are the cache's again, to recycle once written in
		// place.
		p.items = nil
		if p.writeBack == nil {
			w.markWrittenLocked(p.lsn)
			continue
		}
		w.backlog = append(w.backlog, p)
		w.backlogBytes += p.size
	}
	if fn := w.onDurable; fn != nil {
		w.mu.Unlock()
		fn(last)
		w.mu.Lock()
	}
	if w.backlogBytes > w.backlogLimit {
		// A pass of its own, beside the batches that follow: a commit
		// waits for the log write it rides in, not for a megabyte of
		// in-place writes. The flush that retires them comes once the
		// log is a quarter full (writeBatchLocked), or with Sync.
		if w.backlogBytes <= 2*w.backlogLimit && !w.pushing && !w.pushStarted {
			w.pushStarted = true
			go w.pushBacklog()
			return nil
		}
		// Passes fall behind (or the limit is tiny): the leader runs
		// one itself, after the pass under way, which holds back the
		// next batch and so bounds what the backlog pins.
		return w.writeBacklogLocked()
	}
	if len(w.backlog) > 0 && !w.idleArmed && w.idleAfter > 0 {
		w.idleArmed = true
		time.AfterFunc(w.idleAfter, w.idleWriteBack)
	}
	return nil
}

// IdleWriteBack bounds how long a write-back waits in the backlog when
// the log goes quiet: the blocks reach their places, the cache can evict
// them, and the volume file holds current metadata, within about this
// long of their commit.
const IdleWriteBack = time.Second

// idleWriteBack runs the backlog, from a timer.
func (w *Writer) idleWriteBack() {
	w.mu.Lock()
	w.idleArmed = false
	w.mu.Unlock()
	// A failure is the writer's (w.failed, or w.err of a closed log):
	// the next commit or Sync reports it.
	_ = w.WriteBackNow()
}

// pushBacklog runs the backlog, from its own goroutine.
func (w *Writer) pushBacklog() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pushStarted = false
	defer w.cond.Broadcast()
	// A failure is the writer's (w.failed): it pins the log.
	_ = w.writeBacklogLocked()
}

// ErrHalted is what a halted writer answers every later force with.
var ErrHalted = errors.New("xlog: writer halted")

// Halt stops the writer as a crash would, for tests that abandon a
// volume: it waits for the batch and the write-back pass under way (a
// crash may come after them), then drops the write-backs not yet begun
// and refuses every later write, so that nothing reaches the device once
// the caller closes it.
func (w *Writer) Halt() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.busy || w.pushing || w.pushStarted {
		w.cond.Wait()
	}
	w.backlog, w.backlogBytes = nil, 0
	if w.err == nil {
		w.err = ErrHalted
	}
}

// markWrittenLocked notes that the commit at lsn has been written in
// place: the next flush retires it.
func (w *Writer) markWrittenLocked(lsn format.LSN) {
	c := w.live[lsn]
	c.unwritten--
	c.written++
}

// writeBacklogLocked runs the backlog's write-backs in log order, each
// told the newest durable ticket, so that a block changed by several of
// them is written once, by the last. One pass runs at a time: a caller
// waits for the pass under way, then runs what has queued since. A pass
// may run beside a batch: it writes only durable blocks in place, and a
// flush retires only what was written before it began. Called with the
// lock held; drops it for the I/O. A failed write-back stops the rest and
// pins the log from there on.
func (w *Writer) writeBacklogLocked() error {
	for w.pushing {
		w.cond.Wait()
	}
	backlog, durable := w.backlog, w.durable
	w.backlog, w.backlogBytes = nil, 0
	if len(backlog) == 0 {
		return nil
	}
	w.pushing = true
	defer func() { w.pushing = false; w.cond.Broadcast() }()
	hooks := w.pass
	if hooks.Start != nil {
		hooks.Start(durable)
	}
	w.mu.Unlock()
	var failed error
	written := 0
	for _, p := range backlog {
		if err := p.writeBack(p.ticket, durable); err != nil {
			failed = fmt.Errorf("commit at LSN %d/%d was not written back: %w", p.lsn.Cycle(), p.lsn.Block(), err)
			break
		}
		written++
	}
	if hooks.End != nil {
		// What the write-backs before a failure gathered is written
		// still; if that fails too, none of the pass is in place.
		if err := hooks.End(); err != nil {
			if failed == nil {
				failed = fmt.Errorf("write-back pass of %d commits failed: %w", written, err)
			}
			written = 0
		}
	}
	w.mu.Lock()
	for _, p := range backlog[:written] {
		w.markWrittenLocked(p.lsn)
	}
	if failed != nil && w.failed == nil {
		w.failed = failed
	}
	return nil
}

// DataWritten tells the writer that file data was written in place; the
// records of the next batch are written only after it is flushed.
func (w *Writer) DataWritten() { w.dataGen.Add(1) }

// tailLocked is where recovery must begin: the start of the epoch of the
// oldest LSN it may still need (head if none).
func (w *Writer) tailLocked(head format.LSN) format.LSN {
	oldest := head
	for len(w.liveOrder) > 0 {
		if _, ok := w.live[w.liveOrder[0]]; ok {
			oldest = w.liveOrder[0]
			break
		}
		w.liveOrder = w.liveOrder[1:]
	}
	if oldest == head && w.newEpoch {
		// Nothing is live and the next batch begins an epoch: every
		// record from now on names a tail at or past head.
		return head
	}
	// The newest epoch start at or before oldest; the ones before it are
	// never needed again. Before any epoch (nothing written since the
	// log was clean) there is nothing to replay.
	i := 0
	for i+1 < len(w.epochStarts) && !lsnLess(oldest, w.epochStarts[i+1]) {
		i++
	}
	w.epochStarts = w.epochStarts[i:]
	if len(w.epochStarts) == 0 || lsnLess(oldest, w.epochStarts[0]) {
		return oldest
	}
	return w.epochStarts[0]
}

// addLiveLocked counts one more unwritten commit at lsn.
func (w *Writer) addLiveLocked(lsn format.LSN) {
	c := w.live[lsn]
	if c == nil {
		c = &liveCounts{}
		w.live[lsn] = c
		// Commits are logged in LSN order, so lsn goes at the end; the
		// search keeps the order whatever a caller does.
		i, found := slices.BinarySearchFunc(w.liveOrder, lsn, func(a, b format.LSN) int {
			switch {
			case lsnLess(a, b):
				return -1
			case lsnLess(b, a):
				return 1
			}
			return 0
		})
		if !found {
			w.liveOrder = slices.Insert(w.liveOrder, i, lsn)
		}
	}
	c.unwritten++
}

func lsnLess(a, b format.LSN) bool {
	if a.Cycle() != b.Cycle() {
		return a.Cycle() < b.Cycle()
	}
	return a.Block() < b.Block()
}

// usedLocked is the number of BBs between the tail and the head.
func (w *Writer) usedLocked() uint32 {
	return w.sinceLocked(w.tailLocked(format.MakeLSN(w.cycle, w.block)))
}

// sinceLocked is the number of BBs from lsn to the head.
func (w *Writer) sinceLocked(lsn format.LSN) uint32 {
	return (w.cycle-lsn.Cycle())*w.blocks + w.block - lsn.Block()
}

// flushLocked makes every in-place write reported so far durable and
// retires those commits. It drops the lock during the flush.
func (w *Writer) flushLocked() error {
	snap := make(map[format.LSN]int)
	for lsn, c := range w.live {
		if c.written > 0 {
			snap[lsn] = c.written
		}
	}
	data := w.dataGen.Load()
	w.mu.Unlock()
	err := w.dev.Sync()
	w.mu.Lock()
	if err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	w.stats.Flushes++
	w.dataFlushed = max(w.dataFlushed, data)
	for lsn, n := range snap {
		c := w.live[lsn]
		c.written -= n
		if c.written == 0 && c.unwritten == 0 {
			delete(w.live, lsn)
		}
	}
	// Drop from the window the transactions the tail has now passed.
	head := format.MakeLSN(w.cycle, w.block)
	tail := w.tailLocked(head)
	n := 0
	for n < len(w.window) && lsnLess(w.window[n].lsn, tail) {
		w.pastTail.Store(uint64(w.window[n].ticket))
		n++
	}
	w.window = w.window[n:]
	return nil
}

// Sync makes everything queued durable, writes every durable commit in
// place, flushes the device and moves the tail past them.
func (w *Writer) Sync() error {
	if err := w.ForceAll(); err != nil {
		return err
	}
	return w.exclusive(w.writeBackAllLocked)
}

// WriteBackNow runs the backlog's write-backs at once, without forcing
// anything or flushing: for a caller with time to spare.
func (w *Writer) WriteBackNow() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeBacklogLocked()
}

// writeBackAllLocked runs the backlog and flushes: every durable commit
// is then in place, durable, and behind the tail. A write-back that
// failed, in this pass or an earlier one, is its error: those commits
// are not in place (their log space stays pinned).
func (w *Writer) writeBackAllLocked() error {
	if err := w.writeBacklogLocked(); err != nil {
		return err
	}
	if w.failed != nil {
		return w.failed
	}
	// Everything is retired by the flush: let the tail move to the next
	// batch.
	w.newEpoch = true
	return w.flushLocked()
}

// exclusive runs fn as the device's owner, once no batch is being written.
func (w *Writer) exclusive(fn func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.busy {
		w.cond.Wait()
	}
	if w.err != nil {
		return w.err
	}
	w.busy = true
	defer func() { w.busy = false; w.cond.Broadcast() }()
	return fn()
}

// record is one record laid out in Writer.out: its header sector at off,
// its payload up to end (whole BBs once the record is closed).
type record struct {
	cycle, block uint32
	off, end     int
	ops          uint32
}

// recHeaderBytes is the header room of every record: one sector, since
// records carry at most recPayloadMax bytes.
const recHeaderBytes = format.BBSize

// zeroPad supplies the zeros a record is padded with (at most two BBs).
var zeroPad [2 * format.BBSize]byte

// writeBatchLocked lays the batch out from the head, makes room, writes
// and flushes it. Called with busy set; drops the lock for I/O.
func (w *Writer) writeBatchLocked(batch []*pending) error {
	// Merging reads only the batch, which the leader owns, and the
	// leader's merger: committers queue meanwhile.
	w.mu.Unlock()
	cps := w.merger.checkpoints(batch)
	w.mu.Lock()
	if w.blocks-w.block < 2 {
		// A head one BB short of the end (left by another writer):
		// records never wrap, so give that BB this cycle and go on at
		// block 0.
		if err := w.stampLocked(w.block, w.cycle); err != nil {
			return err
		}
		w.block, w.cycle = 0, w.cycle+1
	}
	if !w.newEpoch {
		// An eighth of the log since the epoch under way began: let the
		// tail move to this batch once everything before it is retired.
		upper := 0
		for _, cp := range cps {
			upper += cp.bytes
		}
		w.newEpoch = len(w.epochStarts) == 0 ||
			int(w.sinceLocked(w.epochStarts[len(w.epochStarts)-1]))*format.BBSize+upper >= w.epochBytes()
	}
	if w.newEpoch {
		clear(w.wholeLogged)
	}
	recs, total, err := w.layout(cps)
	if err != nil {
		return err
	}
	if w.newEpoch {
		w.epochStarts = append(w.epochStarts, format.MakeLSN(recs[0].cycle, recs[0].block))
		w.newEpoch = false
	}
	// Keep a record's worth of slack so the head never lands on the tail.
	for w.usedLocked()+total+2*(recPayloadMax/format.BBSize+1) >= w.blocks {
		if len(w.live) == 0 {
			return fmt.Errorf("%w: %d blocks in a log of %d", ErrLogFull, total, w.blocks)
		}
		if err := w.writeBacklogLocked(); err != nil {
			return err
		}
		writtenAny := false
		for _, c := range w.live {
			writtenAny = writtenAny || c.written > 0
		}
		if !writtenAny {
			// The backlog was just written back, so only a failed
			// write-back pins the log.
			if w.failed != nil {
				return w.failed
			}
			return fmt.Errorf("xlog: log full of %d commits none of which was written back", len(w.live))
		}
		if err := w.flushLocked(); err != nil {
			return err
		}
	}
	if w.dataGen.Load() > w.dataFlushed {
		if err := w.flushLocked(); err != nil {
			return err
		}
		w.stats.DataFlushes++
	}
	head := format.MakeLSN(w.cycle, w.block)
	tail := w.tailLocked(head)
	// Seal each record where it lies; records are contiguous in w.out and
	// on disk except where the batch wraps, which starts a new run.
	type run struct {
		block uint32
		data  []byte
	}
	var runs []run
	prev := w.prevBlock
	for _, r := range recs {
		h := &format.LogRecHeader{Magic: format.LogHeaderMagic, Cycle: r.cycle, Version: format.LogVersion2,
			LSN: format.MakeLSN(r.cycle, r.block), TailLSN: tail, PrevBlock: prev, NumLogOps: r.ops,
			Fmt: format.LogFmtLinuxLE, FsUUID: w.uuid, Size: recPayloadMax}
		if err := format.SealLogRecord(h, w.out[r.off:r.end]); err != nil {
			return err
		}
		prev = int32(r.block)
		if n := len(runs); n > 0 && runs[n-1].block+uint32(len(runs[n-1].data)/format.BBSize) == r.block {
			runs[n-1].data = runs[n-1].data[:len(runs[n-1].data)+r.end-r.off]
		} else {
			runs = append(runs, run{r.block, w.out[r.off:r.end]})
		}
	}
	// With a device that can make the records durable by themselves, a
	// commit need not wait for the in-place writes of earlier batches to
	// be flushed with them (after a large inactivation, megabytes); those
	// are flushed once the log is a quarter full, to move its tail.
	dw, durableWrite := w.dev.(durableWriter)
	durableWrite = durableWrite && w.usedLocked()+total < w.blocks/4
	w.mu.Unlock()
	var werr error
	for _, r := range runs {
		off := w.start + int64(r.block)*format.BBSize
		var err error
		if durableWrite {
			_, err = dw.WriteAtDurable(r.data, off)
		} else {
			_, err = w.dev.WriteAt(r.data, off)
		}
		if err != nil {
			werr = fmt.Errorf("write log at block %d: %w", r.block, err)
			break
		}
	}
	w.mu.Lock()
	if werr != nil {
		return werr
	}
	if durableWrite {
		w.stats.DurableWrites += int64(len(runs))
	}
	w.stats.Writes += int64(len(runs))
	w.stats.Records += int64(len(recs))
	for _, r := range runs {
		w.stats.Bytes += int64(len(r.data))
	}
	last := recs[len(recs)-1]
	w.prevBlock = int32(last.block)
	w.block = last.block + uint32((last.end-last.off)/format.BBSize)
	w.cycle = last.cycle
	if w.block == w.blocks {
		w.block, w.cycle = 0, w.cycle+1
	}
	if !durableWrite {
		// The flush also makes earlier in-place writes durable.
		if err := w.flushLocked(); err != nil {
			return err
		}
	}
	for _, p := range batch {
		w.addLiveLocked(p.lsn)
		w.stats.Commits++
		w.window = append(w.window, windowEntry{p.ticket, p.lsn})
	}
	return nil
}

// layout packs the batch's checkpoints into records from the head, in
// w.out, and sets each transaction's LSN: its checkpoint's.
func (w *Writer) layout(cps []checkpoint) ([]record, uint32, error) {
	out, recs := w.out[:0], w.recs[:0]
	cycle, block := w.cycle, w.block
	capBytes := 0
	// cur is the record being filled: always the last of recs.
	payloadLen := func() int { return len(out) - recs[len(recs)-1].off - recHeaderBytes }
	newRecord := func() {
		if n := len(recs); n > 0 {
			block += uint32((recs[n-1].end - recs[n-1].off) / format.BBSize)
			if block == w.blocks {
				block, cycle = 0, cycle+1
			}
		}
		left := w.blocks - block // BBs to the end of the log, header included
		capBB := min(recPayloadMax/format.BBSize, int(left-1))
		if int(left-1)-capBB == 1 {
			capBB-- // a full record must not leave one block (see closeRecord)
		}
		capBytes = capBB * format.BBSize
		recs = append(recs, record{cycle: cycle, block: block, off: len(out)})
		out = append(out, zeroPad[:recHeaderBytes]...)
	}
	// closeRecord pads the payload to whole BBs, and by one more BB if
	// the record would otherwise leave a single BB before the log's end
	// (too small for a record: records never wrap).
	closeRecord := func() {
		n := (payloadLen() + format.BBSize - 1) / format.BBSize
		if w.blocks-(block+1+uint32(n)) == 1 {
			n++
		}
		out = append(out, zeroPad[:n*format.BBSize-payloadLen()]...)
		recs[len(recs)-1].end = len(out)
	}
	addOp := func(tid uint32, flags uint8, data []byte) {
		first := true
		for {
			room := capBytes - payloadLen() - format.LogOpHeaderSize
			fits := room >= len(data)
			splittable := room >= splitMin && len(data) >= splitMin
			if !fits && !splittable {
				closeRecord()
				newRecord()
				continue
			}
			n := min(room, len(data))
			f := flags
			if !first {
				f = format.LogOpWasContTrans
			}
			if n < len(data) {
				f |= format.LogOpContinueTrans
			} else if !first {
				f |= format.LogOpEndTrans
			}
			at := len(out)
			out = append(out, zeroPad[:format.LogOpHeaderSize]...)
			(&format.LogOpHeader{Tid: tid, Len: uint32(n), ClientID: format.LogClientTransaction, Flags: f}).Encode(out[at:])
			out = append(out, data[:n]...)
			recs[len(recs)-1].ops++
			data = data[n:]
			first = false
			if len(data) == 0 {
				return
			}
			closeRecord()
			newRecord()
		}
	}
	newRecord()
	for _, cp := range cps {
		w.tid++
		if w.tid == 0 || w.tid == format.LogMkfsUnmountTid {
			w.tid++
		}
		tid := w.tid
		addOp(tid, format.LogOpStartTrans, nil)
		cur := recs[len(recs)-1]
		lsn := format.MakeLSN(cur.cycle, cur.block)
		for _, p := range cp.pendings {
			p.lsn = lsn
		}
		var th [format.LogTransHeaderSize]byte
		(&format.LogTransHeader{Magic: format.LogTransMagic, Type: format.LogTransCheckpoint, Tid: tid, NumItems: uint32(len(cp.items))}).Encode(th[:])
		addOp(tid, 0, th[:])
		for _, it := range cp.items {
			for _, r := range w.epochRegions(it) {
				addOp(tid, 0, r)
			}
		}
		addOp(tid, format.LogOpCommitTrans, nil)
		w.stats.Checkpoints++
	}
	closeRecord()
	w.out, w.recs = out, recs
	var total uint32
	for _, r := range recs {
		total += uint32((r.end - r.off) / format.BBSize)
	}
	if total+4 >= w.blocks {
		return nil, 0, fmt.Errorf("%w: %d blocks in a log of %d", ErrLogFull, total, w.blocks)
	}
	return recs, total, nil
}

// epochBytes is the log an epoch spans before the next batch begins a
// new one: an eighth of it. The tail waits for the commits before an
// epoch to retire, which the flush once the log is a quarter full does
// (see writeBatchLocked), and then moves to that epoch, at most an eighth
// behind the head: commits keep making their records durable by
// themselves most of the time. An image block changed all the time is
// logged whole once an epoch.
func (w *Writer) epochBytes() int { return int(w.blocks) * format.BBSize / 8 }

// epochRegions returns the regions that log it in the current epoch: an
// image item whole if the epoch has not logged its block whole yet, by
// its changed chunks otherwise; a cancel item makes the next image of
// its block whole again.
func (w *Writer) epochRegions(it Item) [][]byte {
	switch it.kind {
	case imageItem:
		if _, ok := w.wholeLogged[it.block]; ok && it.partial != nil {
			return it.partial
		}
		w.wholeLogged[it.block] = struct{}{}
	case cancelItem:
		delete(w.wholeLogged, it.block)
	}
	return it.Regions
}

// Unmount writes the unmount record that marks the log clean. Every
// commit must have been written in place; the device is flushed first so
// that the record never describes metadata that is not yet durable.
func (w *Writer) Unmount() error {
	if err := w.ForceAll(); err != nil {
		return err
	}
	return w.exclusive(w.unmountLocked)
}

func (w *Writer) unmountLocked() error {
	if err := w.writeBackAllLocked(); err != nil {
		return err
	}
	if len(w.live) != 0 {
		return fmt.Errorf("xlog: unmount with %d commits not written back", len(w.live))
	}
	if w.blocks-w.block < 2 {
		// Stamp the last block with this cycle so the head moves to
		// block 0 of the next cycle, where the record goes.
		if err := w.stampLocked(w.block, w.cycle); err != nil {
			return err
		}
		w.block, w.cycle = 0, w.cycle+1
	}
	head := format.MakeLSN(w.cycle, w.block)
	rec, err := format.UnmountRecord(w.uuid, w.cycle, w.block, head, 0, w.tid+1)
	if err != nil {
		return err
	}
	// The record carries the previous record's address for xfs_logprint.
	h, _ := format.DecodeLogRecHeader(rec)
	h.PrevBlock = w.prevBlock
	rec, err = format.EncodeLogRecord(h, unstampedPayload(rec, h))
	if err != nil {
		return err
	}
	if _, err := w.dev.WriteAt(rec, w.start+int64(w.block)*format.BBSize); err != nil {
		return fmt.Errorf("write unmount record: %w", err)
	}
	w.prevBlock = int32(w.block)
	w.block += uint32(len(rec) / format.BBSize)
	if w.block == w.blocks {
		w.block, w.cycle = 0, w.cycle+1
	}
	return w.flushLocked()
}

// stampLocked writes an empty BB carrying cycle at block.
func (w *Writer) stampLocked(block, cycle uint32) error {
	b := make([]byte, format.BBSize)
	b[0], b[1], b[2], b[3] = byte(cycle>>24), byte(cycle>>16), byte(cycle>>8), byte(cycle)
	_, err := w.dev.WriteAt(b, w.start+int64(block)*format.BBSize)
	return err
}

// unstampedPayload returns a record's payload with the cycle-stamped words
// put back.
func unstampedPayload(rec []byte, h *format.LogRecHeader) []byte {
	hdrs := format.LogRecHeaderSectors(h.Size)
	p := append([]byte(nil), rec[hdrs*format.BBSize:hdrs*format.BBSize+int(h.Len)]...)
	for i := 0; i*format.BBSize < len(p) && i < format.LogCycleDataWords; i++ {
		w := h.CycleData[i]
		p[i*format.BBSize], p[i*format.BBSize+1], p[i*format.BBSize+2], p[i*format.BBSize+3] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	}
	return p
}
