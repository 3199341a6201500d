package admin

import (
	"fmt"
	"runtime"
	"time"

	"github.com/xfs3/xfs3/store"
)

// PathServerInfo is MinIO's server information ("mc admin info"). mc
// asks GET PathServerInfo?metrics=false&no-cache=false.
const PathServerInfo = "/info"

// ServerInfo is the document of GET PathServerInfo, in the shape mc
// decodes (madmin's InfoMessage; the field names are the wire's). xfs3 is
// one server with one drive, its volume, and presents itself as MinIO
// does on one drive: an "Erasure" backend of one pool of one set of one
// drive with no parity. mc shows then the drive's state and usage; with
// "FS" it would show neither (MinIO no longer has an FS mode).
type ServerInfo struct {
	Mode          string       `json:"mode"` // "online": the server answers
	Region        string       `json:"region,omitempty"`
	DeploymentID  string       `json:"deploymentID"` // the volume's XFS UUID
	Buckets       Count        `json:"buckets"`
	Objects       Count        `json:"objects"`       // Counts.Objects
	Versions      Count        `json:"versions"`      // Counts.Versions
	DeleteMarkers Count        `json:"deletemarkers"` // Counts.DeleteMarkers
	Usage         Usage        `json:"usage"`
	Backend       Backend      `json:"backend"`
	Servers       []ServerProp `json:"servers"`
}

// Count is a count, or why there is none (Count is then 0).
type Count struct {
	Count uint64 `json:"count"`
	Error string `json:"error,omitempty"`
}

// Usage is the bytes the buckets are charged: whole blocks of every
// version, delete marker, prefix directory and part of an upload in
// progress, as their quotas count them (read when asked, never stale).
type Usage struct {
	Size  uint64 `json:"size"`
	Error string `json:"error,omitempty"`
}

// Backend describes the storage layout as MinIO's erasure backend.
type Backend struct {
	Type             string `json:"backendType"` // BackendErasure
	OnlineDisks      int    `json:"onlineDisks"`
	OfflineDisks     int    `json:"offlineDisks"`
	StandardSCParity int    `json:"standardSCParity"`
	RRSCParity       int    `json:"rrSCParity"`
	TotalSets        []int  `json:"totalSets"`         // per pool
	DrivesPerSet     []int  `json:"totalDrivesPerSet"` // per pool
}

// BackendErasure is MinIO's name for its only backend since 2022, one
// drive included.
const BackendErasure = "Erasure"

// ServerProp is one server of the document (madmin's ServerProperties).
type ServerProp struct {
	State          string            `json:"state"`    // "online"
	Endpoint       string            `json:"endpoint"` // host:port the request reached
	Scheme         string            `json:"scheme"`   // "http" or "https"
	Uptime         int64             `json:"uptime"`   // seconds
	Version        string            `json:"version"`
	CommitID       string            `json:"commitID"`
	Network        map[string]string `json:"network"` // endpoint -> "online"
	Drives         []Drive           `json:"drives"`
	PoolNumber     int               `json:"poolNumber"`  // 1-based
	PoolNumbers    []int             `json:"poolNumbers"` // 1-based
	MemStats       MemStats          `json:"mem_stats"`
	GoMaxProcs     int               `json:"go_max_procs"`
	NumCPU         int               `json:"num_cpu"`
	RuntimeVersion string            `json:"runtime_version"`
}

// MemStats are the Go runtime's, under their Go names.
type MemStats struct {
	Alloc, TotalAlloc, Mallocs, Frees, HeapAlloc uint64
}

// Drive is the volume as a drive (madmin's Disk). Spaces are what df
// shows (the internal log is in neither the total nor the used space);
// inodes are what df -i shows, as Linux's XFS statfs computes them.
type Drive struct {
	Endpoint   string `json:"endpoint"` // the volume's path, as MinIO names a local drive
	Path       string `json:"path"`
	State      string `json:"state"` // DriveOK, or DriveFaulty once a failed write shut the volume down
	UUID       string `json:"uuid"`  // the volume's XFS UUID
	TotalSpace uint64 `json:"totalspace"`
	UsedSpace  uint64 `json:"usedspace"`
	AvailSpace uint64 `json:"availspace"`
	UsedInodes uint64 `json:"used_inodes"`
	FreeInodes uint64 `json:"free_inodes"`
	Local      bool   `json:"local"`
	PoolIndex  int    `json:"pool_index"`
	SetIndex   int    `json:"set_index"`
	DiskIndex  int    `json:"disk_index"`
}

// Drive states, as MinIO names them.
const (
	DriveOK     = "ok"
	DriveFaulty = "faulty"
)

// ServerInfoOptions are what the document needs beyond the store.
type ServerInfoOptions struct {
	Endpoint     string // host:port the request reached
	Scheme       string
	Region       string
	Volume       string // the volume's path
	Version      Version
	Started, Now time.Time
	// Counts and CountErr are the object counts (Counter.Get).
	Counts   Counts
	CountErr error
}

// ServerInfoOf gathers the server-info document of st. It reads the
// volume's space and the buckets' usage (each a few reads of cached
// metadata); the object counts come in o.
func ServerInfoOf(st *store.Store, o ServerInfoOptions) (ServerInfo, error) {
	vs, err := st.VolumeStats()
	if err != nil {
		return ServerInfo{}, err
	}
	buckets, err := st.ListBuckets()
	if err != nil {
		return ServerInfo{}, err
	}
	usage, err := st.Quotas().List()
	if err != nil {
		return ServerInfo{}, err
	}
	id := VolumeUUID(st)
	in := ServerInfo{Mode: "online", Region: o.Region, DeploymentID: id,
		Buckets: Count{Count: uint64(len(buckets))},
		Backend: Backend{Type: BackendErasure, OnlineDisks: 1, TotalSets: []int{1}, DrivesPerSet: []int{1}}}
	for _, u := range usage {
		in.Usage.Size += u.Bytes
	}
	if o.CountErr != nil && o.Counts.Started.IsZero() {
		msg := o.CountErr.Error()
		in.Objects.Error, in.Versions.Error, in.DeleteMarkers.Error = msg, msg, msg
	} else {
		in.Objects.Count, in.Versions.Count, in.DeleteMarkers.Count = o.Counts.Objects, o.Counts.Versions, o.Counts.DeleteMarkers
	}
	drive := driveOf(vs, o.Volume, id)
	if st.Err() != nil {
		drive.State = DriveFaulty
		in.Backend.OnlineDisks, in.Backend.OfflineDisks = 0, 1
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	in.Servers = []ServerProp{{
		State: "online", Endpoint: o.Endpoint, Scheme: o.Scheme,
		Uptime:  int64(o.Now.Sub(o.Started) / time.Second),
		Version: o.Version.Version, CommitID: o.Version.Revision,
		Network: map[string]string{o.Endpoint: "online"},
		Drives:  []Drive{drive}, PoolNumber: 1, PoolNumbers: []int{1},
		MemStats: MemStats{Alloc: ms.Alloc, TotalAlloc: ms.TotalAlloc, Mallocs: ms.Mallocs,
			Frees: ms.Frees, HeapAlloc: ms.HeapAlloc},
		GoMaxProcs: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), RuntimeVersion: runtime.Version(),
	}}
	return in, nil
}

// driveOf describes the volume as MinIO's drive.
func driveOf(vs store.VolumeStats, path, id string) Drive {
	bs := uint64(vs.BlockSize)
	used := vs.Inodes - vs.FreeInodes
	// Linux's xfs_fs_statfs: every free block could become inodes, up
	// to the imax_pct limit; never fewer than those allocated.
	files := vs.Inodes + vs.FreeBlocks*(bs/uint64(max(vs.InodeSize, 1)))
	if vs.MaxInodes > 0 {
		files = min(files, vs.MaxInodes)
	}
	files = max(files, vs.Inodes)
	return Drive{Endpoint: path, Path: path, State: DriveOK, UUID: id,
		TotalSpace: (vs.Blocks - vs.LogBlocks) * bs, UsedSpace: vs.UsedBlocks() * bs, AvailSpace: vs.FreeBlocks * bs,
		UsedInodes: used, FreeInodes: files - used, Local: true}
}

// VolumeUUID is the volume's XFS UUID (sb_uuid, what blkid and
// xfs_admin -u show), in its usual text form. It never changes unless
// xfs_admin -U sets another.
func VolumeUUID(st *store.Store) string {
	u := st.Volume().Superblock().UUID
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
