// Package gc holds the background work of a store: inode garbage
// collection ("inodegc") and the trim scheduler; the single-runner cache
// reclaimer comes next (design.md section 6). It speaks to the engine
// through small interfaces (Inactivator, Sweepable, Trimmable) and knows
// nothing of S3.
//
// # Inode garbage collection
//
//	DELETE ─► engine: unlink, inode onto its AGI unlinked list (durable)
//	   │      last reference gone ─► InodeGC.Queue(ino)
//	   ▼
//	PerCPU:  queue of the producer's P ──► its worker ──► Inactivate(ino)
//	         (lock-free push)              kicked at 32 inodes, or 1 ms
//	                                       after the first; producers wait
//	                                       past a backlog of 256
//	Sync:    Inactivate(ino) inside Queue
//	Sweep:   wakes the AG's sweeper, which frees every releasable inode of
//	         its AG in inode order (also once a second unasked)
//
// Flush returns once everything queued before it is inactivated (space
// reports and ENOSPC retries call it); Close drains everything.
//
// # Which queue a producer uses
//
// Go gives no "current CPU". A producer takes a queue from a sync.Pool and
// puts it straight back: a Pool keeps a private item per P, so a goroutine
// running on P gets the queue P used last, and producers on different Ps
// get different queues without sharing anything (the Pool's per-P slot is
// only touched by its own P). The first Get on a P finds the slot empty and
// hands out the next queue round-robin; a goroutine that migrates just
// uses its new P's queue. Hashing a goroutine ID would need unsupported
// runtime access, and a fixed hash of the inode number would spread one
// producer's inodes over every queue's cache lines.
//
// Each queue's producer-written fields (list head, push count) sit on
// their own cache line, apart from the worker's counters and from the next
// queue (TestQueueLayout). PushRetries counts failed compare-and-swaps on a
// queue's list, the only place producers can collide: TestProducersSpread
// and BenchmarkQueue show it stays near zero with producers on every P.
//
// Every worker has the same shape: counters in atomics, a kick channel of
// capacity one, Close that marks the collector closed, drains, stops the
// workers and waits for them.
//
// # Measured
//
// On the 2-core development machine with a load average of 13 to 19 from
// other work (so every figure is CPU-starved and varies by 2-5x between
// runs), s3api's BenchmarkDeleteLatency (DELETE through HTTP, durable
// before the 200, objects fragmented by the kernel) gave these medians:
//
//	extents     percpu     sync      sweep
//	1           1.5 ms     1.3 ms    1.2 ms
//	10,000      1.9 ms     1.49 s    17.6 ms
//	100,000     16.7 ms    42.6 s    175 ms
//
// percpu's 10,000-extent median was 1.24x its 1-extent one in that run,
// but 4x to 35x in five others (6 to 71 ms against 1.4 to 2.3 ms), so the
// 1.5x goal is not met: a DELETE that arrives while the worker frees the
// previous big object waits for the same log (its force writes the
// worker's queued commits, their write-back and the flush of it) and
// shares two CPUs with the worker.
// Freeing in the background ran at 2,000 to 7,000 extents/s under that
// load. store's BenchmarkPutDuringBigDeletes: the p99 of 4 KiB PUTs
// during 10,000-extent DELETEs was 1.9x its value without them in
// percpu, 1.6x in sync, 2.2x in sweep.
//
// # Trim scheduler
//
//	every Interval ─► TrimBacklog (bytes freed since trimmed, per AG)
//	   │  nothing freed: no pass
//	   ▼
//	scheduled pass: AGs round-robin from the cursor, each an engine pass
//	   over the AG with OnlyFreed, until PassBytes are discarded; where
//	   it stops (AG, Next) is where the next pass starts
//	   │  after every batch (no engine lock held): while the store's
//	   │  change counter moves, sleep BackoffStep, up to BackoffMax
//	   ▼
//	counters ─► PassDone (the server log), Status (the admin API)
//
//	on demand (Start, Run): one engine pass over a byte range; it
//	   cancels a scheduled pass under way (which resumes next interval);
//	   a second on-demand pass is refused (ErrTrimRunning)
//
// Close cancels the pass under way and waits for it: the store closes the
// trimmer before the volume, since a pass must be over before Close.
package gc
