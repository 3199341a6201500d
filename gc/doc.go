// Package gc holds the background work of a store: inode garbage
// collection ("inodegc"), which frees what deleted objects still hold,
// the trim scheduler, which gives freed space back to the storage under
// the volume, and the lifecycle scanner, which runs passes of a store's
// expiry batches. It reaches the engine only through small interfaces
// (Inactivator, BatchInactivator, Sweepable, Trimmable) and the store
// through one (Expirer); Volume adapts an xfs.Volume to them through its
// space role. It knows nothing of S3. The caches' memory budget is kept
// by package xfs/reclaim, not here.
//
// # Inode garbage collection
//
// A DELETE only unlinks: the engine removes the name and puts the inode on
// its AG's unlinked list in one transaction. When the inode's last link
// and last reference are gone, the engine hands it to InodeGC.Queue. What
// happens next depends on the Mode (PerCPU by default; Sweep is kept to
// compare against it):
//
//	PerCPU  push onto the queue of the producer's P (lock-free) ─► that
//	        queue's worker ─► InactivateBatch, up to 32 inodes a call
//	        (Inactivate one by one for an engine without batches)
//	Sync    Inactivate inside Queue, before the DELETE returns
//	Sweep   wake the AG's sweeper, which frees every releasable inode of
//	        its AG in inode order (and looks once a second unasked)
//
// Inactivation truncates the forks in bounded transactions, frees the
// inode and takes it off its unlinked list. The engine frees the small
// inodes of one AG in one transaction, so their AGI, inode btree, AGF and
// free-space btree blocks are changed and logged once for all of them.
// A crash before that leaves the inode on its list, and the next
// writable open (ours, or the kernel's log recovery) frees it.
//
// When a PerCPU worker runs. The first inode of a batch arms a timer of
// Delay. A queue that reaches Batch waiting inodes kicks its worker at
// once. A producer that finds more than Backlog inodes ahead of its own
// kicks the worker and waits until no more than Backlog are ahead (not
// until the queue is empty). The worker wakes waiters after each batch
// (each inode, for an engine without batches), so a throttled DELETE
// waits for a few inactivations, not for hundreds. A worker takes its
// whole queue, oldest first, hands the engine batchMax (32) inodes at a
// time and counts a batch done when all of it is.
//
// Flush returns once every inode queued before it is inactivated; in
// Sweep mode it waits for a full pass of every AG that started after the
// call. The engine flushes before it reports space or quota (Statfs, the
// project quota report) and before it retries a reservation or a change
// that failed for want of space or quota, so deleted space shows up at
// once. Close refuses further Queue calls (ErrClosed), flushes, stops the
// workers and waits for them. The first failed inactivation is kept
// (Err, and Close's error); its inode stays on its list for recovery.
// SlowDrain reports a queue that took longer than SlowDrainAfter to
// drain, for the server log. Stats feed the admin API and the metrics.
//
// Which queue a producer uses. Go offers no "current CPU". A producer
// takes a queue from a sync.Pool and puts it straight back. A Pool keeps
// a private item per P, so a goroutine running on a P gets the queue that
// P used last. Producers on different Ps therefore get different queues
// and share nothing. The first Get on a P finds its slot empty and takes
// the next queue round-robin. A goroutine that migrates simply uses its
// new P's queue. A fixed hash of the inode number would instead spread
// one producer's inodes over every queue's cache lines.
//
// # Trim scheduler
//
//	every Interval ─► TrimBacklog (bytes freed since last trimmed, per AG)
//	   │  nothing freed, a pass under way, or no discard: no pass
//	   ▼
//	scheduled pass: AGs round-robin from a cursor, one engine pass per AG
//	   over only what was freed (OnlyFreed), until PassBytes are
//	   discarded; the next pass starts where this one stopped
//	   │  the engine walks at most 100 free-space records per hold of
//	   │  an AG's lock, a batch spans at most BatchBytes of free space,
//	   │  a discard request at most RequestBytes
//	   ▼
//	after every request (no engine lock held): if the Busy counter moved
//	   within BusyWindow, pause BackoffRatio times the request's time,
//	   kept within [BackoffMin, BackoffMax]
//	   ▼
//	PassDone (the server log) and Status (the admin API)
//
// On demand, Start (in the background) and Run (in the caller's
// goroutine) make one engine pass over a byte range. An on-demand pass
// cancels a scheduled one under way, which resumes at the next interval.
// A second on-demand pass is refused with ErrTrimRunning. Both kinds are
// paced alike: an operator's pass must not stall a busy server's writers
// either, and either runs at full speed once writes rest for BusyWindow.
// Close cancels the pass under way and waits for it. The store closes the
// trimmer before the volume, since a pass must be over before the
// volume's Close.
//
// Pacing is by the time a discard takes, not by a count of changes. A
// discard changes the storage underneath: a punched hole is a journalled
// change of the host file system, made under the volume file's inode
// lock, and every write to the volume waits behind it. Its cost is time,
// whatever the storage. Pausing after each bounded request, rather than
// after a batch, means no write ever waits behind more than one short
// request.
//
// # Lifecycle scanner
//
// Lifecycle runs passes one at a time, every Interval and on demand
// (Start; a pass under way is not restarted). A pass is a loop of
// Expirer.ExpireBatch calls, each bounded by the store (a page of one
// bucket's versions or uploads), and after each the cursor it returned
// is saved (Expirer.SaveCursor): every pass begins where the saved
// cursor says, so after a restart or crash in the middle the next pass
// goes on where that one stopped rather than from the first bucket; with
// scheduled passes, that pass starts at once. A scanner without them (a
// tool that opened the store) runs nothing until asked. The store expires
// through its ordinary delete paths, so inodegc frees what the pass
// deleted and trim gives the space back. Between batches the pass is
// paced as trim is (the shared pacer): while the foreground's change
// counter moves it pauses BackoffRatio (14) times the batch's time, its
// cursor save included; the store leaves its scanner's own changes out
// of that counter. Close stops after the batch under way.
//
// # Scrubber
//
// Scrubber has the Lifecycle scanner's shape: passes one at a time,
// every Interval and on demand (Start), each a loop of
// Scrubbable.ScrubBatch calls (the store's: a bounded batch of the
// engine's metadata scrub, then a page of one bucket's object versions
// read and checked against their checksums), the cursor saved after
// each (Scrubbable.SaveCursor), paced by the shared pacer with
// BackoffRatio 19. Damage is counted (ScrubCounts), and recorded where
// it belongs: sick marks in the engine, rotten objects in the store.
//
// # Invariants
//
//   - A queue's done count only grows, in queue order. Flush and the
//     throttle wait for a sequence number on it.
//   - The backlog ahead of an inode is its sequence number minus done, or
//     zero when the worker is already past it (a flush lets it run ahead;
//     the subtraction must not wrap).
//   - No wake-up is lost. Kick channels have capacity one. A waiter
//     registers before it checks done, and the worker counts before it
//     looks for waiters.
//   - The fields producers write sit on their own cache line, apart from
//     the worker's and from the next queue's (TestQueueLayout).
//   - At most one trim pass runs at a time, and at most one on demand.
//     Extents a pass is discarding stay busy to allocators until their
//     request returns.
//
// # Locking
//
// Queue takes no lock on its fast path: a compare-and-swap push and
// atomic counters. A queue's mutex and condition variable serve only
// producers that wait (throttled, or flushing); the worker takes the
// mutex only to wake them. Each sweeper's mutex guards its pass requests.
// The Trimmer's and the Lifecycle's mutexes guard their pass state and
// counters, and the pacer's its last look at the Busy counter; the
// Lifecycle holds none across an Expirer call. None of these is held across
// a call into the engine, and the engine calls the trim callbacks with no
// lock of its own held. Inactivation takes engine locks in the engine's
// order (package xfs), so whoever calls Flush must hold none that an
// inactivation needs: the engine flushes only from changes that hold no
// lock of an unlinked inode or of an AG's unlinked list.
//
// # Settings
//
// Options and TrimOptions take these defaults when left zero ("serve"
// names the xfs3 serve setting that sets one):
//
//	Mode            percpu      per-CPU queues (serve: gc_mode)
//	Queues          GOMAXPROCS  one queue per P
//	Batch           32          an inode cluster's worth: kick at once
//	Backlog         256         the kernel's XFS_INODEGC_MAX_BACKLOG: how
//	                            far deletes may run ahead of frees
//	Delay           5 ms        stragglers share a run: fewer log commits
//	                            per DELETE than 1 ms, same throughput
//	SlowDrainAfter  5 s         when a slow drain is worth a log line
//	Interval        0           no scheduled passes (serve: trim_interval 1m)
//	PassBytes       4 GiB       an idle pass ends in seconds; the rest
//	                            carries over (serve: trim_pass_bytes)
//	MinLen          0           any length the device's granule allows
//	RequestBytes    4 MiB       the longest a write waits behind a discard
//	BatchBytes      16 MiB      the free space one batch holds busy
//	BackoffRatio    9           a busy server keeps 9/10 of the storage's time
//	BackoffMin      2 ms        the shortest pause while writers are busy
//	BackoffMax      1 s         a pass still moves under steady writes
//	BusyWindow      100 ms      group commit finishes writers in bursts
//	                            some 20 ms apart: a shorter look sees idle
//	Busy            nil         never busy; the store passes its change count
//
// docs/benchmarks.md has the measurements behind these defaults, the
// delete and trim benchmarks and their latest figures.
package gc
