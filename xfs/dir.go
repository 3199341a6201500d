package xfs

import (
	"fmt"
	"strings"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
)

// Directory reads, through package dir: the same decoder the write path
// uses, so Lookup and Create never disagree on whether a name exists.

// DirEntry is one name in a directory.
type DirEntry struct {
	Name string
	Ino  format.Ino
	// Type is the entry's file type (format.FT*), from the ftype byte.
	Type uint8
}

func (v *Volume) getDir(ino format.Ino) (*inode, error) {
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
func (v *Volume) ReadDir(ino format.Ino) ([]DirEntry, error) {
	defer v.rlock(ino)()
	ip, err := v.getDir(ino)
	if err != nil {
		return nil, err
	}
	var out []DirEntry
	err = dir.List(readFork{v, ip}, func(name []byte, e format.Ino, ftype uint8) error {
		if !v.geo.ValidIno(e) {
			return format.Corrupt("directory entry", "", "%q points at invalid inode %d", name, e)
		}
		out = append(out, DirEntry{Name: string(name), Ino: e, Type: ftype})
		return nil
	})
	return out, format.Located(err, fmt.Sprintf("inode %d", ino))
}

// Lookup finds name in directory dirIno. "." and ".." work in every format.
func (v *Volume) Lookup(dirIno format.Ino, name string) (format.Ino, error) {
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
	ino, _, err := dir.Lookup(readFork{v, ip}, []byte(name))
	if err != nil {
		return 0, format.Located(err, fmt.Sprintf("inode %d", dirIno))
	}
	if !v.geo.ValidIno(ino) {
		return 0, format.Corrupt("directory entry", fmt.Sprintf("inode %d", dirIno), "%q points at invalid inode %d", name, ino)
	}
	return ino, nil
}
