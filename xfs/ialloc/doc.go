// Package ialloc owns an AG's inodes: the AGI, the inode chunks, the
// inode and free-inode B+trees and the unlinked lists. The engine root
// asks it for a free inode number and hands inodes back to it; reading
// and writing the inodes themselves is the root's business.
//
//	Inodes (per volume: AG rotor, counters, unlinked-list mutexes)
//	  └─ Tx (per transaction: the AGIs it holds)
//	       └─ AGI (one locked AGI) ── alloc.AG of the same AG, on first need
//	            ├─ inobt:  every chunk of 64 inodes, with its free mask
//	            ├─ finobt: only the chunks with a free inode
//	            └─ agi_unlinked[64]: heads of lists of inodes with no
//	               links left, chained through di_next_unlinked
//
// Chunks are allocated from the AG's free space (aligned to
// sb_inoalignmt) and filled with free v3 inodes; they stay allocated when
// their inodes are freed, as with the kernel's ikeep.
//
// Lock order: see package xfs doc.
package ialloc
