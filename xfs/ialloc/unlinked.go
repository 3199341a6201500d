package ialloc

import (
	"fmt"
	"slices"
	"sync"

	"github.com/xfs3/xfs3/xfs/format"
)

// An inode whose last link goes is pushed on its AG's unlinked list in the
// same transaction, and taken off by the transaction that frees it, so a
// crash in between leaves it for recovery to free. Each AGI has 64 lists
// (buckets, agino % 64), chained through di_next_unlinked, newest first:
//
//	agi_unlinked[b] ──► newest ──► ... ──► oldest ──► NULLAGINO
//
// Many inodes may wait on one list (deferred inactivation), and they leave
// in any order. Taking one off the middle rewrites its predecessor's
// di_next_unlinked; finding the predecessor without walking the chain on
// disk is what the in-memory index below is for (the kernel keeps the
// same back pointer in each in-core inode).

// Unlinked is the in-memory index of one AG's unlinked lists. Its mutex
// serialises every change to those lists: a caller takes it, reads what
// it needs (Prev), runs the transaction that changes the list, and records
// the committed change (Pushed, Removed) before unlocking.
type Unlinked struct {
	mu sync.Mutex
	// prev maps each inode on a list to the inode whose di_next_unlinked
	// points at it, or NullAgIno when the AGI bucket itself does; guarded
	// by mu.
	prev map[format.AgIno]format.AgIno
}

// Unlinked returns the index of AG ag's unlinked lists.
func (in *Inodes) Unlinked(ag format.AgNumber) *Unlinked {
	in.unlinkedMu.Lock()
	defer in.unlinkedMu.Unlock()
	u, ok := in.unlinked[ag]
	if !ok {
		u = &Unlinked{prev: make(map[format.AgIno]format.AgIno)}
		in.unlinked[ag] = u
	}
	return u
}

// Lock and Unlock guard the AG's lists and this index.
func (u *Unlinked) Lock()   { u.mu.Lock() }
func (u *Unlinked) Unlock() { u.mu.Unlock() }

// Prev returns the inode pointing at agino (NullAgIno: the AGI bucket),
// and whether agino is on a list at all. The caller holds the lock.
func (u *Unlinked) Prev(agino format.AgIno) (format.AgIno, bool) {
	p, ok := u.prev[agino]
	return p, ok
}

// Len is the number of inodes on the AG's lists.
func (u *Unlinked) Len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.prev)
}

// Pushed records a committed PushUnlinked of agino, whose new
// di_next_unlinked is next. The caller holds the lock.
func (u *Unlinked) Pushed(agino, next format.AgIno) {
	u.prev[agino] = format.NullAgIno
	if next != format.NullAgIno {
		u.prev[next] = agino
	}
}

// Removed records a committed RemoveUnlinked of agino, whose
// di_next_unlinked was next. The caller holds the lock.
func (u *Unlinked) Removed(agino, next format.AgIno) {
	p := u.prev[agino]
	delete(u.prev, agino)
	if next != format.NullAgIno {
		u.prev[next] = p
	}
}

// Inodes lists the inodes on the AG's lists in inode order.
func (u *Unlinked) Inodes() []format.AgIno {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]format.AgIno, 0, len(u.prev))
	for agino := range u.prev {
		out = append(out, agino)
	}
	slices.Sort(out)
	return out
}

// Load builds the index of AG ag from its committed AGI, reading each
// listed inode's di_next_unlinked with next. It runs at open, before any
// change; a chain that loops or leaves its bucket is corruption.
func (in *Inodes) Load(ag format.AgNumber, next func(format.AgIno) (format.AgIno, error)) error {
	agi, err := in.committedAGI(ag)
	if err != nil {
		return err
	}
	u := in.Unlinked(ag)
	u.Lock()
	defer u.Unlock()
	for bucket, head := range agi.Unlinked {
		prev := format.NullAgIno
		for agino := head; agino != format.NullAgIno; {
			if _, seen := u.prev[agino]; seen || int(agino%format.AgiUnlinkedBuckets) != bucket || !in.geo.ValidIno(in.geo.AgInoToIno(ag, agino)) {
				return format.Corrupt("AGI", fmt.Sprintf("AG %d", ag), "unlinked bucket %d reaches inode %d twice or out of place", bucket, agino)
			}
			u.prev[agino] = prev
			n, err := next(agino)
			if err != nil {
				return err
			}
			prev, agino = agino, n
		}
	}
	return nil
}

// PushUnlinked puts ino at the head of its AGI bucket and returns the
// inode it must point at (its new di_next_unlinked). The caller holds the
// AG's Unlinked lock and records the change with Pushed once committed.
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
// bucket when the bucket points at it (prev is NullAgIno); otherwise the
// caller rewrites the predecessor prev's di_next_unlinked to next itself,
// in the same transaction. The caller holds the AG's Unlinked lock and
// records the change with Removed once committed.
func (t *Tx) RemoveUnlinked(ino format.Ino, prev, next format.AgIno) error {
	if prev != format.NullAgIno {
		return nil
	}
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
