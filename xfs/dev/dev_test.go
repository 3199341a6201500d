package dev

import (
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
