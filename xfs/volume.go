package xfs

import (
	"errors"
	"fmt"
	"sync"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/reclaim"
	"github.com/xfs3/xfs3/xfs/trans"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Options control how a volume is opened.
type Options struct {
	// ReadOnly opens without taking the writer lock; every change fails.
	ReadOnly bool
	// CacheBytes is the memory budget of the metadata caches (0:
	// DefaultCacheBytes): three quarters for metadata blocks, a quarter
	// for inodes. Read-only volumes have them too: a block is read and
	// verified once, not on every lookup.
	CacheBytes int
	// LazyCommits lets changes return once they are committed in memory
	// and queued for the log, instead of once they are durable. They
	// become durable, in order, at the next Force, Sync or Close, or soon
	// after about a megabyte of log is queued (written in the background;
	// a change waits only at twice that); a crash loses the changes not
	// yet durable, never the volume's consistency. Callers that
	// acknowledge changes to others call Force first.
	LazyCommits bool
	// NoQuota opens without keeping project quota, as a kernel mount
	// without quota options does: the superblock's quota flags are
	// cleared, so the next open that keeps quota recounts (quotacheck).
	// For comparisons; a store always keeps quota.
	NoQuota bool
	// OnSick, when set, is called once for each structure newly marked
	// sick (see Volume.Sick), on the goroutine that found the damage.
	OnSick func(SickStructure)
	// DquotCache bounds the project dquots kept in memory (0: a default
	// of quota.DefaultCacheBound); unreferenced, unchanged ones past it
	// are evicted and read back from the quota file when used again.
	DquotCache int
}

// DefaultCacheBytes is the caches' budget when Options leave it 0:
// 96 MiB of metadata blocks hold the directory blocks of some two million
// names, or the inode clusters of the last 200,000 objects written, and
// 32 MiB of inodes some 30,000 of them; a server in a 512 MiB container
// keeps most of its memory for requests.
const DefaultCacheBytes = 128 << 20

// Volume is an open XFS filesystem: the handle a program opens, syncs and
// closes. Its operations are grouped in roles reached from it, each a
// small value type over the same mounted state:
//
//	v.Names()   the namespace: lookup, create, link, rename, unlink, read directories
//	v.Files()   file data and extents: read, write, truncate, punch, preallocate,
//	            move extents, references that keep an unlinked inode readable
//	v.Xattrs()  extended attributes
//	v.Quotas()  project quotas: limits, usage, enforcement
//	v.Space()   free space and reclaim: statfs, trim, freeing unlinked inodes
//
// The Volume itself keeps what concerns the whole filesystem: geometry,
// durability (Sync, Force, Close), stat of an inode, and statistics.
type Volume struct{ *mount }

// mount is the state every role shares (libxfs's xfs_mount): the device,
// the geometry, the caches, the log and the writable state, with the
// glue they all use (inode reads and locks, transactions, block reads).
type mount struct {
	dev  dev.Device
	sb   *format.Superblock // primary superblock as read at open; immutable
	geo  format.Geometry    // immutable
	ro   bool
	path string

	icache inodeCache
	// cache holds verified metadata blocks, committed ones on a writable
	// volume (with its log), what the device holds on a read-only one
	// (without: nothing changes the blocks under it, as another writer's
	// open is refused).
	cache     *trans.Cache
	w         *writeState    // nil when read-only
	recovery  *RecoveryStats // set when Open replayed the log
	health    health         // the structures marked sick (health.go)
	closeOnce sync.Once
}

// Open opens the volume file or block device at path.
func Open(path string, o Options) (*Volume, error) {
	d, err := dev.Open(path, o.ReadOnly)
	if err != nil {
		return nil, err
	}
	v, err := OpenDevice(d, o)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v.path = path
	return v, nil
}

// OpenDevice opens a filesystem on an already open device. The volume owns
// the device from then on and closes it in Close.
func OpenDevice(d dev.Device, o Options) (*Volume, error) {
	sector := make([]byte, 512)
	if d.Size() < 512 {
		return nil, fmt.Errorf("%w: device of %d bytes is too small to hold XFS", ErrUnsupported, d.Size())
	}
	if _, err := d.ReadAt(sector, 0); err != nil {
		return nil, fmt.Errorf("read superblock: %w", err)
	}
	sb, err := format.DecodeSuperblock(sector)
	if err != nil {
		return nil, err
	}
	if sb.MagicNum != format.SbMagic {
		return nil, fmt.Errorf("%w: no XFS superblock (magic %#x)", ErrUnsupported, sb.MagicNum)
	}
	if !sb.IsV5() {
		return nil, fmt.Errorf("%w: XFS v%d filesystem; only v5 (crc=1) is supported", ErrUnsupported, sb.VersionNum&format.SbVersionNumMask)
	}
	if sb.SectSize > 512 && sb.SectSize <= 32768 {
		sector = make([]byte, sb.SectSize)
		if _, err := d.ReadAt(sector, 0); err != nil {
			return nil, fmt.Errorf("read superblock: %w", err)
		}
	}
	if err := sb.Verify(sector); err != nil {
		return nil, format.Located(err, "daddr 0")
	}
	if err := checkFeatures(sb); err != nil {
		return nil, err
	}
	v := &mount{dev: d, sb: sb, geo: format.NewGeometry(sb), ro: o.ReadOnly}
	v.health.onSick = o.OnSick
	// Compared in blocks: the size in bytes of a corrupt superblock's
	// geometry may not fit an int64.
	if v.geo.DBlocks > uint64(d.Size())>>v.geo.BlockLog {
		return nil, fmt.Errorf("%w: device has %d bytes, the filesystem needs %d blocks of %d bytes", ErrUnsupported, d.Size(), v.geo.DBlocks, v.geo.BlockSize)
	}
	budget := int64(o.CacheBytes)
	if budget <= 0 {
		budget = DefaultCacheBytes
	}
	v.icache.init(budget/4, v.geo.InodeSize)
	if err := v.checkLog(); err != nil {
		if o.ReadOnly || !errors.Is(err, ErrNeedsRecovery) {
			return nil, err
		}
		if err := v.recoverLog(); err != nil {
			return nil, err
		}
	}
	// After recovery, which writes the device directly: nothing it
	// replayed is cached stale.
	v.cache = trans.NewCache(d, int(budget-budget/4))
	if !o.ReadOnly {
		if err := v.fillLogHoles(); err != nil {
			return nil, err
		}
		if err := v.openWrite(o); err != nil {
			return nil, err
		}
		if err := v.startWriting(o); err != nil {
			return nil, v.endRefusedOpen(err)
		}
	}
	return &Volume{v}, nil
}

// startWriting finishes a writable open once the log is open: it frees
// what the unlinked lists hold and turns quota enforcement on.
func (v *mount) startWriting(o Options) error {
	if err := v.space().loadUnlinked(); err != nil {
		return err
	}
	// After a crash the lists hold what was being deleted; with a clean
	// log they are empty (Close empties them), unless another writer left
	// inodes there.
	if v.recovery != nil || v.space().unlinkedCount() > 0 {
		if err := v.freeUnlinked(); err != nil {
			return fmt.Errorf("free the inodes on the unlinked lists: %w", err)
		}
	}
	if !o.NoQuota {
		if err := v.quotas().enableQuota(o.DquotCache); err != nil {
			return fmt.Errorf("project quota: %w", err)
		}
	}
	return nil
}

// endRefusedOpen ends a writable open that failed after its first log
// record, with cause. What it committed is whole, so it is made durable
// and the log marked clean, as Close does: the volume then still opens
// read-only while the damage that stopped the open waits for xfs_repair.
// A replayed log whose intents are still to be finished, or a failed
// write, leaves the log dirty for the next recovery instead.
func (v *mount) endRefusedOpen(cause error) error {
	if v.cache.Err() != nil || (v.recovery != nil && len(v.recovery.unfree) > 0) {
		return cause
	}
	if err := v.sync(); err != nil {
		return fmt.Errorf("%w (and making the open's changes durable failed: %v)", cause, err)
	}
	if err := v.cache.Log().Unmount(); err != nil {
		return fmt.Errorf("%w (and marking the log clean failed: %v)", cause, err)
	}
	return cause
}

// checkFeatures refuses what this engine cannot serve correctly.
func checkFeatures(sb *format.Superblock) error {
	if unknown := sb.FeaturesIncompat &^ format.IncompatKnown; unknown != 0 {
		return fmt.Errorf("%w: unknown incompatible features %#x", ErrUnsupported, unknown)
	}
	if sb.FeaturesIncompat&format.IncompatFType == 0 {
		// mkfs always sets it on v5; the directory code needs it.
		return fmt.Errorf("%w: directory entries without file types (no ftype feature)", ErrUnsupported)
	}
	if sb.FeaturesIncompat&format.IncompatNeedsRep != 0 {
		return fmt.Errorf("%w: filesystem is marked as needing xfs_repair", ErrUnsupported)
	}
	if sb.FeaturesLogIncompat != 0 {
		return fmt.Errorf("%w: log-incompatible features %#x are set (%v)", ErrUnsupported, sb.FeaturesLogIncompat, ErrNeedsRecovery)
	}
	if sb.RBlocks != 0 || sb.RExtents != 0 {
		return fmt.Errorf("%w: filesystem has a realtime device", ErrUnsupported)
	}
	if sb.LogStart == 0 {
		return fmt.Errorf("%w: filesystem has an external log device", ErrUnsupported)
	}
	if sb.InProgress != 0 {
		return fmt.Errorf("%w: mkfs did not finish on this filesystem", ErrUnsupported)
	}
	return nil
}

// checkLog refuses a volume whose log still holds changes to replay.
func (v *mount) checkLog() error {
	g := &v.geo
	if !g.ValidFsb(v.sb.LogStart) || !g.ValidExtent(v.sb.LogStart, uint64(v.sb.LogBlocks)) {
		return format.Corrupt("superblock", "daddr 0", "log of %d blocks at %d lies outside the filesystem", v.sb.LogBlocks, v.sb.LogStart)
	}
	// The kernel refuses logs over 2 GiB, and xlog counts basic blocks
	// in 32 bits.
	if uint64(v.sb.LogBlocks)<<g.BlockLog > 2<<30 {
		return format.Corrupt("superblock", "daddr 0", "log of %d blocks of %d bytes is larger than 2 GiB", v.sb.LogBlocks, g.BlockSize)
	}
	// Nor does it mount a smaller log than this, and one could not hold
	// the transactions a writer makes.
	if v.sb.LogBlocks < format.MinLogBlocks {
		return format.Corrupt("superblock", "daddr 0", "log of %d blocks is smaller than the minimum of %d", v.sb.LogBlocks, format.MinLogBlocks)
	}
	if err := v.logRegion().CheckClean(); err != nil {
		if w, ok := v.dev.(interface{ WriterActive() bool }); ok && w.WriterActive() {
			// A writer keeps the log dirty until it closes the volume;
			// its blocks are changing under any reader meanwhile.
			return fmt.Errorf("%w: its log is not clean until that process closes it", dev.ErrInUse)
		}
		if errors.Is(err, xlog.ErrNeedsRecovery) {
			return fmt.Errorf("%w (%v): open it read-write (or mount it with the kernel) to replay the log", ErrNeedsRecovery, err)
		}
		return fmt.Errorf("read log: %w", err)
	}
	return nil
}

// fillLogHoles writes zeros over the holes of the log's region in a
// volume file (our mkfs leaves the log a hole): a log write into a hole
// makes the host filesystem allocate blocks, and the force that follows
// commits the host's journal too, on every log write of the first pass
// through the log: a durable write into written blocks costs clearly
// less than into a hole or fallocated space (docs/benchmarks.md, LogWrites).
// Zeros over a hole change nothing recovery reads. A host short
// of space keeps the holes (dev.ErrHostFull): the log works as before,
// only slower, and a later open fills them.
func (v *mount) fillLogHoles() error {
	f, ok := v.dev.(interface {
		FillHoles(off, n int64) (int64, error)
	})
	if !ok {
		return nil
	}
	l := v.logRegion()
	filled, err := f.FillHoles(l.Start, int64(l.Blocks)*format.BBSize)
	if err != nil && !errors.Is(err, dev.ErrHostFull) {
		return err
	}
	if filled > 0 {
		// Once now, not in the first commit's flush.
		return v.dev.Sync()
	}
	return nil
}

// logRegion locates the internal log.
func (v *mount) logRegion() *xlog.Log {
	g := &v.geo
	return &xlog.Log{R: v.dev, Start: format.DaddrToByte(g.FsbToDaddr(v.sb.LogStart)),
		Blocks: v.sb.LogBlocks << (g.BlockLog - format.BBShift)}
}

// Close writes back the counters of a writable volume, makes everything
// durable, marks the log clean and releases the device.
func (v *Volume) Close() error {
	var err error
	v.closeOnce.Do(func() {
		if v.w != nil && v.cache.Err() == nil {
			// Never leave an inode on an unlinked list under a clean
			// log: what a queue did not free, and inodes whose handles
			// are still open, are freed now.
			_, err = v.space().freeAllUnlinked(true)
		}
		if serr := v.Sync(); err == nil {
			err = serr
		}
		if err == nil && v.w != nil {
			err = v.cache.Log().Unmount()
		}
		if cerr := v.dev.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// Geometry returns the filesystem geometry.
func (v *Volume) Geometry() format.Geometry { return v.geo }

// Superblock returns a copy of the primary superblock as read at open.
func (v *Volume) Superblock() format.Superblock { return *v.sb }

// Root returns the root directory's inode number.
func (v *Volume) Root() format.Ino { return v.sb.RootIno }

// readAt reads len(b) bytes at a disk address.
func (v *mount) readAt(b []byte, d format.Daddr) error {
	return v.readMeta(b, format.DaddrToByte(d))
}

// readMeta reads metadata at byte offset off that the caller does not take
// through the buffer cache: on a writable volume it sees every committed
// change, including those whose blocks are not yet written in place.
func (v *mount) readMeta(b []byte, off int64) error {
	return v.cache.ReadAt(b, off)
}

// readCommitted returns the committed content of a metadata block outside
// any transaction, verified with ops once, when the buffer cache reads it.
// The slice must not be modified.
func (v *mount) readCommitted(d format.Daddr, size int, ops *trans.Ops) ([]byte, error) {
	return v.cache.Read(d, size, ops)
}

// readFsb reads n filesystem blocks starting at fsb.
func (v *mount) readFsb(fsb format.FsBlock, n int) ([]byte, error) {
	b := make([]byte, n<<v.geo.BlockLog)
	if err := v.readAt(b, v.geo.FsbToDaddr(fsb)); err != nil {
		return nil, err
	}
	return b, nil
}

// CacheStats are the metadata caches' use of their budgets (see
// Options.CacheBytes) and their counters since the volume was opened.
type CacheStats struct {
	Buffers reclaim.Stats // metadata blocks
	Inodes  reclaim.Stats // inodes, each reckoned at its size plus overhead
}

// CacheStats returns the caches' use and counters now.
func (v *Volume) CacheStats() CacheStats {
	return CacheStats{Buffers: v.cache.Stats(), Inodes: v.icache.stats()}
}
