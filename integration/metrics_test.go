package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/xfs3/xfs3/s3api/admin"
)

// scrapeMetrics fetches /minio/metrics/v3 with the bearer token and
// parses it with Prometheus's own text parser.
func (s *server) scrapeMetrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/minio/metrics/v3", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+admin.MetricsToken(accessKey, secretKey))
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("scrape: Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

// series returns the value of family name's series with the labels
// given ("k", "v" pairs), and whether there is one. A histogram's value
// is its count.
func series(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// expected is what a workload did, per operation.
type expected struct {
	requests map[string]map[int]int // op -> status -> count
	in, out  map[string]int64
}

func (e *expected) add(op string, status int, in, out int) {
	if e.requests[op] == nil {
		e.requests[op] = map[int]int{}
	}
	e.requests[op][status]++
	e.in[op] += int64(in)
	e.out[op] += int64(out)
}

// mismatches lists how fams differs from e.
func (e *expected) mismatches(fams map[string]*dto.MetricFamily) []string {
	var bad []string
	check := func(what string, got float64, want int64) {
		if got != float64(want) {
			bad = append(bad, fmt.Sprintf("%s: %v, want %d", what, got, want))
		}
	}
	for op, byStatus := range e.requests {
		total := 0
		for status, n := range byStatus {
			got, _ := series(fams, "xfs3_requests_total", "op", op, "status", strconv.Itoa(status))
			check(fmt.Sprintf("%s %d requests", op, status), got, int64(n))
			total += n
		}
		got, _ := series(fams, "xfs3_request_duration_seconds", "op", op)
		check(op+" latency observations", got, int64(total))
		got, _ = series(fams, "xfs3_request_received_bytes_total", "op", op)
		check(op+" bytes received", got, e.in[op])
		got, _ = series(fams, "xfs3_request_sent_bytes_total", "op", op)
		check(op+" bytes sent", got, e.out[op])
	}
	return bad
}

// TestMetricsThroughBinary runs a seeded workload of raw signed requests
// against the real binary, scrapes, and checks the request counts and
// byte counts exactly, the bucket's usage, and the inode gc queues back
// at zero once a scrape has drained them. The info document and 'xfs3
// info' describe the same server, and request-log sampling keeps every
// failure.
func TestMetricsThroughBinary(t *testing.T) {
	s := startServer(t, "512M", "--log-sample", "4")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 16))
	e := &expected{requests: map[string]map[int]int{}, in: map[string]int64{}, out: map[string]int64{}}
	do := func(op, method, path string, body []byte) int {
		t.Helper()
		code, b := s.do(t, method, path, body, nil, region)
		e.add(op, code, len(body), len(b))
		return code
	}
	if code := do("CreateBucket", "PUT", "/metrics", nil); code != 200 {
		t.Fatalf("create bucket: %d", code)
	}
	live := map[string]int{}
	deleted, failures, headFailures := 0, 0, 0
	for i := 0; i < 300; i++ {
		key := fmt.Sprintf("o%d", rng.IntN(40))
		switch rng.IntN(6) {
		case 0, 1:
			body := bytes.Repeat([]byte{byte(i)}, rng.IntN(70000))
			if do("PutObject", "PUT", "/metrics/"+key, body) != 200 {
				t.Fatalf("put %s failed", key)
			}
			live[key] = len(body)
		case 2:
			if code := do("GetObject", "GET", "/metrics/"+key, nil); code == 404 {
				failures++
			}
		case 3:
			if code := do("HeadObject", "HEAD", "/metrics/"+key, nil); code == 404 {
				headFailures++
			}
		case 4:
			if _, ok := live[key]; ok {
				deleted++
			}
			do("DeleteObject", "DELETE", "/metrics/"+key, nil)
			delete(live, key)
		case 5:
			do("ListObjectsV2", "GET", "/metrics?list-type=2", nil)
		}
	}
	// The workload's last answers are counted once their handlers have
	// returned, which a client on another connection may outrun: look
	// again for a little while before calling a difference a failure.
	var fams map[string]*dto.MetricFamily
	var bad []string
	for try := 0; try < 20; try++ {
		fams = s.scrapeMetrics(t)
		if bad = e.mismatches(fams); len(bad) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, b := range bad {
		t.Error(b)
	}
	// The first scrape read the queues and then drained them (reading
	// the volume's space frees what deleted objects hold); this one
	// sees them empty.
	fams = s.scrapeMetrics(t)
	queued, _ := series(fams, "xfs3_inodegc_queued_total")
	freed, _ := series(fams, "xfs3_inodegc_inactivated_total")
	pending, _ := series(fams, "xfs3_inodegc_pending")
	if pending != 0 || queued != freed || freed < float64(deleted) {
		t.Errorf("inode gc after a drain: queued %v, inactivated %v, pending %v; %d objects deleted", queued, freed, pending, deleted)
	}
	for _, m := range fams["xfs3_inodegc_queue_depth"].GetMetric() {
		if m.GetGauge().GetValue() != 0 {
			t.Errorf("inode gc queue %s: depth %v after a drain", m.GetLabel()[0].GetValue(), m.GetGauge().GetValue())
		}
	}
	var stored, blocks int64
	for _, n := range live {
		stored += int64(n)
		blocks += (int64(n) + 4095) / 4096 * 4096
	}
	if got, _ := series(fams, "xfs3_bucket_used_objects", "bucket", "metrics"); got != float64(1+len(live)) {
		t.Errorf("bucket objects %v, want %d (the directory and %d objects)", got, 1+len(live), len(live))
	}
	if got, _ := series(fams, "xfs3_bucket_used_bytes", "bucket", "metrics"); got < float64(blocks) || got > float64(blocks+64<<10) {
		t.Errorf("bucket bytes %v, want the %d bytes of whole blocks the objects fill (and at most 64 KiB of directory)", got, blocks)
	}
	for _, name := range []string{"xfs3_volume_free_bytes", "xfs3_volume_inodes", "xfs3_log_commits_total",
		"xfs3_log_writes_total", "xfs3_log_size_bytes"} {
		if v, ok := series(fams, name); !ok || v <= 0 {
			t.Errorf("%s: %v (present %v), want above 0", name, v, ok)
		}
	}
	for _, cache := range []string{"blocks", "inodes"} {
		for _, name := range []string{"xfs3_metadata_cache_hits_total", "xfs3_metadata_cache_bytes", "xfs3_metadata_cache_budget_bytes"} {
			if v, ok := series(fams, name, "cache", cache); !ok || v <= 0 {
				t.Errorf("%s{cache=%q}: %v (present %v), want above 0", name, cache, v, ok)
			}
		}
	}
	if v, ok := series(fams, "xfs3_build_info", "go_version", runtime.Version()); !ok || v != 1 {
		t.Errorf("xfs3_build_info for %s: %v %v", runtime.Version(), v, ok)
	}

	var in admin.Info
	if err := json.Unmarshal(runCLI(t, "info", "--endpoint", s.URL), &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Buckets) != 1 || in.Buckets[0].Bucket != "metrics" || in.Buckets[0].Objects != uint64(1+len(live)) ||
		in.Volume.SizeBytes != 512<<20 || in.Volume.UsedBytes+in.Volume.FreeBytes+uint64(in.Volume.LogBytes) != in.Volume.SizeBytes ||
		in.GC.Mode != "percpu" || in.Durability != "on-ack" || in.UptimeSeconds <= 0 {
		t.Errorf("info: %+v", in)
	}
	s.stop(t)

	logged404 := strings.Count(s.logs.String(), `"op":"GetObject","method":"GET"`) // every GET line, sampled or not
	notFound := strings.Count(s.logs.String(), `"error_code":"NoSuchKey"`)
	if notFound != failures+headFailures {
		t.Errorf("%d NoSuchKey lines logged for %d failed GETs and HEADs: sampling must keep failures", notFound, failures+headFailures)
	}
	if total := e.requests["GetObject"][200] + failures; logged404 >= total && total > 8 {
		t.Errorf("%d GET lines logged of %d GETs with --log-sample 4", logged404, total)
	}
}

// TestVersionThroughBinary: 'xfs3 version' and '--version' print the
// build's version line; a binary built with VCS stamping in the work tree
// names the commit, and a release version set at link time wins.
func TestVersionThroughBinary(t *testing.T) {
	a, b := runCLI(t, "version"), runCLI(t, "--version")
	if !bytes.Equal(a, b) || !bytes.HasPrefix(a, []byte("xfs3 ")) || !bytes.Contains(a, []byte(runtime.Version())) {
		t.Fatalf("version %q, --version %q", a, b)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a Git work tree with git available (%v): VCS stamping not checked", err)
	}
	bin := filepath.Join(t.TempDir(), "xfs3")
	build := exec.Command("go", "build", "-buildvcs=true", "-ldflags", "-X main.releaseVersion=v0.0.0-metrics-test", "-o", bin, module+"/cmd/xfs3")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build with VCS stamping: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "xfs3 v0.0.0-metrics-test (") {
		t.Errorf("the release version set at link time is not shown: %q", out)
	}
	if info, _ := exec.Command("go", "version", "-m", bin).Output(); !bytes.Contains(info, []byte("vcs.revision=")) {
		// Go finds a Git repository only where .git is a directory, so
		// not in a linked work tree (git worktree), where it is a file.
		t.Skipf("the toolchain stamped no VCS revision here (a linked git worktree?): %q", out)
	}
	want := "xfs3 v0.0.0-metrics-test (" + strings.TrimSpace(string(head)) + " "
	if !strings.HasPrefix(string(out), want) || !strings.HasSuffix(string(out), " "+runtime.Version()+"\n") {
		t.Errorf("stamped binary: %q, want %q... %s", out, want, runtime.Version())
	}
}

// TestCacheSizeThroughBinary: --cache-size reaches the volume's caches,
// three quarters for blocks and a quarter for inodes, as docs/configuration.md says.
func TestCacheSizeThroughBinary(t *testing.T) {
	s := startServer(t, "512M", "--cache-size", "8M")
	fams := s.scrapeMetrics(t)
	for cache, want := range map[string]float64{"blocks": 6 << 20, "inodes": 2 << 20} {
		if got, ok := series(fams, "xfs3_metadata_cache_budget_bytes", "cache", cache); !ok || got != want {
			t.Errorf("%s cache budget %v (present %v), want %v", cache, got, ok, want)
		}
	}
}
