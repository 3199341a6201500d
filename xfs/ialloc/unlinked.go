package ialloc

import (
	"fmt"
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
)

// An inode whose last link goes is pushed on its AG's unlinked list (one
// of 64 buckets, chained through di_next_unlinked) in the same
// transaction, and taken off when inactivation frees it, so that a crash
// in between leaves it for recovery to free.

// UnlinkedLock returns the mutex serialising AG ag's unlinked list: an
// inode goes on it when its last link goes and stays there until
// inactivation frees it, all under this mutex, so the list never holds
// more than the inode being freed. (Per-CPU background inactivation will
// replace this with the kernel's full list handling.)
func (in *Inodes) UnlinkedLock(ag format.AgNumber) *sync.Mutex {
	in.unlinkedMu.Lock()
	defer in.unlinkedMu.Unlock()
	m, ok := in.unlinked[ag]
	if !ok {
		m = &sync.Mutex{}
		in.unlinked[ag] = m
	}
	return m
}

// PushUnlinked puts ino at the head of its AGI bucket and returns the
// inode it must point at (its new di_next_unlinked).
func (t *Tx) PushUnlinked(ino format.Ino) (next format.AgIno, err error) {
	ag, agino := t.Geo().InoToAg(ino)
	a, err := t.Lock(ag)
	if err != nil {
		return 0, err
	}
	bucket := agino % format.AgiUnlinkedBuckets
	next = a.h.Unlinked[bucket]
	a.h.Unlinked[bucket] = agino
	a.log()
	return next, nil
}

// RemoveUnlinked takes ino, whose di_next_unlinked is next, off its
// bucket; it must be the head (see UnlinkedLock).
func (t *Tx) RemoveUnlinked(ino format.Ino, next format.AgIno) error {
	ag, agino := t.Geo().InoToAg(ino)
	a, err := t.Lock(ag)
	if err != nil {
		return err
	}
	bucket := agino % format.AgiUnlinkedBuckets
	if a.h.Unlinked[bucket] != agino {
		return format.Corrupt("AGI", fmt.Sprintf("AG %d", ag), "unlinked bucket %d starts at %d, not inode %d", bucket, a.h.Unlinked[bucket], ino)
	}
	a.h.Unlinked[bucket] = next
	a.log()
	return nil
}

// UnlinkedHead is the first inode on bucket of AG ag's committed AGI, or
// format.NullAgIno.
func (in *Inodes) UnlinkedHead(ag format.AgNumber, bucket int) (format.AgIno, error) {
	agi, err := Committed(in.read, in.geo, ag)
	if err != nil {
		return 0, err
	}
	return agi.Unlinked[bucket], nil
}
