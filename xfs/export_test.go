package xfs

import (
	"encoding/binary"
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// SetParallelReclaim makes both caches of v reclaim in every goroutine
// that finds them over budget, as they did before one reclaimer ran at a
// time: for benchmarks to compare.
func SetParallelReclaim(v *Volume, on bool) {
	v.cache.SetParallelReclaim(on)
	v.icache.reclaim.SetParallel(on)
}

// checkDirFreeBlocks decodes every free-index block of the directories in
// snap and checks each best against the data block it describes, as
// xfs_repair does. It returns how many free-index blocks it checked.
func checkDirFreeBlocks(t testing.TB, v *Volume, snap oracle.Snapshot) int {
	t.Helper()
	found := 0
	for _, e := range snap {
		if e.Type != oracle.TypeDir {
			continue
		}
		ip, err := v.iget(format.Ino(e.Ino))
		if err != nil {
			t.Fatal(err)
		}
		if ip.core.Format == format.FmtLocal {
			continue
		}
		ext, err := v.extents(ip, DataFork)
		if err != nil {
			t.Fatal(err)
		}
		per := v.geo.DirBlockFsbs()
		freeStart := format.FileOff(uint64(format.DirFreeOffset) >> v.geo.BlockLog)
		for _, x := range ext {
			for off := max(x.StartOff, freeStart); off < x.End(); off += format.FileOff(per) {
				b, daddr, err := v.readForkBlocks(ext, off, per)
				if err != nil {
					t.Fatal(err)
				}
				// xfs_dir3_free_hdr: firstdb at 48, nvalid at 52, bests
				// (be16) from 64; read here from the layout, not through
				// package dir, whose bookkeeping this checks.
				checkDir3Header(t, e.Path, b, daddr, ip.ino, format.Dir3FreeMagic)
				first, nvalid := binary.BigEndian.Uint32(b[48:]), int(binary.BigEndian.Uint32(b[52:]))
				if format.Dir3FreeHdrSize+2*nvalid > len(b) {
					t.Fatalf("%s free block at %d: nvalid %d", e.Path, off, nvalid)
				}
				found++
				for i := 0; i < nvalid; i++ {
					best := binary.BigEndian.Uint16(b[format.Dir3FreeHdrSize+2*i:])
					db := first + uint32(i)
					if best == format.NullDirBest {
						continue
					}
					data, ddaddr, err := v.readForkBlocks(ext, format.FileOff(db)*format.FileOff(per), per)
					if err != nil {
						t.Fatal(err)
					}
					checkDir3Header(t, e.Path, data, ddaddr, ip.ino, format.Dir3DataMagic, format.Dir3BlockMagic)
					// The longest free region is bestfree[0]: (offset, length) at 48.
					if longest := binary.BigEndian.Uint16(data[50:]); longest != best {
						t.Errorf("%s data block %d: bestfree %d, free index says %d", e.Path, db, longest, best)
					}
				}
			}
		}
	}
	return found
}

// checkDir3Header checks the xfs_dir3_blk_hdr of a directory data or
// free block: magic at 0, CRC at 4, own address at 8, owner at 40.
func checkDir3Header(t testing.TB, path string, b []byte, daddr format.Daddr, owner format.Ino, magics ...uint32) {
	t.Helper()
	be := binary.BigEndian
	m := be.Uint32(b)
	if m != magics[0] && (len(magics) < 2 || m != magics[1]) {
		t.Fatalf("%s block at daddr %d: magic %#x", path, daddr, m)
	}
	if !format.CRCOK(b, format.Dir3DataCRCOff) || format.Daddr(be.Uint64(b[8:])) != daddr || format.Ino(be.Uint64(b[40:])) != owner {
		t.Fatalf("%s block at daddr %d: bad CRC, address or owner", path, daddr)
	}
}

// CheckDirFreeBlocks is checkDirFreeBlocks for the external tests.
var CheckDirFreeBlocks = checkDirFreeBlocks

// SkipWriteback makes v's commits reach only the log, as if the machine
// died right after each log write.
func SkipWriteback(v *Volume) { v.cache.SkipWriteback() }

// ForceLog makes every commit so far durable in the log, writing
// nothing in place.
func ForceLog(v *Volume) error { return v.cache.Force() }

// Abandon drops v without writing anything more (no superblock, no
// unmount record): a crash as far as the volume can tell. The log's
// background write-back pass, if one runs, ends first: closing the
// device under it would race with its writes.
func Abandon(v *Volume) error { return v.abandon() }

func (v *Volume) abandon() error {
	if log := v.cache.Log(); log != nil {
		log.Halt()
	}
	return v.dev.Close()
}

// CloseKeepingUnlinked closes v cleanly but leaves the inodes on its
// unlinked lists there, as another writer might.
func CloseKeepingUnlinked(v *Volume) error {
	if err := v.Sync(); err != nil {
		return err
	}
	if err := v.cache.Log().Unmount(); err != nil {
		return err
	}
	return v.dev.Close()
}

// DquotCache returns how many dquots v holds in memory and how many it
// has evicted.
func DquotCache(v *Volume) (cached, evicted int64) { return v.w.quota.Cached() }

// LockOrderRetries returns how many changes ran again to take an AGF in
// ascending order.
func LockOrderRetries(v *Volume) int64 { return v.w.lockOrderRetries.Load() }

// LogRange is the byte range of v's internal log.
func LogRange(v *Volume) (off, n int64) {
	l := v.logRegion()
	return l.Start, int64(l.Blocks) * format.BBSize
}

// HeldInodes is the number of cached inode handles something still holds
// a reference on: none once every call has returned and every Handle is
// closed, or the cache could never evict them.
func HeldInodes(v *Volume) int {
	held := 0
	for i := range v.icache.shards {
		s := &v.icache.shards[i]
		s.Mu.Lock()
		s.Each(func(_ format.Ino, h *inodeHandle) {
			if h.refs > 0 {
				held++
			}
		})
		s.Mu.Unlock()
	}
	return held
}

// WriteBackNow writes the log's backlog of durable commits in place now,
// without the flush that would let the tail move past them.
func WriteBackNow(v *Volume) error { return v.cache.Log().WriteBackNow() }

// SetInodeFlags sets di_flags of any inode, whatever they hold, in one
// transaction: tests need immutable directories, which only the kernel
// makes (Files.SetImmutable takes regular files).
func SetInodeFlags(v *Volume, ino format.Ino, flags uint16) (err error) {
	defer v.settle(&err)
	h, unlock := v.lockInode(ino)
	defer unlock()
	return v.runTx(0, false, func(t *txn) error {
		c, err := t.modifyAny(h, ino)
		if err != nil {
			return err
		}
		c.core.Flags = flags
		c.touch(false)
		return nil
	})
}
