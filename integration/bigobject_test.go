package integration

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// patternReader is a seekable stream of size bytes that never holds more
// than one block in memory: byte i is a function of i.
type patternReader struct {
	off, size int64
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.size-p.off))
	for i := range b[:n] {
		x := uint64(p.off + int64(i))
		b[i] = byte(x ^ x>>8 ^ x>>17)
	}
	p.off += int64(n)
	return n, nil
}

func (p *patternReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		p.off = off
	case io.SeekCurrent:
		p.off += off
	case io.SeekEnd:
		p.off = p.size + off
	}
	return p.off, nil
}

// peakRSS is the process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to read the server's memory: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestLargeObjectFlatMemory streams a 768 MiB object up in one PUT and down
// in one GET: the bytes round-trip and the server's peak memory stays far
// below the object's size.
func TestLargeObjectFlatMemory(t *testing.T) {
	const size = 768 << 20
	s := startServer(t, "2G")
	c := s.client(t)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "big", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	want := sha256.New()
	io.Copy(want, &patternReader{size: size})
	if _, err := c.PutObject(ctx, "big", "one.bin", &patternReader{size: size}, size,
		minio.PutObjectOptions{DisableMultipart: true}); err != nil {
		t.Fatal(err)
	}
	o, err := c.GetObject(ctx, "big", "one.bin", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	n, err := io.Copy(got, o)
	o.Close()
	if err != nil || n != size || string(got.Sum(nil)) != string(want.Sum(nil)) {
		t.Fatalf("GET returned %d bytes (%v), or other bytes than were put", n, err)
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("server peak RSS %d MiB for a %d MiB object", peak>>20, size>>20)
	if peak > 256<<20 {
		t.Errorf("server peak RSS %d MiB: bodies are not streamed", peak>>20)
	}
	s.stop(t)
}
