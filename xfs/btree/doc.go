// Package btree reads and changes every XFS B+tree with one cursor, driven
// by a Kind that describes the tree: the short-form AG trees (bnobt, cntbt,
// inobt, finobt, refcountbt) whose root block the AGF or AGI names, and the
// long-form bmbt whose root lives in an inode fork.
//
//	AGF/AGI root, levels          inode fork: format.BmdrRoot
//	      |                        [lvl|n|k1..kn .. |p1..pn .. ]   capacity
//	      v                               |  \                     BmdrMaxRecs(ForkSize)
//	 +---------+                     +---------+ +---------+
//	 | node    |  level 1            | node    | | node    |  level 1
//	 | k1 k2 ..|  keys, then ptrs    |         |-|         |  siblings link
//	 | p1 p2 ..|  at hdr+maxrecs*kl  +---------+ +---------+  each level
//	 +---------+                       |    \         \
//	  /      \                      +----+ +----+   +----+
//	+----+  +----+  level 0         |leaf|-|leaf|---|leaf|  records
//	|leaf|--|leaf|  records         +----+ +----+   +----+
//	+----+  +----+
//
// Every block has the v5 header (magic, level, numrecs, left and right
// siblings with NULL at the ends of a level, its own daddr, the owner —
// AG number or inode —, the filesystem UUID, an LSN and a CRC). A node's key
// for child i is the key of the lowest record below child i, copied byte
// for byte, so keys are kept up to date whenever a block's first entry
// changes.
//
// A Cursor is one transaction's position in one tree, like the kernel's
// struct xfs_btree_cur, and follows the kernel's algorithms
// (fs/xfs/libxfs/xfs_btree.c) so that it leaves the same shapes behind:
// lookups with LE/EQ/GE, moving across leaves through the parents, insert
// that shifts an entry to a sibling before it splits, delete that borrows
// from or joins with a sibling, roots that grow and shrink (for the bmbt,
// by moving entries between the inode root and a child block).
//
// The caller owns I/O, allocation and logging through Store, and the root
// through the Tree's fields and its RootChanged hook. Nothing is cached
// beyond a cursor: on error the caller cancels its transaction and every
// change is gone. Check verifies a whole tree, for tests and for volume
// checking.
package btree
