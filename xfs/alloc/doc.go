// Package alloc owns an AG's free space: the AGF, the AGFL and the two
// free-space B+trees, with their codecs' callers, verifiers, searches and
// frees. The engine root asks it for blocks inside a transaction.
//
//	Space (per volume: geometry, busy extents, tree buffer ops, untrimmed)
//	  └─ Tx (per transaction: the AGFs it holds)
//	       └─ AG (one locked AGF)
//	            ├─ bnobt: free extents by start  ┐ both always describe
//	            ├─ cntbt: free extents by length ┘ the same extents
//	            └─ AGFL: blocks set aside for splits of those two trees
//
// Every change keeps agf_freeblks (blocks in the trees), agf_longest (the
// last cntbt record), agf_flcount and agf_btreeblks (non-root tree blocks,
// which come from and go back to the AGFL) exact, as xfs_repair checks.
//
// Searches skip extents freed by commits that are not durable yet (busy
// extents); when only such extents would do, they fail with ErrBusyOnly
// so that the caller can force the log and retry.
//
// # Trim: the sub-AG walk by block number
//
// Trim gives free space back to the storage (the engine discards what the
// walk gathers). It walks one AG range at a time, by the bnobt, in
// batches, as the kernel's sub-AG FITRIM does (xfs_discard.c):
//
//	cursor := range start
//	loop:
//	  GatherTrim ── own transaction, AGF locked ────────────────────┐
//	  │ bnobt lookup: the extent holding cursor, or the next one     │
//	  │ ≤ BatchRecords (100) records, ≤ BatchBlocks free blocks (a   │ held
//	  │ longer extent is cut; the next batch resumes inside it):     │ ≤ 100
//	  │ clip to [cursor, end), cut busy extents out (freed, not yet  │ records
//	  │ durable; or being discarded by another pass), drop pieces    │
//	  │ < MinLen,                                                    │
//	  │ MarkDiscarding(pieces): busy to allocators from now on       │
//	  │ cursor = where the walk stopped (restart cursor)             │
//	  └─ cancel: AGF released ───────────────────────────────────────┘
//	  wait for the previous batch's discard
//	  discard this batch on its own goroutine ── overlaps the next gather
//	    (the engine cuts it into bounded requests and its caller may
//	    pause after each); TrimDone once the last returns: the pieces
//	    are allocatable
//	  report the previous batch
//
// Why by block and not by size (the kernel's whole-AG walk of the cntbt
// from the longest extent down): a bnobt cursor is a block number, which
// stays meaningful while the AGF is released and extents are allocated,
// freed and merged; a batch costs the same however fragmented the AG is,
// so the AGF hold time is bounded by the batch size alone
// (BenchmarkTrimLockHold measures both walks). A by-size walk must either
// hold the AGF for the whole AG or restart from a (length, block) key
// that every allocation and merge moves.
//
// What the walk never discards: allocated blocks (they are not in the
// trees, and the AGF is held while it reads them), extents freed by a
// commit that is not durable yet (busy: after a crash the old owner still
// holds them), the AG headers and the internal log (never in the trees;
// a record over them is reported as corruption, SetNeverFree). Blocks a
// tree gives back to the free list are not busy, so the free list's
// surplus goes back to the trees busy, as the kernel's deferred AGFL free
// does: such a block may still belong to the tree as of the last durable
// commit.
//
// Space also keeps which parts of each AG were freed since they were last
// walked (untrimmed.go: one bit per granule, set by every free and, at
// open, everywhere), so a periodic pass can walk only those. Granules are
// one block on AGs up to 2^18 blocks (the record then costs 32 KiB an AG)
// and grow with larger AGs. The engine joins runs of marked granules that
// lie close together into one walk and passes the runs as TrimRange.Only:
// the walk batches their records but discards only inside the runs, so
// free space already discarded beside a freed extent is not discarded
// again (a pass over 8 MB freed between earlier frees used to discard 25
// MB with 64 KiB granules; now 8 MB, TestTrimReturnsFreedSpace).
//
// Lock order: see package xfs doc.
package alloc
