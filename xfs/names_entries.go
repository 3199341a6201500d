package xfs

import (
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// Reading the inodes a directory names without looking each name up
// again. A listing reads a directory once (ReadDirVersion), orders the
// names its own way, and later wants the inodes behind some of them:
// ReadEntryInodes reads those by the numbers the entries gave, under the
// directory's lock shared, after checking that the directory is still at
// the version it was read at. Every change to a directory's entries adds
// to its change count under its lock held exclusively, so a directory
// found at that version still holds exactly the entries read: each
// number is linked by its name for as long as the lock is held, and so
// is neither on an unlinked list nor queued for inactivation, let alone
// freed and used again. A directory that moved on gives current false and
// nothing is read; the caller looks the names up instead.

// ReadDirVersion is ReadDir plus the version of the directory that the
// entries are of, both read under one hold of its lock.
func (v Namespace) ReadDirVersion(ino format.Ino) ([]DirEntry, Version, error) {
	defer v.rlock(ino)()
	ip, err := v.getDir(ino)
	if err != nil {
		return nil, Version{}, err
	}
	out, err := v.readDirLocked(ip)
	return out, versionOf(&ip.core), err
}

// EntryInode is an inode reached through a directory entry by
// ReadEntryInodes. It is valid only inside the callback it is given to.
// One serves every inode of a call, so reading them allocates nothing per
// inode.
type EntryInode struct {
	v     *mount
	ip    *inode
	attrs attrReadFork // of ip; given to package attr by pointer, unboxed
	x     xattrVisitor
	visit func(ns uint8, name, value []byte) error // x.visit
}

// Ino is the inode's number.
func (e *EntryInode) Ino() format.Ino { return e.ip.ino }

// Stat describes the inode.
func (e *EntryInode) Stat() Stat { return e.v.statOf(e.ip) }

// Xattrs calls fn for each of the inode's attributes, as Xattrs.List lists
// them, with the namespace ("user", "trusted" or "security") apart from
// the name; name and value are valid only during the call. An error from
// fn stops the walk and is returned.
func (e *EntryInode) Xattrs(fn func(ns string, name, value []byte) error) error {
	e.x.fn = fn
	return listXattrs(&e.attrs, e.visit)
}

// ReadEntryInodes calls fn(i, e) for each inos[i] in order, where inos
// are inode numbers that directory dir's entries held at version at (from
// ReadDirVersion, or a Stat of dir at the same version). It holds dir's
// lock shared for the whole call and each inode's lock shared during its
// fn, so what fn reads is one committed version of an inode that dir
// names at that moment; keep batches small, since changes to dir wait
// for the call. When dir is no longer at version at it reads nothing and
// returns current false. An inode without links (which dir at version at
// cannot name) is skipped. fn must not call the Volume: it runs under
// inode locks.
func (v Namespace) ReadEntryInodes(dir format.Ino, at Version, inos []format.Ino, fn func(i int, e *EntryInode) error) (current bool, err error) {
	// Directory before the inodes it names (lock order).
	defer v.rlock(dir)()
	dp, err := v.getDir(dir)
	if err != nil {
		return false, err
	}
	if versionOf(&dp.core) != at {
		return false, nil
	}
	e := &EntryInode{v: v.mount}
	e.visit = e.x.visit
	for i, ino := range inos {
		if !v.geo.ValidIno(ino) || ino == dir {
			return true, format.Corrupt("directory entry", fmt.Sprintf("inode %d", dir), "points at inode %d", ino)
		}
		if err := v.readEntryInode(i, ino, e, fn); err != nil {
			return true, err
		}
	}
	return true, nil
}

// readEntryInode reads inos[i] = ino under its lock shared and hands it to
// fn unless it has no link. The caller holds the lock of a directory that
// names ino.
func (v Namespace) readEntryInode(i int, ino format.Ino, e *EntryInode, fn func(i int, e *EntryInode) error) error {
	h := v.icache.hold(ino)
	defer v.icache.release(h)
	h.lock.RLock()
	defer h.lock.RUnlock()
	ip, err := v.igetHeld(h, ino)
	if err != nil {
		return err
	}
	if ip.core.Nlink == 0 || ip.core.Mode == 0 {
		return nil
	}
	e.ip, e.attrs = ip, attrReadFork{readFork{v: v.mount, ip: ip}}
	return fn(i, e)
}
