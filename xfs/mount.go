package xfs

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/quota"
	"github.com/xfs3/xfs3/xfs/trans"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// counters are the in-core superblock counters of a writable volume. They
// start from the AG headers (the truth with lazy superblock counters) and
// reach the superblock at every Sync and at Close.
type counters struct {
	fdblocks atomic.Int64 // free blocks, reservations already taken out
	icount   atomic.Int64
	ifree    atomic.Int64
}

// writeState is what only a writable volume has.
type writeState struct {
	counters counters
	setAside int64 // blocks never handed out but to freeing changes (mount.go)
	lazy     bool  // Options.LazyCommits

	sbMu sync.Mutex // serialises superblock writes

	space  *alloc.Space // free space; its own locks
	trimMu sync.Mutex   // one trim pass at a time (lock order: package doc)

	inodes   *ialloc.Inodes // inode allocation and unlinked lists; its own locks
	quota    *quota.Manager // project dquots; nil until loaded or enabled
	inactive InactiveQueue  // where released inodes go; nil: inactivated at once
	renameMu sync.Mutex     // cross-directory renames, as the kernel's s_vfs_rename_mutex
	// lockOrderRetries counts changes run again to take an AGF in order.
	lockOrderRetries atomic.Int64
}

// openWrite prepares a volume for writing: it refuses what the write path
// cannot keep consistent and loads the counters.
func (v *mount) openWrite(o Options) error {
	v.w = &writeState{lazy: o.LazyCommits}
	v.w.space = alloc.NewSpace(&v.geo, v.cache.Busy())
	logAG, logBno := v.geo.FsbToAg(v.sb.LogStart)
	v.w.space.SetNeverFree(trans.Extent{AG: logAG, Start: logBno, Len: v.sb.LogBlocks})
	v.w.inodes = ialloc.New(&v.geo, v.sb, v.cache.ReadCopy, &v.w.counters.icount, &v.w.counters.ifree)
	lw, err := v.openLog()
	if err != nil {
		return err
	}
	v.cache.SetLog(lw)
	// Room for free-space btree splits, and the blocks the AGs keep back
	// for their refcount btrees (package alloc): changes that do not
	// free cannot reserve those.
	v.w.setAside = int64(v.geo.AgCount) * 8
	for ag := format.AgNumber(0); ag < format.AgNumber(v.geo.AgCount); ag++ {
		v.w.setAside += int64(alloc.RefcountAsk(&v.geo, ag, v.logBlocksIn(ag)))
	}
	if err := v.markDamagedAGs(); err != nil {
		return err
	}
	st, err := v.space().Statfs()
	if err != nil {
		return err
	}
	v.w.counters.fdblocks.Store(int64(st.FreeBlocks))
	v.w.counters.icount.Store(int64(st.Inodes))
	v.w.counters.ifree.Store(int64(st.FreeInodes))
	if o.NoQuota {
		v.sb.QFlags = 0
	} else if err := v.quotas().loadQuota(o.DquotCache); err != nil {
		return err
	}
	if v.recovery != nil {
		// The replayed log is still dirty and must stay what recovery
		// reads until the intents are finished: a record of ours would
		// move the tail past them (finishIntents).
		return v.writeSuperblock()
	}
	return v.logSuperblock(lw)
}

// logSuperblock logs the superblock as the session's first transaction
// and then writes it in place. The log is dirty from then on until Close
// (after a recovery it already is): superblock counters are written
// unlogged (Sync), and may count changes a crash loses, so no recovery
// may take the volume for cleanly unmounted and trust them; the kernel
// recounts them after replaying a dirty log.
func (v *mount) logSuperblock(lw *xlog.Writer) error {
	sector, err := v.superblockSector()
	if err != nil {
		return err
	}
	it, _ := xlog.BufItem(0, sector, nil)
	if _, err := lw.Commit([]xlog.Item{it}); err != nil {
		return fmt.Errorf("log the superblock: %w", err)
	}
	return v.writeSuperblock()
}

// openLog starts writing the (clean) log after its last record.
func (v *mount) openLog() (*xlog.Writer, error) {
	l := v.logRegion()
	head, cycle, err := l.FindHead()
	if err != nil {
		return nil, fmt.Errorf("find log head: %w", err)
	}
	_, prev, err := l.LastRecord(head)
	if err != nil {
		return nil, fmt.Errorf("find last log record: %w", err)
	}
	return xlog.NewWriter(v.dev, l, v.sb.UUID, cycle, head, int32(prev)), nil
}

// writeSuperblock stores the in-core counters in the primary superblock.
func (v *mount) writeSuperblock() error {
	v.w.sbMu.Lock()
	defer v.w.sbMu.Unlock()
	sector, err := v.superblockSector()
	if err != nil {
		return err
	}
	if _, err := v.dev.WriteAt(sector, 0); err != nil {
		return fmt.Errorf("write superblock: %w", err)
	}
	return nil
}

// superblockSector encodes the primary superblock sector with the current
// counters over what the sector holds on disk.
func (v *mount) superblockSector() ([]byte, error) {
	w := v.w
	sector := make([]byte, v.geo.SectSize)
	if _, err := v.dev.ReadAt(sector, 0); err != nil {
		return nil, err
	}
	sb := *v.sb
	sb.ICount = uint64(w.counters.icount.Load())
	sb.IFree = uint64(w.counters.ifree.Load())
	sb.FDBlocks = uint64(w.counters.fdblocks.Load())
	sb.Encode(sector)
	format.SetCRC(sector, format.SbCRCOff)
	return sector, nil
}

// reserveBlocks takes n blocks from the free count for a transaction, or
// fails with ErrNoSpace before anything is modified.
func (v *mount) reserveBlocks(n int64) error { return v.reserveBlocksFloor(n, false) }

// reserveBlocksFloor is reserveBlocks that, for changes that free space,
// may use the set-aside blocks too.
func (v *mount) reserveBlocksFloor(n int64, freeing bool) error {
	floor := v.w.setAside
	if freeing {
		floor = 0
	}
	c := &v.w.counters.fdblocks
	for {
		free := c.Load()
		if free-n < floor {
			return fmt.Errorf("%w: %d blocks wanted, %d free", ErrNoSpace, n, max(free-v.w.setAside, 0))
		}
		if c.CompareAndSwap(free, free-n) {
			return nil
		}
	}
}

// unreserveBlocks returns unused reservation (or freed blocks).
func (v *mount) unreserveBlocks(n int64) { v.w.counters.fdblocks.Add(n) }

// Sync makes every completed change durable.
func (v *Volume) Sync() error { return v.sync() }

func (v *mount) sync() error {
	if v.w == nil {
		return nil
	}
	if err := v.writeSuperblock(); err != nil {
		return err
	}
	return v.cache.Sync()
}

// Force makes every change made so far durable: committed metadata in
// the log, file data in place. With synchronous commits (the default)
// every change already is when it returns.
func (v *Volume) Force() error {
	if v.w == nil {
		return nil
	}
	return v.cache.Force()
}

// LogStats returns the metadata log's counters (zero when read-only).
func (v *Volume) LogStats() xlog.Stats {
	if v.w == nil {
		return xlog.Stats{}
	}
	return v.cache.Log().Stats()
}

// settle ends a change once its caller has let go of every lock: with
// synchronous commits it waits until what the change committed is
// durable (even when it failed part-way), sharing the log write and flush
// with every change queued meanwhile. With lazy commits, once enough is
// queued it starts a log write in the background and goes on, as the
// kernel's committers leave a checkpoint to its worker; it waits only
// when the queue has outgrown the write under way. The change's own
// error comes first.
func (v *mount) settle(err *error) {
	if v.w == nil {
		return
	}
	c := v.cache
	if v.w.lazy {
		if !c.Pushable() {
			return
		}
		if !c.Backlogged() {
			c.Push()
			return
		}
	}
	if ferr := c.Force(); *err == nil {
		*err = ferr
	}
}

// pushBackground starts writing the log once background work
// (inactivation) has queued a little of it, so that the backlog a
// foreground change must write ahead of its own commit stays small; the
// caller does not wait for the write. Without an inactivation queue,
// inactivation runs inside the change that released the inode, which
// forces (or not, with lazy commits) as any change does.
func (v *mount) pushBackground() {
	if v.w.inactive != nil && v.cache.BackgroundPushable() {
		v.cache.Push()
	}
}

// Err returns why a writable volume stopped accepting changes (a metadata
// or log write failed and it shut down), or nil while it is usable.
func (v *Volume) Err() error {
	if v.w == nil {
		return nil
	}
	return v.cache.Err()
}

// errReadOnlyVolume is returned by every change to a read-only volume.
func (v *mount) checkWritable() error {
	if v.w == nil {
		return fmt.Errorf("%w (opened read-only)", ErrReadOnly)
	}
	return nil
}
