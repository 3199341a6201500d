package dev

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sparseFile makes a sparse file of size bytes with data written at the
// given offsets, or skips where the filesystem reports no holes.
func sparseFile(t testing.TB, size int64, data map[int64][]byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vol")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off, b := range data {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	if hole, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_HOLE); err != nil || hole == size {
		t.Skipf("the temporary directory's filesystem reports no holes (SEEK_HOLE: %d, %v)", hole, err)
	}
	return path
}

// TestFillHoles: the holes of the range become zeros on allocated
// blocks; data in it, and everything outside it, is as it was.
func TestFillHoles(t *testing.T) {
	const size = 8 << 20
	rng := rand.New(rand.NewSource(1))
	data := map[int64][]byte{1 << 20: make([]byte, 4096), 5 << 20: make([]byte, 8192)}
	for _, b := range data {
		rng.Read(b)
	}
	path := sparseFile(t, size, data)
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const off, n = 512 << 10, 6 << 20
	filled, err := d.FillHoles(off, n)
	if err != nil {
		t.Fatal(err)
	}
	if wantFilled := int64(n - 4096 - 8192); filled != wantFilled {
		t.Errorf("filled %d bytes, want %d (the range less its data)", filled, wantFilled)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatal("filling holes changed what the file reads as")
	}
	fd := int(d.Fd())
	if hole, err := unix.Seek(fd, off, unix.SEEK_HOLE); err != nil || hole < off+n {
		t.Errorf("a hole at %d (%v) is left in [%d, %d)", hole, err, off, off+n)
	}
	if hole, err := unix.Seek(fd, 0, unix.SEEK_HOLE); err != nil || hole != 0 {
		t.Errorf("the hole before the range was filled too (first hole at %d, %v)", hole, err)
	}
	if hole, err := unix.Seek(fd, off+n, unix.SEEK_HOLE); err != nil || hole != off+n {
		t.Errorf("the hole after the range was filled too (first hole from its end at %d, %v)", hole, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Size != size {
		t.Errorf("file size %d (%v), want %d", st.Size, err, size)
	}
	if again, err := d.FillHoles(off, n); again != 0 || err != nil {
		t.Errorf("second fill wrote %d bytes (%v), want none", again, err)
	}
	if filled, err := d.FillHoles(size-4096, 1<<20); err != nil || filled != 4096 || d.Size() != size {
		t.Errorf("fill past the end: %d bytes (%v), size %d; want 4096 bytes, size unchanged", filled, err, d.Size())
	}
}

func TestFillHolesReadOnly(t *testing.T) {
	path := sparseFile(t, 1<<20, nil)
	d, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.FillHoles(0, 1<<20); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("fill on a read-only device: %v", err)
	}
}

// BenchmarkLogWrites times what FillHoles is for: 8 KiB sequential
// writes, each made durable, into a hole and into filled blocks (the
// first pass through a log that mkfs left a hole, and every later one).
//
//	go test -run '^$' -bench LogWrites ./xfs/dev/
func BenchmarkLogWrites(b *testing.B) {
	for _, filled := range []bool{false, true} {
		b.Run(fmt.Sprintf("filled=%v", filled), func(b *testing.B) {
			size := int64(b.N+1) * 8192
			d, err := Open(sparseFile(b, size, nil), false)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			if filled {
				if _, err := d.FillHoles(0, size); err != nil {
					b.Fatal(err)
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			buf := make([]byte, 8192)
			var before, after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				buf[0] = byte(i)
				if _, err := d.WriteAtDurable(buf, int64(i)*8192); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}
