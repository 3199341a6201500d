// Package quota owns the project quota records (dquots): their on-disk
// codec and verifier, and the in-memory dquots the engine charges.
//
// On disk a record is the kernel's xfs_dqblk: 136 bytes with their own
// CRC, 30 to a 4 KiB block of the project quota inode (sb_pquotino), so
// block b of that file holds projects b·30 … b·30+29 (Locate). Project 0
// holds the defaults: limits for projects that set none, and in its timer
// fields the grace periods.
//
// In memory a project's record is a Dquot. Its limits sit behind an
// atomic pointer (read on every commit, written by an administrator);
// its counters, which every writer of the project changes, sit on their
// own cache line and move with atomic adds, so no lock is taken on the
// way of a write. Lookups read a concurrent map (sync.Map).
//
// # References, the bound and eviction
//
// Every user of a dquot holds a reference for as long as it uses the
// pointer: a transaction from the commit step that checks and writes its
// changes (apply) until they are published or cancelled, a reservation
// (Reserve) until its Release, an administrator's read (Peek) while it
// copies the figures. A reference is taken and dropped with atomic
// operations only, as the kernel does since v6.19 (a lockref): the count
// is an int32, taken by a compare-and-swap loop that gives up when the
// count is negative, dropped by an atomic add. No lock serialises
// references, and the content never needs one for them.
//
// The manager keeps at most a bound of dquots (DefaultCacheBound, 4096;
// xfs.Options.DquotCache sets another, tests a tiny one). Past it, an
// eviction pass starts in its own goroutine, unless one runs already
// (callers never wait for it): it walks the table, spares once the
// dquots used since the previous pass, and claims an unreferenced one by
// a compare-and-swap of its count from 0 to dead (negative), so that a
// reference taken first keeps it and none can be taken after. A claimed
// dquot is removed only if it is clean: its checked-against counters
// equal to its committed ones (with no reference held no reservation is
// in flight) and every record it logged written back into its block, so
// the block holds everything the dquot did. A dirty one (counts that
// drifted, or a record on its way to the block) is revived (count back
// to 0) and kept. Project 0, the defaults every commit reads, is never
// evicted.
//
// A lookup that finds a dead dquot waits for it to leave the table; one
// that finds none reads the record back through the Loader (the
// committed quota file block, without a lock) and inserts it under mu,
// unless a dquot of the project appeared meanwhile (that one wins) or a
// dquot was evicted or a record rewritten by Add since the read began (a
// generation counter tells): then the read is stale and is done again.
// Marking dead, checking and removing happen within one hold of mu, so
// whoever holds mu never sees a dead dquot, and two dquots of one
// project never coexist. A project whose block is a hole in the quota
// file has no record and is not charged.
//
// Administrators list projects from the quota file itself (the figures
// of dquots in memory where there is one), so eviction hides nothing.
// Memory is bounded by the bound: about 200 bytes a dquot.
//
// The engine calls Charge (or Force, for changes that free space) from
// each transaction with what it did to a project's blocks and inodes. At
// commit, after every other block is locked (trans.Tx.OnPrepared), the
// net gain of each project is checked against its limits: the hard
// limit, and the soft limit once its grace period is over. A change that
// does not fit fails the commit with ErrExceeded (the engine's ErrQuota,
// ENOSPC in the kernel) and changes nothing; the check and reservation
// are atomic adds on the dquot, and no block is locked for them.
//
// # Dquot log items
//
// A changed record reaches the log as a dquot item (XFS_LI_DQUOT: the
// record's xfs_disk_dquot), the way the kernel logs it, not as its
// block. The record is computed when the transaction takes its place in
// the log (a trans.LateItem, formatted under the lock that orders the
// log): the committed counters move there, so records are logged in the
// order of their values and no dquot lock is held through a commit.
// Once the commit is durable its write-back copies the record into the
// block and writes it in place (trans.Cache.WriteInPlace; a record a
// later durable commit logged again is left to that one), and only then
// may the log tail pass the commit, so an item pins the tail until its
// record is in its block. Records keep their LSN (see package xlog), so
// every recovery replays every item since the tail: ours and the
// kernel's, which replays dquot items when it mounts with project quota
// (a kernel mounting without quota skips them and clears the quota
// flags, so the next open recounts the usage; a limit change still only
// in the log is then lost, as with the kernel's own items). Limits and
// grace periods change the same way (SetLimits, SetGrace). A dquot
// block is logged as a buffer only when it is made (and by quotacheck at
// open, before any item): a buffer logged later would carry records
// older than the items before it.
package quota
