package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/config"
	"github.com/xfs3/xfs3/s3api"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// startServe runs serve in-process with cfg until the returned stop is
// called; it returns what serve printed once it listens.
func startServe(t *testing.T, cfg config.Config) (stdout string, stop func() error) {
	t.Helper()
	return startServeLogging(t, cfg, &syncBuffer{})
}

// startServeLogging is startServe with the server's log written to errs.
func startServeLogging(t *testing.T, cfg config.Config, errs *syncBuffer) (stdout string, stop func() error) {
	t.Helper()
	var out syncBuffer // written by the server's goroutines
	e := &env{stdout: bufio.NewWriter(&out), stderr: errs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, e) }()
	listening := regexp.MustCompile(`serving S3 on https?://(\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for !listening.MatchString(out.String()) {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve returned before listening: %v\n%s", err, errs.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("serve did not listen within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out.String(), func() error {
		cancel()
		err := <-done
		if err == nil && !strings.Contains(errs.String(), "volume closed cleanly") {
			t.Errorf("no clean close logged:\n%s", errs.String())
		}
		return err
	}
}

// syncBuffer is a strings.Builder safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testConfig(t *testing.T) config.Config {
	cfg := config.Defaults()
	cfg.Volume = filepath.Join(t.TempDir(), "data", "volume.xfs")
	cfg.SizeText = "256M"
	cfg.Addr = "127.0.0.1:0"
	cfg.LogFormat = "json"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestServeGeneratesCredentialsOnce: a first start creates the volume and a
// 0600 credentials file and prints the keys; a second start reuses both.
// TestCacheSizeDefault: the server's default cache_size is the engine's
// default budget (config imports nothing of ours, so it repeats it).
func TestCacheSizeDefault(t *testing.T) {
	c, err := config.Load(nil, func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.CacheSize != xfs.DefaultCacheBytes {
		t.Fatalf("config default cache_size %d, engine default %d", c.CacheSize, xfs.DefaultCacheBytes)
	}
}

func TestServeGeneratesCredentialsOnce(t *testing.T) {
	cfg := testConfig(t)
	out, stop := startServe(t, cfg)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "created volume") {
		t.Errorf("first start did not say it created the volume:\n%s", out)
	}
	path := filepath.Join(filepath.Dir(cfg.Volume), credentialsFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %04o, want 0600", fi.Mode().Perm())
	}
	var c credentials
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.AccessKey) != 20 || len(c.SecretKey) != 40 {
		t.Errorf("generated keys of %d and %d characters", len(c.AccessKey), len(c.SecretKey))
	}
	if !strings.Contains(out, c.AccessKey) || !strings.Contains(out, c.SecretKey) {
		t.Errorf("first start did not print the generated keys:\n%s", out)
	}

	out, stop = startServe(t, cfg)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "opened volume") || strings.Contains(out, c.SecretKey) || !strings.Contains(out, c.AccessKey) {
		t.Errorf("second start should reuse the volume and keys without printing the secret:\n%s", out)
	}
	again, _ := os.ReadFile(path)
	if string(again) != string(data) {
		t.Error("credentials changed on the second start")
	}

	os.Chmod(path, 0o644)
	var e env
	var sink strings.Builder
	e.stdout, e.stderr = bufio.NewWriter(&sink), &sink
	if err := serve(context.Background(), cfg, &e); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable credentials file was accepted: %v", err)
	}
}

// TestServeHealthAndShutdown: the probes answer without a signature, an
// S3 request without credentials is refused, and cancelling stops the
// server cleanly.
func TestServeHealthAndShutdown(t *testing.T) {
	cfg := testConfig(t)
	cfg.AccessKey, cfg.SecretKey = "tester", "tester-secret"
	out, stop := startServe(t, cfg)
	addr := regexp.MustCompile(`http://(\S+)`).FindStringSubmatch(out)[1]
	for _, probe := range []string{"/minio/health/live", "/minio/health/ready"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, _ := http.NewRequest(method, "http://"+addr+probe, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s: %s", method, probe, resp.Status)
			}
		}
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous ListBuckets: %s, want 403", resp.Status)
	}
	if strings.Contains(out, "generated") {
		t.Errorf("configured credentials, yet keys were generated:\n%s", out)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/minio/health/live"); err == nil {
		t.Error("still answering after shutdown")
	}
}

// TestHealthReportsShutdown: /minio/health/ready turns 503 once a failed
// metadata write has shut the volume down, while live stays 200.
func TestHealthReportsShutdown(t *testing.T) {
	img := filepath.Join(t.TempDir(), "h.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	d, closeBase, err := dev.OpenFault(img)
	if err != nil {
		t.Fatal(err)
	}
	defer closeBase()
	v, err := xfs.OpenDevice(d, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	st, err := store.New(v)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s3api.New(s3api.Config{Store: st, Credentials: map[string]string{"ak": "secret-key"}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	status := func(probe string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/minio/health/"+probe, nil))
		return rec.Code
	}
	if got := status("ready"); got != http.StatusOK {
		t.Fatalf("healthy volume: %d", got)
	}
	d.Cut()
	v.Names().Create(v.Root(), "lost", xfs.Attrs{Mode: 0o644})
	if got := status("ready"); got != http.StatusServiceUnavailable {
		t.Errorf("ready after a failed write: %d, want 503", got)
	}
	if got := status("live"); got != http.StatusOK {
		t.Errorf("live after a failed write: %d, want 200", got)
	}
}

// TestShutdownFinishesRequestsInFlight: a PUT whose body is still arriving
// when the stop signal comes is completed and stored before the volume
// closes, while new connections are refused; with either durability.
func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	for _, d := range []string{config.DurableOnAck, config.DurableWithin1s} {
		t.Run(d, func(t *testing.T) { shutdownInFlight(t, d) })
	}
}

func shutdownInFlight(t *testing.T, durability string) {
	cfg := testConfig(t)
	cfg.Durability = durability
	cfg.AccessKey, cfg.SecretKey = "tester", "tester-secret"
	out, stop := startServe(t, cfg)
	addr := regexp.MustCompile(`http://(\S+)`).FindStringSubmatch(out)[1]
	// The in-flight PUT must be inside its handler before the stop: a
	// connection still in the accept queue, or a pooled one the server
	// counts as idle, is rightly cut by Shutdown. With Expect: 100-continue
	// the body is not read from the pipe until the handler has answered
	// 100 Continue, so the first half written proves the request started.
	fresh := &http.Client{Transport: &http.Transport{
		DisableKeepAlives:     true,
		ExpectContinueTimeout: time.Minute,
	}}
	put := func(path string, body io.Reader, size int64) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPut, "http://"+addr+path, body)
		if err != nil {
			return nil, err
		}
		req.ContentLength = size
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		req = signer.SignV4(*req, cfg.AccessKey, cfg.SecretKey, "", "us-east-1")
		if size > 0 {
			req.Header.Set("Expect", "100-continue")
		}
		return fresh.Do(req)
	}
	resp, err := put("/inflight", nil, 0)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("create bucket: %v %v", resp, err)
	}
	resp.Body.Close()

	want := strings.Repeat("slow body ", 100000)
	pr, pw := io.Pipe()
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := put("/inflight/object", pr, int64(len(want)))
		if err != nil {
			t.Errorf("in-flight PUT: %v", err)
		}
		answered <- resp
	}()
	io.WriteString(pw, want[:len(want)/2])
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Once shutdown has begun the listener is closed: wait for that.
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if i == 500 {
			t.Fatal("the server still accepts connections 5 s after the stop")
		}
		time.Sleep(10 * time.Millisecond)
	}
	io.WriteString(pw, want[len(want)/2:])
	pw.Close()
	if resp := <-answered; resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight PUT was not completed: %v", resp)
	} else {
		resp.Body.Close()
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cfg.Volume)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err := st.GetObject("inflight", "object")
	if err != nil {
		t.Fatalf("the object of the in-flight PUT: %v", err)
	}
	defer o.Close()
	got, _ := io.ReadAll(o.Reader())
	if string(got) != want {
		t.Errorf("stored %d bytes, want %d", len(got), len(want))
	}
}

// TestCreateInPlace: the file appears whole or not at all, never replaces
// one that exists, and leaves no temporary file behind.
func TestCreateInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	fail := errors.New("fill failed")
	if err := createInPlace(path, 0o600, func(tmp string) error {
		os.WriteFile(tmp, []byte("half"), 0o600)
		return fail
	}); !errors.Is(err, fail) {
		t.Fatalf("failed fill: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed fill left %s: %v", path, err)
	}
	write := func(s string) error {
		return createInPlace(path, 0o600, func(tmp string) error { return os.WriteFile(tmp, []byte(s), 0o600) })
	}
	if err := write("first"); err != nil {
		t.Fatal(err)
	}
	if err := write("second"); err == nil {
		t.Error("an existing file was replaced")
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("content %q, want the first", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(ents))
	}
}
