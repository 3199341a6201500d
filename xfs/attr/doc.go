// Package attr reads and writes XFS extended attributes in all their
// formats, over the fork contract of xfs/fork:
//
//	             Set / Remove                Get / List / Check / FormOf
//	                 |                                  |
//	   attr.Fork (fork.Writer + forkoff)            fork.Reader
//	                 |                                  |
//	+----------------+----------------------------------+-------------+
//	| short form: in the inode (di_aformat local)                      |
//	|   totsize,count | namelen,valuelen,flags,name,value ...          |
//	|     | an entry with a name or value of 255+ bytes, or no room    |
//	|     | even after moving di_forkoff (xfs_attr_shortform_bytesfit) |
//	|     v                       ^ a removal leaves entries that fit  |
//	| leaf form: block 0 is an attr3 leaf (0x3BEE), hash-ordered;      |
//	|   values local while their record stays below 3/4 of a block     |
//	|     | the leaf is full        ^ joins leave a single leaf        |
//	|     v                         |                                  |
//	| node form: block 0 is a da node (0x3EBE) over leaves and nodes:  |
//	|   the same xfs/dabtree tree, one level deeper (tree.go)          |
//	|                                                                  |
//	| remote values (leaf and node forms): blocks at a hole of the     |
//	|   fork, each with a 56-byte XARM header, freed with the value    |
//	+------------------------------------------------------------------+
//
// The algorithms follow the kernel's (fs/xfs/libxfs/xfs_attr.c,
// xfs_attr_leaf.c, xfs_attr_remote.c, xfs_da_btree.c, at the level of the
// Linux 6.18 stable kernel with the 2026 leaf freemap fixes) closely
// enough that a sequence of sets and removes leaves byte for byte the same
// fork as the kernel (apart from CRCs, LSNs and disk addresses); the
// kernel-layout test checks that against a loop-mounted kernel. Where the
// kernel splits an operation into several transactions and marks entries
// INCOMPLETE in between, this package does the same steps inside the
// caller's single transaction: a replace adds the new entry (incomplete),
// writes its remote value, flips the flags, then removes the old entry and
// its value blocks, so no INCOMPLETE entry survives a Set.
//
// Leaf and node forms are one da-btree of package xfs/dabtree, rooted at
// block 0. dabtree owns the da nodes, lookups and path shifts, sibling
// links, the splits and joins above the leaves, the root's moves
// (Tree.Deepen is xfs_attr3_leaf_to_node) and the block cache of an
// operation; this package owns what a leaf holds (leafblk.go, and its
// halves of a split and a merge in tree.go, given to dabtree as a
// dabtree.Leaf), the short form (sf.go), remote values (remote.go), the
// checker (check.go) and the policy: when a fork changes form and where
// di_forkoff goes (attr.go, fork.go).
//
// Every function works on one inode within one transaction that the caller
// owns (Begin/Commit/Cancel) and serialises (the inode lock). Blocks are
// allocated and freed one at a time through one dabtree.Blocks per
// operation, which also keeps the fork's mapping; tree blocks are read
// and verified (trans.Ops.Verify) once through it, remote values straight
// from the fork. The changed blocks go to the transaction when the
// operation succeeds and get their CRCs at commit (trans.Ops.Finish). The
// package keeps no state between calls.
package attr
