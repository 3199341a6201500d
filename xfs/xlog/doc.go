// Package xlog owns the XFS metadata log inside the data device: writing
// transactions into it with group commit, telling a clean log from one
// that needs recovery, and replaying it. Record and item encodings live in
// xfs/format (log.go, logitem.go, loginode.go).
//
// The log is a circular array of 512-byte basic blocks (BB). The first word
// of every payload BB is overwritten with its record's cycle number, so a
// block's cycle is its first word, or word 1 of a header sector:
//
//	BB:    0        1..n      n+1       ...      head          size-1
//	       [hdr C]  [data C]  [hdr C]   ...  |  [old C-1 or 0]  ...
//
// The head is where the cycle number drops; a log is clean when the record
// just before the head is an unmount record.
//
// Writing (Writer):
//
//	Queue(items, writeBack) ─> ticket; nothing written yet
//	Force(ticket) ─> no leader? become one: take the queue (up to a
//	quarter of the log) ─> flush file data written before it, if any ─>
//	lay out records (≤ 32 KiB, never wrapping; big regions continue in
//	the next record) ─> one device write ─> one flush ─> wake every
//	waiter it made durable ─> add the batch's write-backs to the
//	backlog ─> tell OnDurable ─> past the backlog's limit, start a pass
//	over it in a goroutine of its own (or, when passes fall behind, run
//	one as the leader) ─> a pass runs the write-backs in log order
//	between the owner's PassHooks (which may gather the writes and
//	issue them merged at its end) ─> the next flush retires them and
//	the tail moves past them
//
// Write-backs wait in a backlog (at most WriteBackBytes of log, an eighth
// of the log, or what the cache asks for with SetBacklogLimit) because a
// block that many commits change, an AG header, a directory block, an
// inode cluster, needs writing in place only once for all of them: a
// write-back leaves a block to a later commit of the same pass that
// changed it again. Under load that turned about ten in-place writes per
// small PUT into one. That later commit must be in the same pass: both
// are then retired by the same flush, so the tail never passes the
// skipped commit while the block on disk lacks its change (a later
// buffer item may log only other chunks). A pass takes the backlog and
// the durable ticket together, and a batch's commits join the backlog in
// the lock hold that makes them durable, so every commit up to that
// ticket is in the pass or an earlier one. Passes run one at a time and
// beside batches, so a commit waits for its own log write, not for a
// megabyte of in-place writes. Sync, Unmount and a log short of room run
// the backlog first; blocks freed by a commit are reusable once it is
// durable (OnDurable), not once it is written back.
//
// A device that can make one write durable by itself (pwritev2 with
// RWF_DSYNC) takes the place of write and flush while the log is less
// than a quarter full: a commit then waits for its own records only, not
// for the in-place writes of earlier batches, which a large inactivation
// leaves by the megabyte; past a quarter the flush retires them. Background
// work starts a force every BackgroundPushBytes (trans.Cache.Push, in a
// goroutine of its own, so it goes on meanwhile), so a foreground force
// never has a large backlog of it queued ahead of its own commit.
// Committers that do not force each commit start one the same way once
// the queue is Pushable, and wait for one only once it is Backlogged.
//
// ForceAll also covers file data written after the newest queued
// transaction, with a barrier that logs nothing and rides in the next
// batch. PastTail tells the cache which logged blocks no recovery can
// replay any more, so freeing them needs no cancel item.
//
// A batch's transactions are logged as few checkpoints as their items
// allow (checkpoint.go): START, TRAN header, one buffer item per block
// (the union of the 128-byte chunks its transactions changed, from the
// newest image; whole new blocks; directory and attribute blocks whole
// once an epoch, see below), one dquot item per record, COMMIT. The
// cache's commits queue diff items (DiffItem): the leader, not the
// committer, finds the chunks, once for a run of them in a checkpoint
// (the first one's old image against the last one's image); the queue
// counts them by a guess, a batch is cut by their bound (whole blocks). A
// transaction that cancels a freed block that was logged is a checkpoint
// of its own. Inode cores reach the log inside their inode blocks
// (dinode buffer items, which the kernel replays as plain buffers), not
// as inode items. Dquot records are logged as dquot items (DquotItem:
// the record's disk dquot), as the kernel logs them.
//
// Metadata LSNs are not advanced when blocks are written back, nor when
// recovery replays them: a block whose write tore (new first sector with a
// new LSN, old last sector) would otherwise make a recovery that trusts the
// LSN (the kernel's does) skip the very item that repairs it. Blocks
// keep the LSN they had, always below the log head, so every recovery
// (ours and the kernel's) replays all items since the tail, which is
// idempotent because they are replayed in log order.
//
// Epochs keep chunk-logged directory blocks replayable. A recovery
// replays every item since the tail (LSN 0 on disk never stops it), onto
// whatever the block holds in place: a later state written back before
// the tail moved, or a write torn by a power cut. Chunks of an older
// state laid over that make a directory block no transaction committed,
// which the kernel's verifiers reject between transactions. So the tail
// only ever sits at the start of an epoch (a run of batches), and each
// epoch logs such a block whole the first time it logs it: the first
// item of it any recovery replays rebuilds it whole, and each later one
// changes the state just rebuilt. A new epoch begins once the one under
// way spans an eighth of the log, and after Sync; the tail lags the
// retired commits by at most the epoch under way. Logged whole every time,
// such blocks made an unlink's log about four times larger
// (BenchmarkUnlink's log-B/op; docs/benchmarks.md).
//
// Recovery (Log.Recover): newest intact record before the head, its tail,
// a walk tail → head that ends at the first torn record, then Replay with
// the kernel's v5 rules (cancels, LSN ordering, per-transaction item
// order), for our logs and for the buffer, inode, icreate, dquot and
// intent items the kernel writes. Unfinished extent-free, refcount and
// bmap intents (EFI, CUI, BUI) are handed back in log order
// (ReplayStats.Intents) for the engine to finish; rmap, attr and
// mapping-exchange intents are refused.
package xlog
