// Package dev is the engine's view of storage: a volume file or block
// device addressed by byte offset. The engine reads and writes whole
// sectors and blocks through it and never seeks.
//
// Discard (discard.go) gives free ranges back to the storage: a hole
// punched in a volume file, BLKDISCARD on a block device. Requests are
// merged and shrunk to the storage's granularity first, so nothing
// outside a range is ever touched, then cut into requests of bounded
// size (DiscardOptions.MaxRequest: a long punch stalls every write to the
// volume file for its whole length); storage that cannot discard is
// reported as ErrDiscardUnsupported, a kind and not a failure.
//
//	engine trim ──ranges──► DiscardRangesWith ──sort, merge, align,
//	    split──► Discarder.Discard: File (fallocate PUNCH_HOLE|KEEP_SIZE,
//	    or BLKDISCARD) │ Fault (zeros in its volatile cache)
//	    └─ after each request: After(range, time, err), where a caller
//	       may pause
//
// WriteVAt (vector_linux.go) writes several buffers, one after another,
// in one pwritev: a run of adjacent blocks without joining them first.
//
// FillHoles (holes_linux.go) writes zeros into a volume file's holes, so
// that later writes there find their blocks allocated: the engine fills
// the log's region when it opens a volume for writing.
//
// Fault (fault.go) is a test device with a volatile write cache: a power
// cut drops every write not yet flushed, optionally tearing one.
package dev

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Device is random-access storage with an explicit flush.
type Device interface {
	io.ReaderAt
	io.WriterAt
	// Size is the device size in bytes.
	Size() int64
	// Sync makes every completed write durable.
	Sync() error
	Close() error
}

// ErrReadOnly is returned by writes to a device opened read-only.
var ErrReadOnly = errors.New("device is read-only")

// ErrHostFull is returned when the filesystem that holds a volume file
// has no space left for blocks the volume file needs allocated.
var ErrHostFull = errors.New("the volume file's filesystem is full")

// ErrInUse is returned when another process has the volume open for writing.
var ErrInUse = errors.New("volume is open for writing by another process")

// File is a Device backed by an *os.File (a volume file or a block device).
type File struct {
	f        *os.File
	rc       syscall.RawConn // f's descriptor, held open by withFd
	size     int64
	readOnly bool
	blockDev bool  // a block device (discard is BLKDISCARD), not a file
	gran     int64 // discard granularity in bytes
}

// Open opens path as a device. A block device's size comes from seeking to
// its end, which works for both kinds.
func Open(path string, readOnly bool) (*File, error) {
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	if !readOnly {
		// One writer at a time: two engines writing one volume would
		// corrupt it. Read-only opens take no lock.
		if err := lockWriter(f); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s: %w", path, ErrInUse)
			}
			return nil, fmt.Errorf("%s: lock: %w", path, err)
		}
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: size: %w", path, err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	blockDev, gran := probeDiscard(f)
	return &File{f: f, rc: rc, size: size, readOnly: readOnly, blockDev: blockDev, gran: gran}, nil
}

// lockWaits bounds how long lockWriter retries a lock it finds taken.
const lockWaits = 500 * time.Millisecond

// lockWriter takes f's exclusive lock. A lock this process released an
// instant ago can still be held by a child it forked and that has not
// reached its exec (which closes the copied descriptor): so a lock found
// taken is tried again for lockWaits before the volume counts as in use.
func lockWriter(f *os.File) error {
	deadline := time.Now().Add(lockWaits)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// WriterActive reports whether a process has the volume open for writing
// (holds its lock); for a device opened read-only.
func (d *File) WriterActive() bool {
	if !d.readOnly {
		return false
	}
	err := syscall.Flock(int(d.f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(d.f.Fd()), syscall.LOCK_UN)
	return false
}

// ReadAt reads len(p) bytes; reading past the end is an error, never a
// short read that a caller could mistake for zeros.
func (d *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > d.size {
		return 0, fmt.Errorf("read of %d bytes at %d: %w (device has %d bytes)", len(p), off, io.ErrUnexpectedEOF, d.size)
	}
	return d.f.ReadAt(p, off)
}

// WriteAt writes p at off.
func (d *File) WriteAt(p []byte, off int64) (int, error) {
	if d.readOnly {
		return 0, ErrReadOnly
	}
	n, err := d.f.WriteAt(p, off)
	d.grow(off + int64(n))
	return n, err
}

// grow notes a write that ended at end.
func (d *File) grow(end int64) {
	if end > d.size {
		d.size = end
	}
}

// writeThenSync is WriteAtDurable by a write and a whole-file flush; done
// bytes before p were already written durably.
func (d *File) writeThenSync(p []byte, off int64, done int) (int, error) {
	n, err := d.WriteAt(p, off)
	if err != nil {
		return done + n, err
	}
	return done + n, d.Sync()
}

// Size returns the device size in bytes.
func (d *File) Size() int64 { return d.size }

// Sync flushes the file's data to stable storage. fdatasync is enough:
// the engine never depends on file metadata other than the data blocks
// (a volume file does not change size after mkfs).
func (d *File) Sync() error {
	if d.readOnly {
		return nil
	}
	for {
		err := d.withFd(syscall.Fdatasync)
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: d.f.Name(), Err: err}
			}
			return nil
		}
	}
}

// Close closes the file. The descriptor itself is closed once a write,
// flush or discard under way in another goroutine has ended (withFd);
// later ones fail.
func (d *File) Close() error { return d.f.Close() }

// withFd runs fn with the file's descriptor held open: a Close meanwhile
// leaves the descriptor open until fn returns, so its number cannot be
// reused by another file under fn, and once the file is closed fn does
// not run (the error is os.ErrClosed). Every call made on the raw
// descriptor goes through it.
func (d *File) withFd(fn func(fd int) error) error {
	var fnErr error
	if err := d.rc.Control(func(fd uintptr) { fnErr = fn(int(fd)) }); err != nil {
		// The descriptor could not be held: the file is closed (the
		// error is the poller's, not yet os.ErrClosed).
		return os.ErrClosed
	}
	return fnErr
}

// Fd exposes the descriptor for hole punching and similar file-only calls.
func (d *File) Fd() uintptr { return d.f.Fd() }
