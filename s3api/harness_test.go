package s3api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

const (
	testAccessKey = "AKIAXFS3TEST"
	testSecretKey = "xfs3-test-secret-key-0123456789"
	testRegion    = "us-east-1"
)

// testServer is the handler on a fresh volume behind httptest, with a
// minio-go client and the log it wrote.
type testServer struct {
	url    string
	store  *store.Store
	client *minio.Client
	core   *minio.Core
	log    *syncBuffer
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &syncBuffer{}
	h, err := New(Config{
		Store:       st,
		Credentials: map[string]string{testAccessKey: testSecretKey},
		Logger:      zerolog.New(logBuf),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	opts := &minio.Options{Creds: credentials.NewStaticV4(testAccessKey, testSecretKey, ""), Region: testRegion}
	host := srv.Listener.Addr().String()
	client, err := minio.New(host, opts)
	if err != nil {
		t.Fatal(err)
	}
	core, err := minio.NewCore(host, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{url: srv.URL, store: st, client: client, core: core, log: logBuf}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// skipIfNotImplemented skips while the store's multipart, tagging and
// checksum functions are still stubs.
func skipIfNotImplemented(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, store.ErrNotImplemented) || minio.ToErrorResponse(err).Code == "NotImplemented" {
		t.Skipf("store returns ErrNotImplemented: %v", err)
	}
}

func mustBucket(t *testing.T, ts *testServer, name string) {
	t.Helper()
	if err := ts.store.CreateBucket(name); err != nil {
		t.Fatal(err)
	}
}

func mustPut(t *testing.T, ts *testServer, bucket, key, body string, meta store.Meta) store.ObjectInfo {
	t.Helper()
	info, err := ts.store.PutObject(bucket, key, bytes.NewReader([]byte(body)), int64(len(body)), meta)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
