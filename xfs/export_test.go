package xfs

import (
	"testing"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
)

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
				h, bests, err := format.VerifyDirFree(&v.geo, b, daddr, ip.ino)
				if err != nil {
					t.Fatalf("%s free block at %d: %v", e.Path, off, err)
				}
				found++
				for i, best := range bests {
					db := h.FirstDB + uint32(i)
					if best == format.NullDirBest {
						continue
					}
					_, hdr, err := v.readDirData(ip, ext, db)
					if err != nil {
						t.Fatal(err)
					}
					if hdr.BestFree[0].Length != best {
						t.Errorf("%s data block %d: bestfree %d, free index says %d", e.Path, db, hdr.BestFree[0].Length, best)
					}
				}
			}
		}
	}
	return found
}

// CheckDirFreeBlocks is checkDirFreeBlocks for the external tests.
var CheckDirFreeBlocks = checkDirFreeBlocks

// SkipWriteback makes v's commits reach only the log, as if the machine
// died right after each log write.
func SkipWriteback(v *Volume) { v.w.cache.SkipWriteback() }

// Abandon drops v without writing anything more (no superblock, no
// unmount record): a crash as far as the volume can tell.
func Abandon(v *Volume) error { return v.dev.Close() }

// CloseKeepingUnlinked closes v cleanly but leaves the inodes on its
// unlinked lists there, as another writer might.
func CloseKeepingUnlinked(v *Volume) error {
	if err := v.Sync(); err != nil {
		return err
	}
	if err := v.w.cache.Log().Unmount(); err != nil {
		return err
	}
	return v.dev.Close()
}
