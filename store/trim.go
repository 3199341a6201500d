package store

import (
	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
)

// Trim's types and errors as the layers above see them (package gc owns
// them), so that s3api need not import gc or the engine.
type (
	TrimRequest  = gc.TrimRequest
	TrimPass     = gc.TrimPass
	TrimStatus   = gc.TrimStatus
	TrimCounters = gc.TrimCounters
)

var (
	// ErrTrimRunning: a pass on demand already runs.
	ErrTrimRunning = gc.ErrTrimRunning
	// ErrTrimClosed: the store is closing.
	ErrTrimClosed = gc.ErrTrimClosed
	// ErrDiscardUnsupported: the storage under the volume cannot discard.
	ErrDiscardUnsupported = xfs.ErrDiscardUnsupported
	// ErrTrimRange: a pass's range is not inside the volume.
	ErrTrimRange = xfs.ErrInvalid
)
