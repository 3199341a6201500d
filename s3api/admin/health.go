package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/xfs3/xfs3/store"
)

// Health: the structures the engine marked sick (their metadata failed
// verification; changes to them are refused) and where they lie.

// PathHealth is xfs3's health endpoint (GET).
const PathHealth = "/xfs3/health"

// HeaderHealth is set on /minio/health/ready to HealthDegraded while
// some structure is sick: the server still serves what is not.
const HeaderHealth = "X-Xfs3-Health"

// Health is the document of GET PathHealth, and the info document's
// health member.
type Health struct {
	State string          `json:"state"` // store.HealthOK or store.HealthDegraded
	Sick  []SickStructure `json:"sick"`
}

// SickStructure is one sick structure: an inode (ino), an AG (ag) or a
// block of the project quota file (quota_block, with the projects whose
// records it holds).
type SickStructure struct {
	Kind       string     `json:"kind"` // "inode", "ag" or "quota"
	Ino        uint64     `json:"ino,omitempty"`
	AG         *uint32    `json:"ag,omitempty"` // AG 0 is one too
	QuotaBlock *uint64    `json:"quota_block,omitempty"`
	Projects   *[2]uint32 `json:"projects,omitempty"` // first and last
	// Place is what it is in the store (store.Place*): bucket, prefix,
	// object, versions, system, volume, quota or unknown.
	Place  string `json:"place"`
	Bucket string `json:"bucket"` // "" when none or unknown
	// Buckets are the buckets whose quota records a quota block holds.
	Buckets []string `json:"buckets,omitempty"`
	// Prefix is the key prefix of a directory, or the key of an object.
	Prefix string `json:"prefix"`
	Path   string `json:"path,omitempty"` // from the volume's root, as a mount shows it
	// Structure, Where and Reason are the first verification failure.
	Structure string    `json:"structure"`
	Where     string    `json:"where"`
	Reason    string    `json:"reason"`
	Since     time.Time `json:"since"`
}

// HealthOf is the health document of st.
func HealthOf(st *store.Store) Health {
	h := st.Health()
	out := Health{State: h.State, Sick: make([]SickStructure, 0, len(h.Sick))}
	for _, s := range h.Sick {
		x := SickStructure{Kind: s.Kind, Ino: uint64(s.Ino), Place: s.Place, Bucket: s.Bucket, Prefix: s.Prefix,
			Path: s.Path, Structure: s.Structure, Where: s.Where, Reason: s.Reason, Since: s.Since.UTC()}
		switch s.Kind {
		case "ag":
			ag := uint32(s.AG)
			x.AG = &ag
		case "quota":
			fb, ids := s.QuotaBlock, s.Projects
			x.QuotaBlock, x.Projects, x.Buckets = &fb, &ids, s.Buckets
		}
		out.Sick = append(out.Sick, x)
	}
	return out
}

// Health asks the server for its health document.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.do(ctx, http.MethodGet, PathHealth, nil, nil, &h)
	return h, err
}
