package xfs

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
)

// maxInactiveBatch bounds the inodes one shared inactivation transaction
// frees: enough to share the AG's headers and btree blocks among many,
// few enough that the transaction stays small and waiters on the queue
// see progress often.
const maxInactiveBatch = 32

// InactivateBatch inactivates each of inos as Inactivate would; errs[i]
// is the outcome for inos[i]. Small inodes (those Inactivate frees in one
// transaction) of one AG, whose locks are free, leave their lists and are
// freed in one shared transaction per AG: the AGI, the inode
// btrees, the AGF and the free-space btrees are then copied and logged
// once for them all instead of once each. Every other inode, and an AG's
// if its shared transaction fails, goes through Inactivate after.
func (v Space) InactivateBatch(inos []format.Ino) (extents uint64, errs []error) {
	errs = make([]error, len(inos))
	if err := v.checkWritable(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return 0, errs
	}
	done := make([]bool, len(inos))
	if len(inos) > 1 {
		// One shared transaction per AG, newest inode's AG first. One
		// that fails changes nothing: its inodes go one by one, and
		// each reports what stops it.
		tried := map[format.AgNumber]bool{}
		for i := len(inos) - 1; i >= 0; i-- {
			ag, _ := v.geo.InoToAg(inos[i])
			if !tried[ag] {
				tried[ag] = true
				n, _ := v.freeTogether(ag, inos, done)
				extents += n
			}
		}
	}
	for i, ino := range inos {
		if !done[i] {
			n, err := v.Inactivate(ino)
			extents += n
			errs[i] = err
		}
	}
	return extents, errs
}

// batchMember is an inode of a shared inactivation, locked by it.
type batchMember struct {
	i      int // index in InactivateBatch's inos; -1 for a neighbour
	ino    format.Ino
	agino  format.AgIno
	h      *inodeHandle
	unlock func()
	next   format.AgIno // di_next_unlinked as committed
	// prev and after are its neighbours on its list at its turn in the
	// transaction, once earlier members have left the list.
	prev, after format.AgIno
}

// freeTogether frees, in one transaction, the inodes of inos in AG ag
// that qualify (see InactivateBatch) and marks them done; it marks done too the inodes
// already freed. With fewer than two to share a transaction it leaves
// them to Inactivate.
func (v Space) freeTogether(ag format.AgNumber, inos []format.Ino, done []bool) (extents uint64, err error) {
	// u's lock is taken once for the whole batch: taken for each
	// member, it would wait for each transaction of an unlink in this AG
	// that is under way meanwhile, not for one.
	u := v.w.inodes.Unlinked(ag)
	u.Lock()
	defer u.Unlock()
	members := v.lockMembers(u, ag, inos, done)
	defer func() {
		for _, m := range members {
			m.unlock()
		}
	}()
	plan := v.planRemovals(u, ag, &members)
	if len(plan) < 2 {
		return 0, nil
	}
	byAgino := make(map[format.AgIno]*batchMember, len(members))
	for _, m := range members {
		byAgino[m.agino] = m
	}
	err = v.runTx(2*v.bmbtReserve(), true, func(t *txn) error {
		extents = 0
		var free unmapped
		freed := make([]format.Ino, 0, len(plan))
		for _, m := range plan {
			c, err := t.modifyAny(m.h, m.ino)
			if err != nil {
				return err
			}
			if c.core.NextUnlinked != m.after {
				return format.Corrupt("inode", fmt.Sprintf("inode %d", m.ino), "unlinked successor %d, not %d", c.core.NextUnlinked, m.after)
			}
			ext, err := t.forkExtents(c)
			if err != nil {
				return err
			}
			free.plain = append(free.plain, ext.plain...)
			free.shared = append(free.shared, ext.shared...)
			if m.prev != format.NullAgIno {
				p := byAgino[m.prev]
				pc, err := t.modifyAny(p.h, p.ino)
				if err != nil {
					return err
				}
				if pc.core.NextUnlinked != m.agino {
					return format.Corrupt("inode", fmt.Sprintf("inode %d", p.ino), "unlinked successor %d, not %d", pc.core.NextUnlinked, m.agino)
				}
				pc.core.NextUnlinked = m.after
			}
			if err := t.ialloc.RemoveUnlinked(m.ino, m.prev, m.after); err != nil {
				return err
			}
			c.core = *ialloc.FreeInodeCore(&v.geo, m.ino)
			clear(c.raw[format.InodeCoreSize:])
			freed = append(freed, m.ino)
		}
		if err := t.ialloc.FreeInodes(freed); err != nil {
			return err
		}
		// The AGF's changes after every AGI change: AGI before AGF.
		if err := t.release(free); err != nil {
			return err
		}
		extents = uint64(free.extents())
		t.OnCommit(func() {
			for _, m := range plan {
				u.Removed(m.agino, m.after)
			}
		})
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, m := range plan {
		done[m.i] = true
	}
	v.pushBackground()
	return extents, nil
}

// lockMembers locks, newest first (from the end of inos), up to
// maxInactiveBatch inodes of AG ag that can share a transaction: on an
// unlinked list, without handles or links, small enough to free at once,
// with at most maxFreePerTx extents among them. It only tries each inode
// lock, so it never waits while holding one. Inodes no longer listed
// (already freed) are marked done. The caller holds u's lock.
func (v Space) lockMembers(u *ialloc.Unlinked, ag format.AgNumber, inos []format.Ino, done []bool) []*batchMember {
	var members []*batchMember
	var extents uint64
	for i := len(inos) - 1; i >= 0 && len(members) < maxInactiveBatch; i-- {
		ino := inos[i]
		a, agino := v.geo.InoToAg(ino)
		if a != ag {
			continue
		}
		h := v.icache.hold(ino)
		if !h.lock.TryLock() {
			v.icache.release(h)
			continue
		}
		unlock := func() {
			h.lock.Unlock()
			v.icache.release(h)
		}
		ok, err := v.freeableListed(u, h, ino, agino)
		if err == nil && !ok {
			done[i] = true
		}
		if !ok || err != nil {
			unlock()
			continue
		}
		ip, err := v.igetHeld(h, ino)
		if err != nil || ip.core.Nlink != 0 || !freeAtOnce(ip) {
			unlock() // Inactivate reports what is wrong with it
			continue
		}
		n := ip.core.DataExtents()
		if ip.core.ForkOff != 0 {
			n += ip.core.AttrExtents()
		}
		if extents+n > maxFreePerTx {
			unlock()
			continue
		}
		extents += n
		members = append(members, &batchMember{i: i, ino: ino, agino: agino, h: h, unlock: unlock, next: ip.core.NextUnlinked})
	}
	return members
}

// planRemovals orders the members' removals from their lists: in the
// members' order, each member whose predecessor is the AGI bucket,
// another member (still listed: members leave only through the plan), or
// an inode whose lock it gets at once (a neighbour, appended to members
// to be locked and changed but not freed) is taken off, its predecessor
// then pointing past it. A member behind an inode it cannot lock at once
// stays listed, for Inactivate, which waits for that lock. The caller
// holds u's lock: trying inode locks under it never waits.
func (v Space) planRemovals(u *ialloc.Unlinked, ag format.AgNumber, members *[]*batchMember) []*batchMember {
	listed := make(map[format.AgIno]*batchMember, len(*members))
	// The list as the plan changes it: predecessors of inodes whose
	// predecessor left, successors of inodes whose successor left.
	prevs := map[format.AgIno]format.AgIno{}
	nexts := map[format.AgIno]format.AgIno{}
	for _, m := range *members {
		listed[m.agino] = m
		nexts[m.agino] = m.next
	}
	var plan []*batchMember
	for _, m := range *members {
		p, moved := prevs[m.agino]
		if !moved {
			p, _ = u.Prev(m.agino)
		}
		if p != format.NullAgIno && listed[p] == nil {
			nb := v.lockNeighbour(ag, p)
			if nb == nil {
				continue
			}
			*members = append(*members, nb)
			listed[p], nexts[p] = nb, nb.next
		}
		n := nexts[m.agino]
		m.prev, m.after = p, n
		if p != format.NullAgIno {
			nexts[p] = n
		}
		if n != format.NullAgIno {
			prevs[n] = p
		}
		delete(listed, m.agino)
		plan = append(plan, m)
	}
	return plan
}

// lockNeighbour tries the lock of inode agino of AG ag, a predecessor on
// an unlinked list, and returns it as a neighbour (a member not freed),
// or nil if the lock is taken or the inode cannot be read.
func (v Space) lockNeighbour(ag format.AgNumber, agino format.AgIno) *batchMember {
	ino := v.geo.AgInoToIno(ag, agino)
	h := v.icache.hold(ino)
	if !h.lock.TryLock() {
		v.icache.release(h)
		return nil
	}
	unlock := func() {
		h.lock.Unlock()
		v.icache.release(h)
	}
	ip, err := v.igetHeld(h, ino)
	if err != nil {
		unlock()
		return nil
	}
	return &batchMember{i: -1, ino: ino, agino: agino, h: h, unlock: unlock, next: ip.core.NextUnlinked}
}
