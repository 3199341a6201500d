//go:build !linux

package main

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// fadviseDontNeed cannot drop pages here: raw reads may come from the
// page cache, and the output says so.
func fadviseDontNeed(f *os.File) error { return errors.ErrUnsupported }

// errCPUUnsupported refuses --server-pid: it reads /proc.
var errCPUUnsupported = fmt.Errorf("reading a process's CPU time is supported on Linux only: %w", errors.ErrUnsupported)

func processCPU(pid int) (time.Duration, error) { return 0, errCPUUnsupported }

func selfCPU() (time.Duration, error) { return 0, errCPUUnsupported }
