//go:build !linux

package dev

import "os"

// Discard is not available off Linux.
func (d *File) Discard(off, n int64) error { return ErrDiscardUnsupported }

// DiscardGranularity is 1 where nothing can be discarded.
func (d *File) DiscardGranularity() int64 { return 1 }

func probeDiscard(*os.File) (bool, int64) { return false, 1 }

func discardError(name string, err error) error { return err }
