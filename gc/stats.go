package gc

// Stats are an InodeGC's counters since it started.
type Stats struct {
	Mode         Mode   `json:"mode"`
	Queued       uint64 `json:"queued"`      // inodes handed over
	Inactivated  uint64 `json:"inactivated"` // inodes freed
	ExtentsFreed uint64 `json:"extents_freed"`
	Errors       uint64 `json:"errors"` // failed inactivations (left to recovery)
	// Pending is what was handed over and not yet freed.
	Pending uint64 `json:"pending"`
	// BacklogHighWater is the most inodes seen waiting on one queue (in
	// Sweep mode: found by one pass over an AG).
	BacklogHighWater uint64 `json:"backlog_high_water"`
	// ThrottleWaits counts producers that waited for their queue to
	// drain because it was past its backlog.
	ThrottleWaits uint64       `json:"throttle_waits"`
	Queues        []QueueStats `json:"queues,omitempty"` // PerCPU mode only
}

// QueueStats are the counters of one per-CPU queue.
type QueueStats struct {
	Depth       uint64 `json:"depth"` // inodes waiting now
	Queued      uint64 `json:"queued"`
	Inactivated uint64 `json:"inactivated"`
	// PushRetries counts producers' failed compare-and-swaps on the
	// queue's list: contention between producers sharing it.
	PushRetries uint64 `json:"push_retries"`
}

// Stats returns a snapshot of the counters.
func (g *InodeGC) Stats() Stats {
	s := Stats{Mode: g.opt.Mode, ThrottleWaits: g.throttleWaits.Load()}
	add := func(st *queueStats) {
		s.Inactivated += st.inactivated.Load()
		s.ExtentsFreed += st.extents.Load()
		s.Errors += st.errors.Load()
		s.BacklogHighWater = max(s.BacklogHighWater, st.highWater.Load())
	}
	s.Queued = g.syncQueued.Load() + g.sweepQueued.Load()
	add(&g.syncStats)
	for _, sw := range g.sweepers {
		add(&sw.stats)
	}
	for _, q := range g.queues {
		queued, done := q.queued.Load(), q.done.Load()
		s.Queued += queued
		add(&q.queueStats)
		s.Queues = append(s.Queues, QueueStats{
			Depth: queued - min(done, queued), Queued: queued,
			Inactivated: q.inactivated.Load(), PushRetries: q.retries.Load(),
		})
	}
	if done := s.Inactivated + s.Errors; s.Queued > done {
		s.Pending = s.Queued - done
	}
	return s
}
