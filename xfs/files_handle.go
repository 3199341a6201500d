package xfs

import (
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs/format"
)

// Handle is a reference on an inode: while it is open the inode stays
// readable, even after its last link is removed. Close it once.
type Handle struct {
	v      *mount
	ino    format.Ino
	h      *inodeHandle
	closed bool
}

// Open takes a reference on ino, which must have a link.
func (v Files) Open(ino format.Ino) (*Handle, error) {
	h := v.icache.hold(ino)
	// Shared, so an unlink's transaction cannot commit between the link
	// check and the reference: either the unlink sees the reference or
	// this sees no link.
	h.lock.RLock()
	defer h.lock.RUnlock()
	ip, err := v.igetHeld(h, ino)
	if err == nil && ip.core.Nlink == 0 {
		err = fmt.Errorf("inode %d has no link: %w", ino, ErrNotFound)
	}
	if err != nil {
		v.icache.release(h)
		return nil, err
	}
	h.shard.Mu.Lock()
	h.opens++
	h.shard.Mu.Unlock()
	return &Handle{v: v.mount, ino: ino, h: h}, nil
}

// OpenAt looks name up in directory dirIno and takes a reference on the
// inode it names, under the directory's lock: the reference is on the
// inode the name held at that moment, never on one whose number was
// freed and reused since a separate Lookup (which Open alone cannot tell).
// A missing name gives ErrNotFound.
func (v Files) OpenAt(dirIno format.Ino, name string) (*Handle, error) {
	if name == "" || name == "." || name == ".." {
		return nil, fmt.Errorf("open %q: %w", name, ErrInvalid)
	}
	if len(name) > format.MaxNameLen {
		return nil, fmt.Errorf("%q: %w", name, ErrNameTooLong)
	}
	if strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("%q: %w", name, ErrNotFound)
	}
	// Directory before the inode it names (lock order): an unlink needs
	// the directory's lock exclusively, so the name keeps its link while
	// the reference is taken.
	defer v.rlock(dirIno)()
	ino, err := v.names().lookupLocked(dirIno, name)
	if err != nil {
		return nil, err
	}
	if !v.geo.ValidIno(ino) || ino == dirIno {
		return nil, format.Corrupt("directory entry", fmt.Sprintf("inode %d", dirIno), "%q points at invalid inode %d", name, ino)
	}
	return v.Open(ino)
}

// Ino is the inode the handle refers to.
func (hd *Handle) Ino() format.Ino { return hd.ino }

// Close drops the reference; the last one on an inode without links
// releases it for inactivation.
func (hd *Handle) Close() error {
	if hd.closed {
		return nil
	}
	hd.closed = true
	s := hd.h.shard
	s.Mu.Lock()
	hd.h.opens--
	release := hd.h.opens == 0 && hd.h.doomed
	if release {
		hd.h.doomed = false
	}
	s.Mu.Unlock()
	hd.v.icache.release(hd.h)
	if release {
		return hd.v.space().release(hd.ino)
	}
	return nil
}
