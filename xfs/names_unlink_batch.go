package xfs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
)

// maxUnlinkBatch bounds the names one shared unlink transaction removes:
// with the directory they make at most maxInactiveBatch changed inodes,
// the most a transaction's short list of them is meant for.
const maxUnlinkBatch = maxInactiveBatch - 1

// unlinkChunk is how many names UnlinkFiles handles under one hold of
// the directory's lock: a few shared transactions' worth.
const unlinkChunk = 8 * maxUnlinkBatch

// UnlinkFiles removes each of names from directory dir as UnlinkFile
// would (a name of a directory gives ErrIsDir, of any other kind of inode
// but a regular file ErrInvalid, of an immutable file ErrImmutable, and
// leaves the name); errs[i] is the outcome for names[i], and every
// removal is settled (durable, unless commits are lazy) when it returns.
//
// Names whose files share an AG leave the directory together, up to
// maxUnlinkBatch in one transaction: the directory's blocks, the inode
// blocks and the AGI are then copied and logged once for them all
// instead of once each, which is what makes a bulk delete (S3's
// DeleteObjects, a recursive remove) cheaper per name than single
// unlinks. A name repeated, an inode another change holds locked, and
// every name of a shared transaction that fails go through UnlinkFile's
// own path after, each reporting what stops it.
func (v Namespace) UnlinkFiles(dirIno format.Ino, names []string) (errs []error) {
	errs = make([]error, len(names))
	var err error
	defer func() {
		v.settle(&err)
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}()
	if err = v.checkWritable(); err != nil {
		return errs
	}
	done := make([]bool, len(names))
	// The directory's lock is held for a share of the names at a time, so
	// that its other changes wait for a few batches, never for the whole
	// call.
	for lo := 0; lo < len(names); lo += unlinkChunk {
		hi := min(lo+unlinkChunk, len(names))
		for _, m := range v.unlinkTogether(dirIno, names[lo:hi], errs[lo:hi], done[lo:hi]) {
			errs[lo+m.i] = v.space().lastLinkGoneHeld(m.h, m.ino)
			v.icache.release(m.h)
		}
	}
	for i, name := range names {
		if done[i] {
			continue
		}
		if name == "." || name == ".." {
			errs[i] = fmt.Errorf("remove %q: %w", name, ErrInvalid)
			continue
		}
		ino, gone, err := v.removeLocked(dirIno, name, removeFile)
		if err == nil && gone {
			err = v.space().lastLinkGone(ino)
		}
		errs[i] = err
	}
	return errs
}

// errNothingRemoved cancels a shared unlink none of whose names can go
// (not a regular file, or immutable); each then reports why through the
// one-by-one path.
var errNothingRemoved = errors.New("no name of the batch can be removed")

// unlinkMember is a name of a shared unlink and its inode, locked.
type unlinkMember struct {
	i   int // index in UnlinkFiles' names
	ino format.Ino
	h   *inodeHandle
}

// unlinkTogether removes, under the directory's lock, the names it can in
// shared transactions, one AG at a time, marks them done with their
// outcome in errs, and returns the names whose inodes lost their last
// link, to be released once every lock is dropped; their handles are
// still held, for the caller to release after. A name it cannot look
// up is done only when it is not there (ErrNotFound); any other trouble
// is left to the caller's one-by-one path, which reports it.
func (v Namespace) unlinkTogether(dirIno format.Ino, names []string, errs []error, done []bool) (gone []unlinkMember) {
	hd, unlockDir := v.lockInode(dirIno)
	defer unlockDir()
	byAG := map[format.AgNumber][]int{}
	var ags []format.AgNumber
	inos := make([]format.Ino, len(names))
	seenName := make(map[string]bool, len(names))
	seenIno := make(map[format.Ino]bool, len(names))
	for i, name := range names {
		if name == "." || name == ".." || seenName[name] {
			continue
		}
		seenName[name] = true
		ino, err := v.lookupLocked(dirIno, name)
		if errors.Is(err, ErrNotFound) {
			errs[i], done[i] = err, true
			continue
		}
		if err != nil || ino == dirIno || seenIno[ino] {
			continue // hard links to one inode, damage: one by one
		}
		seenIno[ino] = true
		inos[i] = ino
		ag, _ := v.geo.InoToAg(ino)
		if byAG[ag] == nil {
			ags = append(ags, ag)
		}
		byAG[ag] = append(byAG[ag], i)
	}
	for _, ag := range ags {
		idx := byAG[ag]
		for len(idx) > 0 {
			n := min(len(idx), maxUnlinkBatch)
			gone = append(gone, v.unlinkShared(hd, dirIno, ag, names, inos, idx[:n], errs, done)...)
			idx = idx[n:]
		}
	}
	return gone
}

// unlinkShared removes the names at idx, whose inodes are all in AG ag,
// in one transaction, taking each inode's lock only if it is free (so it
// never waits for one while holding others). A transaction that fails
// changes nothing and leaves its names undone. The handles of the inodes
// it returns (those that lost their last link) stay held.
func (v Namespace) unlinkShared(hd *inodeHandle, dirIno format.Ino, ag format.AgNumber, names []string, inos []format.Ino, idx []int, errs []error, done []bool) (gone []unlinkMember) {
	members := make([]unlinkMember, 0, len(idx))
	var lost []bool    // by member, once the transaction has committed
	committed := false // then the handles of lost members stay held
	defer func() {
		for k, m := range members {
			m.h.lock.Unlock()
			if !committed || !lost[k] {
				v.icache.release(m.h)
			}
		}
	}()
	for _, i := range idx {
		h := v.icache.hold(inos[i])
		if !h.lock.TryLock() {
			v.icache.release(h)
			continue
		}
		members = append(members, unlinkMember{i: i, ino: inos[i], h: h})
	}
	if len(members) < 2 {
		return nil // one name gains nothing from sharing
	}
	// Inode blocks are locked in address order at commit whatever the
	// order here; removing in inode order keeps neighbours together.
	slices.SortFunc(members, func(a, b unlinkMember) int { return cmp.Compare(a.ino, b.ino) })
	u := v.w.inodes.Unlinked(ag)
	u.Lock()
	defer u.Unlock()
	kindErrs := make([]error, len(members))
	lost = make([]bool, len(members))
	err := v.runTx(v.dirChangeReserve(), true, func(t *txn) error {
		clear(kindErrs)
		clear(lost)
		pc, err := t.modifyDir(hd, dirIno)
		if err != nil {
			return err
		}
		// Every link goes (and every inode that loses its last one onto
		// the AGI's unlinked list) before the directory changes, which
		// may free blocks: AGI before AGF.
		removed := 0
		for k, m := range members {
			c, err := t.modify(m.h, m.ino)
			if errors.Is(err, ErrImmutable) {
				kindErrs[k] = err // its name stays, as UnlinkFile leaves it
				continue
			}
			if err != nil {
				return err
			}
			if kindErrs[k] = removeFile.check(names[m.i], c.core.Mode); kindErrs[k] != nil {
				continue
			}
			if lost[k], err = t.dropLink(pc, c); err != nil {
				return err
			}
			removed++
		}
		if removed == 0 {
			return errNothingRemoved // the directory's times stay as they are
		}
		for k, m := range members {
			if kindErrs[k] == nil {
				if _, err := dir.Remove(dataFork{pc}, []byte(names[m.i])); err != nil {
					return err
				}
			}
		}
		pc.touch(true)
		return nil
	})
	if err != nil {
		return nil
	}
	committed = true
	for k, m := range members {
		errs[m.i], done[m.i] = kindErrs[k], true
		if lost[k] {
			gone = append(gone, m)
		}
	}
	return gone
}
