package s3api

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xfs3/xfs3/store"
)

// storeCollector reads the store's and the engine's counters when
// Prometheus scrapes: nothing on the request path feeds it, and neither
// the store nor the engine knows the metrics library.
type storeCollector struct {
	store   *store.Store
	started time.Time
	version map[string]string // labels of xfs3_build_info
}

// metric describes one series of the collector.
type metric struct {
	desc *prometheus.Desc
	kind prometheus.ValueType
}

func newMetric(name, help string, kind prometheus.ValueType, labels ...string) metric {
	return metric{prometheus.NewDesc(name, help, labels, nil), kind}
}

var (
	mBuild   = newMetric("xfs3_build_info", "1, labelled with the server's version, VCS revision and Go version.", prometheus.GaugeValue, "version", "revision", "go_version")
	mStarted = newMetric("xfs3_start_time_seconds", "When the server started, in Unix seconds.", prometheus.GaugeValue)
	mHealthy = newMetric("xfs3_volume_writable", "1 while the volume accepts changes, 0 once a failed write shut it down.", prometheus.GaugeValue)
	mSick    = newMetric("xfs3_sick_structures", "Structures whose metadata failed verification, by kind (ag, inode, quota); changes to them are refused until xfs_repair.", prometheus.GaugeValue, "kind")

	mVolSize       = newMetric("xfs3_volume_size_bytes", "Size of the data device, log included.", prometheus.GaugeValue)
	mVolFree       = newMetric("xfs3_volume_free_bytes", "Free space (after freeing what deleted objects held).", prometheus.GaugeValue)
	mVolUsed       = newMetric("xfs3_volume_used_bytes", "Space in use, as df counts it (size minus log minus free).", prometheus.GaugeValue)
	mVolInodes     = newMetric("xfs3_volume_inodes", "Inodes allocated on the volume.", prometheus.GaugeValue)
	mVolFreeInodes = newMetric("xfs3_volume_free_inodes", "Allocated inodes that are free.", prometheus.GaugeValue)
	mVolMaxInodes  = newMetric("xfs3_volume_max_inodes", "The most inodes the volume may allocate (0: no limit).", prometheus.GaugeValue)

	mLogCommits     = newMetric("xfs3_log_commits_total", "Transactions written to the metadata log.", prometheus.CounterValue)
	mLogWrites      = newMetric("xfs3_log_writes_total", "Log forces that wrote: group-commit batches, each one device write; commits/writes is the mean batch size.", prometheus.CounterValue)
	mLogRecords     = newMetric("xfs3_log_records_total", "Log records written.", prometheus.CounterValue)
	mLogFlushes     = newMetric("xfs3_log_flushes_total", "Device flushes made by the log.", prometheus.CounterValue)
	mLogDataFlushes = newMetric("xfs3_log_data_flushes_total", "Flushes of file data ahead of a log batch.", prometheus.CounterValue)
	mLogBytes       = newMetric("xfs3_log_written_bytes_total", "Bytes written to the log.", prometheus.CounterValue)
	mLogPending     = newMetric("xfs3_log_pending_commits", "Transactions queued for the log and not yet durable.", prometheus.GaugeValue)
	mLogBatch       = newMetric("xfs3_log_batch_commits_mean", "Mean group-commit batch size since start: commits per log write.", prometheus.GaugeValue)
	mLogUsed        = newMetric("xfs3_log_used_bytes", "Log space recovery may still need (tail to head).", prometheus.GaugeValue)
	mLogSize        = newMetric("xfs3_log_size_bytes", "Size of the log.", prometheus.GaugeValue)

	// Both metadata caches, labelled cache="blocks" (the buffer cache)
	// or cache="inodes".
	mCacheHits      = newMetric("xfs3_metadata_cache_hits_total", "Lookups answered from a metadata cache.", prometheus.CounterValue, "cache")
	mCacheMisses    = newMetric("xfs3_metadata_cache_misses_total", "Lookups that had to read the device.", prometheus.CounterValue, "cache")
	mCacheBytes     = newMetric("xfs3_metadata_cache_bytes", "Bytes a metadata cache holds (estimated for inodes).", prometheus.GaugeValue, "cache")
	mCacheEntries   = newMetric("xfs3_metadata_cache_entries", "Blocks or inodes a metadata cache holds.", prometheus.GaugeValue, "cache")
	mCacheBudget    = newMetric("xfs3_metadata_cache_budget_bytes", "A metadata cache's memory budget (cache_size shared three to one).", prometheus.GaugeValue, "cache")
	mCacheEvictions = newMetric("xfs3_metadata_cache_evictions_total", "Entries reclaim dropped to keep a cache within its budget.", prometheus.CounterValue, "cache")
	mCacheReclaims  = newMetric("xfs3_metadata_cache_reclaim_runs_total", "Reclaim runs (one goroutine at a time).", prometheus.CounterValue, "cache")
	mCacheWaits     = newMetric("xfs3_metadata_cache_reclaim_waits_total", "Lookups that waited for reclaim because the cache was past its slack.", prometheus.CounterValue, "cache")

	mGCQueued      = newMetric("xfs3_inodegc_queued_total", "Inodes of deleted or replaced objects handed to the inode garbage collector.", prometheus.CounterValue)
	mGCInactivated = newMetric("xfs3_inodegc_inactivated_total", "Inodes freed by the inode garbage collector.", prometheus.CounterValue)
	mGCExtents     = newMetric("xfs3_inodegc_extents_freed_total", "Extents freed with those inodes.", prometheus.CounterValue)
	mGCErrors      = newMetric("xfs3_inodegc_errors_total", "Failed inactivations (left to recovery at the next open).", prometheus.CounterValue)
	mGCPending     = newMetric("xfs3_inodegc_pending", "Inodes handed over and not yet freed.", prometheus.GaugeValue)
	mGCThrottle    = newMetric("xfs3_inodegc_throttle_waits_total", "Producers that waited for a queue past its backlog.", prometheus.CounterValue)
	mGCHighWater   = newMetric("xfs3_inodegc_backlog_high_water", "The most inodes seen waiting on one queue.", prometheus.GaugeValue)
	mGCDepth       = newMetric("xfs3_inodegc_queue_depth", "Inodes waiting on one per-CPU queue now.", prometheus.GaugeValue, "queue")
	mGCQueueDone   = newMetric("xfs3_inodegc_queue_inactivated_total", "Inodes one per-CPU queue freed.", prometheus.CounterValue, "queue")
	mGCRetries     = newMetric("xfs3_inodegc_queue_push_retries_total", "Failed compare-and-swaps of producers on one queue (contention).", prometheus.CounterValue, "queue")

	mTrimPasses     = newMetric("xfs3_trim_passes_total", "Trim passes ended, scheduled and on demand.", prometheus.CounterValue)
	mTrimOnDemand   = newMetric("xfs3_trim_on_demand_passes_total", "Trim passes started on demand.", prometheus.CounterValue)
	mTrimCanceled   = newMetric("xfs3_trim_canceled_passes_total", "Trim passes cancelled.", prometheus.CounterValue)
	mTrimFailed     = newMetric("xfs3_trim_failed_passes_total", "Trim passes that failed.", prometheus.CounterValue)
	mTrimExamined   = newMetric("xfs3_trim_examined_bytes_total", "Free space examined by ended passes.", prometheus.CounterValue)
	mTrimDiscarded  = newMetric("xfs3_trim_discarded_bytes_total", "Bytes given back to the storage by ended passes.", prometheus.CounterValue)
	mTrimExtents    = newMetric("xfs3_trim_discarded_extents_total", "Extents given back by ended passes.", prometheus.CounterValue)
	mTrimBatches    = newMetric("xfs3_trim_batches_total", "Batches of ended passes (each holds an AG's free-space lock once).", prometheus.CounterValue)
	mTrimErrors     = newMetric("xfs3_trim_errors_total", "Discard requests that failed.", prometheus.CounterValue)
	mTrimHoldMax    = newMetric("xfs3_trim_lock_hold_max_seconds", "Longest hold of an AG's free-space lock by a trim batch.", prometheus.GaugeValue)
	mTrimHoldP99    = newMetric("xfs3_trim_lock_hold_p99_seconds", "99th percentile of those holds (the largest of the passes').", prometheus.GaugeValue)
	mTrimBackoffs   = newMetric("xfs3_trim_backoffs_total", "Pauses of trim for foreground writes.", prometheus.CounterValue)
	mTrimBackoff    = newMetric("xfs3_trim_backoff_seconds_total", "Time trim spent paused for foreground writes.", prometheus.CounterValue)
	mTrimBacklog    = newMetric("xfs3_trim_backlog_bytes", "Bytes freed since last trimmed (an upper bound).", prometheus.GaugeValue)
	mTrimRunning    = newMetric("xfs3_trim_pass_running", "1 while a trim pass runs.", prometheus.GaugeValue)
	mTrimCurExam    = newMetric("xfs3_trim_pass_examined_bytes", "Free space the running pass has examined (0: none runs).", prometheus.GaugeValue)
	mTrimCurDisc    = newMetric("xfs3_trim_pass_discarded_bytes", "Bytes the running pass has discarded (0: none runs).", prometheus.GaugeValue)
	mTrimCurOffset  = newMetric("xfs3_trim_pass_offset_bytes", "Where the running pass's walk is on the volume (0: none runs).", prometheus.GaugeValue)
	mTrimUnsupports = newMetric("xfs3_trim_unsupported", "1 when the storage cannot discard (scheduled passes stopped).", prometheus.GaugeValue)

	mLifePasses   = newMetric("xfs3_lifecycle_passes_total", "Lifecycle passes ended.", prometheus.CounterValue)
	mLifeFailed   = newMetric("xfs3_lifecycle_failed_passes_total", "Lifecycle passes that failed.", prometheus.CounterValue)
	mLifeScanned  = newMetric("xfs3_lifecycle_scanned_total", "Versions and uploads lifecycle passes looked at (ended passes).", prometheus.CounterValue)
	mLifeExpired  = newMetric("xfs3_lifecycle_expired_total", "What lifecycle passes expired (ended passes), by kind: current objects, noncurrent versions, delete markers, uploads.", prometheus.CounterValue, "kind")
	mLifeLocked   = newMetric("xfs3_lifecycle_kept_by_object_lock_total", "Expiries object lock refused (ended passes).", prometheus.CounterValue)
	mLifeFreed    = newMetric("xfs3_lifecycle_freed_bytes_total", "Bytes of the objects and versions lifecycle passes deleted (ended passes).", prometheus.CounterValue)
	mLifeErrors   = newMetric("xfs3_lifecycle_errors_total", "Expiries that failed (ended passes).", prometheus.CounterValue)
	mLifeRunning  = newMetric("xfs3_lifecycle_pass_running", "1 while a lifecycle pass runs.", prometheus.GaugeValue)
	mLifeCurScan  = newMetric("xfs3_lifecycle_pass_scanned", "Versions and uploads the running pass has looked at (0: none runs).", prometheus.GaugeValue)
	mLifeLastTook = newMetric("xfs3_lifecycle_last_pass_seconds", "How long the last ended pass took.", prometheus.GaugeValue)

	mBucketBytes       = newMetric("xfs3_bucket_used_bytes", "Bytes a bucket's project is charged (whole blocks).", prometheus.GaugeValue, "bucket")
	mBucketObjects     = newMetric("xfs3_bucket_used_objects", "Inodes a bucket's project is charged: directory, objects, prefixes, uploads.", prometheus.GaugeValue, "bucket")
	mBucketHardBytes   = newMetric("xfs3_bucket_hard_limit_bytes", "A bucket's hard byte limit (0: none).", prometheus.GaugeValue, "bucket")
	mBucketSoftBytes   = newMetric("xfs3_bucket_soft_limit_bytes", "A bucket's soft byte limit (0: none).", prometheus.GaugeValue, "bucket")
	mBucketHardObjects = newMetric("xfs3_bucket_hard_limit_objects", "A bucket's hard object limit (0: none).", prometheus.GaugeValue, "bucket")
	mBucketSoftObjects = newMetric("xfs3_bucket_soft_limit_objects", "A bucket's soft object limit (0: none).", prometheus.GaugeValue, "bucket")
)

// storeMetrics lists every series of the collector, for Describe.
var storeMetrics = []metric{
	mBuild, mStarted, mHealthy, mSick,
	mVolSize, mVolFree, mVolUsed, mVolInodes, mVolFreeInodes, mVolMaxInodes,
	mLogCommits, mLogWrites, mLogRecords, mLogFlushes, mLogDataFlushes, mLogBytes, mLogPending, mLogBatch, mLogUsed, mLogSize,
	mCacheHits, mCacheMisses, mCacheBytes, mCacheEntries, mCacheBudget, mCacheEvictions, mCacheReclaims, mCacheWaits,
	mGCQueued, mGCInactivated, mGCExtents, mGCErrors, mGCPending, mGCThrottle, mGCHighWater, mGCDepth, mGCQueueDone, mGCRetries,
	mTrimPasses, mTrimOnDemand, mTrimCanceled, mTrimFailed, mTrimExamined, mTrimDiscarded, mTrimExtents, mTrimBatches,
	mTrimErrors, mTrimHoldMax, mTrimHoldP99, mTrimBackoffs, mTrimBackoff, mTrimBacklog, mTrimRunning, mTrimCurExam,
	mTrimCurDisc, mTrimCurOffset, mTrimUnsupports,
	mLifePasses, mLifeFailed, mLifeScanned, mLifeExpired, mLifeLocked, mLifeFreed, mLifeErrors, mLifeRunning, mLifeCurScan, mLifeLastTook,
	mBucketBytes, mBucketObjects, mBucketHardBytes, mBucketSoftBytes, mBucketHardObjects, mBucketSoftObjects,
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range storeMetrics {
		ch <- m.desc
	}
}

// Collect reads every counter once. The inode garbage collector's are
// read first: reading the volume's space frees what deleted objects
// hold, which empties its queues.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(m metric, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v, labels...)
	}
	fail := func(m metric, err error) { ch <- prometheus.NewInvalidMetric(m.desc, err) }
	emit(mBuild, 1, c.version["version"], c.version["revision"], c.version["go_version"])
	emit(mStarted, float64(c.started.UnixNano())/1e9)
	emit(mHealthy, boolValue(c.store.Err() == nil))
	sick := c.store.SickCounts()
	for _, kind := range store.SickKinds {
		emit(mSick, float64(sick[kind]), kind)
	}
	c.collectGC(emit)
	c.collectTrim(emit)
	c.collectLifecycle(emit)
	if vs, err := c.store.VolumeStats(); err != nil {
		fail(mVolFree, err)
	} else {
		collectVolume(vs, emit)
	}
	if us, err := c.store.Quotas().List(); err != nil {
		fail(mBucketBytes, err)
	} else {
		for _, u := range us {
			emit(mBucketBytes, float64(u.Bytes), u.Bucket)
			emit(mBucketObjects, float64(u.Objects), u.Bucket)
			emit(mBucketHardBytes, float64(u.Quota.HardBytes), u.Bucket)
			emit(mBucketSoftBytes, float64(u.Quota.SoftBytes), u.Bucket)
			emit(mBucketHardObjects, float64(u.Quota.HardObjects), u.Bucket)
			emit(mBucketSoftObjects, float64(u.Quota.SoftObjects), u.Bucket)
		}
	}
}

type emitFunc func(m metric, v float64, labels ...string)

func (c *storeCollector) collectGC(emit emitFunc) {
	g := c.store.GCStats()
	emit(mGCQueued, float64(g.Queued))
	emit(mGCInactivated, float64(g.Inactivated))
	emit(mGCExtents, float64(g.ExtentsFreed))
	emit(mGCErrors, float64(g.Errors))
	emit(mGCPending, float64(g.Pending))
	emit(mGCThrottle, float64(g.ThrottleWaits))
	emit(mGCHighWater, float64(g.BacklogHighWater))
	for i, q := range g.Queues {
		n := strconv.Itoa(i)
		emit(mGCDepth, float64(q.Depth), n)
		emit(mGCQueueDone, float64(q.Inactivated), n)
		emit(mGCRetries, float64(q.PushRetries), n)
	}
}

func (c *storeCollector) collectTrim(emit emitFunc) {
	st := c.store.Trimmer().Status()
	t := st.Counters
	emit(mTrimPasses, float64(t.Passes))
	emit(mTrimOnDemand, float64(t.OnDemand))
	emit(mTrimCanceled, float64(t.Canceled))
	emit(mTrimFailed, float64(t.Failed))
	emit(mTrimExamined, float64(t.ExaminedBytes))
	emit(mTrimDiscarded, float64(t.DiscardedBytes))
	emit(mTrimExtents, float64(t.DiscardedExtents))
	emit(mTrimBatches, float64(t.Batches))
	emit(mTrimErrors, float64(t.Errors))
	emit(mTrimHoldMax, t.LockHoldMax.Seconds())
	emit(mTrimHoldP99, t.LockHoldP99.Seconds())
	emit(mTrimBackoffs, float64(t.Backoffs))
	emit(mTrimBackoff, t.Backoff.Seconds())
	emit(mTrimBacklog, float64(t.Backlog))
	emit(mTrimUnsupports, boolValue(t.Unsupported))
	var running, examined, discarded, offset float64
	if p := st.Current; p != nil {
		running, examined, discarded, offset = 1, float64(p.Stats.ExaminedBytes), float64(p.Stats.DiscardedBytes), float64(p.Offset)
	}
	emit(mTrimRunning, running)
	emit(mTrimCurExam, examined)
	emit(mTrimCurDisc, discarded)
	emit(mTrimCurOffset, offset)
}

func (c *storeCollector) collectLifecycle(emit emitFunc) {
	st := c.store.Lifecycle().Status()
	t := st.Totals
	emit(mLifePasses, float64(st.Passes))
	emit(mLifeFailed, float64(st.Failed))
	emit(mLifeScanned, float64(t.Scanned))
	emit(mLifeExpired, float64(t.Expired), "current")
	emit(mLifeExpired, float64(t.Versions), "noncurrent")
	emit(mLifeExpired, float64(t.Markers), "delete_marker")
	emit(mLifeExpired, float64(t.Uploads), "upload")
	emit(mLifeLocked, float64(t.Locked))
	emit(mLifeFreed, float64(t.BytesFreed))
	emit(mLifeErrors, float64(t.Errors))
	var running, scanned, took float64
	if p := st.Current; p != nil {
		running, scanned = 1, float64(p.Counts.Scanned)
	}
	if p := st.Last; p != nil {
		took = p.Ended.Sub(p.Started).Seconds()
	}
	emit(mLifeRunning, running)
	emit(mLifeCurScan, scanned)
	emit(mLifeLastTook, took)
}

func collectVolume(vs store.VolumeStats, emit emitFunc) {
	bs := float64(vs.BlockSize)
	emit(mVolSize, float64(vs.Blocks)*bs)
	emit(mVolFree, float64(vs.FreeBlocks)*bs)
	emit(mVolUsed, float64(vs.UsedBlocks())*bs)
	emit(mVolInodes, float64(vs.Inodes))
	emit(mVolFreeInodes, float64(vs.FreeInodes))
	emit(mVolMaxInodes, float64(vs.MaxInodes))
	l := vs.Log
	emit(mLogCommits, float64(l.Commits))
	emit(mLogWrites, float64(l.Writes))
	emit(mLogRecords, float64(l.Records))
	emit(mLogFlushes, float64(l.Flushes))
	emit(mLogDataFlushes, float64(l.DataFlushes))
	emit(mLogBytes, float64(l.Bytes))
	emit(mLogPending, float64(l.Pending))
	var batch float64
	if l.Writes > 0 {
		batch = float64(l.Commits) / float64(l.Writes)
	}
	emit(mLogBatch, batch)
	emit(mLogUsed, float64(vs.LogUsedBytes))
	emit(mLogSize, float64(vs.LogSizeBytes))
	for _, c := range []struct {
		name string
		st   store.CacheUse
	}{{"blocks", vs.Cache.Buffers}, {"inodes", vs.Cache.Inodes}} {
		emit(mCacheHits, float64(c.st.Hits), c.name)
		emit(mCacheMisses, float64(c.st.Misses), c.name)
		emit(mCacheBytes, float64(c.st.Bytes), c.name)
		emit(mCacheEntries, float64(c.st.Entries), c.name)
		emit(mCacheBudget, float64(c.st.Budget), c.name)
		emit(mCacheEvictions, float64(c.st.Evictions), c.name)
		emit(mCacheReclaims, float64(c.st.Runs), c.name)
		emit(mCacheWaits, float64(c.st.Waits), c.name)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
