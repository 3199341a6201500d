package admin

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/xfs3/xfs3/store"
)

// PathInfo is xfs3's server overview (xfs3 info).
const PathInfo = "/xfs3/info"

// Version identifies a build: the release version, the VCS revision and
// its time, and the Go version, as the build info records them.
type Version struct {
	Version      string `json:"version"`                 // "v1.2.3", or "(devel)" for a build from a work tree
	Revision     string `json:"revision,omitempty"`      // the VCS commit
	RevisionTime string `json:"revision_time,omitempty"` // RFC 3339
	Modified     bool   `json:"modified,omitempty"`      // built from a work tree with changes
	Go           string `json:"go"`
}

// Info is the document of GET PathInfo: one look at a running server.
type Info struct {
	Version       Version    `json:"version"`
	Started       time.Time  `json:"started"`
	UptimeSeconds float64    `json:"uptime_seconds"`
	Durability    string     `json:"durability"` // "on-ack" or "within-1s", as the setting
	Writable      bool       `json:"writable"`   // false once a failed write shut the volume down
	Error         string     `json:"error,omitempty"`
	Volume        VolumeInfo `json:"volume"`
	GC            GCInfo     `json:"gc"`
	Trim          TrimInfo   `json:"trim"`
	// Lifecycle is the lifecycle scanner: its pass under way, its last
	// pass and its totals.
	Lifecycle LifecycleStatus `json:"lifecycle"`
	// Scrub is the scrubber: its passes and the rotten objects known.
	Scrub ScrubStatus `json:"scrub"`
	// Health is "ok", or "degraded" with the structures marked sick.
	Health  Health   `json:"health"`
	Buckets []Bucket `json:"buckets"`
}

// VolumeInfo is the volume's geometry and usage.
type VolumeInfo struct {
	BlockSize    int    `json:"block_size"`
	Blocks       uint64 `json:"blocks"`
	AgCount      uint32 `json:"ag_count"`
	AgBlocks     uint32 `json:"ag_blocks"`
	InodeSize    int    `json:"inode_size"`
	SizeBytes    uint64 `json:"size_bytes"`
	UsedBytes    uint64 `json:"used_bytes"`
	FreeBytes    uint64 `json:"free_bytes"`
	Inodes       uint64 `json:"inodes"`
	FreeInodes   uint64 `json:"free_inodes"`
	MaxInodes    uint64 `json:"max_inodes"` // 0: no limit
	LogBytes     int64  `json:"log_bytes"`
	LogUsedBytes int64  `json:"log_used_bytes"`
	// SharedBytes are mapped by more than one object (copies share
	// extents); SavedBytes is what the volume would need on top of
	// UsedBytes if every copy had its own blocks.
	SharedBytes uint64 `json:"shared_bytes"`
	SavedBytes  uint64 `json:"saved_bytes"`
}

// GCInfo is the inode garbage collector's mode and backlog.
type GCInfo struct {
	Mode        string `json:"mode"`
	Pending     uint64 `json:"pending"`
	Inactivated uint64 `json:"inactivated"`
}

// TrimInfo is the trim schedule and its last passes.
type TrimInfo struct {
	IntervalSeconds float64   `json:"interval_seconds"` // 0: no periodic passes
	PassBytes       int64     `json:"pass_bytes"`
	BacklogBytes    int64     `json:"backlog_bytes"`
	Current         *TrimPass `json:"current,omitempty"`
	Last            *TrimPass `json:"last,omitempty"`
}

// Bucket is one bucket: its creation and its quota entry.
type Bucket struct {
	Created time.Time `json:"created"`
	BucketQuota
}

// Durability names, as the durability setting spells them.
const (
	DurableOnAck    = "on-ack"
	DurableWithin1s = "within-1s"
)

// InfoOf gathers the info document of a server over st, started at
// started, built as v.
func InfoOf(st *store.Store, v Version, started, now time.Time) (Info, error) {
	in := Info{Version: v, Started: started.UTC(), UptimeSeconds: now.Sub(started).Seconds(),
		Durability: DurableOnAck, Writable: true, Buckets: []Bucket{}}
	if st.AcksBeforeDurable() {
		in.Durability = DurableWithin1s
	}
	if err := st.Err(); err != nil {
		in.Writable, in.Error = false, err.Error()
	}
	g := st.GCStats()
	in.GC = GCInfo{Mode: string(g.Mode), Pending: g.Pending, Inactivated: g.Inactivated}
	ts := TrimStatusOf(st.Trimmer().Status())
	in.Trim = TrimInfo{IntervalSeconds: ts.Counters.IntervalSeconds, PassBytes: ts.Counters.PassBytes,
		BacklogBytes: ts.Counters.BacklogBytes, Current: ts.Current, Last: ts.Last}
	in.Lifecycle = LifecycleStatusOf(st.Lifecycle().Status(), st.Lifecycle().Day(), now)
	rotten, err := st.Scrub().Rotten()
	if err != nil {
		return Info{}, err
	}
	in.Scrub = ScrubStatusOf(st.Scrub().Status(), rotten, now)
	in.Health = HealthOf(st)
	vs, err := st.VolumeStats()
	if err != nil {
		return Info{}, err
	}
	bs := uint64(vs.BlockSize)
	in.Volume = VolumeInfo{BlockSize: vs.BlockSize, Blocks: vs.Blocks, AgCount: vs.AgCount, AgBlocks: vs.AgBlocks,
		InodeSize: vs.InodeSize, SizeBytes: vs.Blocks * bs, UsedBytes: vs.UsedBlocks() * bs, FreeBytes: vs.FreeBlocks * bs,
		Inodes: vs.Inodes, FreeInodes: vs.FreeInodes, MaxInodes: vs.MaxInodes,
		LogBytes: vs.LogSizeBytes, LogUsedBytes: vs.LogUsedBytes}
	sh, err := st.SharedSpace()
	if err != nil {
		return Info{}, err
	}
	in.Volume.SharedBytes, in.Volume.SavedBytes = sh.SharedBlocks*bs, sh.SavedBlocks*bs
	buckets, err := st.ListBuckets()
	if err != nil {
		return Info{}, err
	}
	usage, err := st.Quotas().List()
	if err != nil {
		return Info{}, err
	}
	byName := make(map[string]store.BucketUsage, len(usage))
	for _, u := range usage {
		byName[u.Bucket] = u
	}
	for _, b := range buckets {
		u, ok := byName[b.Name]
		if !ok {
			u = store.BucketUsage{Bucket: b.Name}
		}
		in.Buckets = append(in.Buckets, Bucket{Created: b.Created.UTC(), BucketQuota: BucketQuotaOf(u)})
	}
	return in, nil
}

// Info asks the server for its info document.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var in Info
	err := c.do(ctx, http.MethodGet, PathInfo, nil, nil, &in)
	return in, err
}

// MetricsToken is the bearer token that authorizes a scrape of the
// metrics endpoint for the credentials accessKey, secretKey:
// "ACCESSKEY:" and the hex HMAC-SHA256 of a fixed label under the secret
// key. It is derived, never stored: changing the secret key revokes it,
// and it does not reveal the secret key.
func MetricsToken(accessKey, secretKey string) string {
	m := hmac.New(sha256.New, []byte(secretKey))
	m.Write([]byte("xfs3 metrics scrape\x00" + accessKey))
	return accessKey + ":" + hex.EncodeToString(m.Sum(nil))
}
