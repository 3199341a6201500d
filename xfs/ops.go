package xfs

import (
	"errors"
	"fmt"
	"time"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Namespace operations. Lock order: see package xfs doc.

// Attrs are the owner and permissions of a new inode.
type Attrs struct {
	Mode     uint32 // permission bits (07777); the type comes from the call
	UID, GID uint32
}

// createReserve is the block reservation of a create: an inode chunk, a
// directory block or two, and splits of every tree they touch.
func (v *Volume) createReserve() int64 {
	return int64(ialloc.BlocksPerAlloc(&v.geo)) + 4*int64(v.geo.DirBlockFsbs()) + 4*format.MaxBtreeLevels
}

// dirChangeReserve covers adding or removing one name: a directory block
// or two and splits of the trees they touch.
func (v *Volume) dirChangeReserve() int64 {
	return 4*int64(v.geo.DirBlockFsbs()) + 4*format.MaxBtreeLevels
}

// Create makes a regular file name in directory dir.
func (v *Volume) Create(dirIno format.Ino, name string, a Attrs) (format.Ino, error) {
	return v.create(dirIno, name, format.SIFREG|uint16(a.Mode&0o7777), a, "")
}

// Mkdir makes a directory name in directory dir.
func (v *Volume) Mkdir(dirIno format.Ino, name string, a Attrs) (format.Ino, error) {
	return v.create(dirIno, name, format.SIFDIR|uint16(a.Mode&0o7777), a, "")
}

// Symlink makes a symbolic link name in directory dir pointing at target.
func (v *Volume) Symlink(dirIno format.Ino, name, target string, a Attrs) (format.Ino, error) {
	if len(target) == 0 || len(target) >= format.MaxSymlinkLen {
		return 0, fmt.Errorf("symlink target of %d bytes: %w", len(target), ErrNameTooLong)
	}
	return v.create(dirIno, name, format.SIFLNK|0o777, a, target)
}

func (v *Volume) create(dirIno format.Ino, name string, mode uint16, a Attrs, target string) (ino format.Ino, err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return 0, err
	}
	if err := dir.CheckName([]byte(name)); err != nil {
		return 0, err
	}
	hd, unlock := v.lockInode(dirIno)
	defer unlock()
	err = v.runTx(v.createReserve()+int64(len(target)>>v.geo.BlockLog)+1, false, func(t *txn) error {
		var err error
		ino, err = v.createTx(t, hd, dirIno, name, mode, a, target)
		return err
	})
	return ino, err
}

func (v *Volume) createTx(t *txn, hd *inodeHandle, dirIno format.Ino, name string, mode uint16, a Attrs, target string) (format.Ino, error) {
	pc, err := t.modifyDir(hd, dirIno)
	if err != nil {
		return 0, err
	}
	pf := dataFork{pc}
	if _, _, err := dir.Lookup(pf, []byte(name)); err == nil {
		return 0, fmt.Errorf("%q: %w", name, ErrExist)
	} else if !errors.Is(err, dir.ErrNotFound) {
		return 0, err
	}
	isDir := mode&format.SIFMT == format.SIFDIR
	free, err := t.allocInode(dirIno, isDir)
	if err != nil {
		return 0, err
	}
	h := v.icache.hold(free.ino)
	c := t.track(h, free) // publishes the new version before the release below
	t.OnCommit(func() { v.icache.release(h) })
	t.OnCancel(func() { v.icache.release(h) })
	nlink := uint32(1)
	if isDir {
		nlink = 2
	}
	v.initInodeCore(c.core, newInodeAttrs{Mode: mode, UID: a.UID, GID: a.GID, Nlink: nlink, Now: time.Now()}, pc.core)
	clear(c.forkBytes(DataFork))
	switch {
	case isDir:
		if err := dir.Init(dataFork{c}, dirIno); err != nil {
			return 0, err
		}
		pc.core.Nlink++
	case mode&format.SIFMT == format.SIFLNK:
		if err := c.writeSymlink(target); err != nil {
			return 0, err
		}
	}
	if err := dir.Add(pf, []byte(name), free.ino, format.FTypeOfMode(mode)); err != nil {
		return 0, err
	}
	pc.touch(true)
	return free.ino, nil
}

// modifyDir returns the transaction's copy of a live directory.
func (t *txn) modifyDir(h *inodeHandle, ino format.Ino) (*inodeChange, error) {
	c, err := t.modify(h, ino)
	if err != nil {
		return nil, err
	}
	if c.core.Mode&format.SIFMT != format.SIFDIR {
		return nil, fmt.Errorf("inode %d: %w", ino, ErrNotDir)
	}
	if c.core.Nlink == 0 {
		return nil, fmt.Errorf("directory inode %d was removed: %w", ino, ErrNotFound)
	}
	return c, nil
}

var symlinkOps = &trans.Ops{Name: "symlink block", Finish: func(b []byte) { format.SetCRC(b, format.RmtCRCOff) }}

// writeSymlink stores a new symlink's target inline when it fits, else in
// one extent of remote blocks with a single header, as the kernel writes it.
func (c *inodeChange) writeSymlink(target string) error {
	f := dataFork{c}
	if len(target) <= f.InlineSpace() {
		return f.SetInline([]byte(target))
	}
	if err := f.ToBlocks(); err != nil {
		return err
	}
	space := format.RmtSpace(c.t.v.geo.BlockSize)
	blocks := (len(target) + space - 1) / space
	b, daddr, err := f.Alloc(0, blocks, symlinkOps)
	if err != nil {
		return err
	}
	h := format.RmtHdr{Magic: format.SymlinkMagic, Bytes: uint32(len(target)), UUID: c.t.v.geo.UUID, Owner: c.ino, Blkno: daddr}
	h.Encode(b)
	copy(b[format.RmtHdrSize:], target)
	c.core.Size = int64(len(target))
	return nil
}

// Link adds name in directory dir for the existing non-directory ino.
func (v *Volume) Link(ino, dirIno format.Ino, name string) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if err := dir.CheckName([]byte(name)); err != nil {
		return err
	}
	if ino == dirIno {
		return fmt.Errorf("link a directory into itself: %w", ErrInvalid)
	}
	hd, unlockDir := v.lockInode(dirIno)
	defer unlockDir()
	h, unlock := v.lockInode(ino)
	defer unlock()
	return v.runTx(v.dirChangeReserve(), false, func(t *txn) error {
		pc, err := t.modifyDir(hd, dirIno)
		if err != nil {
			return err
		}
		c, err := t.modify(h, ino)
		if err != nil {
			return err
		}
		if c.core.Mode&format.SIFMT == format.SIFDIR {
			return fmt.Errorf("hard link to a directory: %w", ErrIsDir)
		}
		if c.core.Nlink == 0 {
			return fmt.Errorf("inode %d was removed: %w", ino, ErrNotFound)
		}
		if err := dir.Add(dataFork{pc}, []byte(name), ino, format.FTypeOfMode(c.core.Mode)); err != nil {
			return err
		}
		c.core.Nlink++
		c.touch(false)
		pc.touch(true)
		return nil
	})
}

// Unlink removes name, which must not be a directory, from directory dir.
func (v *Volume) Unlink(dirIno format.Ino, name string) error { return v.remove(dirIno, name, false) }

// Rmdir removes the empty directory name from directory dir.
func (v *Volume) Rmdir(dirIno format.Ino, name string) error { return v.remove(dirIno, name, true) }

func (v *Volume) remove(dirIno format.Ino, name string, isDir bool) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if name == "." || name == ".." {
		return fmt.Errorf("remove %q: %w", name, ErrInvalid)
	}
	ino, gone, err := v.removeLocked(dirIno, name, isDir)
	if err != nil || !gone {
		return err
	}
	return v.lastLinkGone(ino)
}

// removeLocked removes the entry under the directory's and the inode's
// locks; gone reports that the inode lost its last link.
func (v *Volume) removeLocked(dirIno format.Ino, name string, isDir bool) (ino format.Ino, gone bool, err error) {
	hd, unlockDir := v.lockInode(dirIno)
	defer unlockDir()
	ino, err = v.lookupLocked(dirIno, name)
	if err != nil {
		return 0, false, err
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	ag, _ := v.geo.InoToAg(ino)
	u := v.w.inodes.Unlinked(ag)
	u.Lock()
	defer u.Unlock()
	err = v.runTx(v.dirChangeReserve(), true, func(t *txn) error {
		var err error
		gone, err = v.removeTx(t, hd, dirIno, name, h, ino, isDir)
		return err
	})
	return ino, gone, err
}

// lookupLocked is Lookup for a caller holding the directory's lock.
func (v *Volume) lookupLocked(dirIno format.Ino, name string) (format.Ino, error) {
	ip, err := v.getDir(dirIno)
	if err != nil {
		return 0, err
	}
	ino, _, err := dir.Lookup(readFork{v, ip}, []byte(name))
	if err != nil {
		return 0, fmt.Errorf("%q: %w", name, err)
	}
	return ino, nil
}

// removeTx drops the entry and a link; gone reports that the inode lost
// its last link and went on the unlinked list.
func (v *Volume) removeTx(t *txn, hd *inodeHandle, dirIno format.Ino, name string, h *inodeHandle, ino format.Ino, isDir bool) (bool, error) {
	pc, err := t.modifyDir(hd, dirIno)
	if err != nil {
		return false, err
	}
	c, err := t.modify(h, ino)
	if err != nil {
		return false, err
	}
	childIsDir := c.core.Mode&format.SIFMT == format.SIFDIR
	switch {
	case isDir && !childIsDir:
		return false, fmt.Errorf("%q: %w", name, ErrNotDir)
	case !isDir && childIsDir:
		return false, fmt.Errorf("%q: %w", name, ErrIsDir)
	}
	if childIsDir {
		empty, err := dir.IsEmpty(dataFork{c})
		if err != nil {
			return false, err
		}
		if !empty {
			return false, fmt.Errorf("%q: %w", name, ErrNotEmpty)
		}
	}
	// The link goes (and the inode onto the AGI unlinked list) before
	// the directory changes, which may free blocks: AGI before AGF.
	gone, err := t.dropLink(pc, c)
	if err != nil {
		return false, err
	}
	if _, err := dir.Remove(dataFork{pc}, []byte(name)); err != nil {
		return false, err
	}
	pc.touch(true)
	return gone, nil
}

// dropLink takes one name away from c (a directory loses all of its links,
// and its parent pc the one its ".." held); at zero links the inode goes on
// its AG's unlinked list and the caller releases it (lastLinkGone) once
// its locks are dropped.
func (t *txn) dropLink(pc, c *inodeChange) (bool, error) {
	if c.core.Mode&format.SIFMT == format.SIFDIR {
		c.core.Nlink = 0
		if pc != nil {
			pc.core.Nlink--
		}
	} else {
		c.core.Nlink--
	}
	c.touch(false)
	if c.core.Nlink > 0 {
		return false, nil
	}
	return true, t.iunlink(c)
}
