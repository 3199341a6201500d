// Package refcount owns the reference count btree of an AG (refcountbt,
// magic R3FC): what its records mean and the algorithms that change them.
// It is the foundation of shared extents (reflink): the tree says which
// blocks several file extents map, and how many.
//
//	block:    10   15    20  22    26     32  34     40   44
//	          ├────┼─────┼───┼─────┼──────┼───┼──────┼────┤
//	count:    │ 2  │  1  │ 3 │  2  │  1   │ 5 │ free │CoW │
//	          └────┴─────┴───┴─────┴──────┴───┴──────┴────┘
//	records:  10+5 ×2    20+2 ×3         32+2 ×5     40+4 ×1
//	                         22+4 ×2                 (bit 31 set)
//	          blocks counting 1 and free blocks have no record
//
//	record, 12 bytes:  rc_startblock be32 (bit 31: CoW domain)
//	                   rc_blockcount be32 · rc_refcount be32
//	key:               rc_startblock be32 (the raw value, bit 31 included)
//
// # Model
//
//   - A block mapped by one file extent has no record: its count is
//     implicitly 1. Only blocks mapped two or more times (shared) have a
//     record, with their count (2 to MaxRefcount). A free block has no
//     record either; what tells it from a block counted 1 is the free
//     space trees, not this one.
//   - Records never overlap. Adjacent shared records with equal counts
//     are merged into one, so the records are the one canonical
//     description of the counts: the one xfs_repair derives from the
//     files' mappings and compares with the tree (Check enforces it).
//   - The CoW domain: blocks allocated for a copy-on-write that no file
//     maps yet are staged with a record of count 1 whose start block
//     carries bit 31 (CoWFlag). Those keys sort after every shared
//     record, the two domains never merge, and staging records beside
//     each other merge as shared ones do. A staging record belongs to
//     an in-memory CoW fork, so none survives a clean unmount; after a
//     crash the kernel frees every one it finds when it recovers the log
//     (xlog_recover_finish, CleanCoWStaging here). A mount that finds a
//     clean log leaves staging records alone; xfs_repair reports them as
//     "leftover CoW extent".
//   - A count that reaches MaxRefcount is pinned there for good.
//
// # Operations
//
// Tree.Adjust(bno, n, ±1) is the kernel's xfs_refcount_adjust, in the
// same three steps, so that the records it leaves are the ones the
// kernel would leave (its tree shape may differ; xfs_repair does not
// compare shapes): split the records that cross either end of the range;
// merge the range's first and last pieces with the records beside it
// when their new count will equal the neighbour's (a hole in the range
// takes part as a piece counting 1); then walk the rest of the range,
// inserting a count-2 record for each hole (+1) or reporting it freed
// (-1), and changing each record's count, deleting those that fall to 1.
// The blocks whose count reached 0 come back to the caller, who frees
// them: no file maps them any more. AddCoWStaging and RemoveCoWStaging
// are the same steps in the CoW domain (__xfs_refcount_cow_alloc and
// _free). Shared, CoWStaging, Stats and Walk only read.
//
// # Invariants
//
// Between operations: every record passes Rec.Check (length 1 to
// MaxExtentLen, inside the AG past its headers, count ≥ 2 shared or
// exactly 1 CoW); no two records of a domain overlap; no two shared
// records that touch have equal counts (below MaxRefcount);
// agf_refcount_root and agf_refcount_level locate the tree and
// agf_refcount_blocks counts its blocks, root included. Tree blocks are
// ordinary allocations from the AG's free space (not the AGFL, not
// agf_btreeblks), owned by the AG.
//
// # Locking
//
// The tree lives under its AG's AGF, as the free space trees do: Open
// locks the AGF in the caller's transaction (package alloc), which holds
// it until it commits or cancels, and every block of the tree is reached
// only through it. Changing the counts of extents in several AGs takes
// their AGFs in ascending AG order (lock order: see package xfs doc).
// Committed reads committed blocks without any lock, for volumes nobody
// changes meanwhile.
//
// # Users
//
// The engine (package xfs, reflink.go) opens one Tree per AG and
// transaction: Files.CloneRange counts new mappings with Adjust(+1);
// unmapping a reflink file's data takes one count off (Adjust(-1)) and
// frees what reaches zero. Log recovery finishes the refcount intents a
// crashed kernel left (CUI: Adjust ±1, AddCoWStaging, RemoveCoWStaging)
// and then frees every staging record (CleanCoWStaging), as the kernel's
// recovery does.
//
// # Not done yet
//
// Copy-on-write of shared blocks (a CoW fork, staging blocks of our own:
// the engine refuses writes into shared blocks instead); writing refcount
// intents (every change of ours is one transaction, so none is needed);
// splitting a large adjustment over several transactions as the kernel
// does when its log reservation runs low (xfs_refcount_still_have_space;
// Adjust does the whole range in the caller's transaction); the per-AG
// metadata reservation that keeps the tree able to grow in a full AG;
// and rmapbt (not supported by the engine).
package refcount
