package xfs

import (
	"errors"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Error kinds. Callers test them with errors.Is; the S3 layer maps them to
// S3 codes at its edge, the CLI to messages. They are defined in package
// format so that every engine package returns the same values.
var (
	ErrNotFound    = format.ErrNotFound
	ErrExist       = format.ErrExist
	ErrNotDir      = format.ErrNotDir
	ErrIsDir       = format.ErrIsDir
	ErrNotEmpty    = format.ErrNotEmpty
	ErrNameTooLong = format.ErrNameTooLong
	ErrInvalid     = format.ErrInvalid
	ErrNoSpace     = format.ErrNoSpace
	ErrQuota       = format.ErrQuota
	ErrNoData      = format.ErrNoData
	ErrReadOnly    = format.ErrReadOnly
	ErrUnsupported = format.ErrUnsupported
	ErrLoop        = format.ErrLoop
	// ErrImmutable: the change would touch an inode that carries the
	// immutable flag, or a name in an immutable directory (EPERM in the
	// kernel). Files.SetImmutable and NameOp.Immutable are the ways past.
	ErrImmutable = format.ErrImmutable
	// ErrUnaligned: AppendExtents needs the destination's size to be a
	// whole number of blocks; callers copy bytes instead.
	ErrUnaligned     = errors.New("file size is not a multiple of the block size")
	ErrNeedsRecovery = xlog.ErrNeedsRecovery
	// ErrCorrupt is the kind of every *format.CorruptError.
	ErrCorrupt = format.ErrCorrupt
	// ErrDiscardUnsupported: the storage under the volume cannot discard
	// (no hole punching, no BLKDISCARD), so trim has nothing to do there.
	ErrDiscardUnsupported = dev.ErrDiscardUnsupported
)
