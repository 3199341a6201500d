package s3api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"hash"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/s3api/h1"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

const (
	testAccessKey = "AKIAXFS3TEST"
	testSecretKey = "xfs3-test-secret-key-0123456789"
	testRegion    = "us-east-1"
)

// testServer is the handler on a fresh volume served by h1 on loopback, with a
// minio-go client and the log it wrote.
type testServer struct {
	url    string
	store  *store.Store
	client *minio.Client
	core   *minio.Core
	log    *syncBuffer
}

func newTestServer(t testing.TB, options ...func(*Config)) *testServer {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	return newTestServerOn(t, st, options...)
}

// newTestServerOn is newTestServer over an open store, which it closes
// at the end of the test.
func newTestServerOn(t testing.TB, st *store.Store, options ...func(*Config)) *testServer {
	t.Helper()
	logBuf := &syncBuffer{}
	conf := Config{
		Store:       st,
		Credentials: map[string]string{testAccessKey: testSecretKey},
		Logger:      zerolog.New(logBuf),
	}
	for _, o := range options {
		o(&conf)
	}
	h, err := New(conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the server's: cleanups run last first
	host := serve(t, h)
	opts := &minio.Options{Creds: credentials.NewStaticV4(testAccessKey, testSecretKey, ""), Region: testRegion}
	client, err := minio.New(host, opts)
	if err != nil {
		t.Fatal(err)
	}
	core, err := minio.NewCore(host, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{url: "http://" + host, store: st, client: client, core: core, log: logBuf}
}

// serve serves h on a loopback listener with the server xfs3 serve
// uses (h1), until the test ends, and returns the listener's address.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &h1.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String()
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

// rawRequest builds a request to the test server; sign it with signed.
func (ts *testServer) rawRequest(t *testing.T, method, target string, body []byte, header http.Header) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return req
}

// signed signs req with SigV4 over its body's SHA-256 (unless the caller
// set x-amz-content-sha256 already).
func signed(t *testing.T, req *http.Request, body []byte) *http.Request {
	t.Helper()
	if req.Header.Get("X-Amz-Content-Sha256") == "" {
		sum := sha256.Sum256(body)
		req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	}
	return signer.SignV4(*req, testAccessKey, testSecretKey, "", testRegion)
}

// do sends a signed request and returns the response with its body read.
func (ts *testServer) do(t *testing.T, method, target string, body []byte, header http.Header) (*http.Response, []byte) {
	t.Helper()
	return send(t, signed(t, ts.rawRequest(t, method, target, body, header), body))
}

// rawClient leaves Content-Encoding alone (objects stored as "gzip" are
// not gzip here).
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func send(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// wantError checks an error response: status, and for non-HEAD requests
// the XML body's Code, Resource and RequestId.
func wantError(t *testing.T, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s %s: status %d, want %d (%s)", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
		return
	}
	if resp.Header.Get("X-Amz-Request-Id") == "" || resp.Header.Get("X-Amz-Id-2") == "" {
		t.Errorf("missing request id headers: %v", resp.Header)
	}
	if resp.Request.Method == http.MethodHead || status == http.StatusNotModified {
		if len(body) != 0 {
			t.Errorf("HEAD error with a body: %q", body)
		}
		return
	}
	var e errorBody
	if err := xml.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	if e.Code != code || e.Message == "" || e.RequestID != resp.Header.Get("X-Amz-Request-Id") ||
		e.HostID != resp.Header.Get("X-Amz-Id-2") || e.Resource != resp.Request.URL.Path {
		t.Errorf("%s %s: error body %+v, want code %s", resp.Request.Method, resp.Request.URL.Path, e, code)
	}
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// shaHasher adapts crypto/sha256 to the md5simd.Hasher minio-go's
// streaming signer wants.
type shaHasher struct{ hash.Hash }

func (shaHasher) Close() {}

func newSHAHasher() shaHasher { return shaHasher{sha256.New()} }

func xmlUnmarshal(b []byte, v any) error { return xml.Unmarshal(b, v) }
