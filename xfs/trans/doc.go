// Package trans is the engine's buffer cache and transaction layer.
//
//	Tx.Read/Get ──> private copy of the buffer (buffer locked for the Tx)
//	     │ modify, Dirty(range)
//	Tx.Commit ──> Finish (CRC) ──> publish in the cache ──> write in place
//	Tx.Cancel ──> drop the copies; nothing ever happened
//
// A transaction locks every buffer it touches until it commits or cancels,
// so callers must take buffers in the documented lock order (AGI before
// AGF, lower AG before higher, inode cluster buffers before the AG headers
// they lead to). Committed buffer contents are immutable slices swapped in
// atomically, so lock-free readers always see a whole committed block.
//
// Transactions carry what later layers need without knowing them: blocks
// freed by the transaction (busy extents, not reusable until the
// transaction is durable), per-project quota deltas, and a block
// reservation taken up front so that running out of space is reported
// before anything is modified. The metadata log (a later issue) slots in
// at Commit: today committed buffers are written in place directly.
package trans
