package s3api

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
)

// fillVolume leaves about leave bytes free by preallocating (not writing)
// a ballast file whose name can never be a bucket.
func fillVolume(t *testing.T, ts *testServer, leave int64) {
	t.Helper()
	v := ts.store.Volume()
	fs, err := v.Space().Statfs()
	if err != nil {
		t.Fatal(err)
	}
	ino, err := v.Names().Create(v.Root(), ".ballast", xfs.Attrs{Mode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Files().Preallocate(ino, int64(fs.FreeBlocks)*int64(fs.BlockSize)-leave); err != nil {
		t.Fatal(err)
	}
}

// TestVolumeFull: on a full volume a streamed PUT fails with 507
// InsufficientStorage and leaves nothing behind, a PUT of declared size
// fails before reading its body, and a small PUT still fits.
func TestVolumeFull(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "full")
	fillVolume(t, ts, 8<<20)
	before, _ := ts.store.Volume().Space().Statfs()

	// Unknown length: the store meets ENOSPC mid-stream.
	body := io.LimitReader(zeros{}, 32<<20)
	req, err := http.NewRequest("PUT", ts.url+"/full/streamed", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("X-Amz-Content-Sha256", sigv4.UnsignedPayload)
	resp, respBody := send(t, signer.SignV4(*req, testAccessKey, testSecretKey, "", testRegion))
	wantError(t, resp, respBody, http.StatusInsufficientStorage, "InsufficientStorage")
	if _, err := ts.store.HeadObject("full", "streamed"); !errors.Is(err, store.ErrNoSuchKey) {
		t.Errorf("HEAD of the refused object: %v", err)
	}
	after, _ := ts.store.Volume().Space().Statfs()
	if after.FreeBlocks+16 < before.FreeBlocks {
		t.Errorf("free blocks %d before, %d after a refused PUT: space leaked", before.FreeBlocks, after.FreeBlocks)
	}

	// Declared size: preallocation fails before any byte is read.
	r := &countingReader{r: io.LimitReader(zeros{}, 32<<20)}
	if _, err := ts.store.PutObject("full", "declared", r, 32<<20, store.Meta{}); !errors.Is(err, store.ErrNoSpace) {
		t.Errorf("PutObject of 32 MiB with 8 MiB free: %v", err)
	}
	if r.n != 0 {
		t.Errorf("%d bytes read before the volume was found full", r.n)
	}

	if resp, body := ts.do(t, "PUT", "/full/fits", []byte(strings.Repeat("s", 4096)), nil); resp.StatusCode != http.StatusOK {
		t.Errorf("small PUT on the nearly full volume: %d %s", resp.StatusCode, body)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
