package store

import "errors"

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
	// ErrKeyConflict: the key names an object where another key needs a
	// directory ("a" while "a/b" exists), or the reverse.
	ErrKeyConflict      = errors.New("key conflicts with an existing object or prefix")
	ErrNoSuchKey        = errors.New("no such key")
	ErrInvalidMetadata  = errors.New("invalid metadata")
	ErrMetadataTooLarge = errors.New("user metadata too large")
	// ErrIncompleteBody: the reader ended before the declared size, or a
	// folder marker was given content.
	ErrIncompleteBody = errors.New("body shorter than its declared size")
	ErrInvalidRange   = errors.New("invalid range")
	ErrClosed         = errors.New("store closed")
)
