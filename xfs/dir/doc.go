// Package dir reads and writes XFS v5 directories ("dir2" with "dir3"
// headers) in all four formats, through the fork contract of package fork:
// it never allocates, maps or locks anything itself, and every change is
// made inside the caller's transaction. It speaks in names, inode numbers
// and file types (ftype).
//
// A directory's data fork is three 32 GiB address spaces:
//
//	     0 ┌─ data space ──────────────────────────────────────────────┐
//	       │ db 0: hdr │ "." │ ".." │ entries / free regions ... │    │
//	       │ db 1 ... (holes where data blocks emptied out)            │
//	32 GiB ├─ leaf space ──────────────────────────────────────────────┤
//	       │ leaf1 (0x3DF1): leaf entries + bests table     (leaf form)│
//	       │ da-btree: nodes 0x3EBE over leafn 0x3DFF       (node form)│
//	64 GiB ├─ free-index space (node form only) ───────────────────────┤
//	       │ XDF3 block k: bests of data blocks k*n .. k*n+n-1         │
//	       └───────────────────────────────────────────────────────────┘
//
// di_size counts the data space only. Block numbers are in directory
// blocks (2^dirblklog filesystem blocks, always read and mapped whole).
//
//	short form  entries in the inode literal area (no blocks)
//	block       db 0 only, "XDB3": entries, then leaf array and tail
//	leaf        data blocks "XDD3" + one leaf1 block
//	node        data blocks + leafn da-btree + free-index blocks
//
// Conversions follow the kernel (fs/xfs/libxfs/xfs_dir2_*.c) exactly:
//
//	short form → block  the new short form exceeds the inode's data fork, or
//	                    would not fit one block (xfs_dir2_sf_addname)
//	block → leaf        the entry and its leaf entry do not fit, even after
//	                    compacting stale leaf entries (xfs_dir2_block_to_leaf)
//	leaf → node         the leaf1 block cannot take another leaf entry and
//	                    best (xfs_dir2_leaf_to_node)
//	node → leaf         the tree is a single leafn and its live entries and
//	                    the only free-index block's bests fit a leaf1 block
//	leaf → block        only data block 0 is left and its last free region
//	                    holds the live leaf entries and the tail
//	block → short form  the entries fit the inode (xfs_dir2_block_to_sf)
//
// Inside data blocks the bestfree table (the three longest free regions)
// is maintained incrementally as the kernel does, new entries go to the
// start of the longest free region, freed space merges with free
// neighbours, leaf entries go stale on removal and are reused or
// compacted as the kernel would, empty data blocks other than block 0 are
// unmapped (trimming the bests table, nvalid and free-index blocks), and
// the da-btree (package dabtree) splits and joins leaves and nodes. A test
// replays kernel-made directories operation by operation and requires
// identical blocks (TestKernelReplay).
//
// Every block read is verified (CRC, magic, own address, structure, then
// UUID and owner); every block written gets LSN 0 and its CRC through the
// trans.Ops Finish hooks (DataOps, Leaf1Ops, LeafNOps, NodeOps, FreeOps).
// Check and Inspect verify a whole directory the way the kernel's
// verifiers and xfs_repair do.
//
// Operations are not safe for concurrent use on one directory; the caller
// holds the inode's lock.
package dir
