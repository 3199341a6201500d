package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// rawChunk is the size of each write and read of the raw file.
const rawChunk = 1 << 20

// rawResult is the speed of plain sequential I/O on a file in Dir.
type rawResult struct {
	Dir          string  `json:"dir"`
	Size         int64   `json:"size"`
	WriteSeconds float64 `json:"write_s"` // buffered writes and the fsync
	ReadSeconds  float64 `json:"read_s"`
	// CacheDropped says the read came from the disk; without it the
	// read speed is the page cache's.
	CacheDropped bool `json:"cache_dropped"`
}

// measureRaw writes a file of size bytes in dir with buffered writes and
// an fsync, drops it from the page cache and reads it back, as the volume
// file itself would be written and read without the engine.
func measureRaw(ctx context.Context, dir string, size int64) (*rawResult, error) {
	f, err := os.CreateTemp(dir, ".xfs3-bench-raw-*")
	if err != nil {
		return nil, fmt.Errorf("raw file: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	r := &rawResult{Dir: dir, Size: size}

	start := time.Now()
	err = writeRaw(ctx, f, size)
	if err == nil {
		err = f.Sync()
	}
	r.WriteSeconds = time.Since(start).Seconds()
	if err == nil {
		// After the fsync every page is clean, so all of them can go.
		r.CacheDropped = fadviseDontNeed(f) == nil
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("raw write %s: %w", name, err)
	}

	f, err = os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("raw read: %w", err)
	}
	defer f.Close()
	buf := make([]byte, rawChunk)
	start = time.Now()
	var n int64
	for ctx.Err() == nil {
		m, err := f.Read(buf)
		n += int64(m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("raw read %s: %w", name, err)
		}
	}
	r.ReadSeconds = time.Since(start).Seconds()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n != size {
		return nil, fmt.Errorf("raw read %s: %d bytes, want %d", name, n, size)
	}
	return r, nil
}

// writeRaw writes size bytes of payload to f in rawChunk writes.
func writeRaw(ctx context.Context, f *os.File, size int64) error {
	for off := int64(0); off < size; off += rawChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := f.Write(payload[:min(rawChunk, size-off)]); err != nil {
			return err
		}
	}
	return nil
}

// dropFileCache writes back and then drops the page cache of the file at
// path (the server's volume), so that the next read of it comes from the
// disk. The server keeps writing through its own descriptor; fsync and
// fadvise act on the file, whichever descriptor asks.
func dropFileCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return fadviseDontNeed(f)
}
