package dir

import (
	"bytes"
	"fmt"

	"github.com/xfs3/xfs3/xfs/format"
)

// Error kinds: the engine's own, from package format, so that errors.Is
// works across the layers.
var (
	ErrNotFound    = format.ErrNotFound
	ErrExist       = format.ErrExist
	ErrNameTooLong = format.ErrNameTooLong
	ErrInvalid     = format.ErrInvalid
)

// CheckName enforces the rules for a name stored in a directory: 1 to 255
// bytes, no '/' and no NUL (xfs_dir2_namecheck). "." and ".." pass; the
// operations that must refuse them do so themselves.
func CheckName(name []byte) error {
	switch {
	case len(name) == 0:
		return fmt.Errorf("empty name: %w", ErrInvalid)
	case len(name) > format.MaxNameLen:
		return fmt.Errorf("name of %d bytes: %w", len(name), ErrNameTooLong)
	case bytes.IndexByte(name, '/') >= 0:
		return fmt.Errorf("name %q contains '/': %w", name, ErrInvalid)
	case bytes.IndexByte(name, 0) >= 0:
		return fmt.Errorf("name %q contains NUL: %w", name, ErrInvalid)
	}
	return nil
}

func isDot(name []byte) bool    { return len(name) == 1 && name[0] == '.' }
func isDotDot(name []byte) bool { return len(name) == 2 && name[0] == '.' && name[1] == '.' }

// maxIno is XFS_MAXINUMBER: inode numbers have 56 bits.
const maxIno = 1<<56 - 1

// maxShortIno is the largest inode number a 4-byte short-form slot holds.
const maxShortIno = 1<<32 - 1

// checkTarget validates the inode number and file type of a new entry.
func checkTarget(g *format.Geometry, ino format.Ino, ftype uint8) error {
	if ino == 0 || ino > maxIno || g.AgCount > 0 && !g.ValidIno(ino) {
		return fmt.Errorf("inode number %d: %w", ino, ErrInvalid)
	}
	if ftype > format.FTSymlink {
		return fmt.Errorf("file type %d: %w", ftype, ErrInvalid)
	}
	return nil
}
