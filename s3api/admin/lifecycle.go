package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/xfs3/xfs3/store"
)

// Lifecycle: the scanner that expires what buckets' lifecycle rules say
// is due. The scanner and its passes are package gc's; these are their
// documents.

// PathLifecycle is xfs3's lifecycle endpoint: GET shows the scanner,
// POST starts a pass now (or lets the one under way go on).
const PathLifecycle = "/xfs3/lifecycle"

// LifecycleCounts is what passes did (gc.LifecycleCounts).
type LifecycleCounts struct {
	Scanned    int64 `json:"scanned"`
	Expired    int64 `json:"expired"`
	Versions   int64 `json:"noncurrent_deleted"`
	Markers    int64 `json:"markers_removed"`
	Uploads    int64 `json:"uploads_aborted"`
	Locked     int64 `json:"kept_by_object_lock"`
	BytesFreed int64 `json:"bytes_freed"`
	Errors     int64 `json:"errors"`
}

// LifecyclePass is one lifecycle pass, running or ended.
type LifecyclePass = Pass[LifecycleCounts]

// LifecycleStatus is the document of GET PathLifecycle.
type LifecycleStatus struct {
	IntervalSeconds float64         `json:"interval_seconds"` // 0: passes on demand only
	DaySeconds      float64         `json:"day_seconds"`
	Current         *LifecyclePass  `json:"current,omitempty"`
	Last            *LifecyclePass  `json:"last,omitempty"`
	Passes          uint64          `json:"passes"`
	Failed          uint64          `json:"failed"`
	Totals          LifecycleCounts `json:"totals"`
}

func lifecycleCountsOf(c store.LifecycleCounts) LifecycleCounts {
	return LifecycleCounts{Scanned: c.Scanned, Expired: c.Expired, Versions: c.Versions, Markers: c.Markers,
		Uploads: c.Uploads, Locked: c.Locked, BytesFreed: c.BytesFreed, Errors: c.Errors}
}

// LifecyclePassOf is the document of a pass; now times a running one.
func LifecyclePassOf(p store.LifecyclePass, now time.Time) LifecyclePass {
	return passOf(p, lifecycleCountsOf, now)
}

// LifecycleStatusOf is the document of the scanner's status.
func LifecycleStatusOf(st store.LifecycleStatus, day time.Duration, now time.Time) LifecycleStatus {
	out := LifecycleStatus{IntervalSeconds: st.Interval.Seconds(), DaySeconds: day.Seconds(),
		Passes: st.Passes, Failed: st.Failed, Totals: lifecycleCountsOf(st.Totals)}
	if st.Current != nil {
		p := LifecyclePassOf(*st.Current, now)
		out.Current = &p
	}
	if st.Last != nil {
		p := LifecyclePassOf(*st.Last, now)
		out.Last = &p
	}
	return out
}

// Lifecycle asks the server at c for a pass now and answers the status.
func (c *Client) Lifecycle(ctx context.Context) (LifecycleStatus, error) {
	var st LifecycleStatus
	err := c.do(ctx, http.MethodPost, PathLifecycle, nil, nil, &st)
	return st, err
}

// LifecycleStatus is the server's scanner status.
func (c *Client) LifecycleStatus(ctx context.Context) (LifecycleStatus, error) {
	var st LifecycleStatus
	err := c.do(ctx, http.MethodGet, PathLifecycle, nil, nil, &st)
	return st, err
}

// Pass is the document of one pass of a paced worker (the lifecycle
// scanner, the scrubber), running or ended, with its counts C.
type Pass[C any] struct {
	ID              uint64     `json:"id"`
	OnDemand        bool       `json:"on_demand"`
	Resumed         bool       `json:"resumed"`
	Started         time.Time  `json:"started"`
	Ended           *time.Time `json:"ended,omitempty"`
	Running         bool       `json:"running"`
	DurationSeconds float64    `json:"duration_seconds"`
	Batches         int64      `json:"batches"`
	Counts          C          `json:"counts"`
	Backoffs        int64      `json:"backoffs"`
	BackoffUs       int64      `json:"backoff_us"`
	Error           string     `json:"error,omitempty"`
}

// passOf is the document of pass p, its counts converted by counts; now
// times a running one.
func passOf[C, D any](p store.Pass[C], counts func(C) D, now time.Time) Pass[D] {
	out := Pass[D]{ID: p.ID, OnDemand: p.OnDemand, Resumed: p.Resumed, Started: p.Started, Running: p.Running,
		Batches: p.Batches, Counts: counts(p.Counts), Backoffs: p.Backoffs, BackoffUs: us(p.Backoff), Error: p.Err}
	end := now
	if !p.Ended.IsZero() {
		e := p.Ended
		out.Ended, end = &e, e
	}
	if !p.Started.IsZero() {
		out.DurationSeconds = end.Sub(p.Started).Seconds()
	}
	return out
}
