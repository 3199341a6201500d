package xfs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/xfs3/xfs3/xfs/alloc"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/refcount"
	"github.com/xfs3/xfs3/xfs/trans"
)

// txn is an engine transaction: the buffer transaction plus the inodes it
// changes and the block reservation it holds.
type txn struct {
	*trans.Tx
	v      *mount
	inodes inodeChanges
	alloc  *alloc.Tx  // the AGFs this transaction holds (&allocTx)
	ialloc *ialloc.Tx // the AGIs this transaction holds (&ialTx)
	// The allocators' views live in the txn: one allocation for all.
	allocTx alloc.Tx
	ialTx   ialloc.Tx
	// res is the number of blocks reserved from the free count; used is
	// how many of them allocations have consumed. The rest goes back at
	// the end.
	res, used int64
	// freeing transactions may grow their reservation on the way.
	freeing bool
	// unchecked: the projects' quota limits are not checked, as for a
	// freeing transaction (Namespace.ApplyUnchecked).
	unchecked bool
	// refcounts are the refcount btrees the transaction opened, by AG
	// (refcountTree).
	refcounts map[format.AgNumber]*refcount.Tree
}

// begin starts a transaction that may allocate up to blocks blocks.
func (v *mount) begin(blocks int64) (*txn, error) { return v.beginWith(blocks, false) }

// beginFreeing starts a transaction that gives space back (remove,
// truncate, inactivation). On a full volume it may dip into the blocks
// kept aside for such changes, so that deleting always works — the
// kernel's reserve pool.
func (v *mount) beginFreeing(blocks int64) (*txn, error) { return v.beginWith(blocks, true) }

func (v *mount) beginWith(blocks int64, freeing bool) (*txn, error) {
	if err := v.checkWritable(); err != nil {
		return nil, err
	}
	if blocks > 0 {
		if err := v.reserveBlocksFloor(blocks, freeing); err != nil {
			if !freeing {
				return nil, err
			}
			// Like the kernel's remove with no reservation: go ahead
			// and take blocks one by one if a change turns out to need
			// any (UseBlocks).
			blocks = 0
		}
	}
	tx, err := v.cache.Begin()
	if err != nil {
		v.unreserveBlocks(blocks)
		return nil, err
	}
	t := &txn{Tx: tx, v: v, res: blocks, freeing: freeing}
	t.inodes.list = t.inodes.space[:0]
	t.alloc, t.ialloc = &t.allocTx, &t.ialTx
	v.w.space.BeginIn(t.alloc, tx, t)
	v.w.inodes.BeginIn(t.ialloc, t.alloc)
	tx.SetOwner(t) // first: later hooks act on the new inode versions
	return t, nil
}

// Prepare copies the changed inodes into their blocks (trans.Owner).
func (t *txn) Prepare() error { return t.flushInodes() }

// Committed publishes the new inode versions (trans.Owner).
func (t *txn) Committed() { t.committed() }

// Cancelled gives the reservation back (trans.Owner).
func (t *txn) Cancelled() { t.v.unreserveBlocks(t.res) }

// errReservation means a transaction reserved too few blocks for what it
// did: a bug in the reservation arithmetic, never a full volume.
var errReservation = errors.New("xfs: internal error: transaction block reservation exceeded")

// UseBlocks accounts n allocated blocks against the reservation.
func (t *txn) UseBlocks(n int64) error {
	if t.used+n > t.res && t.freeing {
		if err := t.v.reserveBlocksFloor(t.used+n-t.res, true); err != nil {
			return err
		}
		t.res = t.used + n
	}
	if t.used+n > t.res {
		return fmt.Errorf("%w (reserved %d, need %d)", errReservation, t.res, t.used+n)
	}
	t.used += n
	return nil
}

// committed publishes the transaction's inode versions and returns the
// blocks it reserved but did not use.
func (t *txn) committed() {
	for _, c := range t.inodes.list {
		c.h.cur.Store(c.committed())
	}
	t.v.unreserveBlocks(t.res - t.used)
}

// FreeBlocks returns n freed blocks to the free count when t commits.
func (t *txn) FreeBlocks(n int64) { t.OnCommit(func() { t.v.unreserveBlocks(n) }) }

// inodeChange is a transaction's private copy of an inode it changes. The
// caller holds the inode's lock exclusively for the transaction's life.
type inodeChange struct {
	t    *txn
	h    *inodeHandle
	ino  format.Ino
	base *inode        // the committed version the change started from
	core format.Dinode // edited freely; encoded into raw at commit
	raw  []byte        // the whole inode; forks are edited here

	// The transaction's extent lists, once loaded or changed; handed to
	// the committed version so it need not walk its bmbt again.
	ext       [2][]format.Extent
	extLoaded [2]bool
}

// inodeChanges are the inodes a transaction changes: one to three for
// most, maxInactiveBatch at most, so a scan finds them faster than a map.
type inodeChanges struct {
	list  []*inodeChange
	space [4]*inodeChange // list's first backing array
}

func (s *inodeChanges) get(ino format.Ino) *inodeChange {
	for _, c := range s.list {
		if c.ino == ino {
			return c
		}
	}
	return nil
}

func (s *inodeChanges) add(c *inodeChange) { s.list = append(s.list, c) }

// modify returns the transaction's copy of the in-use inode ino, and
// refuses an immutable one (ErrImmutable): as in the kernel (the checks
// of inode_permission, may_delete and vfs_link), no change may touch such
// an inode, its data, attributes, links or, for a directory, its names.
// It is the one place the flag is enforced; the changes it does not stop
// use modifyAny.
func (t *txn) modify(h *inodeHandle, ino format.Ino) (*inodeChange, error) {
	return t.modifyChecked(h, ino, true)
}

// modifyAny is modify whatever the immutable flag, for the changes the
// kernel makes to immutable inodes too: freeing an inode without links
// (inactivation, its unlinked-list neighbours), the flag's own change
// (Files.SetImmutable, NameOp.Immutable), a project ID change
// (FS_IOC_FSSETXATTR checks only the capability) and the quota file.
func (t *txn) modifyAny(h *inodeHandle, ino format.Ino) (*inodeChange, error) {
	return t.modifyChecked(h, ino, false)
}

// modifyChecked refuses an immutable inode, when asked, before it joins
// the transaction: a change that goes on without it (a shared unlink)
// does not log it.
func (t *txn) modifyChecked(h *inodeHandle, ino format.Ino, refuseImmutable bool) (*inodeChange, error) {
	if err := t.v.refuseSick(ino); err != nil {
		return nil, err
	}
	c := t.inodes.get(ino)
	var cur *inode
	var flags uint16
	if c != nil {
		flags = c.core.Flags
	} else {
		var err error
		if cur, err = t.v.igetHeld(h, ino); err != nil {
			return nil, err
		}
		flags = cur.core.Flags
	}
	if refuseImmutable && flags&format.DiflagImmutable != 0 {
		return nil, fmt.Errorf("inode %d: %w", ino, ErrImmutable)
	}
	if c == nil {
		c = t.track(h, cur)
	}
	return c, nil
}

// modifyFile is modify for an inode that must be a regular file (a
// change of its data: truncate, punch, preallocate).
func (t *txn) modifyFile(h *inodeHandle, ino format.Ino) (*inodeChange, error) {
	c, err := t.modify(h, ino)
	if err != nil {
		return nil, err
	}
	if c.core.Mode&format.SIFMT != format.SIFREG {
		return nil, fmt.Errorf("inode %d is not a regular file: %w", ino, ErrInvalid)
	}
	return c, nil
}

// track starts a change from a known version (also a free inode being
// allocated, which iget would refuse).
func (t *txn) track(h *inodeHandle, cur *inode) *inodeChange {
	c := &inodeChange{t: t, h: h, ino: cur.ino, base: cur, core: cur.core, raw: append([]byte(nil), cur.raw...)}
	t.inodes.add(c)
	return c
}

// flushInodes copies every changed inode into its block, in block order
// so that concurrent commits lock inode blocks in the same order.
func (t *txn) flushInodes() error {
	changes := t.inodes.list
	slices.SortFunc(changes, func(a, b *inodeChange) int { return cmp.Compare(a.ino, b.ino) })
	for _, c := range changes {
		if err := c.flush(); err != nil {
			return err
		}
	}
	return nil
}

// flush copies the inode into its block inside the transaction.
func (c *inodeChange) flush() error {
	c.chargeQuota()
	g := &c.t.v.geo
	c.core.Encode(c.raw)
	format.SetCRC(c.raw, format.InodeCRCOff)
	ag, agino := g.InoToAg(c.ino)
	bno, slot := g.AgInoToAgBlock(agino)
	daddr := g.AgbToDaddr(ag, bno)
	b, err := c.t.Read(daddr, g.BlockSize, ialloc.BufOps)
	if err != nil {
		return err
	}
	copy(b[slot*g.InodeSize:], c.raw)
	c.t.Dirty(daddr)
	return nil
}

// committed builds the version published when the transaction commits.
func (c *inodeChange) committed() *inode {
	ip := &inode{ino: c.ino, core: c.core, raw: c.raw}
	for f := range c.ext {
		if c.extLoaded[f] {
			ext := c.ext[f]
			ip.maps[f].once.Do(func() { ip.maps[f].ext = ext })
		}
	}
	return ip
}

// forks returns the data and attribute fork bytes of the private copy.
func (c *inodeChange) forks() (data, attr []byte) { return c.core.Forks(c.raw) }

// runTx runs fn in a transaction reserving blocks (freeing: see
// beginFreeing), committing when fn succeeds and cancelling otherwise; it
// runs it once more after a sync when only busy free space was found, and
// once more after freeing released inodes when the volume was full.
func (v *mount) runTx(blocks int64, freeing bool, fn func(t *txn) error) error {
	var prelock []format.AgNumber
	once := func() error {
		t, err := v.beginWith(blocks, freeing)
		if err != nil {
			return err
		}
		t.alloc.Prelock(prelock)
		if err := fn(t); err != nil {
			t.Cancel()
			// Damage found on the way marks what it belongs to.
			return v.markSick(err, 0)
		}
		return t.Commit()
	}
	// A change that needs an AGF below one it holds, held by another
	// change, starts again taking it in order (alloc.LockOrderError).
	inOrder := func() error {
		for {
			err := once()
			var order *alloc.LockOrderError
			if !errors.As(err, &order) || slices.Contains(prelock, order.AG) {
				return err
			}
			prelock = append(prelock, order.AG)
			v.w.lockOrderRetries.Add(1)
		}
	}
	run := func() error { return v.retryBusy(inOrder) }
	err := run()
	for tries := 0; agFoundSick(err) && tries < int(v.geo.AgCount); tries++ {
		// The change met damage in an AG it did not need to use (an
		// allocation tried it first); that AG is sick now and out of
		// the allocators' way, so the change may go elsewhere. Each
		// try marks one more AG, so there are at most as many as AGs.
		err = run()
	}
	// Deleted files may still hold the space (or the project quota) the
	// change needs. Waiting
	// for their inactivation is safe here: a change that allocates holds
	// no lock of an unlinked inode or of an AG's unlinked list, which is
	// all inactivation takes (freeing changes, which may, never wait).
	if isQuotaOrSpace(err) && !freeing && v.w.inactive != nil {
		v.w.inactive.Flush()
		err = run()
	}
	return err
}

// retryBusy runs fn, and once more after making busy extents reusable
// when fn found only busy free space.
func (v *mount) retryBusy(fn func() error) error {
	err := fn()
	if errors.Is(err, alloc.ErrBusyOnly) {
		if serr := v.cache.Sync(); serr != nil {
			return serr
		}
		err = fn()
	}
	if b := v.cache.Busy(); errors.Is(err, alloc.ErrBusyOnly) && b.Discarding() > 0 {
		// What is left is being discarded by trim: wait for that.
		b.WaitDiscards()
		err = fn()
	}
	if errors.Is(err, alloc.ErrBusyOnly) {
		return fmt.Errorf("%w: only recently freed space is left", ErrNoSpace)
	}
	return err
}
