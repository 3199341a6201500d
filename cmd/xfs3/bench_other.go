//go:build !linux

package main

import (
	"errors"
	"os"
)

// fadviseDontNeed cannot drop pages here: raw reads may come from the
// page cache, and the output says so.
func fadviseDontNeed(f *os.File) error { return errors.ErrUnsupported }
