package dev

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
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
	path := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(path, make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
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
