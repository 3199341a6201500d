// Package gc holds the background work of a store: today inode garbage
// collection ("inodegc"); the sub-AG trim scheduler and the single-runner
// cache reclaimer come next (design.md section 6). It speaks to the engine
// through small interfaces (Inactivator, Sweepable) and knows nothing of
// S3.
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
package gc
