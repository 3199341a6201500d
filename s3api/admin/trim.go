package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/xfs3/xfs3/store"
)

// Trimmer is a trim scheduler: a store's (Store.Trimmer), or one over a
// stopped volume (xfs3 trim VOLUME).
type Trimmer interface {
	Start(store.TrimRequest) (store.TrimPass, error)
	Status() store.TrimStatus
	Cancel() bool
}

// Trim: freed space given back to the storage under the volume. The
// scheduler and passes are package gc's; these are their documents.

// PathTrim is xfs3's trim endpoint: POST starts a pass, GET shows it,
// DELETE cancels it.
const PathTrim = "/xfs3/trim"

// TrimRequest is the optional body of POST: a byte range of the volume
// (length 0 or absent: to the end) and the shortest free extent worth
// discarding, in bytes.
type TrimRequest struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
	MinLen int64 `json:"minlen"`
}

// DecodeTrimRequest parses a POST body; an empty body is the whole volume.
func DecodeTrimRequest(body []byte) (TrimRequest, error) {
	var r TrimRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return r, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, invalid("The trim request is not a JSON object of numbers offset, length and minlen: " + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return r, invalid("The trim request has more than one JSON object.")
	}
	if r.Offset < 0 || r.Length < 0 || r.MinLen < 0 {
		return r, invalid("Offset, length and minlen of a trim request are 0 or more.")
	}
	return r, nil
}

// TrimPass is one pass, running or ended. Byte counts are bytes of the
// volume; durations are microseconds.
type TrimPass struct {
	ID        uint64      `json:"id"`
	Scheduled bool        `json:"scheduled"` // else on demand
	Request   TrimRequest `json:"request"`
	Started   time.Time   `json:"started"`
	Ended     *time.Time  `json:"ended,omitempty"`
	Running   bool        `json:"running"`
	Canceled  bool        `json:"canceled"`
	Error     string      `json:"error,omitempty"`
	// Where the walk is: AG, byte offset, and the byte range of the
	// engine call under way.
	AG     int   `json:"ag"`
	Offset int64 `json:"offset"`
	From   int64 `json:"from"`
	To     int64 `json:"to"`

	ExaminedBytes    int64  `json:"examined_bytes"`
	ExaminedExtents  int64  `json:"examined_extents"`
	BusyBytes        int64  `json:"busy_bytes"`
	ShortBytes       int64  `json:"short_bytes"`
	DiscardedBytes   int64  `json:"discarded_bytes"`
	DiscardedExtents int64  `json:"discarded_extents"`
	Requests         int64  `json:"requests"`
	Errors           int64  `json:"errors"`
	FirstError       string `json:"first_error,omitempty"`
	Unsupported      bool   `json:"unsupported"`
	Batches          int64  `json:"batches"`
	LockHoldMaxUs    int64  `json:"lock_hold_max_us"`
	LockHoldP99Us    int64  `json:"lock_hold_p99_us"`
	ElapsedUs        int64  `json:"elapsed_us"`
	Backoffs         int64  `json:"backoffs"`
	BackoffUs        int64  `json:"backoff_us"`
	// Next is where the pass stopped (or has reached).
	Next int64 `json:"next"`
}

// TrimCounters are the scheduler's totals since the server started.
type TrimCounters struct {
	IntervalSeconds  float64 `json:"interval_seconds"` // 0: no periodic passes
	PassBytes        int64   `json:"pass_bytes"`
	Passes           uint64  `json:"passes"`
	OnDemand         uint64  `json:"on_demand"`
	Canceled         uint64  `json:"canceled"`
	Failed           uint64  `json:"failed"`
	ExaminedBytes    int64   `json:"examined_bytes"`
	DiscardedBytes   int64   `json:"discarded_bytes"`
	DiscardedExtents int64   `json:"discarded_extents"`
	Batches          int64   `json:"batches"`
	Errors           int64   `json:"errors"`
	LockHoldMaxUs    int64   `json:"lock_hold_max_us"`
	LockHoldP99Us    int64   `json:"lock_hold_p99_us"`
	Backoffs         int64   `json:"backoffs"`
	BackoffUs        int64   `json:"backoff_us"`
	Unsupported      bool    `json:"unsupported"`
	BacklogBytes     int64   `json:"backlog_bytes"` // freed since last trimmed
}

// TrimStatus is the answer of every trim request.
type TrimStatus struct {
	Current *TrimPass `json:"current,omitempty"`
	Last    *TrimPass `json:"last,omitempty"`
	// LastOnDemand is the last pass started on demand that ended.
	LastOnDemand *TrimPass    `json:"last_on_demand,omitempty"`
	Counters     TrimCounters `json:"counters"`
}

func us(d time.Duration) int64 { return d.Microseconds() }

// TrimPassOf is the document of a pass.
func TrimPassOf(p store.TrimPass) TrimPass {
	s := p.Stats
	out := TrimPass{ID: p.ID, Scheduled: p.Scheduled, Started: p.Started, Running: p.Running, Canceled: p.Canceled, Error: p.Err,
		Request: TrimRequest{Offset: p.Request.Offset, Length: p.Request.Length, MinLen: p.Request.MinLen},
		AG:      p.AG, Offset: p.Offset, From: p.From, To: p.To,
		ExaminedBytes: s.ExaminedBytes, ExaminedExtents: s.ExaminedExtents, BusyBytes: s.BusyBytes, ShortBytes: s.ShortBytes,
		DiscardedBytes: s.DiscardedBytes, DiscardedExtents: s.DiscardedExtents, Requests: s.Requests, Errors: s.Errors,
		FirstError: s.FirstError, Unsupported: s.Unsupported, Batches: s.Batches,
		LockHoldMaxUs: us(s.LockHoldMax), LockHoldP99Us: us(s.LockHoldP99), ElapsedUs: us(s.Elapsed),
		Backoffs: p.Backoffs, BackoffUs: us(p.Backoff), Next: s.Next}
	if !p.Ended.IsZero() {
		e := p.Ended
		out.Ended = &e
	}
	return out
}

// TrimStatusOf is the document of a scheduler's status.
func TrimStatusOf(st store.TrimStatus) TrimStatus {
	c := st.Counters
	out := TrimStatus{Counters: TrimCounters{IntervalSeconds: c.Interval.Seconds(), PassBytes: c.PassBytes,
		Passes: c.Passes, OnDemand: c.OnDemand, Canceled: c.Canceled, Failed: c.Failed,
		ExaminedBytes: c.ExaminedBytes, DiscardedBytes: c.DiscardedBytes, DiscardedExtents: c.DiscardedExtents,
		Batches: c.Batches, Errors: c.Errors, LockHoldMaxUs: us(c.LockHoldMax), LockHoldP99Us: us(c.LockHoldP99),
		Backoffs: c.Backoffs, BackoffUs: us(c.Backoff), Unsupported: c.Unsupported, BacklogBytes: c.Backlog}}
	if st.Current != nil {
		p := TrimPassOf(*st.Current)
		out.Current = &p
	}
	if st.Last != nil {
		p := TrimPassOf(*st.Last)
		out.Last = &p
	}
	if st.LastOnDemand != nil {
		p := TrimPassOf(*st.LastOnDemand)
		out.LastOnDemand = &p
	}
	return out
}

// StartTrim starts a pass on demand over t and answers the status: 409
// XFS3TrimRunning while another pass on demand runs, 501
// XFS3TrimUnsupported when the storage cannot discard.
func StartTrim(t Trimmer, r TrimRequest) (TrimStatus, error) {
	_, err := t.Start(store.TrimRequest{Offset: r.Offset, Length: r.Length, MinLen: r.MinLen})
	switch {
	case errors.Is(err, store.ErrTrimRunning):
		return TrimStatus{}, &Error{Status: http.StatusConflict, Code: "XFS3TrimRunning",
			Message: "A trim pass on demand is already running: follow it with GET, or cancel it with DELETE."}
	case errors.Is(err, store.ErrDiscardUnsupported):
		return TrimStatus{}, &Error{Status: http.StatusNotImplemented, Code: "XFS3TrimUnsupported",
			Message: "The storage under the volume cannot discard: " + err.Error()}
	case errors.Is(err, store.ErrTrimRange):
		return TrimStatus{}, invalid(fmt.Sprintf("The trim range is not inside the volume: %v", err))
	case errors.Is(err, store.ErrTrimClosed):
		return TrimStatus{}, &Error{Status: http.StatusServiceUnavailable, Code: "XMinioServerNotInitialized",
			Message: "The server is shutting down."}
	case err != nil:
		return TrimStatus{}, err
	}
	return TrimStatusOf(t.Status()), nil
}

// Trim starts a pass on a server.
func (c *Client) Trim(ctx context.Context, r TrimRequest) (TrimStatus, error) {
	var st TrimStatus
	err := c.do(ctx, http.MethodPost, PathTrim, nil, r, &st)
	return st, err
}

// TrimStatus shows the pass under way, the last one and the counters.
func (c *Client) TrimStatus(ctx context.Context) (TrimStatus, error) {
	var st TrimStatus
	err := c.do(ctx, http.MethodGet, PathTrim, nil, nil, &st)
	return st, err
}

// CancelTrim cancels the pass under way.
func (c *Client) CancelTrim(ctx context.Context) (TrimStatus, error) {
	var st TrimStatus
	err := c.do(ctx, http.MethodDelete, PathTrim, nil, nil, &st)
	return st, err
}

// CancelTrim cancels the pass under way (if any) and answers the status.
func CancelTrim(t Trimmer) TrimStatus {
	t.Cancel()
	return TrimStatusOf(t.Status())
}
