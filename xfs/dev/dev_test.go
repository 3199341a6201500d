package dev

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestExclusiveWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, false); !errors.Is(err, ErrInUse) {
		t.Fatalf("second writer: %v", err)
	}
	r, err := Open(path, true)
	if err != nil {
		t.Fatalf("reader beside a writer: %v", err)
	}
	r.Close()
	w.Close()
	w2, err := Open(path, false)
	if err != nil {
		t.Fatalf("writer after close: %v", err)
	}
	w2.Close()
}

// TestWriterWaitsForABriefLock: a lock released within lockWaits (as by
// a forked child reaching its exec) lets a writer in; one held longer
// is ErrInUse.
func TestWriterWaitsForABriefLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	fd := int(held.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	time.AfterFunc(lockWaits/4, func() {
		syscall.Flock(fd, syscall.LOCK_UN)
		close(released)
	})
	w, err := Open(path, false)
	if err != nil {
		t.Fatalf("a writer after a brief lock: %v", err)
	}
	w.Close()
	<-released
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := Open(path, false); !errors.Is(err, ErrInUse) {
		t.Fatalf("a writer beside a held lock: %v", err)
	}
	if waited := time.Since(start); waited < lockWaits {
		t.Fatalf("gave up after %v, before lockWaits", waited)
	}
}

func TestReadPastEndIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vol")
	os.WriteFile(path, make([]byte, 1024), 0o644)
	d, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.ReadAt(make([]byte, 512), 800); err == nil {
		t.Fatal("short read past the end reported no error")
	}
	if _, err := d.WriteAt([]byte{1}, 0); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write to read-only device: %v", err)
	}
}

// TestWriteAtDurable: the durable write lands where a plain one would
// and is refused on a read-only device.
func TestWriteAtDurable(t *testing.T) {
	path, d := newWritableFile(t, 64<<10)
	data := bytes.Repeat([]byte("log!"), 1024)
	if n, err := d.WriteAtDurable(data, 8192); err != nil || n != len(data) {
		t.Fatalf("durable write: %d bytes, %v", n, err)
	}
	got := make([]byte, len(data))
	if _, err := d.ReadAt(got, 8192); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v, equal %v", err, bytes.Equal(got, data))
	}
	d.Close()
	r, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.WriteAtDurable(data, 0); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("durable write on a read-only device: %v", err)
	}
}

// TestWriteVAt: buffers written as one land one after another, also past
// the kernel's limit of buffers per call, and leave the caller's list as
// it was; a read-only device refuses.
func TestWriteVAt(t *testing.T) {
	path, d := newWritableFile(t, 2<<20)
	bufs := make([][]byte, maxIovecs+300)
	var want []byte
	for i := range bufs {
		bufs[i] = bytes.Repeat([]byte{byte(i)}, 512+i%3*512)
		want = append(want, bufs[i]...)
	}
	listed := slices.Clone(bufs)
	if n, err := d.WriteVAt(bufs, 4096); err != nil || n != len(want) {
		t.Fatalf("vectored write: %d of %d bytes, %v", n, len(want), err)
	}
	got := make([]byte, len(want))
	if _, err := d.ReadAt(got, 4096); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back: %v, equal %v", err, bytes.Equal(got, want))
	}
	for i := range bufs {
		if len(bufs[i]) != len(listed[i]) || &bufs[i][0] != &listed[i][0] {
			t.Fatalf("buffer %d of the caller's list changed", i)
		}
	}
	d.Close()
	r, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.WriteVAt(bufs[:1], 0); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("vectored write on a read-only device: %v", err)
	}
}

// newWritableFile opens a new zeroed volume file of size bytes for
// writing; the caller closes it.
func newWritableFile(t *testing.T, size int) (string, *File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	return path, d
}

// TestCloseUnderWrites: a Close while other goroutines write, flush and
// discard is safe (the race detector watches the descriptor), each call
// either succeeds or fails with os.ErrClosed, and none runs after Close.
func TestCloseUnderWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	calls := []func(i int) error{
		func(i int) error { _, err := d.WriteVAt([][]byte{buf}, int64(i%256)*4096); return err },
		func(i int) error { _, err := d.WriteAtDurable(buf, int64(i%256)*4096); return err },
		func(int) error { return d.Sync() },
		func(i int) error {
			if err := d.Discard(int64(i%256)*4096, 4096); err != nil && !errors.Is(err, ErrDiscardUnsupported) {
				return err
			}
			return nil
		},
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; ; i++ {
				if err := call(i); err != nil {
					if !errors.Is(err, os.ErrClosed) {
						t.Errorf("a call beside Close: %v, want success or os.ErrClosed", err)
					}
					return
				}
			}
		}()
	}
	close(start)
	time.Sleep(20 * time.Millisecond)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, call := range calls {
		if err := call(0); !errors.Is(err, os.ErrClosed) {
			t.Errorf("call %d after Close: %v, want os.ErrClosed", i, err)
		}
	}
}
