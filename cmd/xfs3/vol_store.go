package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
)

// The version commands read objects through package store, which only
// opens over a writable volume: its open makes the system directories
// when they are missing, empties .xfs3/tmp and gives buckets their
// project IDs, and the engine's writable open writes its log. A command
// that only reads must not change the volume file, so it opens the file
// read-only and puts a scratch device over it: the engine and the store
// see a writable volume, and every write lands in memory, dropped when
// the command ends. The file is opened O_RDONLY and never written.

// scratchPage is the unit the scratch device keeps written data in.
const scratchPage = 4096

// scratchLimit bounds the memory the writes of one command may take. A
// store's open over a volume a server has served writes a few blocks;
// one that must give every object of a bucket a project ID (a volume
// never served) writes one inode per object, and a volume needing that
// much is better served once than read this way.
const scratchLimit = 1 << 30

// scratchDevice shows a volume file with the writes made to it kept in
// memory, per page. It implements dev.Device and nothing more: the
// engine's optional device methods (vector and durable writes, discard,
// filling holes) fall back to the plain ones, which stay in memory too.
type scratchDevice struct {
	base *dev.File // opened read-only

	mu    sync.RWMutex
	pages map[int64][]byte // page offset -> its bytes as written
}

func newScratchDevice(base *dev.File) *scratchDevice {
	return &scratchDevice{base: base, pages: map[int64][]byte{}}
}

func (d *scratchDevice) Size() int64 { return d.base.Size() }

// WriterActive tells whether another process has the file open for
// writing (a running server); the engine then refuses its dirty log.
func (d *scratchDevice) WriterActive() bool { return d.base.WriterActive() }

// Sync has nothing to make durable.
func (d *scratchDevice) Sync() error { return nil }

// Close drops what was written and closes the file.
func (d *scratchDevice) Close() error {
	d.mu.Lock()
	d.pages = nil
	d.mu.Unlock()
	return d.base.Close()
}

func (d *scratchDevice) check(n int, off int64) error {
	if off < 0 || off+int64(n) > d.base.Size() {
		return fmt.Errorf("access of %d bytes at %d: %w (device has %d bytes)", n, off, io.ErrUnexpectedEOF, d.base.Size())
	}
	return nil
}

// ReadAt reads written pages from memory and the rest from the file, in
// as few reads of the file as the written pages allow.
func (d *scratchDevice) ReadAt(p []byte, off int64) (int, error) {
	if err := d.check(len(p), off); err != nil {
		return 0, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if len(d.pages) == 0 {
		return d.base.ReadAt(p, off)
	}
	done, run := 0, 0 // p[run:done] is still to be read from the file
	flush := func() error {
		if run < done {
			if _, err := d.base.ReadAt(p[run:done], off+int64(run)); err != nil {
				return err
			}
		}
		return nil
	}
	for done < len(p) {
		pos := off + int64(done)
		pg := pos &^ (scratchPage - 1)
		n := min(len(p)-done, int(pg+scratchPage-pos))
		if page, ok := d.pages[pg]; ok {
			if err := flush(); err != nil {
				return run, err
			}
			copy(p[done:done+n], page[pos-pg:])
			run = done + n
		}
		done += n
	}
	if err := flush(); err != nil {
		return run, err
	}
	return len(p), nil
}

// WriteAt keeps p in memory; a page written for the first time starts as
// the file's bytes.
func (d *scratchDevice) WriteAt(p []byte, off int64) (int, error) {
	if err := d.check(len(p), off); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pages == nil {
		return 0, fmt.Errorf("write to a closed scratch device: %w", dev.ErrReadOnly)
	}
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		pg := pos &^ (scratchPage - 1)
		page, ok := d.pages[pg]
		if !ok {
			if int64(len(d.pages)+1)*scratchPage > scratchLimit {
				return done, fmt.Errorf("opening the store would change more than %d MiB of the volume; start and stop 'xfs3 serve' on it once, then read it again", scratchLimit>>20)
			}
			page = make([]byte, scratchPage)
			if _, err := d.base.ReadAt(page[:min(scratchPage, d.base.Size()-pg)], pg); err != nil {
				return done, err
			}
			d.pages[pg] = page
		}
		done += copy(page[pos-pg:], p[done:])
	}
	return done, nil
}

// volumeStore is a store over a stopped volume whose file is not written.
type volumeStore struct {
	path string
	v    *xfs.Volume
	st   *store.Store
}

// openVolumeStore opens the volume file at path read-only, refuses it
// while another process writes it (a running server), and opens a store
// over a scratch device on it. A dirty log (a crash) is replayed into
// memory, so the store reads what a server would serve.
func openVolumeStore(path string) (*volumeStore, error) {
	return openVolumeStoreWith(path, xfs.Options{LazyCommits: true})
}

// openVolumeStoreWith is openVolumeStore with the engine's options.
func openVolumeStoreWith(path string, o xfs.Options) (*volumeStore, error) {
	if path == "" {
		return nil, usagef("empty VOLUME path")
	}
	base, err := dev.Open(path, true)
	if err != nil {
		return nil, err
	}
	if base.WriterActive() {
		base.Close()
		return nil, fmt.Errorf("%s: %w (these commands read a stopped volume: stop the server first)", path, dev.ErrInUse)
	}
	v, err := xfs.OpenDevice(newScratchDevice(base), o)
	if err != nil {
		base.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := store.New(v)
	if err != nil {
		v.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &volumeStore{path: path, v: v, st: st}, nil
}

// close closes the store and the volume; neither writes the file.
func (s *volumeStore) close() error {
	err := s.st.Close()
	if cerr := s.v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: close: %w", s.path, err)
	}
	return nil
}
