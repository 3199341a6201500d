// Package xfs is the engine: it reads and changes an XFS v5 filesystem
// held in a volume file or block device, speaking in inodes and names. It
// never mounts anything; on-disk bytes are decoded by the package that
// owns their structure and verified whenever they are read from the
// device (metadata blocks then stay in the buffer cache, verified, for
// writable and read-only volumes alike). Every on-disk structure has one
// owning package below this one; the root keeps the API, the inode cache
// and the transaction glue.
//
//	xfs (Volume and its roles, inode cache, txn, forks and bmap)
//	 ├─> dir ──┬─> dabtree ─────┐  directories, xattrs and the one
//	 ├─> attr ─┘                │  da-btree under both (nodes, splits,
//	 │                          │  joins, the per-operation block cache)
//	 │                  fork ───┤  fork.Reader/Writer: blocks of a fork
//	 ├─> ialloc ──> alloc ──────┤  AGI, inode chunks, unlinked lists;
//	 │                          │  AGF, AGFL, free-space trees
//	 ├─> quota ─────────────────┤  project dquots: records, limits, charges
//	 ├─> btree ─────────────────┤  generic B+tree cursor
//	 ├─> trans ──> xlog, dev ───┤  buffer cache, transactions, the log
//	 │     └─> reclaim          │  one reclaimer at a time (both caches)
//	 └─────────────────────────>format  on-disk layouts, CRCs, verifiers,
//	                                     error kinds
//	(mkfs builds volumes on format and dev; refcount, over alloc and
//	btree, owns the refcount btree of shared extents;
//	integration/layers_test.go enforces who may import whom.)
//
// # The API in roles
//
// A program opens a Volume (Open, OpenDevice) and closes it; the Volume
// keeps what concerns the whole filesystem (Sync, Force, Close, Stat,
// geometry, statistics, Err). Its operations live in role types, each a
// small value over the state they share (type mount, libxfs's xfs_mount),
// each in its own files:
//
//	role                   files                         operations
//	Namespace  v.Names()   names*.go                     Lookup, Create, CreateFile, Mkdir, Symlink,
//	                                                     Link, Unlink, UnlinkFiles, Rmdir, Rename, Apply,
//	                                                     ReadDir, ReadEntryInodes
//	Files      v.Files()   files*.go, reflink.go         ReadAt, WriteAt, Truncate, PunchHole,
//	                                                     Preallocate, AppendExtents, CloneRange,
//	                                                     SharedExtents, Open, Readlink, SetImmutable
//	Xattrs     v.Xattrs()  xattrs.go                     Get, List, Set, SetMany, Remove
//	Quotas     v.Quotas()  quotas.go                     SetProject, SetLimits, SetGrace, Get, List, Check
//	Space      v.Space()   space*.go, scrub.go           Statfs, Shared, Trim, Scrub,
//	                                                     SetInactiveQueue, Inactivate
//	mount      (shared)    volume.go, mount.go,          open and close, inode cache and locks,
//	                       inode.go, txn.go, fork.go,    transactions, fork and extent reads,
//	                       bmap.go, stat.go, recover.go  log recovery
//
// A role reaches another through the shared mount (m.space(), m.xattrs()):
// an unlink hands the inode that lost its last link to Space, a rename
// that sets attributes uses Xattrs' encoding. New capabilities go to the
// role they belong to: shared extents to Files, inode flags beside Stat,
// object versions above, in package store, on Namespace's renames and
// links.
//
// A Volume and every role value are safe for use by many goroutines.
//
// # Immutable inodes
//
// An inode whose di_flags carry XFS_DIFLAG_IMMUTABLE (Stat.Immutable,
// set by the kernel's chattr +i or by this engine) is honoured as the
// kernel honours it: no change of its names, data or xattrs (and, for a
// directory, of the names in it) is allowed; a refused change changes
// nothing and wraps ErrImmutable. Reads are not refused, nor a project
// change (the kernel's FS_IOC_FSSETXATTR checks only a capability), nor
// freeing an inode without links (inactivation, log recovery). txn.modify
// is the one check; the few changes it lets through use txn.modifyAny.
//
// Two privileged ways change an immutable file: Files.SetImmutable sets
// or clears the flag of a regular file together with attributes, and an
// Apply op with NameOp.Immutable moves a file and leaves it immutable, in
// one transaction, so that a file never goes without the flag while it
// moves. The append-only flag (XFS_DIFLAG_APPEND) is not enforced.
//
// # Shared extents
//
// On a reflink volume (mkfs's default, as mkfs.xfs's) Files.CloneRange
// makes a file map another's blocks: both get XFS_DIFLAG2_REFLINK and
// the AG's refcount btree counts the blocks mapped more than once
// (package refcount). Every unmap of a reflink file's data blocks
// (truncate, punch, inactivation, a clone over them) takes one count off
// and frees only what no file maps any more; a file without the flag
// frees straight away. Nothing writes a shared block in place: WriteAt,
// and the partial-block zeroing of Truncate and PunchHole, refuse with
// ErrShared (the kernel would copy on write; S3 objects are never
// changed in place). Each change is one transaction, mapping and counts
// together, so the engine needs no refcount or bmap intents of its own
// (reflink.go).
//
// # Damage
//
// A block that fails its verifier marks sick its inode, else its AG, or
// a quota file block's projects (health.go). No change touches them
// after (ErrSick), other reads go on, and the marks live as long as the
// Volume, as the kernel's do. Space.Scrub walks the same reads.
//
// # Log recovery
//
// A writable open of a volume with a dirty log (recover.go) replays it
// (package xlog, the kernel's v5 rules), then, in this order, as the
// kernel's recovery does: finishes the intents the log left unfinished,
// frees the copy-on-write staging extents, and frees the inodes on the
// AGI unlinked lists. The log stays dirty until all that is done, so a
// crash in between recovers again. The engine writes no intents (each of
// its changes is one transaction); a kernel that crashed may leave
// extent-free (EFI), refcount (CUI) and bmap (BUI) intents, which
// recover_intents.go finishes in log order, in one transaction, the first
// the open writes (why: see there). It takes the BUIs' inodes in
// ascending number before the transaction and the AGFs of every extent
// named in ascending AG order before any work (lock order rules 2 and
// 4b). Logs holding other kernel items (rmap, attr, mapping-exchange
// intents, quota-off, fork owner changes) are refused before anything is
// written.
//
// # Lock order
//
// This is the one place the lock order is written; everything else links
// here.
//
//	Taken top to bottom, never upwards:
//
//	0. writeState.trimMu: one trim pass at a time, held across the pass
//	   by Trim and nothing else. The pass takes no inode lock; each batch
//	   locks one AGF in a transaction of its own that changes nothing and
//	   holds no other buffer, and discards run with no lock held. An
//	   allocation that finds only space being discarded waits for a
//	   discard (trans.Busy.WaitDiscards) with no lock of its own held
//	   but the inode's.
//	1. writeState.renameMu: renames that move a directory to another
//	   parent only (the moves that could make a loop).
//	2. Inode locks (inodeHandle.lock): directories before the inodes they
//	   name; two inodes of one kind (AppendExtents, or the two inodes a
//	   rename moves and replaces), lower inode number first. The two
//	   directories of a cross-directory rename are taken as a pair
//	   (lockInodePair), and the directories of Namespace.Apply as a set
//	   (lockInodeSet): neither waits for one while holding another, so
//	   they need no order among them. Every inode lock is taken before
//	   the transaction starts: a transaction never waits for an inode lock.
//	   One exception: freeing an unlinked inode (space_inactive.go) takes the
//	   lock of the inode before it on its unlinked list after its own,
//	   whatever their numbers. Only list neighbours are locked so; a
//	   predecessor is always newer on the list, so such waits run towards
//	   the bucket head and cannot form a cycle, and the list's mutex is
//	   never held while waiting for one.
//	3. An AG's unlinked-list mutex (ialloc.Unlinked), held by the callers
//	   that put an inode on a list or take it off, across that one
//	   transaction only (never across a whole inactivation).
//	   Waiting for inactivation (InactiveQueue.Flush, a throttled Queue)
//	   happens with neither an unlinked inode's lock nor this mutex held:
//	   a released inode is handed over after its change drops every lock,
//	   and only allocating changes flush and retry on ENOSPC. A shared
//	   inactivation (InactivateBatch) holds this mutex while it picks
//	   its inodes: it only tries their locks (and their neighbours'),
//	   never waiting for one under it. Namespace.Apply, whose files may
//	   lose their last links in several AGs, takes those AGs' mutexes in
//	   ascending AG order; nothing else holds two.
//	4. Buffers, which a transaction holds until it commits or cancels:
//	   a. AGIs before any AGF (an inode's AGI first, then the AGF of the
//	      same AG for its chunk and inode-tree blocks, or any AG's AGF for
//	      the directory and file blocks that follow). A transaction holds
//	      one AGI: inode allocation picks its AG from committed headers
//	      without locking any, and fails rather than move to a second AGI
//	      once it holds an AGF. Namespace.Apply either takes the AGIs of
//	      the inodes it puts on unlinked lists, ascending, before any AGF,
//	      or allocates inodes (NameOp.New) from the first one's AGI.
//	   b. AGFs in ascending AG order. An allocation may try any AG, but
//	      without waiting (TryLock); it waits only for AGs above every AGF
//	      it holds. Frees sort their extents and run before the
//	      allocations of the same change where they can. A change that
//	      still needs an AGF below one it holds (a directory removal that
//	      frees a data block, then a leaf block of a lower AG) never
//	      waits for it: it gets alloc.LockOrderError, and runTx runs it
//	      again with that AG prelocked, taken in order.
//	   c. Blocks reached only through a held lock need no order of their
//	      own: AGFL and free-space tree blocks (under their AGF), inode
//	      tree blocks (under their AGI), directory, xattr and bmbt blocks
//	      (under their inode's lock; freed blocks stay busy, so no other
//	      owner can reach them before the free is durable).
//	   d. Inode cluster buffers: a transaction locks them only while its
//	      commit copies inodes into them, in address order, after every
//	      AG header it holds. Allocation reads a free inode without locking
//	      its buffer; a new chunk's blocks are fresh and nobody else's.
//	   e. Dquot blocks: no transaction locks one to change a record (the
//	      records are logged as dquot items, package quota); making a new
//	      quota file block, or quotacheck at open, holds the quota inode's
//	      lock and then the new block. The log's write-back locks a dquot
//	      block, alone, to copy durable records into it.
//	5. Leaves, held briefly and never while waiting for anything above:
//	   the inode cache's and the buffer cache's shard mutexes
//	   (inodeShard.mu guards a handle's refs, opens and doomed),
//	   writeState.sbMu, the log's internal mutexes, trans.Busy, the
//	   allocators' maps. A lookup that finds a cache far over budget may
//	   wait for the reclaim run at work while holding anything above:
//	   the run takes one shard mutex at a time and waits for nothing.
package xfs
