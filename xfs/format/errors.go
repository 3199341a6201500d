package format

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCorrupt is the kind of every *CorruptError, for errors.Is.
var ErrCorrupt = errors.New("corrupt metadata")

// The engine's error kinds. They live here, at the bottom of the stack, so
// that every engine package (dir, attr, alloc, ialloc and the engine root)
// returns the same values and errors.Is works across the layers. Callers
// above the engine see them as xfs.ErrNotFound and so on; the S3 layer maps
// them to S3 codes at its edge, the CLI to messages.
var (
	ErrNotFound    = errors.New("no such file or directory")
	ErrExist       = errors.New("file exists")
	ErrNotDir      = errors.New("not a directory")
	ErrIsDir       = errors.New("is a directory")
	ErrNotEmpty    = errors.New("directory not empty")
	ErrNameTooLong = errors.New("name too long")
	ErrInvalid     = errors.New("invalid argument")
	ErrNoSpace     = errors.New("no space left on volume")
	ErrQuota       = errors.New("project quota exceeded")
	ErrNoData      = errors.New("no such attribute")
	ErrReadOnly    = errors.New("volume is read-only")
	ErrUnsupported = errors.New("unsupported filesystem")
	ErrLoop        = errors.New("too many levels of symbolic links")
	ErrImmutable   = errors.New("operation not permitted: the inode is immutable")
	// ErrSick: the change would touch a structure marked sick (its
	// metadata failed verification); the volume needs xfs_repair.
	ErrSick = errors.New("metadata marked sick (failed verification): the volume needs xfs_repair")
)

// CorruptError locates a structure that failed verification.
type CorruptError struct {
	Structure string // e.g. "superblock", "bnobt block", "dir3 data block"
	Where     string // the block, inode or offset it was read from, if known
	Reason    string
	// Daddr is the block that failed (HasDaddr), set where blocks are
	// verified; Ino the inode it belongs to, set by the engine where it
	// knows (0: an AG's metadata, or not known).
	Daddr    Daddr
	HasDaddr bool
	Ino      Ino
	// Sick: the engine marked what the block belongs to sick, so the
	// error is also ErrSick.
	Sick bool
}

func (e *CorruptError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("xfs: corrupt %s: %s", e.Structure, e.Reason)
	}
	return fmt.Sprintf("xfs: corrupt %s at %s: %s", e.Structure, e.Where, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true for every CorruptError, and
// errors.Is(err, ErrSick) for those that marked their structure sick.
func (e *CorruptError) Is(target error) bool {
	return target == ErrCorrupt || target == ErrSick && e.Sick
}

// Corrupt builds a CorruptError with a formatted reason.
func Corrupt(structure, where, format string, args ...any) *CorruptError {
	return &CorruptError{Structure: structure, Where: where, Reason: fmt.Sprintf(format, args...)}
}

// Located returns a copy of err with Where filled in when err is a
// CorruptError that does not know its location yet. A CorruptError that
// already knows where inside a structure it was found is placed within
// where, outermost first ("inode 5 data fork, fsb 1234"), unless its
// location already starts with where. Other errors pass through.
func Located(err error, where string) error {
	var ce *CorruptError
	if !errors.As(err, &ce) {
		return err
	}
	switch {
	case ce.Where == "":
		c := *ce
		c.Where = where
		return &c
	case err == error(ce) && where != "" && !locatedIn(ce.Where, where):
		c := *ce
		c.Where = where + ", " + ce.Where
		return &c
	}
	return err
}

// AtDaddr returns err with the failed block's address set when err is a
// CorruptError that does not know it yet; other errors pass through.
func AtDaddr(err error, d Daddr) error {
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.HasDaddr {
		return err
	}
	c := *ce
	c.Daddr, c.HasDaddr = d, true
	return &c
}

// locatedIn reports whether the location inner already starts with outer.
func locatedIn(inner, outer string) bool {
	rest, ok := strings.CutPrefix(inner, outer)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == ',')
}
