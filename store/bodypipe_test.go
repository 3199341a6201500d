package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"
)

// shortReader returns at most a random few bytes a Read, and fails with
// failAt's error once it has given failAt bytes (never when failAt < 0).
type shortReader struct {
	data   []byte
	rng    *rand.Rand
	failAt int
}

var errBodyBroke = errors.New("body broke")

func (r *shortReader) Read(p []byte) (int, error) {
	if r.failAt >= 0 && r.failAt == 0 {
		return 0, errBodyBroke
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), 1+r.rng.Intn(300<<10))
	if r.failAt > 0 {
		n = min(n, r.failAt)
		r.failAt -= n
	}
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// TestLargeBodyETagAcrossChunks: a body of several chunks, its size given
// or not, read in short pieces, gets the MD5 of its bytes as its ETag and
// reads back whole, whatever its size against the chunk; a body that
// fails part way fails the PUT, keeps the old object, and leaves the
// store serving (the body pipe gave its buffers back).
func TestLargeBodyETagAcrossChunks(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("big"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for i, size := range []int{chunkSize, chunkSize + 1, 2 * chunkSize, 3*chunkSize - 1, 5*chunkSize + 123} {
		data := make([]byte, size)
		rng.Read(data)
		sum := md5.Sum(data)
		for _, known := range []bool{true, false} {
			length := int64(-1)
			if known {
				length = int64(size)
			}
			info, err := s.PutObject("big", "k", &shortReader{data: data, rng: rng, failAt: -1}, length, Meta{})
			if err != nil {
				t.Fatalf("size %d known %v: %v", size, known, err)
			}
			if info.ETag != hex.EncodeToString(sum[:]) {
				t.Fatalf("size %d known %v: ETag %s, want the MD5 %x", size, known, info.ETag, sum)
			}
			o, err := s.GetObject("big", "k")
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(o.Reader())
			o.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("size %d known %v: read back %d bytes (%v)", size, known, len(got), err)
			}
			// The same body, broken somewhere: the PUT fails and
			// the object stays what it was.
			failAt := rng.Intn(size)
			if _, err := s.PutObject("big", "k", &shortReader{data: data, rng: rng, failAt: failAt}, length, Meta{}); !errors.Is(err, errBodyBroke) {
				t.Fatalf("size %d known %v, broken at %d: %v, want the body's error", size, known, failAt, err)
			}
			if st, err := s.HeadObject("big", "k"); err != nil || st.ETag != info.ETag {
				t.Fatalf("size %d (%d), broken at %d: object now %+v, %v", size, i, failAt, st, err)
			}
		}
	}
}

// TestLargeBodyWriteFailsMidway: a body of unknown length whose chunks
// are written while it is read fails at the write that passes the
// bucket's quota. The PUT reports the quota, stops reading the body soon
// after (not at its end), keeps the old object and the bucket's usage,
// and leaves the store serving: once the inode gc has freed the
// upload's blocks, the next large PUTs go through.
func TestLargeBodyWriteFailsMidway(t *testing.T) {
	s, _ := newTestStore(t)
	if err := s.CreateBucket("big"); err != nil {
		t.Fatal(err)
	}
	if err := s.quotas().Set("big", BucketQuota{HardBytes: 4 * chunkSize}); err != nil {
		t.Fatal(err)
	}
	old := bytes.Repeat([]byte("o"), chunkSize+7)
	put(t, s, "big", "k", string(old), Meta{})
	before, err := s.quotas().Get("big")
	if err != nil {
		t.Fatal(err)
	}
	const size = 32 * chunkSize
	body := &io.LimitedReader{R: rand.New(rand.NewSource(2)), N: size}
	if _, err := s.PutObject("big", "k", body, -1, Meta{}); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("PUT past the quota: %v, want ErrQuotaExceeded", err)
	}
	if read := size - body.N; read >= size/2 {
		t.Fatalf("the failed PUT read %d of %d bytes: it should stop soon after the write that failed", read, size)
	}
	if got, _ := get(t, s, "big", "k"); got != string(old) {
		t.Fatalf("the old object changed to %d bytes", len(got))
	}
	after, _ := s.quotas().Get("big")
	if after.Bytes != before.Bytes || after.Objects != before.Objects {
		t.Fatalf("usage %d/%d after the refused PUT, %d/%d before", after.Bytes, after.Objects, before.Bytes, before.Objects)
	}
	// The failed upload's blocks go back with its inode, through the
	// inode gc.
	for deadline := time.Now().Add(10 * time.Second); s.GCStats().Pending > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the inode gc still holds %d inodes", s.GCStats().Pending)
		}
	}
	next := bytes.Repeat([]byte("n"), chunkSize+chunkSize/2+3) // twice fits the quota
	for range 3 {
		put(t, s, "big", "k", string(next), Meta{})
	}
	if got, _ := get(t, s, "big", "k"); got != string(next) {
		t.Fatalf("read back %d bytes after the failure", len(got))
	}
}

// TestBodyPipeWritePanics: a write that panics on the pipe's goroutine
// fails the body with an error naming the panic, instead of taking the
// server down; the chunks after it are not written, the reader is told
// to stop, and every buffer comes back.
func TestBodyPipeWritePanics(t *testing.T) {
	var wrote []int64
	p := newBodyPipe(func(b []byte, off int64) error {
		if off == 2*chunkSize {
			panic("engine bug")
		}
		wrote = append(wrote, off)
		return nil
	})
	for i := range int64(6) {
		if p.failed() {
			break
		}
		buf := p.buffer()
		p.put(buf, chunkSize, i*chunkSize)
	}
	_, err := p.finish()
	if err == nil || !strings.Contains(err.Error(), "engine bug") {
		t.Fatalf("finish: %v, want the panic as an error", err)
	}
	if !p.failed() {
		t.Fatal("the pipe does not report the failed write")
	}
	if !slices.Equal(wrote, []int64{0, chunkSize}) {
		t.Fatalf("wrote chunks at %v, want only the two before the panic", wrote)
	}
	p.stop()
	if n := len(p.free); n != pipeDepth {
		t.Fatalf("%d of %d buffers came back", n, pipeDepth)
	}
}
