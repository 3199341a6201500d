// Package trans is the engine's buffer cache and transaction layer.
//
//	Tx.Read/Get ──> private copy of the buffer (buffer locked for the Tx)
//	     │ modify, Dirty(range)
//	Tx.Commit ──> Finish (CRC) ──> log (xlog: group commit, durable) ──>
//	              write in place ──> publish in the cache ──> unlock
//	Tx.Cancel ──> drop the copies; nothing ever happened
//
// A transaction locks every buffer it touches until it commits or cancels,
// so callers must take buffers in the documented lock order (AGI before
// AGF, lower AG before higher, inode cluster buffers before the AG headers
// they lead to). Committed buffer contents are immutable slices swapped in
// atomically, so lock-free readers always see a whole committed block.
//
// With a log (SetLog), Commit returns only once the transaction is durable
// in the log, and writes its blocks in place after that (write-ahead).
// Buffers stay locked across the log flush, so the next change to a block
// is always logged after the previous one; independent transactions share
// log writes and flushes.
//
// Transactions carry what later layers need without knowing them: blocks
// freed by the transaction (busy extents, not reusable until the next
// Sync; the commit is already durable by then), per-project quota deltas,
// and a block reservation taken up front so that running out of space is
// reported before anything is modified.
package trans
