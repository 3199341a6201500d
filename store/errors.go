package store

import (
	"errors"

	"github.com/xfs3/xfs3/xfs"
)

// Error kinds. Callers test them with errors.Is; the S3 layer maps them to
// its codes at its edge. Engine errors (xfs.ErrNoSpace, xfs.ErrCorrupt, ...)
// are passed through wrapped.
var (
	ErrInvalidBucketName = errors.New("invalid bucket name")
	ErrNoSuchBucket      = errors.New("no such bucket")
	ErrBucketExists      = errors.New("bucket already exists")
	ErrBucketNotEmpty    = errors.New("bucket not empty")
	ErrInvalidKey        = errors.New("invalid key")
	ErrKeyTooLong        = errors.New("key too long")
	// ErrKeyConflict: where the key needs a file or directory, the volume
	// holds something else (a symlink or device made by other tools).
	ErrKeyConflict      = errors.New("key conflicts with an existing object or prefix")
	ErrNoSuchKey        = errors.New("no such key")
	ErrInvalidMetadata  = errors.New("invalid metadata")
	ErrMetadataTooLarge = errors.New("user metadata too large")
	// ErrIncompleteBody: the reader ended before the declared size.
	ErrIncompleteBody = errors.New("body shorter than its declared size")
	ErrInvalidRange   = errors.New("invalid range")
	ErrClosed         = errors.New("store closed")

	// Multipart uploads.
	ErrNoSuchUpload     = errors.New("no such upload")
	ErrInvalidPart      = errors.New("invalid part")       // missing, or its ETag differs
	ErrInvalidPartOrder = errors.New("invalid part order") // not in ascending order
	ErrEntityTooSmall   = errors.New("part too small")     // below MinPartSize and not the last
	// ErrObjectSizeMismatch: the parts of a completion do not make the
	// size the client said they would.
	ErrObjectSizeMismatch = errors.New("object size differs from the size expected")
	ErrEntityTooLarge     = errors.New("entity too large")

	ErrInvalidTag = errors.New("invalid tag") // see Tag's limits
	// ErrBadDigest: the content does not match a checksum sent with it.
	ErrBadDigest = errors.New("content does not match its checksum")

	ErrNotImplemented = errors.New("not implemented")
)

// ErrNoSpace is the engine's: the volume is full. Writes that meet it
// leave nothing behind.
var ErrNoSpace = xfs.ErrNoSpace

// ErrImmutable is the engine's: the change would touch an immutable
// inode (a locked version, or a file flagged by other tools).
var ErrImmutable = xfs.ErrImmutable
