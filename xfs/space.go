package xfs

import (
	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
)

// Space is the volume's free space and the reclaim that gives space back:
// statfs, the inactivation that frees the forks and the inode of a file
// whose last link and last reference are gone, and trim, which discards
// free space to the storage under the volume.
//
// An unlink only puts the inode on its AG's unlinked list. A collector
// set with SetInactiveQueue (package gc) frees it later through
// Inactivate or InactivateBatch; with none, it is freed inside the call
// that released it. Statfs, quota reports and allocations that run out
// of space first wait for the queued inodes, so space deleted shows as
// free. Trim walks free space in bounded batches under one AG's
// free-space lock at a time and discards with no lock held (rule 0 of
// the lock order). A Space comes from Volume.Space and is safe for many
// goroutines.
type Space struct{ *mount }

// Space returns the volume's free space and reclaim.
func (v *Volume) Space() Space { return Space{v.mount} }

func (m *mount) space() Space { return Space{m} }

// Statfs counts space and inodes.
type Statfs struct {
	BlockSize    int
	Blocks       uint64 // data device blocks (sb_dblocks)
	LogBlocks    uint64 // blocks of the internal log
	FreeBlocks   uint64 // free blocks per the AG headers: free space btrees + AGFL + btree blocks
	SbFreeBlocks uint64 // free blocks per the superblock (lazily counted; may lag)
	Inodes       uint64 // allocated inodes (sum of agi_count)
	FreeInodes   uint64 // of those, free (sum of agi_freecount)
	MaxInodes    uint64 // the imax_pct limit in inodes (0: no limit)
	AgCount      uint32
	// SickAGs were left out: they are marked sick (Volume.Sick).
	SickAGs int
	// ReservedBlocks of FreeBlocks are kept back, per AG, for the
	// refcount btrees (see package alloc): frees may need them, new data
	// never gets them. The kernel's df leaves them out of its free count.
	ReservedBlocks uint64
}

// UsedBlocks is what df shows as used: everything but the free space and
// the log.
func (s Statfs) UsedBlocks() uint64 { return s.Blocks - s.LogBlocks - s.FreeBlocks }

// Statfs sums the AG headers, reading and verifying each AGF and AGI.
func (v Space) Statfs() (Statfs, error) {
	// Space that deleted files still hold is freed first, so it shows.
	v.flushInactive()
	g := &v.geo
	s := Statfs{BlockSize: g.BlockSize, Blocks: g.DBlocks, LogBlocks: uint64(v.sb.LogBlocks),
		SbFreeBlocks: v.sb.FDBlocks, AgCount: g.AgCount}
	s.MaxInodes = ialloc.MaxInodes(g, v.sb.IMaxPct)
	for ag := format.AgNumber(0); ag < format.AgNumber(g.AgCount); ag++ {
		if v.agSick(ag) {
			// Nothing is allocated in a sick AG any more: its space and
			// inodes count as none.
			s.SickAGs++
			continue
		}
		agf, err := alloc.Committed(v.readCommitted, g, ag)
		if err != nil {
			return Statfs{}, v.markSick(format.AtDaddr(err, g.AgHeaderDaddr(ag, 1)), 0)
		}
		s.FreeBlocks += uint64(agf.FreeBlks) + uint64(agf.FlCount) + uint64(agf.BtreeBlks)
		s.ReservedBlocks += uint64(max(alloc.RefcountAsk(g, ag, v.logBlocksIn(ag)), agf.RefcountBlocks) - agf.RefcountBlocks)
		agi, err := ialloc.Committed(v.readCommitted, g, ag)
		if err != nil {
			return Statfs{}, v.markSick(format.AtDaddr(err, g.AgHeaderDaddr(ag, 2)), 0)
		}
		s.Inodes += uint64(agi.Count)
		s.FreeInodes += uint64(agi.FreeCount)
	}
	return s, nil
}

// logBlocksIn is how many blocks of AG ag the internal log takes.
func (v *mount) logBlocksIn(ag format.AgNumber) uint32 {
	logAG, _ := v.geo.FsbToAg(v.sb.LogStart)
	if logAG != ag {
		return 0
	}
	return v.sb.LogBlocks
}
