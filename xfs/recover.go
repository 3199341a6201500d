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
}

// Recovery reports whether Open replayed the log, and what it did.
func (v *Volume) Recovery() (RecoveryStats, bool) {
	if v.recovery == nil {
		return RecoveryStats{}, false
	}
	return *v.recovery, true
}

// recoverLog replays the log of a volume opened read-write. The log stays
// dirty until the unlinked inodes are freed and the volume is closed, so a
// crash before that recovers again (an inode left on an unlinked list
// under a clean log is what xfs_repair complains about). Logs holding
// items this recovery cannot replay are refused before anything is
// written.
func (v *Volume) recoverLog() error {
	s, st, err := v.logRegion().Recover(v.dev, &v.geo)
	if err != nil {
		if errors.Is(err, xlog.ErrUnsupportedItem) {
			return fmt.Errorf("%w: log recovery: %v (mount the volume with the kernel once to replay it)", ErrUnsupported, err)
		}
		return fmt.Errorf("log recovery: %w", err)
	}
	v.recovery = &RecoveryStats{Records: s.Records, Transactions: len(s.Trans),
		Replayed: st.Replayed, Skipped: st.Skipped, Cancelled: st.Cancelled}
	return nil
}

// freeUnlinked inactivates every inode left on an AGI unlinked list: their
// last link went before the crash, their blocks and the inode itself were
// still to be freed.
func (v *Volume) freeUnlinked() error {
	for ag := format.AgNumber(0); ag < format.AgNumber(v.geo.AgCount); ag++ {
		for bucket := 0; bucket < format.AgiUnlinkedBuckets; bucket++ {
			for guard := 0; ; guard++ {
				agi, err := v.agiCommitted(ag)
				if err != nil {
					return err
				}
				agino := agi.Unlinked[bucket]
				if agino == format.NullAgIno {
					break
				}
				if guard > 1<<20 {
					return format.Corrupt("AGI", fmt.Sprintf("AG %d", ag), "unlinked bucket %d does not end", bucket)
				}
				ino := v.geo.AgInoToIno(ag, agino)
				if err := v.freeUnlinkedInode(ag, ino); err != nil {
					return fmt.Errorf("free unlinked inode %d: %w", ino, err)
				}
				v.recovery.Unlinked++
			}
		}
	}
	return nil
}

func (v *Volume) freeUnlinkedInode(ag format.AgNumber, ino format.Ino) error {
	h, unlock := v.lockInode(ino)
	defer unlock()
	ul := v.w.unlinked(ag)
	ul.Lock()
	defer ul.Unlock()
	return v.inactivate(h, ino)
}

// agiCommitted reads an AGI through the buffer cache (the device may lag
// behind it).
func (v *Volume) agiCommitted(ag format.AgNumber) (*format.Agi, error) {
	t, err := v.begin(0)
	if err != nil {
		return nil, err
	}
	defer t.Cancel()
	a, err := t.readAgi(ag)
	if err != nil {
		return nil, err
	}
	h := *a.h
	return &h, nil
}
