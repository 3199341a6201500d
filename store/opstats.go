package store

import (
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/reclaim"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// The engine's counters as the layers above read them for operators
// (metrics, the admin info document): plain numbers, read on demand.
type (
	Statfs = xfs.Statfs
	// SharedSpace is what shared extents save (SharedSpace).
	SharedSpace = xfs.SharedStats
	LogStats    = xlog.Stats
	CacheStats  = xfs.CacheStats
	// CacheUse is one cache's part of CacheStats.
	CacheUse = reclaim.Stats
)

// VolumeStats are the volume's geometry, space and engine counters.
type VolumeStats struct {
	Statfs
	AgBlocks  uint32 // blocks per allocation group
	InodeSize int    // bytes
	Log       LogStats
	// LogUsedBytes is the log space recovery may still need, of
	// LogSizeBytes.
	LogUsedBytes, LogSizeBytes int64
	Cache                      CacheStats // the metadata caches (blocks and inodes)
}

// VolumeStats reads the volume's counters. Like a statfs, it first
// frees what deleted objects still hold, so their space shows.
func (s *Store) VolumeStats() (VolumeStats, error) {
	fs, err := s.v.Space().Statfs()
	if err != nil {
		return VolumeStats{}, err
	}
	g := s.v.Geometry()
	st := VolumeStats{Statfs: fs, AgBlocks: g.AgBlocks, InodeSize: g.InodeSize,
		Log: s.v.LogStats(), Cache: s.v.CacheStats()}
	st.LogUsedBytes, st.LogSizeBytes = s.v.LogSpace()
	return st, nil
}

// SharedSpace reports the blocks copies share (see clone.go). It walks
// every AG's refcount btree under its AGF lock, one AG at a time: for
// the info document, not for every metrics scrape.
func (s *Store) SharedSpace() (SharedSpace, error) { return s.v.Space().Shared() }

// AcksBeforeDurable reports whether changes are acknowledged before they
// are durable (Options.AckBeforeDurable).
func (s *Store) AcksBeforeDurable() bool { return s.ackEarly }
