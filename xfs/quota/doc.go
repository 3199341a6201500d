// Package quota owns the project quota records (dquots): their on-disk
// codec and verifier, and the in-memory dquots the engine charges.
//
// On disk a record is the kernel's xfs_dqblk: 136 bytes with their own
// CRC, 30 to a 4 KiB block of the project quota inode (sb_pquotino), so
// block b of that file holds projects b·30 … b·30+29 (Locate). Project 0
// holds the defaults: limits for projects that set none, and in its timer
// fields the grace periods.
//
// In memory every project with a record has a Dquot. Its limits sit
// behind an atomic pointer (read on every commit, written by an
// administrator); its counters, which every writer of the project
// changes, sit on their own cache line and move with atomic adds, so no
// lock is taken on the way of a write. Lookups read the table, an
// immutable map replaced whole when a project is added, through an
// atomic pointer.
//
// # Why dquots have no reference counts
//
// The kernel counts references to a dquot (since v6.19 with a lockref,
// so that taking one needs no lock) because it frees dquots: its shrinker
// evicts unreferenced ones, and the count tells it which. We never evict:
// every dquot lives from the open that reads (or the commit that makes)
// its record until the volume closes, and a deleted bucket's record is
// only cleared. So there is nothing for a count to protect: a *Dquot, once
// looked up, stays the one and only dquot of its project, and holding it
// costs nothing, with no lock and no atomic operation to take or drop it
// (cheaper than the kernel's lockless fast path). Go's garbage collector
// keeps memory safe on its own; what eviction would put at risk is
// identity, two dquots of one project whose counters drift apart, and
// that is what reference counts would then have to prevent, by telling
// which dquots no transaction, reservation (Reserve) or commit in flight
// still holds.
//
// The memory this costs is bounded by the number of projects, that is of
// buckets ever made on the volume: about 200 bytes each (the 144-byte
// Dquot, its 32-byte Limits and its table entry), 20 MB for 100,000
// buckets, beside the 136-byte records the quota file holds anyway. Adding
// a project copies the table (O(projects), once per bucket made), which
// keeps every lookup free of locks. Should volumes with millions of
// buckets matter, the way out is a bounded cache that evicts dquots with
// no reservation in flight and counters equal to their record, and then
// atomic reference counts become necessary.
//
// The engine calls Charge (or Force, for changes that free space) from
// each transaction with what it did to a project's blocks and inodes. At
// commit, after every other block is locked (trans.Tx.OnPrepared), the
// net gain of each project is checked against its limits: the hard
// limit, and the soft limit once its grace period is over. A change that
// does not fit fails the commit with ErrExceeded (the engine's ErrQuota,
// ENOSPC in the kernel) and changes nothing. Otherwise the record is
// rewritten in its block, in disk order, inside the transaction: the log
// replays it like any other block (flagged as a project dquot buffer, so
// the kernel's recovery knows it too).
//
// Lock order: dquot blocks are the last blocks a transaction locks; see
// package xfs doc.
package quota
