// Package alloc owns an AG's free space: the AGF, the AGFL and the two
// free-space B+trees, with their codecs' callers, verifiers, searches and
// frees. The engine root asks it for blocks inside a transaction.
//
//	Space (per volume: geometry, busy extents, tree buffer ops)
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
// Lock order: see package xfs doc.
package alloc
