package xfs

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// RecoveryStats says what opening a volume with a dirty log did.
type RecoveryStats struct {
	Records      int // log records read between tail and head
	Transactions int // complete transactions found
	Replayed     int // buffer items written in place
	Skipped      int // buffer items whose block was already newer
	Cancelled    int // buffer items of blocks freed later in the log
	Unlinked     int // inodes freed from the AGI unlinked lists
	// Extents of unfinished extent-free intents: freed, or skipped
	// because some of their blocks were free already.
	IntentsFinished, IntentsSkipped int
	// The kernel's unfinished refcount intents (CUI extents) and bmap
	// intents (BUI mappings) finished after the replay.
	RefcountFinished, BmapFinished int
	// CoWStagingFreed counts the copy-on-write staging extents (left by
	// a kernel that crashed) freed after the replay.
	CoWStagingFreed int

	// unfree are the unfinished intents, in log order, left to finish
	// once the volume is writable (finishIntents).
	unfree []xlog.Intent
}

// Recovery reports whether Open replayed the log, and what it did.
func (v *Volume) Recovery() (RecoveryStats, bool) {
	if v.recovery == nil {
		return RecoveryStats{}, false
	}
	st := *v.recovery
	st.unfree = nil
	return st, true
}

// recoverLog replays the log of a volume opened read-write. The log stays
// dirty until the unfinished intents are done (finishIntents), the
// unlinked inodes are freed and the volume is closed, so a crash before
// that recovers again (an inode left on an unlinked list under a clean
// log is what xfs_repair complains about). Logs holding items this recovery cannot
// replay are refused before anything is written.
func (v *mount) recoverLog() error {
	s, st, err := v.logRegion().Recover(v.dev, &v.geo)
	if err != nil {
		if errors.Is(err, xlog.ErrUnsupportedItem) {
			return fmt.Errorf("%w: log recovery: %v (mount the volume with the kernel once to replay it)", ErrUnsupported, err)
		}
		return fmt.Errorf("log recovery: %w", err)
	}
	v.recovery = &RecoveryStats{Records: s.Records, Transactions: len(s.Trans),
		Replayed: st.Replayed, Skipped: st.Skipped, Cancelled: st.Cancelled, unfree: st.Intents}
	return v.rereadSuperblock()
}

// rereadSuperblock takes the primary superblock again after a replay: a
// transaction may have logged it (the quota inode and flags).
func (v *mount) rereadSuperblock() error {
	sector := make([]byte, v.geo.SectSize)
	if _, err := v.dev.ReadAt(sector, 0); err != nil {
		return fmt.Errorf("read superblock: %w", err)
	}
	sb, err := format.DecodeSuperblock(sector)
	if err == nil {
		err = sb.Verify(sector)
	}
	if err != nil {
		return format.Located(err, "daddr 0, after log recovery")
	}
	*v.sb = *sb
	return nil
}

// freeUnlinked finishes the unfinished intents first (as the kernel does),
// then inactivates every inode left on an AGI unlinked list: their last
// link went before the crash, their blocks and the inode itself were still
// to be freed.
func (v *mount) freeUnlinked() error {
	if v.recovery == nil {
		_, err := v.space().freeAllUnlinked(false) // a clean log: no intents
		return err
	}
	if err := v.finishIntents(); err != nil {
		return err
	}
	if err := v.cleanCoWStaging(); err != nil {
		return err
	}
	n, err := v.space().freeAllUnlinked(false)
	v.recovery.Unlinked += n
	return err
}

// cleanCoWStaging frees the copy-on-write staging extents of every AG
// after a log recovery, as the kernel's recovery does: they belonged to
// in-memory CoW forks that did not survive the crash. The engine stages
// none itself; a kernel that crashed may have left some. A clean log
// leaves them alone, as the kernel does.
func (v *mount) cleanCoWStaging() error {
	if !v.geo.Reflink {
		return nil
	}
	for ag := format.AgNumber(0); ag < format.AgNumber(v.geo.AgCount); ag++ {
		var n int
		err := v.runTx(0, true, func(t *txn) error {
			tr, err := t.refcountTree(ag)
			if err != nil {
				return err
			}
			exts, err := tr.CleanCoWStaging()
			if err != nil {
				return err
			}
			free := make([]format.Extent, len(exts))
			for i, e := range exts {
				free[i] = format.Extent{StartBlock: v.geo.AgToFsb(ag, e.Start), BlockCount: uint64(e.Len)}
			}
			n = len(free)
			return t.release(unmapped{plain: free})
		})
		if err != nil {
			return fmt.Errorf("AG %d: clean copy-on-write staging: %w", ag, err)
		}
		v.recovery.CoWStagingFreed += n
	}
	return nil
}
