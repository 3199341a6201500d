package xfs

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
)

// Rename moves srcName in srcDir to dstName in dstDir, replacing a
// non-directory target or an empty directory target, in one transaction.
func (v *Volume) Rename(srcDir format.Ino, srcName string, dstDir format.Ino, dstName string) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	replaced, err := v.renameLocked(srcDir, srcName, dstDir, dstName)
	if err != nil || replaced == 0 {
		return err
	}
	return v.lastLinkGone(replaced)
}

// renameLocked is Rename under its locks; replaced is the target's inode
// when it lost its last link.
func (v *Volume) renameLocked(srcDir format.Ino, srcName string, dstDir format.Ino, dstName string) (replaced format.Ino, err error) {
	for _, n := range []string{srcName, dstName} {
		if n == "." || n == ".." {
			return 0, fmt.Errorf("rename %q: %w", n, ErrInvalid)
		}
		if err := dir.CheckName([]byte(n)); err != nil {
			return 0, err
		}
	}
	if srcDir != dstDir {
		v.w.renameMu.Lock()
		defer v.w.renameMu.Unlock()
	}
	// Directory locks, lower inode number first.
	dirs := []format.Ino{srcDir}
	if dstDir != srcDir {
		dirs = append(dirs, dstDir)
		if dstDir < srcDir {
			dirs[0], dirs[1] = dstDir, srcDir
		}
	}
	handles := map[format.Ino]*inodeHandle{}
	for _, d := range dirs {
		h, unlock := v.lockInode(d)
		defer unlock()
		handles[d] = h
	}
	src, err := v.lookupLocked(srcDir, srcName)
	if err != nil {
		return 0, err
	}
	dst, err := v.lookupLocked(dstDir, dstName)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return 0, err
	}
	if err == nil && dst == src {
		return 0, nil // both names are links to the same inode: nothing to do
	}
	if err != nil {
		dst = 0
	}
	// The moved inode and the replaced one, lower number first.
	inos := []format.Ino{src}
	if dst != 0 {
		inos = append(inos, dst)
		if dst < src {
			inos[0], inos[1] = dst, src
		}
	}
	if dst == srcDir {
		// The target is the source's own directory, which is not empty.
		st, err := v.iget(src)
		if err != nil {
			return 0, err
		}
		if !st.isDir() {
			return 0, fmt.Errorf("%q: %w", dstName, ErrIsDir)
		}
		return 0, fmt.Errorf("%q: %w", dstName, ErrNotEmpty)
	}
	for _, ino := range inos {
		if _, ok := handles[ino]; ok {
			return 0, fmt.Errorf("rename of a directory into itself: %w", ErrInvalid)
		}
		h, unlock := v.lockInode(ino)
		defer unlock()
		handles[ino] = h
	}
	if srcDir != dstDir {
		if err := v.checkNotAncestor(src, dstDir); err != nil {
			return 0, err
		}
	}
	if dst != 0 {
		ag, _ := v.geo.InoToAg(dst)
		u := v.w.inodes.Unlinked(ag)
		u.Lock()
		defer u.Unlock()
	}
	var gone bool
	err = v.runTx(2*v.dirChangeReserve(), true, func(t *txn) error {
		var err error
		gone, err = v.renameTx(t, handles, srcDir, srcName, dstDir, dstName, src, dst)
		return err
	})
	if err != nil || !gone {
		return 0, err
	}
	return dst, nil
}

// checkNotAncestor refuses to move directory src below itself: it walks up
// from dst through ".." entries to the root.
func (v *Volume) checkNotAncestor(src, dst format.Ino) error {
	st, err := v.iget(src)
	if err != nil {
		return err
	}
	if !st.isDir() {
		return nil
	}
	for cur, hops := dst, 0; cur != v.Root(); hops++ {
		if cur == src {
			return fmt.Errorf("move a directory below itself: %w", ErrInvalid)
		}
		ip, err := v.iget(cur)
		if err != nil {
			return err
		}
		parent, _, err := dir.Lookup(readFork{v, ip}, []byte(".."))
		if err != nil {
			return err
		}
		if parent == cur || hops > 1<<16 {
			return format.Corrupt("directory", fmt.Sprintf("inode %d", cur), "\"..\" chain does not reach the root")
		}
		cur = parent
	}
	return nil
}

func (v *Volume) renameTx(t *txn, handles map[format.Ino]*inodeHandle, srcDir format.Ino, srcName string, dstDir format.Ino, dstName string, src, dst format.Ino) (bool, error) {
	sd, err := t.modifyDir(handles[srcDir], srcDir)
	if err != nil {
		return false, err
	}
	dd, err := t.modifyDir(handles[dstDir], dstDir)
	if err != nil {
		return false, err
	}
	sc, err := t.modify(handles[src], src)
	if err != nil {
		return false, err
	}
	srcIsDir := sc.core.Mode&format.SIFMT == format.SIFDIR
	ftype := format.FTypeOfMode(sc.core.Mode)
	gone := false
	if dst != 0 {
		dc, err := t.modify(handles[dst], dst)
		if err != nil {
			return false, err
		}
		dstIsDir := dc.core.Mode&format.SIFMT == format.SIFDIR
		switch {
		case srcIsDir && !dstIsDir:
			return false, fmt.Errorf("%q: %w", dstName, ErrNotDir)
		case !srcIsDir && dstIsDir:
			return false, fmt.Errorf("%q: %w", dstName, ErrIsDir)
		case dstIsDir:
			empty, err := dir.IsEmpty(dataFork{dc})
			if err != nil {
				return false, err
			}
			if !empty {
				return false, fmt.Errorf("%q: %w", dstName, ErrNotEmpty)
			}
		}
		// AGI (the unlinked list) before any AGF the directories take.
		if gone, err = t.dropLink(dd, dc); err != nil {
			return false, err
		}
		if _, err := dir.Replace(dataFork{dd}, []byte(dstName), src, ftype); err != nil {
			return false, err
		}
	} else {
		if err := dir.Add(dataFork{dd}, []byte(dstName), src, ftype); err != nil {
			return false, err
		}
	}
	if _, err := dir.Remove(dataFork{sd}, []byte(srcName)); err != nil {
		return false, err
	}
	if srcIsDir && srcDir != dstDir {
		if err := dir.SetParent(dataFork{sc}, dstDir); err != nil {
			return false, err
		}
		sd.core.Nlink--
		dd.core.Nlink++
	}
	sc.touch(false)
	sd.touch(true)
	if dd != sd {
		dd.touch(true)
	}
	return gone, nil
}
