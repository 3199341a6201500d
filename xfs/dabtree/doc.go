// Package dabtree is the directory/attribute B+tree ("da-btree") of XFS:
// a tree of hash-ordered leaf blocks indexed by interior nodes, shared by
// node-form directories (leafn leaves, 0x3DFF) and node-form attribute
// forks (attr3 leaves, 0x3BEE). It owns the node blocks and the shape of
// the tree; what a leaf holds is the business of its caller, described by
// the Leaf interface.
//
//	             root (fixed block: dir 32 GiB / attr 0)
//	            ┌──────────────────────────────┐
//	node 0x3EBE │ hdr 64 │ (hashval,before)... │  key = last hash of child
//	            └──────┬───────────────┬───────┘
//	                   ▼               ▼
//	 leaf ◀─back──▶ leaf ◀─back/forw─▶ leaf    (siblings linked per level)
//
// Every da block starts with xfs_da3_blkinfo (56 bytes): forw be32 @0,
// back be32 @4, magic be16 @8, pad @10, crc le32 @12, blkno be64 @16 (its
// own daddr), lsn @24, uuid @32, owner be64 @48. A node adds count be16
// @56 and level be16 @58 (leaves are level 0), then count entries of
// (hashval be32, before be32) sorted by hashval; an entry's hashval is the
// largest hash stored under its child. Block numbers are fork offsets in
// filesystem blocks; 0 means "none" in sibling links, which block 0 can
// afford: it is a directory's first data block (outside the tree) or an
// attribute tree's root (never anyone's sibling once a split is done).
//
// The algorithms follow the kernel's xfs_da_btree.c: lookups descend to the
// first child whose key is >= the hash; splits move the upper half of a
// full block into a new one linked after it and grow the tree at the top
// by moving the old root's contents into a new block, so the root block
// never moves (xfs_da3_root_split); joins merge a block that is less than
// half full into a sibling when the pair fits with 25% to spare, keeping
// the lower-numbered block, and a root left with one child absorbs it
// (xfs_da3_root_join).
//
// All block I/O of one operation goes through a Blocks cache over a fork:
// the tree's blocks and the caller's other blocks of that fork (directory
// data and free-index blocks, remote attribute values). Every block is
// read and verified once per operation, the fork's mapping is asked once
// between the operation's own allocations and frees, and every change
// lands in the caller's transaction at Flush. A lookup only views the
// nodes above its leaf (Blocks.View: the transaction's shared version,
// no copy), since most operations change the leaf alone; the Tree methods
// that change a path (FixHash when a hash moves, Split, Join, Link,
// Unlink) turn its nodes into private copies first, in the same Bufs.
//
// The two users: package dir roots a tree of leafn leaves at the start of
// the leaf space (32 GiB), where a lone leafn block splits into a node
// over two leaves; package attr roots a tree of attr3 leaves at block 0,
// where a lone leaf is the attribute fork's leaf form until Deepen puts a
// node above it (xfs_attr3_leaf_to_node), and splits a full leaf twice
// when a big entry fits neither half.
//
//	t := &Tree{C: NewBlocks(fork, fsbs), Root: root, Ops: TreeOps(...), Leaf: myLeaf}
//	p, _ := t.Lookup(hash)        // root-to-leaf path; Shift(p, true) walks right
//	... change p.Bottom() ...     // then t.FixHash(p) (its nodes are views)
//	nb, _ := t.Grow(ops)          // full leaf: new block, move entries,
//	t.Link(p.Bottom(), newBlk)    // link it after the old one
//	t.Split(p, newBlk)            // record it above, splitting nodes and the root
//	t.Join(p)                     // after removals from a small leaf
//	t.C.Flush()                   // hand every changed block to the transaction
//
// Check verifies a whole tree; Walk visits its leaves in hash order.
package dabtree
