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
// lock is taken on the way of a write. A dquot stays in the table while
// the volume is open (a deleted bucket's record is only cleared), so no
// reference needs taking or dropping: lookups read the table through an
// atomic pointer.
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
