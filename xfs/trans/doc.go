// Package trans is the engine's buffer cache and transaction layer.
//
//	Tx.Read/Get ──> private copy of the buffer (buffer locked for the Tx)
//	Tx.View ──> the committed version itself, read-only (locked); a later
//	            Read or Get in the same Tx swaps in a private copy
//	     │ modify, Dirty(range)
//	Tx.Commit ──> Finish (CRC) ──> queue in the log (its place in log
//	              order is fixed) ──> publish in the cache ──> unlock
//	Force ──> log leader: one log write, one flush ──> durable ──>
//	          write-back backlog ──> (past its limit, or Sync) blocks
//	          written in place, newest durable version only ──> unpinned;
//	          replaced versions no reader took go back to the pool
//	Tx.Cancel ──> drop the copies; nothing ever happened
//
// A transaction locks every buffer it touches until it commits or cancels,
// so callers must take buffers in the engine's lock order (lock order: see
// package xfs doc). Committed buffer contents are immutable slices swapped in
// atomically, so lock-free readers always see a whole committed block.
// A version a commit replaced is recycled as the next transaction's copy
// once its write-back is done, unless a lock-free reader took it
// (Cache.Read marks it; Cache.ReadCopy only counts itself in while it
// copies): recycle.go has the proof. So a transaction's caller must not
// keep a block's bytes past Commit or Cancel, and a reader that only
// copies a part out (an inode, an AG header) should use ReadCopy. Test
// binaries poison recycled copies and checksum views to catch a misuse
// (testChecks; off when asked for benchmarks).
// A block is verified when it is read from the device, and again only for
// a reader that asks for another kind of block (Ops.Name) than the one its
// content was verified or finished as: one copy serves every reader, and
// none decodes bytes its own verifier has not passed.
//
// With a log (SetLog), Commit queues the transaction while it still holds
// its buffers, so the next change to any of them is logged after it, and
// unlocks at once: dependent transactions no longer wait for each other's
// flushes. Commit does not diff its blocks: their log items are diff
// items, which the log's leader diffs against the versions they replace
// (borrowed until the commit's write-back), once a checkpoint for every
// transaction that changed the block. A transaction is durable after
// Force (or Sync); independent and dependent transactions alike share
// log writes and flushes. Its blocks stay pinned in the cache until the
// log's leader has written them in place (write-ahead: never before the
// log record is durable), and Cache.ReadAt shows them to readers that
// bypass the cache meanwhile.
// Write-backs wait in the log's backlog (package xlog), sized from the
// cache budget, so a block many commits change is written once per pass,
// by the newest durable commit that changed it (Buf.queued).
//
// A transaction may also carry late items (LateItem): log items formatted
// only when it takes its place in the log, under the lock that orders the
// log, which write themselves in place once durable (dquot records, whose
// content is a running total, logged without any lock held through the
// commit).
//
// The cache is sharded by a hash of the block address: a lookup holds
// one shard's mutex for the lookup itself, and each shard keeps its own
// LRU list. A budget of bytes bounds it; past it, one goroutine at a time
// evicts unreferenced buffers round-robin over the shards (package
// reclaim). Buffers held by a transaction, and committed ones waiting for
// their write-back, are referenced and never evicted.
//
// Transactions carry what later layers need without knowing them: blocks
// freed by the transaction (busy extents, not reusable until the freeing
// commit is durable), per-project quota deltas, and a block reservation
// taken up front so that running out of space is reported before anything
// is modified.
package trans
