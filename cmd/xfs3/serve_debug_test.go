package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/rs/zerolog"
)

// TestServeDebugListen: --debug-listen serves the profiling index and a
// CPU profile on a loopback listener of its own, which stops with the
// server; the S3 listener does not serve them.
func TestServeDebugListen(t *testing.T) {
	cfg := testConfig(t)
	cfg.AccessKey, cfg.SecretKey = "tester", "tester-secret"
	cfg.DebugListen = "127.0.0.1:0"
	out, stop := startServe(t, cfg)
	m := regexp.MustCompile(`xfs3: profiling on (http://127\.0\.0\.1:\d+)/debug/pprof/ \(loopback only\)\n`).FindStringSubmatch(out)
	if m == nil {
		stop()
		t.Fatalf("no profiling address printed:\n%s", out)
	}
	base := m[1]
	s3 := regexp.MustCompile(`serving S3 on (http://\S+)`).FindStringSubmatch(out)[1]

	get := func(url string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	code, body := get(base + "/debug/pprof/")
	if code != http.StatusOK || !bytes.Contains(body, []byte("goroutine")) || !bytes.Contains(body, []byte("heap")) {
		t.Errorf("index: %d %.200q", code, body)
	}
	code, body = get(base + "/debug/pprof/heap")
	if _, err := profile.ParseData(body); code != http.StatusOK || err != nil {
		t.Errorf("heap: %d, %v", code, err)
	}

	code, body = get(base + "/debug/pprof/profile?seconds=1")
	if code != http.StatusOK {
		t.Fatalf("profile: %d %.200q", code, body)
	}
	if _, err := gzip.NewReader(bytes.NewReader(body)); err != nil {
		t.Errorf("the CPU profile is not gzip'd: %v", err)
	}
	p, err := profile.ParseData(body)
	if err != nil {
		t.Fatalf("CPU profile: %v", err)
	}
	if p.DurationNanos < 9e8 || len(p.SampleType) == 0 || p.SampleType[len(p.SampleType)-1].Type != "cpu" {
		t.Errorf("CPU profile of %d ns, sample types %v", p.DurationNanos, p.SampleType)
	}

	// On the S3 listener the path is a bucket "debug" like any other:
	// refused without a signature, no profile.
	code, body = get(s3 + "/debug/pprof/")
	if code == http.StatusOK || bytes.Contains(body, []byte("goroutine")) {
		t.Errorf("the S3 listener answered /debug/pprof/ with %d %.200q", code, body)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + "/debug/pprof/"); err == nil {
		t.Error("the profiling listener still answers after shutdown")
	}
}

// TestServeDebugListenRefused: an address others could reach is a usage
// error that says why, before any volume is made.
func TestServeDebugListenRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, addr := range []string{"0.0.0.0:6061", ":6061", "192.0.2.1:6061", "[::]:6061"} {
		r := runCLI(t, "serve", "--debug-listen", addr)
		wantCLIFailure(t, r, exitUsage, "debug listen: \""+addr+"\" is not a loopback address")
		if !strings.Contains(r.stderr, "profiles reveal the server's internals") {
			t.Errorf("%s: the refusal does not say why: %q", addr, r.stderr)
		}
	}
	if _, err := startDebug("0.0.0.0:0", zerolog.Nop()); err == nil {
		t.Error("startDebug listened on every address")
	}
}
