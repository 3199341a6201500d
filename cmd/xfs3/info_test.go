package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/s3api/admin"
)

// TestVersion: both spellings print one line with the Go version; the
// build info fields come through buildVersion.
func TestVersion(t *testing.T) {
	a, b := runCLI(t, "version"), runCLI(t, "--version")
	if a.code != 0 || a.stdout != b.stdout || a.stderr != "" {
		t.Fatalf("version %d %q %q; --version %q", a.code, a.stdout, a.stderr, b.stdout)
	}
	v := buildVersion()
	if v.Version == "" || v.Go != runtime.Version() {
		t.Errorf("build version %+v", v)
	}
	if a.stdout != versionLine(v)+"\n" || !strings.HasPrefix(a.stdout, "xfs3 ") || !strings.Contains(a.stdout, runtime.Version()) {
		t.Errorf("version printed %q", a.stdout)
	}
	if r := runCLI(t, "version", "extra"); r.code != exitUsage {
		t.Errorf("version with an argument: %d", r.code)
	}
	for _, c := range []struct {
		v    admin.Version
		want string
	}{
		{admin.Version{Version: "v1.2.3", Revision: "abc", RevisionTime: "2026-12-01T00:00:00Z", Modified: true, Go: "go1.26"},
			"xfs3 v1.2.3 (abc 2026-12-01T00:00:00Z, modified) go1.26"},
		{admin.Version{Version: "(devel)", Go: "go1.26"}, "xfs3 (devel) (revision unknown) go1.26"},
	} {
		if got := versionLine(c.v); got != c.want {
			t.Errorf("versionLine(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestServeInfoAndMetrics: the first log line names the version; 'xfs3
// info' prints the server's info document; the token 'xfs3 metrics-token'
// prints lets a scrape through, and nothing else does.
func TestServeInfoAndMetrics(t *testing.T) {
	for _, k := range []string{"XFS3_ACCESS_KEY", "XFS3_SECRET_KEY", "XFS3_CONFIG", "XFS3_VOLUME", "XFS3_ADDR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	cfg := testConfig(t)
	var logs syncBuffer
	out, stop := startServeLogging(t, cfg, &logs)
	defer stop()
	first, _, _ := strings.Cut(logs.String(), "\n")
	var line struct{ Message, Version, Go string }
	if err := json.Unmarshal([]byte(first), &line); err != nil || line.Message != "xfs3 starting" ||
		line.Version != buildVersion().Version || line.Go != runtime.Version() {
		t.Errorf("first log line %q (%v)", first, err)
	}
	addr := regexp.MustCompile(`serving S3 on http://(\S+)`).FindStringSubmatch(out)[1]
	conn := []string{"--volume", cfg.Volume, "--endpoint", "http://" + addr}
	r := runCLI(t, append([]string{"info"}, conn...)...)
	var in admin.Info
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &in) != nil {
		t.Fatalf("info: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if in.Version != buildVersion() || in.Volume.SizeBytes != 256<<20 || in.Durability != admin.DurableOnAck ||
		in.GC.Mode != cfg.GCMode || in.Trim.IntervalSeconds != 60 || len(in.Buckets) != 0 {
		t.Errorf("info: %+v", in)
	}
	tok := runCLI(t, "metrics-token", "--volume", cfg.Volume)
	if tok.code != 0 || !strings.Contains(tok.stdout, ":") {
		t.Fatalf("metrics-token: %d %q %s", tok.code, tok.stdout, tok.stderr)
	}
	for _, c := range []struct {
		authz  string
		status int
	}{{"Bearer " + strings.TrimSpace(tok.stdout), http.StatusOK}, {"", http.StatusForbidden}} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/minio/metrics/v3", nil)
		if c.authz != "" {
			req.Header.Set("Authorization", c.authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || c.status == http.StatusOK && !strings.Contains(string(body), "xfs3_build_info{") {
			t.Errorf("scrape with %.10q: %d %.200s", c.authz, resp.StatusCode, body)
		}
	}
	if r := runCLI(t, "info", "--volume", cfg.Volume, "--endpoint", "http://127.0.0.1:1"); r.code != exitError {
		t.Errorf("info with nobody listening: %d %s", r.code, r.stderr)
	}
}
