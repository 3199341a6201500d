package xfs

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/trans"
)

// Namespace is the volume's tree of names: looking names up, creating
// files, directories and symlinks, linking, renaming and removing names,
// and reading directories. Each change is one transaction that changes
// the directories and the link counts together, so after a crash a name
// is either as before the change or as after it.
//
// Inodes are named by number and a name is one path component (no "/"
// or NUL, at most 255 bytes). A change takes the locks of the
// directories it changes and of the inodes they name, in the lock order
// of the package doc, before its transaction starts. An inode that loses
// its last link goes on its AG's unlinked list in the same transaction
// and is handed to Space once the change commits; from then on no
// reader finds its name, while handles opened before (Files.Open) keep
// reading it.
//
// Directories are read and changed through package dir, the one decoder
// of every directory format, so Lookup and Create never disagree on
// whether a name exists. A Namespace comes from Volume.Names and is safe
// for many goroutines.
type Namespace struct{ *mount }

// Names returns the volume's namespace.
func (v *Volume) Names() Namespace { return Namespace{v.mount} }

func (m *mount) names() Namespace { return Namespace{m} }

// Directory reads, through package dir: the same decoder the write path
// uses, so Lookup and Create never disagree on whether a name exists.

// DirEntry is one name in a directory.
type DirEntry struct {
	Name string
	Ino  format.Ino
	// Type is the entry's file type (format.FT*), from the ftype byte.
	Type uint8
}

func (v Namespace) getDir(ino format.Ino) (*inode, error) {
	ip, err := v.iget(ino)
	if err != nil {
		return nil, err
	}
	if !ip.isDir() {
		return nil, fmt.Errorf("inode %d: %w", ino, ErrNotDir)
	}
	return ip, nil
}

// ReadDir lists a directory in on-disk order, without "." and "..".
func (v Namespace) ReadDir(ino format.Ino) ([]DirEntry, error) {
	defer v.rlock(ino)()
	ip, err := v.getDir(ino)
	if err != nil {
		return nil, err
	}
	return v.readDirLocked(ip)
}

// readDirLocked lists a committed directory version; the caller holds the
// directory's lock.
func (v Namespace) readDirLocked(ip *inode) ([]DirEntry, error) {
	var out []DirEntry
	err := dir.List(readFork{v: v.mount, ip: ip}, func(name []byte, e format.Ino, ftype uint8) error {
		if !v.geo.ValidIno(e) {
			return format.Corrupt("directory entry", "", "%q points at invalid inode %d", name, e)
		}
		out = append(out, DirEntry{Name: string(name), Ino: e, Type: ftype})
		return nil
	})
	return out, format.Located(err, fmt.Sprintf("inode %d", ip.ino))
}

// IsEmptyDir reports whether directory ino holds nothing but "." and
// "..". It stops at the first entry, so a large directory costs no more
// than a small one.
func (v Namespace) IsEmptyDir(ino format.Ino) (bool, error) {
	defer v.rlock(ino)()
	ip, err := v.getDir(ino)
	if err != nil {
		return false, err
	}
	var l trans.Lease
	defer l.Release()
	empty, err := dir.IsEmpty(readFork{v.mount, ip, &l})
	return empty, format.Located(err, fmt.Sprintf("inode %d", ino))
}

// Lookup finds name in directory dirIno. "." and ".." work in every format.
func (v Namespace) Lookup(dirIno format.Ino, name string) (format.Ino, error) {
	defer v.rlock(dirIno)()
	ip, err := v.getDir(dirIno)
	if err != nil {
		return 0, err
	}
	if len(name) > format.MaxNameLen {
		return 0, fmt.Errorf("%q: %w", name, ErrNameTooLong)
	}
	if name == "" {
		return 0, fmt.Errorf("empty name: %w", ErrInvalid)
	}
	if name == "." {
		return dirIno, nil
	}
	// No entry can hold '/' or NUL: such a name is simply not there.
	if strings.ContainsAny(name, "/\x00") {
		return 0, fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	ino, err := v.lookupIn(ip, name)
	if err != nil {
		return 0, format.Located(err, fmt.Sprintf("inode %d", dirIno))
	}
	if !v.geo.ValidIno(ino) {
		return 0, format.Corrupt("directory entry", fmt.Sprintf("inode %d", dirIno), "%q points at invalid inode %d", name, ino)
	}
	return ino, nil
}

// maxSymlinkHops matches the kernel's limit on nested symlinks.
const maxSymlinkHops = 40

// LookupPath resolves a slash-separated path from the root. Symlinks in
// the middle of the path are followed (absolute targets from the volume
// root); a symlink in the last component is followed only when follow is
// set. "." and ".." are honoured; ".." of the root is the root.
func (v Namespace) LookupPath(path string, follow bool) (format.Ino, error) {
	hops := 0
	return v.resolve(v.sb.RootIno, path, follow, &hops)
}

func (v Namespace) resolve(start format.Ino, path string, follow bool, hops *int) (format.Ino, error) {
	cur := start
	if strings.HasPrefix(path, "/") {
		cur = v.sb.RootIno
	}
	parts := strings.Split(path, "/")
	for i, name := range parts {
		if name == "" || name == "." {
			continue
		}
		parent := cur
		next, err := v.Lookup(cur, name)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", strings.Join(parts[:i+1], "/"), err)
		}
		last := i == len(parts)-1 || allEmpty(parts[i+1:])
		if !last || follow {
			st, err := v.stat(next)
			if err != nil {
				return 0, err
			}
			if st.Mode&format.SIFMT == format.SIFLNK {
				if *hops++; *hops > maxSymlinkHops {
					return 0, fmt.Errorf("%s: %w", strings.Join(parts[:i+1], "/"), ErrLoop)
				}
				target, err := v.files().Readlink(next)
				if err != nil {
					return 0, err
				}
				if next, err = v.resolve(parent, target, true, hops); err != nil {
					return 0, err
				}
			}
		}
		cur = next
	}
	return cur, nil
}

func allEmpty(parts []string) bool {
	for _, p := range parts {
		if p != "" && p != "." {
			return false
		}
	}
	return true
}

// Namespace operations. Lock order: see package xfs doc.

// Attrs are the owner and permissions of a new inode.
type Attrs struct {
	Mode     uint32 // permission bits (07777); the type comes from the call
	UID, GID uint32
	// ProjID charges the new inode to a project (a directory also gets
	// the inherit flag); 0 takes the parent's if it passes it on.
	ProjID uint32
}

// createReserve is the block reservation of a create: an inode chunk, a
// directory block or two, and splits of every tree they touch.
func (v Namespace) createReserve() int64 {
	return int64(ialloc.BlocksPerAlloc(&v.geo)) + 4*int64(v.geo.DirBlockFsbs()) + 4*format.MaxBtreeLevels
}

// dirChangeReserve covers adding or removing one name: a directory block
// or two and splits of the trees they touch.
func (v Namespace) dirChangeReserve() int64 {
	return 4*int64(v.geo.DirBlockFsbs()) + 4*format.MaxBtreeLevels
}

// Create makes a regular file name in directory dir.
func (v Namespace) Create(dirIno format.Ino, name string, a Attrs) (format.Ino, error) {
	return v.create(dirIno, name, format.SIFREG|uint16(a.Mode&0o7777), a, "", nil)
}

// MaxCreateData is the most data CreateFile puts in a new file.
const MaxCreateData = 1 << 20

// CreateFile makes a regular file name in directory dir holding data,
// with attrs set, in one transaction: the name appears with its content
// and its attributes, or not at all. A small object stored so costs one
// commit, against three for a file written under a staging name and
// renamed into place with its attributes. data is at most MaxCreateData
// bytes; an existing name gives ErrExist.
func (v Namespace) CreateFile(dirIno format.Ino, name string, a Attrs, data []byte, attrs []Xattr) (format.Ino, error) {
	if len(data) > MaxCreateData {
		return 0, fmt.Errorf("CreateFile of %d bytes (at most %d): %w", len(data), MaxCreateData, ErrInvalid)
	}
	set, err := v.xattrs().parseXattrs(attrs)
	if err != nil {
		return 0, err
	}
	return v.create(dirIno, name, format.SIFREG|uint16(a.Mode&0o7777), a, "", &fileContent{data, set})
}

// fileContent is what CreateFile puts in the file it makes, in the
// create's transaction.
type fileContent struct {
	data []byte
	set  xattrSet
}

// reserve is the blocks the content may need: its data and their
// mapping, its attributes.
func (f *fileContent) reserve(v *mount) int64 {
	var blocks int64
	if len(f.set.list) > 0 {
		blocks += v.xattrs().xattrReserve(f.set.blocks)
	}
	if len(f.data) > 0 {
		blocks += int64((len(f.data)+v.geo.BlockSize-1)>>v.geo.BlockLog) + v.bmbtReserve()
	}
	return blocks
}

// fill writes the content into the new file ino of t.
func (f *fileContent) fill(t *txn, ino format.Ino) error {
	c := t.inodes.get(ino)
	if len(f.data) > 0 {
		last := format.FileOff((int64(len(f.data)) - 1) >> t.v.geo.BlockLog)
		if err := t.v.files().writeChunkTx(t, c.h, ino, f.data, 0, 0, last); err != nil {
			return err
		}
	}
	if err := f.set.apply(&attrFork{c}); err != nil {
		return xattrError(err)
	}
	return nil
}

// Mkdir makes a directory name in directory dir.
func (v Namespace) Mkdir(dirIno format.Ino, name string, a Attrs) (format.Ino, error) {
	return v.create(dirIno, name, format.SIFDIR|uint16(a.Mode&0o7777), a, "", nil)
}

// Symlink makes a symbolic link name in directory dir pointing at target.
func (v Namespace) Symlink(dirIno format.Ino, name, target string, a Attrs) (format.Ino, error) {
	if len(target) == 0 || len(target) >= format.MaxSymlinkLen {
		return 0, fmt.Errorf("symlink target of %d bytes: %w", len(target), ErrNameTooLong)
	}
	return v.create(dirIno, name, format.SIFLNK|0o777, a, target, nil)
}

// create makes an inode of mode under name in dir: a symlink to target,
// or a regular file filled with content (nil: empty).
func (v Namespace) create(dirIno format.Ino, name string, mode uint16, a Attrs, target string, content *fileContent) (ino format.Ino, err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return 0, err
	}
	if err := dir.CheckName([]byte(name)); err != nil {
		return 0, err
	}
	if m := v.w.quota; m != nil && a.ProjID != 0 {
		if err := v.quotas().ensureDquot(m, a.ProjID); err != nil {
			return 0, err
		}
	}
	hd, unlock := v.lockInode(dirIno)
	defer unlock()
	reserve := v.createReserve() + int64(len(target)>>v.geo.BlockLog) + 1
	if content != nil {
		reserve += content.reserve(v.mount)
	}
	err = v.runTx(reserve, false, func(t *txn) error {
		var err error
		ino, err = v.createTx(t, hd, dirIno, name, mode, a, target)
		if err == nil && content != nil {
			err = content.fill(t, ino)
		}
		return err
	})
	return ino, err
}

func (v Namespace) createTx(t *txn, hd *inodeHandle, dirIno format.Ino, name string, mode uint16, a Attrs, target string) (format.Ino, error) {
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
	c, err := v.makeInode(t, pc, mode, a, target)
	if err != nil {
		return 0, err
	}
	if err := dir.Add(pf, []byte(name), c.ino, format.FTypeOfMode(mode)); err != nil {
		return 0, err
	}
	pc.touch(true)
	return c.ino, nil
}

// makeInode allocates and initialises an inode of mode for directory pc
// (a directory gets its . and .., and pc its link; a symlink points at
// target) and returns the transaction's change of it. The caller names
// it in pc.
func (v Namespace) makeInode(t *txn, pc *inodeChange, mode uint16, a Attrs, target string) (*inodeChange, error) {
	isDir := mode&format.SIFMT == format.SIFDIR
	free, err := t.allocInode(pc.ino, isDir)
	if err != nil {
		return nil, err
	}
	h := v.icache.hold(free.ino)
	c := t.track(h, free) // publishes the new version before the release below
	// Its forks map nothing: later steps of the transaction (CreateFile's
	// data) must not load extents from the free inode it was.
	c.extLoaded = [2]bool{true, true}
	t.OnCommit(func() { v.icache.release(h) })
	t.OnCancel(func() { v.icache.release(h) })
	nlink := uint32(1)
	if isDir {
		nlink = 2
	}
	v.initInodeCore(&c.core, newInodeAttrs{Mode: mode, UID: a.UID, GID: a.GID, ProjID: a.ProjID, Nlink: nlink, Now: time.Now()}, &pc.core)
	clear(c.forkBytes(DataFork))
	switch {
	case isDir:
		if err := dir.Init(dataFork{c}, pc.ino); err != nil {
			return nil, err
		}
		pc.core.Nlink++
	case mode&format.SIFMT == format.SIFLNK:
		if err := c.writeSymlink(target); err != nil {
			return nil, err
		}
	}
	return c, nil
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
func (v Namespace) Link(ino, dirIno format.Ino, name string) (err error) {
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
func (v Namespace) Unlink(dirIno format.Ino, name string) error {
	return v.remove(dirIno, name, removeNonDir)
}

// UnlinkFile removes name from directory dir if it names a regular file;
// a directory gives ErrIsDir and an inode of any other type ErrInvalid,
// both leaving the name. It is a lookup, a type check and Unlink in one
// step: callers whose names stand only for regular files (objects) need
// no Lookup and Stat first.
func (v Namespace) UnlinkFile(dirIno format.Ino, name string) error {
	return v.remove(dirIno, name, removeFile)
}

// Rmdir removes the empty directory name from directory dir.
func (v Namespace) Rmdir(dirIno format.Ino, name string) error {
	return v.remove(dirIno, name, removeDir)
}

// removeKind is what a removal accepts at the name.
type removeKind int

const (
	removeNonDir removeKind = iota // anything but a directory (Unlink)
	removeFile                     // a regular file only (UnlinkFile)
	removeDir                      // an empty directory only (Rmdir)
)

// check refuses a child of mode the removal does not accept.
func (k removeKind) check(name string, mode uint16) error {
	isDir := mode&format.SIFMT == format.SIFDIR
	switch {
	case k == removeDir && !isDir:
		return fmt.Errorf("%q: %w", name, ErrNotDir)
	case k != removeDir && isDir:
		return fmt.Errorf("%q: %w", name, ErrIsDir)
	case k == removeFile && mode&format.SIFMT != format.SIFREG:
		return fmt.Errorf("%q is not a regular file: %w", name, ErrInvalid)
	}
	return nil
}

func (v Namespace) remove(dirIno format.Ino, name string, kind removeKind) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	if name == "." || name == ".." {
		return fmt.Errorf("remove %q: %w", name, ErrInvalid)
	}
	ino, gone, err := v.removeLocked(dirIno, name, kind)
	if err != nil || !gone {
		return err
	}
	return v.space().lastLinkGone(ino)
}

// removeLocked removes the entry under the directory's and the inode's
// locks; gone reports that the inode lost its last link.
func (v Namespace) removeLocked(dirIno format.Ino, name string, kind removeKind) (ino format.Ino, gone bool, err error) {
	hd, unlockDir := v.lockInode(dirIno)
	defer unlockDir()
	ino, err = v.lookupLocked(dirIno, name)
	if err != nil {
		return 0, false, err
	}
	if ino == dirIno {
		// Only damage makes a name other than "." lead back to its own
		// directory, whose lock is held already.
		return 0, false, format.Corrupt("directory entry", fmt.Sprintf("inode %d", dirIno), "%q points at the directory itself", name)
	}
	h, unlock := v.lockInode(ino)
	defer unlock()
	ag, _ := v.geo.InoToAg(ino)
	u := v.w.inodes.Unlinked(ag)
	u.Lock()
	defer u.Unlock()
	err = v.runTx(v.dirChangeReserve(), true, func(t *txn) error {
		var err error
		gone, err = v.removeTx(t, hd, dirIno, name, h, ino, kind)
		return err
	})
	return ino, gone, err
}

// lookupLocked is Lookup for a caller holding the directory's lock.
func (v Namespace) lookupLocked(dirIno format.Ino, name string) (format.Ino, error) {
	ip, err := v.getDir(dirIno)
	if err != nil {
		return 0, err
	}
	ino, err := v.lookupIn(ip, name)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", name, err)
	}
	return ino, nil
}

// lookupIn looks name up in directory ip, a committed version. Its blocks
// are read under lease: a lookup keeps nothing of them.
func (v *mount) lookupIn(ip *inode, name string) (format.Ino, error) {
	var l trans.Lease
	defer l.Release()
	ino, _, err := dir.Lookup(readFork{v, ip, &l}, []byte(name))
	return ino, err
}

// removeTx drops the entry and a link; gone reports that the inode lost
// its last link and went on the unlinked list.
func (v Namespace) removeTx(t *txn, hd *inodeHandle, dirIno format.Ino, name string, h *inodeHandle, ino format.Ino, kind removeKind) (bool, error) {
	pc, err := t.modifyDir(hd, dirIno)
	if err != nil {
		return false, err
	}
	c, err := t.modify(h, ino)
	if err != nil {
		return false, err
	}
	if err := kind.check(name, c.core.Mode); err != nil {
		return false, err
	}
	if kind == removeDir {
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
// its locks are dropped. An inode a name leads to without a link is
// damage (a link count would wrap around), reported as such.
func (t *txn) dropLink(pc, c *inodeChange) (bool, error) {
	if c.core.Nlink == 0 {
		return false, format.Corrupt("inode", fmt.Sprintf("inode %d", c.ino), "a name leads to it, but it has no link")
	}
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

// Rename moves srcName in srcDir to dstName in dstDir, replacing a
// non-directory target or an empty directory target, in one transaction.
func (v Namespace) Rename(srcDir format.Ino, srcName string, dstDir format.Ino, dstName string) error {
	return v.RenameSettingXattrs(srcDir, srcName, dstDir, dstName, nil)
}

// RenameSettingXattrs is Rename that also sets attrs on the moved inode,
// in the same transaction: the new name appears with its attributes or
// not at all, and a file put in place (written under a staging name, then
// renamed with its metadata) costs one commit less than an Xattrs.SetMany
// followed by a Rename.
func (v Namespace) RenameSettingXattrs(srcDir format.Ino, srcName string, dstDir format.Ino, dstName string, attrs []Xattr) (err error) {
	defer v.settle(&err)
	if err := v.checkWritable(); err != nil {
		return err
	}
	set, err := v.xattrs().parseXattrs(attrs)
	if err != nil {
		return err
	}
	replaced, err := v.renameLocked(srcDir, srcName, dstDir, dstName, set)
	if err != nil || replaced == 0 {
		return err
	}
	return v.space().lastLinkGone(replaced)
}

// renameLocked is Rename under its locks; replaced is the target's inode
// when it lost its last link.
func (v Namespace) renameLocked(srcDir format.Ino, srcName string, dstDir format.Ino, dstName string, set xattrSet) (replaced format.Ino, err error) {
	for _, n := range []string{srcName, dstName} {
		if n == "." || n == ".." {
			return 0, fmt.Errorf("rename %q: %w", n, ErrInvalid)
		}
		if err := dir.CheckName([]byte(n)); err != nil {
			return 0, err
		}
	}
	replaced, err = v.renameOnce(srcDir, srcName, dstDir, dstName, set, false)
	if errors.Is(err, errMovesDirectory) {
		replaced, err = v.renameOnce(srcDir, srcName, dstDir, dstName, set, true)
	}
	return replaced, err
}

// errMovesDirectory stops a cross-directory rename that found a directory
// to move without holding renameMu: it starts again holding it.
var errMovesDirectory = errors.New("rename moves a directory")

// renameOnce is renameLocked, with renameMu held (serial) or not. Only a
// directory moving to another parent needs it: that is the one rename
// that can make a loop, and its ancestry check must see a tree no other
// such move changes meanwhile. Moving a file between directories takes
// just the two directories' locks, so PUTs into different buckets (each a
// rename out of a staging directory) do not queue behind each other.
func (v Namespace) renameOnce(srcDir format.Ino, srcName string, dstDir format.Ino, dstName string, set xattrSet, serial bool) (replaced format.Ino, err error) {
	crossDir := srcDir != dstDir
	handles := map[format.Ino]*inodeHandle{}
	if !crossDir {
		h, unlock := v.lockInode(srcDir)
		defer unlock()
		handles[srcDir] = h
	} else {
		if serial {
			v.w.renameMu.Lock()
			defer v.w.renameMu.Unlock()
		}
		hs, hd, unlock := v.lockInodePair(srcDir, dstDir)
		defer unlock()
		handles[srcDir], handles[dstDir] = hs, hd
	}
	src, err := v.lookupLocked(srcDir, srcName)
	if err != nil {
		return 0, err
	}
	if crossDir && !serial {
		ip, err := v.iget(src)
		if err != nil {
			return 0, err
		}
		if ip.isDir() {
			return 0, errMovesDirectory
		}
	}
	dst, err := v.lookupLocked(dstDir, dstName)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return 0, err
	}
	if err == nil && dst == src {
		// Both names are links to the same inode: nothing moves, but
		// the attributes asked for are still set.
		if len(set.list) == 0 {
			return 0, nil
		}
		h, unlock := v.lockInode(src)
		defer unlock()
		return 0, v.xattrs().xattrTx(h, src, set.apply, set.blocks, false)
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
	if crossDir {
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
	reserve := 2 * v.dirChangeReserve()
	if len(set.list) > 0 {
		reserve += v.xattrs().xattrReserve(set.blocks)
	}
	err = v.runTx(reserve, true, func(t *txn) error {
		var err error
		gone, err = v.renameTx(t, handles, srcDir, srcName, dstDir, dstName, src, dst, set)
		return err
	})
	if err != nil || !gone {
		return 0, err
	}
	return dst, nil
}

// checkNotAncestor refuses to move directory src below itself: it walks up
// from dst through ".." entries to the root.
func (v Namespace) checkNotAncestor(src, dst format.Ino) error {
	st, err := v.iget(src)
	if err != nil {
		return err
	}
	if !st.isDir() {
		return nil
	}
	for cur, hops := dst, 0; cur != v.sb.RootIno; hops++ {
		if cur == src {
			return fmt.Errorf("move a directory below itself: %w", ErrInvalid)
		}
		ip, err := v.iget(cur)
		if err != nil {
			return err
		}
		parent, err := v.lookupIn(ip, "..")
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

func (v Namespace) renameTx(t *txn, handles map[format.Ino]*inodeHandle, srcDir format.Ino, srcName string, dstDir format.Ino, dstName string, src, dst format.Ino, set xattrSet) (bool, error) {
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
	if err := set.apply(&attrFork{sc}); err != nil {
		return false, xattrError(err)
	}
	sc.touch(false)
	sd.touch(true)
	if dd != sd {
		dd.touch(true)
	}
	return gone, nil
}
