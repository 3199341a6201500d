package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/xfs3/xfs3/store"
)

// Scrub: the paced pass that verifies the volume's metadata and the
// objects' bytes (package gc's Scrubber); these are its documents.

// PathScrub is xfs3's scrub endpoint: GET shows the scrubber, POST starts
// a pass now (or lets the one under way go on).
const PathScrub = "/xfs3/scrub"

// ScrubPass is one scrub pass, running or ended.
type ScrubPass = Pass[store.ScrubCounts]

// ScrubStatus is the document of GET PathScrub, and the info document's
// scrub member.
type ScrubStatus struct {
	IntervalSeconds float64              `json:"interval_seconds"` // 0: passes on demand only
	Current         *ScrubPass           `json:"current,omitempty"`
	Last            *ScrubPass           `json:"last,omitempty"`
	Passes          uint64               `json:"passes"`
	Failed          uint64               `json:"failed"`
	Totals          store.ScrubCounts    `json:"totals"`
	Rotten          []store.RottenObject `json:"rotten"`
}

// ScrubPassOf is the document of a pass; now times a running one.
func ScrubPassOf(p store.ScrubPass, now time.Time) ScrubPass {
	return passOf(p, func(c store.ScrubCounts) store.ScrubCounts { return c }, now)
}

// ScrubStatusOf is the document of the scrubber's status and the rotten
// objects known.
func ScrubStatusOf(st store.ScrubStatus, rotten []store.RottenObject, now time.Time) ScrubStatus {
	out := ScrubStatus{IntervalSeconds: st.Interval.Seconds(), Passes: st.Passes, Failed: st.Failed,
		Totals: st.Totals, Rotten: rotten}
	if out.Rotten == nil {
		out.Rotten = []store.RottenObject{}
	}
	if st.Current != nil {
		p := ScrubPassOf(*st.Current, now)
		out.Current = &p
	}
	if st.Last != nil {
		p := ScrubPassOf(*st.Last, now)
		out.Last = &p
	}
	return out
}

// Scrub asks the server at c for a pass now and answers the status.
func (c *Client) Scrub(ctx context.Context) (ScrubStatus, error) {
	var st ScrubStatus
	err := c.do(ctx, http.MethodPost, PathScrub, nil, nil, &st)
	return st, err
}

// ScrubStatus is the server's scrubber status.
func (c *Client) ScrubStatus(ctx context.Context) (ScrubStatus, error) {
	var st ScrubStatus
	err := c.do(ctx, http.MethodGet, PathScrub, nil, nil, &st)
	return st, err
}
