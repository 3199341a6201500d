package xfs

import (
	"fmt"
	"slices"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Finishing the intents a crashed kernel left in its log.
//
// The kernel splits a change into a chain of transactions tied by intent
// items: the first logs what is to be done (EFI, CUI, BUI), each later one
// does one intent's work and logs its done item (EFD, CUD, BUD) with it,
// in the same transaction. A work item that runs out of log reservation
// (a long refcount adjustment, an unmap of several extents) logs a new
// intent for what is left, again in the transaction that did the part it
// could (xfs_defer_finish_one, -EAGAIN). So the log never shows an intent
// half done: an intent without its done item did none of its work in the
// log that recovery replays, and finishing it whole is right. The kernel's
// recovery (xlog_recover_process_intents) finishes them in log order,
// whatever their types; so does finishIntents, in one transaction.
//
// What each does, as the kernel's recovery does it:
//   - EFI: free the extents. One that overlaps free space is skipped
//     (freeing it twice would corrupt the free-space trees).
//   - CUI INCREASE / DECREASE: one more / one fewer mapping of each block
//     (refcount.Tree.Adjust); blocks whose count reaches zero are freed
//     (the kernel queues an EFI for them).
//   - CUI ALLOC_COW / FREE_COW: add / remove the staging record. Staging
//     records are all freed after the intents (cleanCoWStaging), as the
//     kernel's mount does after its recovery.
//   - BUI MAP: map the extent into the owner's fork at startoff
//     (xfs_bmapi_remap: nblocks grows, the unwritten state is kept; the
//     range must be a hole). BUI UNMAP: unmap the file range
//     (__xfs_bunmapi with XFS_BMAPI_REMAP): nblocks drops but nothing is
//     freed and no count changes, even in a reflink file: the kernel logs
//     a CUI DECREASE (or an EFI) of its own for those blocks beside the
//     BUI. Neither changes the project quota: the transaction that logged
//     the BUI charged it already.
//
// Crash safety: the first record the engine's writer puts down moves the
// log tail past the replayed log, so work split over several
// transactions could be half lost to a crash (the intents gone with the
// old log, their work not all done). One transaction either lands whole,
// the intents then done, or not at all, and the log, still dirty, holds
// the intents for the next recovery, ours or the kernel's. That holds as
// long as this transaction is the first the open writes, which
// freeUnlinked ensures.
//
// Locks: the owners of the BUIs, in ascending inode order, before the
// transaction; then the AGFs of every extent named, in ascending AG
// order, before any work, so that the work can follow log order (which
// is in no AG order). Anything else, such as a bmbt block in a lower AG,
// is taken as any change takes it (alloc.LockOrderError and runTx).

// finishIntents finishes the unfinished intents of the replayed log.
func (v *mount) finishIntents() error {
	intents := v.recovery.unfree
	if len(intents) == 0 {
		return nil
	}
	var owners []format.Ino
	for _, in := range intents {
		if in.BUI != nil {
			for _, e := range in.BUI.Extents {
				owners = append(owners, e.Owner)
			}
		}
	}
	slices.Sort(owners)
	owners = slices.Compact(owners)
	handles := make(map[format.Ino]*inodeHandle, len(owners))
	for _, ino := range owners {
		if ino == v.sb.RbmIno || ino == v.sb.RsumIno || ino == v.sb.UQuotIno || ino == v.sb.GQuotIno || ino == v.sb.PQuotIno {
			return format.Corrupt("BUI log item", fmt.Sprintf("owner inode %d", ino), "a metadata inode of the superblock")
		}
		h, unlock := v.lockInode(ino)
		defer unlock()
		handles[ino] = h
	}
	var st intentStats
	err := v.runTx(0, true, func(t *txn) error {
		st = intentStats{}
		if err := t.lockIntentAGs(intents); err != nil {
			return err
		}
		for _, in := range intents {
			var err error
			switch {
			case in.EFI != nil:
				err = t.finishEFI(in.EFI, &st)
			case in.CUI != nil:
				err = t.finishCUI(in.CUI, &st)
			case in.BUI != nil:
				err = t.finishBUI(in.BUI, handles, &st)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish the log's unfinished intents: %w", err)
	}
	v.recovery.IntentsFinished += st.freed
	v.recovery.IntentsSkipped += st.skipped
	v.recovery.RefcountFinished += st.refcount
	v.recovery.BmapFinished += st.bmap
	v.recovery.unfree = nil
	return nil
}

// intentStats counts one attempt's work (runTx may run it again).
type intentStats struct{ freed, skipped, refcount, bmap int }

// lockIntentAGs locks the AGF of every AG an intent names, ascending.
func (t *txn) lockIntentAGs(intents []xlog.Intent) error {
	g := &t.v.geo
	var ags []format.AgNumber
	add := func(fsb format.FsBlock) {
		ag, _ := g.FsbToAg(fsb)
		ags = append(ags, ag)
	}
	for _, in := range intents {
		switch {
		case in.EFI != nil:
			for _, e := range in.EFI.Extents {
				add(e.Start)
			}
		case in.CUI != nil:
			for _, e := range in.CUI.Extents {
				add(e.Start)
			}
		case in.BUI != nil:
			for _, e := range in.BUI.Extents {
				add(e.Start)
			}
		}
	}
	slices.Sort(ags)
	for _, ag := range slices.Compact(ags) {
		if _, err := t.alloc.Lock(ag); err != nil {
			return err
		}
	}
	return nil
}

// finishEFI frees an extent-free intent's extents.
func (t *txn) finishEFI(f *format.EFILogFormat, st *intentStats) error {
	g := &t.v.geo
	for _, e := range f.Extents {
		ag, bno := g.FsbToAg(e.Start)
		a, err := t.alloc.Lock(ag)
		if err != nil {
			return err
		}
		free, err := a.OverlapsFree(bno, e.Len)
		if err != nil {
			return err
		}
		if free {
			st.skipped++
			continue
		}
		if err := t.alloc.FreeExtents([]format.Extent{{StartBlock: e.Start, BlockCount: uint64(e.Len)}}); err != nil {
			return fmt.Errorf("free extent %d+%d of an unfinished intent: %w", e.Start, e.Len, err)
		}
		st.freed++
	}
	return nil
}

// finishCUI applies a refcount intent's changes, in its order.
func (t *txn) finishCUI(f *format.CUILogFormat, st *intentStats) error {
	g := &t.v.geo
	for _, e := range f.Extents {
		ext := format.Extent{StartBlock: e.Start, BlockCount: uint64(e.Len)}
		ag, bno := g.FsbToAg(e.Start)
		var err error
		switch e.Type() {
		case format.RefcountIncrease:
			_, err = t.adjustShared([]format.Extent{ext}, +1)
		case format.RefcountDecrease:
			err = t.release(unmapped{shared: []format.Extent{ext}})
		case format.RefcountAllocCoW, format.RefcountFreeCoW:
			tr, terr := t.refcountTree(ag)
			if terr != nil {
				return terr
			}
			if e.Type() == format.RefcountAllocCoW {
				err = tr.AddCoWStaging(bno, e.Len)
			} else {
				err = tr.RemoveCoWStaging(bno, e.Len)
			}
		}
		if err != nil {
			return fmt.Errorf("CUI %#x, extent %d+%d type %d: %w", f.ID, e.Start, e.Len, e.Type(), err)
		}
		st.refcount++
	}
	return nil
}

// finishBUI maps or unmaps a bmap intent's extent in its owner's fork.
func (t *txn) finishBUI(f *format.BUILogFormat, handles map[format.Ino]*inodeHandle, st *intentStats) error {
	for _, e := range f.Extents {
		where := fmt.Sprintf("BUI %#x, inode %d", f.ID, e.Owner)
		// As the kernel's recovery: whatever the inode's flags
		// (immutable included), and also an unlinked inode.
		c, err := t.modifyAny(handles[e.Owner], e.Owner)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		fork := DataFork
		if e.AttrFork() {
			fork = AttrFork
			if c.core.ForkOff == 0 {
				return format.Corrupt("BUI log item", where, "attribute fork change of an inode without one")
			}
		}
		if ff := c.forkFormat(fork); ff != format.FmtExtents && ff != format.FmtBtree {
			return format.Corrupt("BUI log item", where, "fork in format %d maps no blocks", ff)
		}
		ext, err := c.mapping(fork)
		if err != nil {
			return err
		}
		before := c.core.NBlocks
		switch e.Type() {
		case format.BmapMap:
			if e.Unwritten() && fork == AttrFork {
				return format.Corrupt("BUI log item", where, "unwritten attribute fork extent")
			}
			end := e.StartOff + format.FileOff(e.Len)
			if i := lookupExtent(ext, e.StartOff); i < len(ext) && ext[i].StartOff < end && ext[i].End() > e.StartOff {
				return format.Corrupt("BUI log item", where, "file blocks %d+%d are not a hole", e.StartOff, e.Len)
			}
			// In records of at most MaxExtentLen blocks; the kernel
			// maps one record's worth per BUI anyway.
			for done := uint32(0); done < e.Len; {
				n := min(e.Len-done, format.MaxExtentLen)
				ext = t.v.extentsInsert(ext, format.Extent{StartOff: e.StartOff + format.FileOff(done),
					StartBlock: e.Start + format.FsBlock(done), BlockCount: uint64(n), Unwritten: e.Unwritten()})
				done += n
			}
			c.core.NBlocks += uint64(e.Len)
		case format.BmapUnmap:
			var removed []format.Extent
			ext, removed = extentsRemove(ext, e.StartOff, uint64(e.Len))
			for _, r := range removed {
				c.core.NBlocks -= r.BlockCount
			}
		}
		if err := c.setMapping(fork, ext); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		// Undo the charge the commit makes for the new block count
		// (chargeQuota): the kernel charged the project when it logged
		// the BUI, and its finishing charges nothing.
		if m := t.v.w.quota; m != nil && c.ino != t.v.sb.PQuotIno {
			m.Force(t.Tx, c.core.ProjID(), int64(before)-int64(c.core.NBlocks), 0)
		}
		st.bmap++
	}
	return nil
}
