package xfs

import (
	"errors"

	"github.com/xfs3/xfs3/xfs/dir"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Error kinds. Callers test them with errors.Is; the S3 layer maps them to
// S3 codes at its edge, the CLI to messages.
var (
	ErrNotFound    = dir.ErrNotFound
	ErrExist       = dir.ErrExist
	ErrNotDir      = errors.New("not a directory")
	ErrIsDir       = errors.New("is a directory")
	ErrNotEmpty    = errors.New("directory not empty")
	ErrNameTooLong = dir.ErrNameTooLong
	ErrInvalid     = dir.ErrInvalid
	ErrNoSpace     = errors.New("no space left on volume")
	ErrNoData      = errors.New("no such attribute")
	ErrReadOnly    = errors.New("volume is read-only")
	ErrUnsupported = errors.New("unsupported filesystem")
	ErrLoop        = errors.New("too many levels of symbolic links")
	// ErrUnaligned: AppendExtents needs the destination's size to be a
	// whole number of blocks; callers copy bytes instead.
	ErrUnaligned     = errors.New("file size is not a multiple of the block size")
	ErrNeedsRecovery = xlog.ErrNeedsRecovery
	// ErrCorrupt is the kind of every *format.CorruptError.
	ErrCorrupt = format.ErrCorrupt
)
