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
//	PerCPU:  queue of the producer's P ──► its worker ──► InactivateBatch
//	         (lock-free push)              (up to 32 inodes; Inactivate(ino)
//	                                       for a volume without batches)
//	                                       kicked at 32 inodes, or 5 ms
//	                                       after the first; a producer past
//	                                       a backlog of 256 waits until the
//	                                       backlog ahead of it is 256 again
//	Sync:    Inactivate(ino) inside Queue
//	Sweep:   wakes the AG's sweeper, which frees every releasable inode of
//	         its AG in inode order (also once a second unasked)
//
// Flush returns once everything queued before it is inactivated (space
// reports and ENOSPC retries call it); Close drains everything.
//
// A worker hands the engine up to batchMax inodes at once, oldest first,
// and counts them done when all of them are (so the done count stays in
// queue order, which Flush and the throttle rely on). The engine frees
// the small ones of one allocation group in one transaction: their AGI,
// inode btree, AGF and free-space btree blocks are copied and logged once
// for all of them, not once each (xfs.Volume.InactivateBatch).
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
// On the 2-core development machine, s3api's BenchmarkDeleteLatency
// (DELETE through HTTP, durable before the 200, objects fragmented by the
// kernel) gave these medians, first with a load average of 2.5 from other
// work, then (in brackets) with 13 to 19, where every figure varied 2-5x
// between runs:
//
//	extents     percpu            sync             sweep
//	1           1.3 ms (1.5)      0.9 ms (1.3)     0.9 ms (1.2)
//	10,000      5.8 ms (1.9-71)   314 ms (1,490)   5.0 ms (17.6)
//	100,000     (16.7 ms)         (42.6 s)         (175 ms)
//
// percpu's 10,000-extent median is 4.6x its 1-extent one on the quiet
// machine (1.2x to 35x loaded), so the 1.5x goal is not met: a DELETE
// that arrives while the worker frees the previous big object waits for
// the same log (its force writes the worker's queued commits, their
// write-back and the flush of it) and shares two CPUs with the worker.
// The worker freed 42,000 extents/s quiet, 2,000 to 7,000 loaded.
//
// Loaded (13-19), store's BenchmarkPutDuringBigDeletes put the p99 of
// 4 KiB PUTs during 10,000-extent DELETEs at 1.9x its value without them
// in percpu, 1.6x in sync, 2.2x in sweep; BenchmarkParallelDeletes
// deleted 4 KiB objects at 390/400/1,320/1,830 per second from 1/2/8/32
// clients in percpu (sync 180/550/1,390/2,200, sweep 470/810/2,750/2,960),
// against 27,000 to 54,000 unlinks/s by the kernel (BenchmarkKernelRm,
// which does not wait for its log per unlink); a statfs right after the
// last DELETE found at most 23 ms of work left.
//
// Through the real binary (integration's BenchmarkHTTPParallelDeletes,
// 4 KiB objects over 100 prefixes, durable on ack, runs alternating with
// a build of 6f8cc8c, the last commit before deferred inactivation), the
// first measurements (load 2 to 14) put the new/old ratio of DELETE/s at
// 0.89-1.44 in percpu with 8 clients and 0.89-1.20 with 32, with the
// server spending about the same CPU per DELETE either way, and a CPU
// profile showed where: HTTP, routing, SigV4 and the request log about
// 30%, the log force 19% (of which the leader's in-place write-back of
// its batch 13%), the unlink 9%, inactivation 18%, Go's collector 9%, and
// 3 log commits per DELETE (unlink, truncate, free). Since then in-place
// writes wait in a backlog and run in passes beside the batches (package
// xlog), and a small inode is truncated and freed in one transaction (2
// commits per DELETE). Two rounds at load 2.4-4 (20,000 objects each):
// 8 clients 2,304 and 2,868 DELETE/s against 2,268 and 2,441 for 6f8cc8c
// (x1.10 of the medians; the CPU per DELETE 364-466 us against 457-484),
// 32 clients 3,956 and 4,046 against 2,500 and 2,855 (x1.49; 288 us
// against 424-493). An earlier pair the same hour, before passes ran
// beside batches: x1.43 and x1.20. The 2x target is not met; p50 fell
// (6 ms against 10-12 at 32 clients) but p99 at 32 clients was 41-43 ms
// against 27-31.
//
// That tail came from the throttle: a producer past the backlog waited
// for its queue to drain (hundreds of inactivations), and with 32 clients
// half the DELETEs of the store's ParallelDeletes found the backlog full.
// A throttled producer now waits only until the backlog ahead of its
// inode is back to the limit, woken inode by inode, which halved that
// benchmark's p99 (40-48 ms to 21-25 ms) at the same rate. Three rounds
// through the binary afterwards (2026-12-02, load 3-5): 8 clients 2,423,
// 3,022 and 3,143 DELETE/s against 1,966, 2,156 and 2,414 (x1.40), p99
// 9-12 ms either way; 32 clients 3,575, 3,650 and 3,784 against 2,627,
// 3,035 and 3,093 (x1.20), p99 28-35 ms against 26-30 ms. The server
// spent 297-408 us of CPU per DELETE against 375-538 us. The store-level
// benchmark shows what bounds the rate at 32 clients: about 230 us of CPU
// per DELETE (unlink, inactivation, log writes, Go's collector) with the
// two cores a third idle, half the DELETEs briefly throttled behind the
// two workers, and the unlink and the worker of one AG taking turns on its
// unlinked list and AGI.
//
// A worker then still wrote the log itself whenever its commits passed
// BackgroundPushBytes, and waited for that write. It now starts the force
// in a goroutine of its own (trans.Cache.Push) and goes on with the next
// inode. Three rounds through the binary (2026-12-02, load 3.6-7.7),
// against 6f8cc8c and the commit before this change: 8 clients 2,862,
// 3,107 and 3,138 DELETE/s against 2,115-2,331 (x1.34; the commit before
// x1.23), 32 clients 3,931, 3,981 and 4,144 against 2,958-3,187 (x1.30;
// before x1.27), p99 27-30 ms against 25-26 ms, server CPU per DELETE
// 282-359 us against 366-514 us. At the last DELETE the gc backlog was
// empty in every round (182-348 inodes with the commit before) and statfs
// found the space back after 2-4 ms (20-26 ms). The store's
// ParallelDeletes at 32 clients no longer throttles any DELETE (half of
// them before). The engine's CreateDelete100k, alternating with the
// commit before on a quiet machine: 10,376 and 12,642 deletes/s against
// 10,235 and 9,950 (delete-ratio 0.18-0.19 against 0.14-0.15; under load
// 9,737 and 9,830 against 6,563 and 6,668), against the kernel's 56,000 to
// 79,000. Neither target is met: the engine spends 100-135 us of CPU per
// unlink and inactivation (copies of the blocks each transaction changes
// about 35 KB, Go's collector, log writes), several times the kernel's.
//
// The same day a hang was found in the throttle: a producer computed its
// backlog as its sequence number minus the worker's count, and when the
// worker had already inactivated its inode and later ones (a flush by
// another producer lets it run ahead) that wrapped around to a huge
// backlog, and the throttle waited for a count never reached. The backlog
// is now zero then (queue.pendingAt, TestBacklogWhenWorkerIsAhead).
//
// Workers now hand the engine batches (InactivateBatch: one transaction
// per AG for a batch's small inodes), a DELETE unlinks with one lookup
// (xfs.Volume.UnlinkFile, no Lookup and Stat before it), and an inode's
// block is read through the buffer cache, where the unlink's transaction
// finds it next. The engine's CreateDelete100k, alternating with
// 77c55de (2026-12-02, quiet machine): 18,214 and 21,723 deletes/s
// against 10,685 and 12,703, CPU per unlink and inactivation 66-78 us
// against 110-129, delete-ratio 0.26-0.30 against 0.15-0.18 (the kernel
// 68,900-77,700/s). Through the binary, three runs of two rounds each
// against 6f8cc8c and 77c55de (load 2.3-4.3; the same binary varied by
// up to 30% between rounds): 8 clients x1.26-1.54 of 6f8cc8c's median
// (77c55de x1.15-1.27), 32 clients x1.44-1.69 (77c55de x1.30-1.43);
// server CPU per DELETE 243-373 us against 425-693 us; log commits per
// DELETE 1.38 at 32 clients and 1.7 at 8 (2.01 before: the unlink's
// and, nearly always, one inactivation's). Neither 2x target is met. The
// benchmark's second pass of DELETEs of keys already gone (no change, no
// log force) reaches 10,000-15,000/s with 60-100 us of server CPU: HTTP,
// SigV4 and the clients on the same two cores are not what bounds the
// rate; the unlink, its log force and the collector are.
//
// What bounds 8 clients is the log device. Tracing the server's
// pwritev2 calls (perf record -e syscalls:sys_enter_pwritev2,
// syscalls:sys_exit_pwritev2, 2026-12-02, 2,787 DELETE/s): 941 durable
// log writes/s of about 3 DELETEs each, each taking 630 us at the median
// and 1.1 ms at p90 (220 us on the idle machine), the writer busy 70% of
// the time, with 189 us between one write's end and the next's start at
// the median. A DELETE waits for the write under way and then its own,
// so its median is 2.4 ms. Writing up to four batches at once made it
// worse (see xlog.Writer): each durable write costs about 100 us of CPU
// on this VM, and smaller batches meant more of them.
//
// A worker waited 1 ms after the first inode of a batch for others to
// join; at 32 clients a queue then took about 2 inodes a run, and an AG's
// share of them one transaction. Alternating builds with 1, 5, 10 and
// 20 ms (two rounds, 2026-12-02): log commits per DELETE at 32 clients
// 1.40-1.43, 1.23, 1.18-1.19 and 1.16; server CPU per DELETE 251-257 us,
// 224-232, 231-250 and 236-276; DELETE/s within the rounds' noise of each
// other (5 ms the best of the four at both 8 and 32 clients, by 5-6%).
// The delay is 5 ms now: space comes back a few ms later, but whatever
// reports space flushes first.
//
// Where the engine's CPU goes in CreateDelete100k's unlink loop (a CPU
// profile of that loop alone, 2026-12-02 evening, 84 us per unlink and
// inactivation): the unlink itself 38 us, Go's collector 22 us, the
// inactivation 11 us, the log's leader 10 us. The collector runs a cycle
// every 2,300 unlinks or so, about 50 ms of CPU each: an unlink and its
// inactivation allocate about 40 KB, 22 KB of it the copies of the
// seven blocks the unlink's transaction changes (committed blocks are
// immutable; a transaction changes a copy). GOGC=400 cuts the loop's
// CPU by a fifth, so xfs3 serve holds the collector off until the heap
// reaches the cache budget (README, "Configuration"). Two small
// cuts in package trans (a buffer's kind stored only when it changes, a
// transaction's first blocks tracked without a map) saved a few per
// cent. What would close the gap to the kernel is changing a locked
// block in place and logging the changed ranges, as the kernel does,
// instead of a copy per transaction; that is a redesign of package
// trans.
//
// A smaller step was measured and left (2026-12-03): viewing instead of
// copying the blocks a transaction reads but does not change. Counted
// at commit over 20,000 creates and unlinks (CreateDelete100k's shape),
// such blocks were 7% of the bytes copied by creates and 13% by unlinks
// and their inactivation, mostly directory leaf blocks; the rest is
// blocks the transaction does change. A server CPU profile at 8 clients
// (3,199 DELETE/s, 337 us of server CPU per DELETE) spreads the work
// with no part to halve: HTTP, SigV4 and routing about 90 us (the no-op
// DELETE), the unlink's transaction 56 us, its log force 45 us (most of
// it the durable write), inactivation 50 us, key resolution 29 us, and
// the collector and allocation the rest. The 8 clients are bound by the
// two cores (server and clients together used 1.5 of them, the rest
// waiting on log writes), so their 2x needs about a fifth less CPU per
// DELETE, which is again the copies and the collector. Through the
// binary the same day (three rounds, 20,000 objects, against 6f8cc8c):
// 8 clients x1.64 of its median (rounds 1,420-3,988 DELETE/s against
// 950-2,083), 32 clients x3.08 (2,767-4,136 against 1,151-1,795).
//
// The server's heap floor (no collection before the heap reaches the
// cache size, in xfs3 serve; a first version set twice the cache size and
// missed that Go's goal counts stacks, globals and a heap minimum, so a
// server streaming a 768 MiB object peaked at 505 MiB resident) was
// measured the same way on 2026-12-03: with GODEBUG=gctrace=1 at 8
// clients the server ran 28 collections a run instead of 119 and spent
// 1% of its time collecting instead of 4%.
// Against 6f8cc8c (XFS3_BENCH_BINARIES with old, the same binary with
// GOGC=100 as "nofloor", and the floor; 3 rounds, then 5): 8 clients
// x2.09 and x1.91 of old's median with the floor, x1.77 and x1.88
// without; 32 clients x1.78 and x2.13 with, x1.72 and x1.86 without.
// Rounds of one side spread by up to 1.9x (old at 8 clients
// 2,524-3,553 DELETE/s, the floor 3,947-7,453), so the floor's gain in
// throughput is within the noise; the collector's share is not. Writing
// zeros over the log's holes in the volume file first (a dsync write
// into a hole of this ext4 takes 150 us, into written blocks 95) was
// within the noise as well, so it was left.
//
// On 2026-12-04, after write-back passes merged their writes and lookups
// stopped copying da-btree nodes and most prunes stopped locking (three
// rounds, 20,000 objects, against 6f8cc8c): 8 clients x1.81 of old's
// median (rounds 4,426-5,679 DELETE/s), 32 clients x1.89 (5,728-8,002),
// server CPU per DELETE 198 and 156 us against 406 and 318 (x0.49 both).
// A profile of the server at 8 clients put 31% of its CPU in syscalls:
// the log's durable write alone 14%, about 30 us per DELETE at 0.31
// writes per DELETE. On this VM a 16 KiB dsync write costs 54-61 us of
// CPU by itself (a one-off program, 2,000 writes: O_DIRECT with dsync
// 54, write plus fdatasync 62-64, O_DIRECT without a flush 31), the
// device's notifications being VM exits; the rest is spread thin (the
// unlink's transaction about 28 us, inactivation 22, the write-back
// passes 20, HTTP and the middleware about 40).
//
// The clients of that benchmark run on the same two cores as the server
// and took 50-180 us of CPU per DELETE, so they cap any server's rate
// and flatten ratios. With each server confined to CPU 1 and the clients
// to CPU 0 (XFS3_BENCH_SERVER_CPUS=1, the same head and 6f8cc8c, three
// rounds, 2026-12-04): 8 clients x2.46 of old's median (new 4,139-5,481
// DELETE/s, old 1,618-2,595; every round's pair x2.1 or more), 32 clients
// x4.03 (new 4,414-7,556, old 1,304-2,121), server CPU per DELETE 151 and
// 118 us against 326 and 317. Old loses most from being held to one core
// at 32 clients, where it frees each object inside the request; an ad hoc
// run the same way (taskset wrappers) an hour before gave x2.30 and
// x3.16. Commits had waited for the log writer's lock to read the tail
// it has passed (PastTail, now an atomic): with that gone, the same
// pinned comparison (old, the head before, the change; three rounds)
// gave 8 clients x2.64 against x2.38 for the head before (server CPU per
// DELETE 139 us against 159), 32 clients x3.98 against x4.16 (115 us
// against 111), and the engine's CreateDelete100k 55-59 us of CPU per
// delete against 67-69, delete-ratio 0.29-0.32 against 0.25-0.29.
// Unpinned, the same three binaries half an hour later (load 2-4, the
// machine slower: the change's server CPU per DELETE 234 us against 139
// pinned) gave x1.59 and x1.81, the head before x1.44 and x2.02: sharing
// the cores with the clients, the target of twice old's rate is still
// missed at 8 clients.
//
// About half of the clients' CPU was net/http and signing each request
// as it went. The benchmark's clients now sign and serialise every timed
// request before the clock starts and send it over a plain kept-alive
// connection (XFS3_BENCH_LOADGEN, presigned by default); the server
// verifies every signature as before. Unpinned, the same old and head
// (three rounds each way, later on 2026-12-04, load 1.3-3.9): presigned,
// 8 clients x1.66 of old's median (new 4,301-4,744 DELETE/s, old
// 2,514-2,866), 32 clients x2.31 (6,739-7,725 against 3,127-4,387),
// clients' CPU per DELETE 42-101 us; signed through net/http, x1.55 and
// x1.99, clients 76-175 us. The server's CPU per DELETE unpinned, 174-282
// us, is still far above the 115-139 us it takes alone on a core: a
// system-wide profile at 8 clients (perf, 5 s of the DELETE phase) found
// the machine idle 24% of the time, the clients 14% and the server 60%,
// spread over HTTP outside the handler (9% of all samples), the handler
// and store (21%, the log's write 8 of it), inactivation (8%) and Go's
// collector (7%); 34 of the 41 KB a DELETE allocates (unlink and
// inactivation, through the handler) are the copies of the blocks its
// transactions change.
//
// On 2026-12-04 evening the engine's small allocations were cut by a
// third (BenchmarkUnlink 177 to 112 per unlink and its inactivation:
// inode cores held by value, one commit hook per transaction, a
// directory operation's blocks and a transaction's hooks kept inline, AG
// header ops made once per volume). Bytes hardly moved (36.2 to 35.3 KB:
// 18.6 KB of it are still block copies). CreateDelete100k alternating
// with the commit before: 46.7 and 47.8 us of CPU per delete against
// 56.9 and 51.5, 27,000-29,000 deletes/s against 23,000-25,300 (the
// kernel 74,000-88,000; delete-ratio 0.31-0.36). Through the binary,
// unpinned and presigned, two runs of three rounds against 6f8cc8c: 8
// clients x1.97 and x2.06 of old's median (round pairs x1.67-2.30; over
// all six rounds x1.89), 32 clients x1.94 and x2.12 (pairs x1.77-2.39;
// x2.08), server CPU per DELETE 179-247 us against 360-504: at twice
// old's rate within the rounds' noise, not clearly past it. A perf
// profile of the server at 8 clients: log forces 16% of its samples
// (the durable pwritev2 is a buffered write and a sync on this ext4),
// Go's collector 11%, inactivation 10%, HTTP's response write 7%.
//
// On 2026-12-05 a writable open began filling the log's region of a
// volume file (mkfs leaves it a hole, and a durable write into a hole
// also allocates on the host). One client, the same binary with and
// without the fill, three rounds of 5,000 DELETEs: 1796, 1643 and 1464
// DELETE/s without against 2259, 1931 and 1694 with, p50 523-633 us
// against 404-514. At 8 and 32 clients, where each log write carries
// several DELETEs, the two were within noise (x1.84 and x1.72 of 6f8cc8c
// at 8 clients, x2.11 and x2.07 at 32).
//
// Later on 2026-12-05 (another machine of the same kind): a perf profile
// of the server over the DELETE phase at 8 clients put the unlink
// transaction at 16% of its samples, the log's durable write at 15%
// (of which the virtual disk's doorbell alone 4%), Go's collector 12%
// (gctrace: a cycle every 0.28 s of about 20 ms, 36 MB live, the 127 MB
// goal the heap floor sets), inactivation 9%, the write-back pass 6%,
// signature checks 5% and the request log's write system call 4%. With
// request lines logged one in a million, a no-op DELETE cost the server
// 37-41 us instead of 53-57 and the benchmark's own process (which reads
// the server's stderr) 41-44 us per DELETE instead of 58-64. So log
// lines are now written in batches (config log_flush, 100 ms; strace: 19
// writes to stderr in 2 s of DELETEs instead of one a request). Five
// rounds of old (6f8cc8c) against that head: 8 clients x1.95 of old's
// median (6,940 against 3,565 DELETE/s, rounds 6,036-7,234 against
// 3,148-3,667), 32 clients x2.29 (9,992 against 4,359), server CPU per
// DELETE 155 and 129 us against 342 and 300. The machine is idle about a
// quarter of the time at 8 clients: each DELETE waits for a log write,
// and a commit that arrives during one waits for it and then its own.
//
// That wait was taken for the next lever, and on 2026-12-05 it was
// measured instead: each variant against the same head, one run of three
// rounds at 8 clients, 20,000 objects.
//   - No wait at all (--durability within-1s, passed by a wrapper):
//     10,537-11,443 DELETE/s against 6,272-8,457 (medians x1.64),
//     server CPU per DELETE 104-116 us against 116-178 (medians 115 and
//     157), log writes per DELETE 0.02-0.03 against 0.27-0.28. Waiting
//     for durability costs about 40% of the rate here.
//   - Fewer, fuller log writes (the leader sleeps 100 or 250 us after
//     its yield when its last batch held more than one commit): writes
//     per DELETE fell from 0.29-0.30 to 0.19-0.20 and 0.14-0.15, CPU per
//     DELETE hardly moved (143-174 and 126-160 us against 158-162), and
//     DELETE/s fell (x0.95 and x0.69 of the median).
//   - Yielding up to four times while the queue still grows: writes per
//     DELETE unchanged (0.27-0.29), DELETE/s x1.02.
//   - Forcers woken through a closed channel and an atomic ticket, so
//     that none queues on the writer's mutex after the leader's wake-up:
//     x1.06 at 8 clients and x1.02 at 32, within the rounds' noise, and
//     BenchmarkWriterCommit unchanged; not kept.
//
// So the price of the wait is not the log write's own work (dd: 43 us of
// system time per 8 KiB dsync write on this disk); the measurements point
// to the request's sleep and wake-up on a virtual machine instead. In a
// perf profile of the server over the DELETE phase, 12% of its samples
// land where the kernel turns interrupts back on (this VM charges
// interrupts-off time there), more than any other symbol, and most of
// them in system calls that wake or switch tasks: socket writes waking
// the client, reads, the log write's task switch. Two log writes in
// flight would shorten the wait but add writes and wake-ups, so they are
// dropped as a lever; at 8 clients on two shared cores the gap closes
// only with less CPU per request, the transaction redesign that the
// engine's own delete rate (against the kernel's rm) needs too.
//
// What that redesign would win was then measured, later on 2026-12-05: a
// CPU profile of BenchmarkUnlink's timed loop alone (100,000 unlinks, 37
// us of foreground CPU each) puts the block copies' share (their
// memmove, their allocation and the collector's work that their bytes
// set off) at about a fifth of the loop's CPU. The rest is spread thin:
// the directory change (lookup, remove) 11 us, the commit's log
// formatting 5 and its queueing 2.5, copying the inode into its block 6,
// inode and directory lookups and locks 6, the log force a lazy caller
// leads when the queue is long 3.6. Changing blocks in place would leave
// the engine's unlink loop at about a third of the kernel's rm anyway.
// What a single unlink cannot share is what a bulk delete can: its names
// leave their directory together (xfs.Volume.UnlinkFiles, up to 31 files
// of one AG a transaction; the store's DeleteObjects, what aws s3 rm
// --recursive sends), so the directory's blocks, the inode blocks and
// the AGI are copied, logged and written once for them all. Measured the
// same hour on the same machine:
//   - BenchmarkUnlinkFiles against BenchmarkUnlink (100,000 names from 100
//     directories, calls of 1,000): 23-34 us a name against 52-62, CPU
//     39-65 us against 69-85 (the gc's inactivation included), 19-23 KB
//     allocated against 30-35. The foreground of a name fell from 37 us
//     to 14.7; inactivation (15 us an inode) is now as large.
//   - CreateDelete100k, five runs: bulk-delete-ratio 1.01, 0.88, 1.02,
//     0.85 and 0.98 (the engine's 45,600-64,400 names/s against the
//     kernel's unlink loop at 48,800-63,900/s in the same run), CPU 23-33
//     us a name; delete-ratio of the single unlinks 0.31-0.38 (16,700-
//     21,200/s, 60-80 us). The kernel has no bulk unlink, so its side is
//     the same loop of unlink(2).
//   - BenchmarkHTTPBulkDeletes (20,000 4 KiB objects over 100 prefixes,
//     DeleteObjects requests of 1,000 keys in listing order, three
//     rounds): 1 client 27,740 keys/s (median; rounds 20,890-28,636)
//     against 11,451 for the commit before (x2.42) and 3,643 for
//     6f8cc8c (x7.61); 4 clients 23,037 against 13,743 (x1.68) and 3,193
//     (x7.22); server CPU per key 53-74 us against 103-131 and 293-398.
//
// A profile of the bulk loop (CreateDelete100k, 1.74 s of deletes on two
// cores): UnlinkFiles 0.88 s, inactivation 0.86 s, the collector 0.40 s;
// the inode cache's handles for inodes no longer cached, the inode
// btrees' lookups of each freed inode and copying inodes into their
// blocks were its largest parts.
//
// Single DELETEs are unchanged by all this. HTTPParallelDeletes the same
// afternoon (three rounds, 20,000 objects, against 6f8cc8c, the machine
// slower than in the morning: old's median 1,958 DELETE/s at 8 clients
// against 3,030 then): 8 clients x1.88 (rounds 3,204-3,702 against
// 1,929-2,119), 32 clients x1.99 (4,529-5,496 against 2,405-2,795),
// server CPU per DELETE x0.49 at both. The morning's run of the head
// before: x1.91 and x1.78 of old's rounds at 8 clients.
//
// Then three of those parts were cut (2026-12-05, evening): a shared
// inactivation frees the inodes of one chunk with one lookup and update
// in each inode btree (ialloc.Tx.FreeInodes; 0.20 s of that profile's
// samples became 0.08), takes its AG's unlinked-list mutex once instead
// of once per inode (an execution trace of the bulk phase: the gc's time
// blocked on locks 347 ms -> 138 ms), and UnlinkFiles hands inodes to
// the queue through the handles it already holds. CreateDelete100k, five
// runs on the new head: bulk-delete-ratio 0.95, 0.87, 0.94, 1.01 and
// 0.82 (the kernel's side 53,400-74,000 unlinks/s in those runs),
// bulk-space-back-ratio 0.90-1.12, CPU 24-28 us a name: still parity
// within the machine's noise, not above it. HTTPParallelDeletes the same
// hour: x1.79 at 8 clients and x1.99 at 32 in one run, x1.68 and x1.85
// in the next (old's medians 2,207 and 2,595 DELETE/s at 8 clients).
//
// The log's bytes were the next suspect: 14.0 KB per unlink, 12 KB of
// them three whole directory blocks (data, leaf and free index:
// xfs_logprint -t), logged whole because our blocks keep LSN 0 on disk,
// so the kernel's recovery would lay an older, partial image over a
// newer block and fail its verifier. A prototype that logged directory
// blocks by changed chunks (not crash-safe, not kept) seemed to gain
// x1.94 and x2.14 against x1.68 and x1.85 in one run. The safe version
// (xlog's epochs, 2026-12-05, evening: the tail only sits at an epoch's
// start and each epoch logs such a block whole once, so the first item
// of it any recovery replays is whole; no LSN stamps, no write ordering)
// cut BenchmarkUnlink's log bytes from 9,569 to 2,480 an unlink, but
// moved nothing else measurably: CPU per unlink 64-81 against 66-78 us
// in three alternating runs of each, CreateDelete100k's ratios within
// noise, and HTTPParallelDeletes, six rounds in which each binary ran
// first twice (roundOrder), against 6f8cc8c (2,550 DELETE/s at 8
// clients, 3,165 at 32): the head x1.77 and x2.29, the epochs x1.78 and
// x2.21. At about 3.3 DELETEs a log write, a durable write's cost is its
// round trip, not its bytes. The prototype's gain was most likely the
// benchmark's order and this machine's noise: the sides ran in the same
// order every round then, and the last side of a round ran 6-20% faster
// by medians (five rounds in each of two opposite orders of the same
// three builds); in one run the same binary's three 8-client rounds gave
// 4,716, 5,602 and 6,185 DELETE/s. A server CPU profile of the 8-client
// DELETE phase (60,000 objects) shows where the time goes: the unlink
// transaction 16%, the log force 12% (the write system call 7%),
// inactivation 12%, Go's collector 14%, request signature checks 5%,
// HTTP reading and writing most of the rest; the server used 1.1 of the
// 2 cores, the load generator and its client about 0.3 more.
//
// A longer run to narrow the noise (2026-12-05, late; ten rounds, each
// side first in five, against 6f8cc8c): 8 clients x1.90 of old's median
// (4,941 against 2,601 DELETE/s; the ten rounds' pairs x1.60-2.49),
// 32 clients x2.16 (7,431 against 3,434; pairs x1.82-2.61), server CPU
// per DELETE x0.49 and x0.47. Where an 8-client DELETE waits, from the
// server's block profile over 14 s of that phase: about 30% of the 8
// connections' time in the log force (0.55 ms a DELETE, about two durable
// writes of this disk: the one under way and its own), 1% on its AG's
// unlinked-list mutex; an execution trace put most of the time runnable
// goroutines waited for a P right after the force's wake-up. Four
// levers on those waits were tried the same evening against the same
// build, one run of four to eight rounds each at 8 clients, and none
// kept: GOGC 200 and 400 instead of the heap floor (x0.99, x1.03),
// GOMAXPROCS 3 and 4 (x1.01, x0.99), the gc handing the engine 8 or 16
// inodes at a time and yielding between them (x0.87, x0.98; more
// commits and CPU per DELETE), and forcers woken by a closed channel that
// return without taking the writer's mutex again (x0.95). What is left
// is CPU per request, which the transaction redesign above would cut by
// about a fifth of an unlink's.
//
// # Trim scheduler
//
//	every Interval ─► TrimBacklog (bytes freed since trimmed, per AG)
//	   │  nothing freed: no pass
//	   ▼
//	scheduled pass: AGs round-robin from the cursor, each an engine pass
//	   over the AG with OnlyFreed, until PassBytes are discarded; where
//	   it stops (AG, Next) is where the next pass starts
//	   │  the engine cuts discards into requests of at most RequestBytes
//	   │  (4 MiB) and batches into at most BatchBytes (16 MiB) of free
//	   │  space; after every request (no engine lock held): if the
//	   │  store's change counter moved within BusyWindow (100 ms), pause
//	   │  BackoffRatio (9) times as long as the request took, within
//	   │  [BackoffMin, BackoffMax] (2 ms, 1 s)
//	   ▼
//	counters ─► PassDone (the server log), Status (the admin API)
//
//	on demand (Start, Run): one engine pass over a byte range; it
//	   cancels a scheduled pass under way (which resumes next interval);
//	   a second on-demand pass is refused (ErrTrimRunning)
//
// Close cancels the pass under way and waits for it: the store closes the
// trimmer before the volume, since a pass must be over before Close.
//
// Why pace by the time discards take rather than by a count of changes: a
// discard is a metadata change of the storage underneath (a punched hole
// is a journalled change of the host file system, made under the volume
// file's inode lock) and stalls the volume's writes and flushes while it
// runs, so its cost is time, whatever the storage. An earlier policy
// paused only while the change counter moved within 2 ms looks; group
// commits finish writers in bursts, so it mostly saw the foreground still
// and writers lost about 60% of their throughput during a pass
// (BenchmarkPutDuringTrim in package store); hence the 100 ms window.
//
// Why pace after every request and bound its size, rather than after
// every batch: measured on this machine's ext4 (a one-off program
// punching a written 256 MiB file while four writers pwrite+fdatasync 4
// KiB beside it), a punch costs about 0.5 ms plus 0.45 ms a MiB and every
// write waits for the punch under way: during one 256 MiB punch the
// writers' median rose from 0.8 ms to 118 ms, during back-to-back 4 MiB
// punches to 7 ms, during back-to-back 4 KiB punches from 1.3 to 5.4 ms.
// Such huge punches happen where the host still holds a large free
// extent (a deleted large object). In BenchmarkPutDuringTrim they do
// not: its large free extents were never written, are holes already and
// took under 0.5 ms each (traced with strace -T); what the host holds
// there is 8,192 one-block pieces, punched at 0.2 ms each and up to 75 ms
// when the host journal was busy. A batch used to send up to 100 of those
// back to back, then pause nine times as long: writers got nine tenths of
// the time back but spent the other tenth behind a burst, the likeliest
// source of their p99 growth (×1.9-2.5 on a quiet machine). Requests of
// at most 4 MiB (2.5 ms on ext4, at 70% of the rate of one huge punch)
// with the pause after each one keep any write behind at most one short
// request. Batches of at most 16 MiB bound what a pass holds busy to
// allocators while its paced requests run (their walks cost a lookup
// each), and each request's extents are allocatable again as soon as it
// returns.
//
// Measured with BenchmarkPutDuringTrim in alternating runs, pacing per
// batch against pacing per bounded request, 8 runs each on a busy shared
// 2-core machine (load average 11-19, other benchmarks running): writers
// lost a median 26% of their throughput during a pass (-15% to 36%), p99
// ×1.34 (×0.91-1.81), per batch; a median -9% (-28% to 13%), p99 ×0.75
// (×0.56-1.13), per request: all 8 runs within both targets, against 3 of
// 8. The kernel's writers lost 73-89% during its fstrim, p99 ×2.7-9.1.
// Losses below zero are noise (the phase without trim runs first, on a
// fresh store, which may also make it the slower one), alike for both.
// The price is trim's progress under busy writers: in the 4 s window a
// pass discarded roughly 270-370 one-block pieces, against roughly
// 700-1,300 per batch (inferred from the bytes discarded); alone, a pass
// over the whole volume took as long as before (3-9 s at that load).
// Re-measured on a quiet machine (load average 2-5), 8 runs: writers lost
// a median 7% (-6% to 22%, 7 of 8 within 20%), p99 at most ×1.18; the
// kernel's lost 52-60%, p99 ×4.6-5.8, in the same runs.
//
// Scheduled and on-demand passes are paced alike: on a running server an
// operator's pass must not stall writers either, and either runs at full
// speed once writes rest for BusyWindow. `xfs3 trim VOLUME` on a stopped
// volume has no foreground and never pauses.
//
// Defaults (config trim_interval, trim_pass_bytes; the README's "Trim"
// has the reasoning): a pass a minute, at most 4 GiB each. A minute gives
// space back soon after deletes while space freed again within it is
// discarded once, and the flush a pass starts with stays negligible; an
// interval with nothing freed starts no pass. 4 GiB bounds an idle pass
// to seconds and keeps up with about 70 MB/s of deletes; the rest carries
// over to the next passes.
package gc
