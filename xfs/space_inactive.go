package xfs

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
)

// Inode lifetime. An inode is freed once it has neither a link nor a
// reference:
//
//	Unlink/Rename ── last link ──► on the AGI unlinked list (one transaction)
//	     │                               │
//	     │ Open handles remain?  yes ──► doomed: readable through its
//	     │                               handles; the last Close releases it
//	     ▼ no                            ▼
//	release ──► InactiveQueue.Queue (deferred: package gc's workers call
//	            InactivateBatch) or, with no queue, Inactivate at once
//
// Inactivate frees the forks in bounded transactions, then the inode and
// its place on the unlinked list; InactivateBatch does that for small
// inodes of one AG together, in one transaction (space_inactive_batch.go).
// A crash anywhere in between leaves the inode on its list, where the
// next writable open (ours or the kernel's log recovery) frees it.

// InactiveQueue takes inodes that have lost their last link and last
// reference, and calls Space.Inactivate for each later. Flush returns
// once every inode queued before it was called has been inactivated.
type InactiveQueue interface {
	Queue(ino uint64) error
	Flush()
}

// SetInactiveQueue hands released inodes to q instead of inactivating them
// inside the call that released them; nil restores that. Set it before
// the volume is shared.
func (v Space) SetInactiveQueue(q InactiveQueue) {
	if v.w != nil {
		v.w.inactive = q
	}
}

// flushInactive waits for the inodes already released to be freed, so
// that what they held shows as free (statfs, space errors).
func (v *mount) flushInactive() {
	if v.w != nil && v.w.inactive != nil {
		v.w.inactive.Flush()
	}
}

// lastLinkGone is called, with no lock held, once a committed change has
// put ino on its unlinked list: it is released now or, when handles are
// open on it, by the last Close.
func (v Space) lastLinkGone(ino format.Ino) error {
	h := v.icache.hold(ino)
	defer v.icache.release(h)
	return v.lastLinkGoneHeld(h, ino)
}

// lastLinkGoneHeld is lastLinkGone for a caller that holds ino's handle.
func (v Space) lastLinkGoneHeld(h *inodeHandle, ino format.Ino) error {
	h.shard.Mu.Lock()
	if h.opens > 0 {
		h.doomed = true
		h.shard.Mu.Unlock()
		return nil
	}
	h.shard.Mu.Unlock()
	return v.release(ino)
}

// release hands an inode with no link and no reference to the queue, or
// inactivates it now without one.
func (v Space) release(ino format.Ino) error {
	if q := v.w.inactive; q != nil {
		return q.Queue(uint64(ino))
	}
	_, err := v.Inactivate(ino)
	return err
}

// ErrReferenced: Inactivate of an inode that handles still refer to.
var ErrReferenced = errors.New("inode is still referenced")

// Inactivate frees an inode that has no link and no reference: its forks
// a bounded batch of extents per transaction (so a huge file never holds
// the log or an AG for long), then the inode and its place on the unlinked
// list. It does not wait for the changes to be durable. An inode that is
// not on an unlinked list (already freed) is left alone; one with open
// handles gives ErrReferenced. It returns the number of extents freed.
func (v Space) Inactivate(ino format.Ino) (extents uint64, err error) {
	if err := v.checkWritable(); err != nil {
		return 0, err
	}
	ag, agino := v.geo.InoToAg(ino)
	u := v.w.inodes.Unlinked(ag)
	for {
		n, more, err := v.truncateStep(u, ino, agino)
		extents += n
		if err == nil {
			v.pushBackground()
		}
		if err != nil || !more {
			return extents, err
		}
	}
}

// freeable reports whether ino is still to be freed: on its unlinked
// list, without handles. The caller holds the inode's lock.
func (v Space) freeable(u *ialloc.Unlinked, h *inodeHandle, ino format.Ino, agino format.AgIno) (bool, error) {
	u.Lock()
	defer u.Unlock()
	return v.freeableListed(u, h, ino, agino)
}

// freeableListed is freeable for a caller that holds u's lock too.
func (v Space) freeableListed(u *ialloc.Unlinked, h *inodeHandle, ino format.Ino, agino format.AgIno) (bool, error) {
	if _, listed := u.Prev(agino); !listed {
		return false, nil
	}
	h.shard.Mu.Lock()
	opens := h.opens
	h.shard.Mu.Unlock()
	if opens > 0 {
		return false, fmt.Errorf("inactivate inode %d: %w", ino, ErrReferenced)
	}
	return true, nil
}

// truncateStep frees up to maxFreePerTx extents of ino in one transaction,
// or, when none are left, frees the inode (more is then false). Each step
// takes the inode's lock anew, so the inodes beside it on its list can be
// relinked in between.
func (v Space) truncateStep(u *ialloc.Unlinked, ino format.Ino, agino format.AgIno) (freed uint64, more bool, err error) {
	h, unlock := v.lockInode(ino)
	defer unlock()
	if ok, err := v.freeable(u, h, ino, agino); !ok || err != nil {
		return 0, false, err
	}
	ip, err := v.igetHeld(h, ino)
	if err != nil {
		return 0, false, err
	}
	if ip.core.Nlink != 0 {
		return 0, false, format.Corrupt("inode", fmt.Sprintf("inode %d", ino), "on an unlinked list with %d links", ip.core.Nlink)
	}
	if freeAtOnce(ip) {
		// A small inode is truncated and freed in one transaction.
		freed, err := v.freeUnlinkedInode(u, h, ino, agino, true)
		return freed, false, err
	}
	err = v.runTx(v.bmbtReserve(), true, func(t *txn) error {
		var err error
		freed, more, err = v.inactiveTruncateTx(t, h, ino)
		return err
	})
	if err != nil || more {
		return freed, more, err
	}
	_, err = v.freeUnlinkedInode(u, h, ino, agino, false)
	return freed, false, err
}

// freeAtOnce reports whether ip's forks map few enough extents, all in
// extent lists (no bmbt blocks), to be freed in the transaction that
// frees the inode: most objects' last step then costs one transaction,
// not two.
func freeAtOnce(ip *inode) bool {
	c := &ip.core
	small := func(kind int8, extents uint64) bool {
		return kind != format.FmtBtree && !(kind == format.FmtExtents && extents > maxFreePerTx/2)
	}
	return small(c.Format, c.DataExtents()) && (c.ForkOff == 0 || small(c.AFormat, c.AttrExtents()))
}

// maxFreePerTx bounds the extents one inactivation transaction frees.
const maxFreePerTx = 256

// inactiveTruncateTx frees up to maxFreePerTx extents of ino's forks, from the
// end; more is false when the forks map nothing (and nothing changed).
func (v Space) inactiveTruncateTx(t *txn, h *inodeHandle, ino format.Ino) (freed uint64, more bool, err error) {
	// An inode without links is freed whatever its flags (modifyAny).
	c, err := t.modifyAny(h, ino)
	if err != nil {
		return 0, false, err
	}
	for _, f := range []Fork{DataFork, AttrFork} {
		if f == AttrFork && c.core.ForkOff == 0 {
			continue
		}
		if c.forkFormat(f) != format.FmtExtents && c.forkFormat(f) != format.FmtBtree {
			continue
		}
		ext, err := c.mapping(f)
		if err != nil {
			return 0, false, err
		}
		if len(ext) == 0 {
			continue
		}
		n := min(len(ext), maxFreePerTx)
		removed := ext[len(ext)-n:]
		var blocks uint64
		for _, e := range removed {
			blocks += e.BlockCount
			if holdsMetadata(c, f) {
				t.forgetExtent(e) // metadata blocks may be cached
			}
		}
		c.core.NBlocks -= blocks
		var u unmapped
		u.add(c, f, removed)
		if err := t.release(u); err != nil {
			return 0, false, err
		}
		if err := c.setMapping(f, ext[:len(ext)-n]); err != nil {
			return 0, false, err
		}
		return uint64(n), true, nil
	}
	return 0, false, nil
}

// holdsMetadata reports whether fork f of c maps metadata blocks that the
// cache may hold (attribute, directory and symlink blocks), not file data.
func holdsMetadata(c *inodeChange, f Fork) bool {
	return f == AttrFork || c.core.Mode&format.SIFMT != format.SIFREG
}

// forgetExtent drops any cached metadata buffer starting in e.
func (t *txn) forgetExtent(e format.Extent) {
	for i := uint64(0); i < e.BlockCount; i++ {
		t.Forget(t.v.geo.FsbToDaddr(e.StartBlock + format.FsBlock(i)))
	}
}

// freeUnlinkedInode takes ino, whose forks map nothing, off its unlinked
// list and frees it, in one transaction. The caller holds ino's lock.
// When another inode points at it on the list, that predecessor's lock is
// needed too: it is taken without holding the list's lock (whose holder
// may wait for the predecessor) and the predecessor checked again after.
// Predecessors are always newer on the list, so these waits end at the
// bucket head and never form a cycle.
func (v Space) freeUnlinkedInode(u *ialloc.Unlinked, h *inodeHandle, ino format.Ino, agino format.AgIno, truncate bool) (freed uint64, err error) {
	ag, _ := v.geo.InoToAg(ino)
	for {
		u.Lock()
		prev, listed := u.Prev(agino)
		if !listed {
			u.Unlock()
			return 0, nil
		}
		if prev == format.NullAgIno {
			freed, err := v.freeInodeTx(u, h, ino, nil, format.NullAgIno, truncate)
			u.Unlock()
			return freed, err
		}
		u.Unlock()
		prevIno := v.geo.AgInoToIno(ag, prev)
		ph, unlockPrev := v.lockInode(prevIno)
		u.Lock()
		again, listed := u.Prev(agino)
		if listed && again == prev {
			freed, err = v.freeInodeTx(u, h, ino, ph, prev, truncate)
		}
		u.Unlock()
		unlockPrev()
		if err != nil || !listed || again == prev {
			return freed, err
		}
	}
}

// freeInodeTx commits ino's removal from its list (through the AGI bucket,
// or through predecessor ph's di_next_unlinked) and its freeing. The
// caller holds u's lock, ino's lock and ph's lock.
func (v Space) freeInodeTx(u *ialloc.Unlinked, h *inodeHandle, ino format.Ino, ph *inodeHandle, prev format.AgIno, truncate bool) (freed uint64, err error) {
	ag, agino := v.geo.InoToAg(ino)
	err = v.runTx(v.bmbtReserve(), true, func(t *txn) error {
		freed = 0
		c, err := t.modifyAny(h, ino)
		if err != nil {
			return err
		}
		// The forks' extents, freed after the AGI's changes: AGI
		// before AGF.
		var free unmapped
		if truncate {
			if free, err = t.forkExtents(c); err != nil {
				return err
			}
		}
		next := c.core.NextUnlinked
		if ph != nil {
			pc, err := t.modifyAny(ph, v.geo.AgInoToIno(ag, prev))
			if err != nil {
				return err
			}
			if pc.core.NextUnlinked != agino {
				return format.Corrupt("inode", fmt.Sprintf("inode %d", pc.ino), "unlinked successor %d, not %d", pc.core.NextUnlinked, agino)
			}
			pc.core.NextUnlinked = next
		}
		if err := t.ialloc.RemoveUnlinked(ino, prev, next); err != nil {
			return err
		}
		if err := t.ialloc.Free(ino); err != nil {
			return err
		}
		if err := t.release(free); err != nil {
			return err
		}
		freed = uint64(free.extents())
		c.core = *ialloc.FreeInodeCore(&v.geo, ino)
		clear(c.raw[format.InodeCoreSize:])
		t.OnCommit(func() { u.Removed(agino, next) })
		return nil
	})
	return freed, err
}

// forkExtents returns the extents c's forks map (extent lists only), and
// drops the cached metadata blocks among them (directory, symlink and
// attribute blocks).
func (t *txn) forkExtents(c *inodeChange) (unmapped, error) {
	var all unmapped
	for _, f := range []Fork{DataFork, AttrFork} {
		if f == AttrFork && c.core.ForkOff == 0 || c.forkFormat(f) != format.FmtExtents {
			continue
		}
		ext, err := c.mapping(f)
		if err != nil {
			return unmapped{}, err
		}
		for _, e := range ext {
			if holdsMetadata(c, f) {
				t.forgetExtent(e)
			}
		}
		all.add(c, f, ext)
	}
	return all, nil
}

// iunlink puts an inode with no links on its AG's unlinked list; the
// caller holds the AG's Unlinked lock until the transaction commits.
func (t *txn) iunlink(c *inodeChange) error {
	next, err := t.ialloc.PushUnlinked(c.ino)
	if err != nil {
		return err
	}
	c.core.NextUnlinked = next
	ag, agino := t.v.geo.InoToAg(c.ino)
	u := t.v.w.inodes.Unlinked(ag)
	t.OnCommit(func() { u.Pushed(agino, next) })
	return nil
}

// loadUnlinked indexes every AG's unlinked lists at a writable open. A
// list that reaches an inode in use (linked) or not in use (free) is
// corrupt, and refused before anything on the lists is freed.
func (v Space) loadUnlinked() error {
	for ag := format.AgNumber(0); ag < format.AgNumber(v.geo.AgCount); ag++ {
		if v.agSick(ag) {
			// Its AGI failed verification at open: its lists wait for
			// xfs_repair. Damaged lists behind a sound AGI still stop
			// the open (docs/operations.md, Damaged unlinked lists).
			continue
		}
		err := v.w.inodes.Load(ag, func(agino format.AgIno) (format.AgIno, error) {
			ino := v.geo.AgInoToIno(ag, agino)
			ip, err := v.readInode(ino)
			if err != nil {
				return 0, err
			}
			if ip.core.Mode == 0 || ip.core.Nlink != 0 {
				return 0, format.Corrupt("inode", fmt.Sprintf("inode %d", ino), "on an unlinked list with mode %#o and %d links", ip.core.Mode, ip.core.Nlink)
			}
			return ip.core.NextUnlinked, nil
		})
		if err != nil {
			return fmt.Errorf("read the unlinked lists of AG %d: %w", ag, err)
		}
	}
	return nil
}

// freeAllUnlinked inactivates every inode on an unlinked list: at open
// (their last link went before a crash) and at Close (inodes a queue did
// not get to, or whose handles were never closed). It returns how many it
// freed.
func (v Space) freeAllUnlinked(force bool) (int, error) {
	n := 0
	for ag := format.AgNumber(0); ag < format.AgNumber(v.geo.AgCount); ag++ {
		for _, agino := range v.w.inodes.Unlinked(ag).Inodes() {
			ino := v.geo.AgInoToIno(ag, agino)
			if force {
				v.dropHandles(ino)
			}
			if _, err := v.Inactivate(ino); err != nil {
				if errors.Is(err, ErrSick) {
					// Damage marked the inode or its AG sick: the inode
					// stays on its list for xfs_repair.
					continue
				}
				return n, fmt.Errorf("free unlinked inode %d: %w", ino, err)
			}
			n++
		}
	}
	return n, nil
}

// dropHandles forgets the references on ino, at Close.
func (v Space) dropHandles(ino format.Ino) {
	h := v.icache.hold(ino)
	h.shard.Mu.Lock()
	h.opens, h.doomed = 0, false
	h.shard.Mu.Unlock()
	v.icache.release(h)
}

// unlinkedCount is the number of inodes on every AG's unlinked lists.
func (v Space) unlinkedCount() int {
	n := 0
	for ag := format.AgNumber(0); ag < format.AgNumber(v.geo.AgCount); ag++ {
		n += v.w.inodes.Unlinked(ag).Len()
	}
	return n
}

// Unlinked is the number of inodes that have lost their last link but are
// not freed yet: still referenced, or waiting for inactivation.
func (v Space) Unlinked() int {
	if v.w == nil {
		return 0
	}
	return v.unlinkedCount()
}

// Releasable lists AG ag's inodes that have lost their last link and
// have no handles, in inode order: what a sweeping collector frees.
func (v Space) Releasable(ag format.AgNumber) []format.Ino {
	if v.w == nil {
		return nil
	}
	var out []format.Ino
	for _, agino := range v.w.inodes.Unlinked(ag).Inodes() {
		ino := v.geo.AgInoToIno(ag, agino)
		if !v.icache.opened(ino) {
			out = append(out, ino)
		}
	}
	return out
}
