package s3api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
)

// scrape fetches and parses the metrics with the bearer token.
func (ts *testServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	req := ts.rawRequest(t, http.MethodGet, metricsPath, nil, nil)
	req.Header.Set("Authorization", "Bearer "+admin.MetricsToken(testAccessKey, testSecretKey))
	resp, body := send(t, req)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %s", resp.StatusCode, body)
	}
	return parseMetrics(t, body)
}

func parseMetrics(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse metrics: %v\n%s", err, body)
	}
	return fams
}

// metricValue is the value of the series of family name whose labels
// include want ("k", "v" pairs); 0 when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == want[i] && l.GetValue() == want[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// opCount is what the test expects of one operation.
type opCount struct {
	byStatus map[int]int
	in, out  int64
}

// TestMetricsCountRequests runs a seeded random workload of raw signed
// requests and checks every request count and byte count exactly.
func TestMetricsCountRequests(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	ts := newTestServer(t)
	mustBucket(t, ts, "mtr")
	want := map[string]*opCount{}
	count := func(op string, status int, in, out int) {
		c := want[op]
		if c == nil {
			c = &opCount{byStatus: map[int]int{}}
			want[op] = c
		}
		c.byStatus[status]++
		c.in += int64(in)
		c.out += int64(out)
	}
	objects := map[string]int{}
	for i := 0; i < 200; i++ {
		key := fmt.Sprintf("k%d", rng.IntN(20))
		switch rng.IntN(5) {
		case 0, 1:
			body := bytes.Repeat([]byte{byte(i)}, rng.IntN(40000))
			resp, rb := ts.do(t, http.MethodPut, "/mtr/"+key, body, nil)
			count("PutObject", resp.StatusCode, len(body), len(rb))
			objects[key] = len(body)
		case 2:
			resp, rb := ts.do(t, http.MethodGet, "/mtr/"+key, nil, nil)
			if _, ok := objects[key]; ok != (resp.StatusCode == http.StatusOK) {
				t.Fatalf("GET %s: %d", key, resp.StatusCode)
			}
			count("GetObject", resp.StatusCode, 0, len(rb))
		case 3:
			resp, rb := ts.do(t, http.MethodHead, "/mtr/"+key, nil, nil)
			count("HeadObject", resp.StatusCode, 0, len(rb))
		case 4:
			resp, rb := ts.do(t, http.MethodDelete, "/mtr/"+key, nil, nil)
			count("DeleteObject", resp.StatusCode, 0, len(rb))
			delete(objects, key)
		}
	}
	// Refused before any operation was chosen: a bad signature.
	req := ts.rawRequest(t, http.MethodGet, "/mtr/k1", nil, nil)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=nobody/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00")
	resp, rb := send(t, req)
	count("Unknown", resp.StatusCode, 0, len(rb))

	first := ts.scrape(t)
	fams := ts.scrape(t)
	for op, c := range want {
		for status, n := range c.byStatus {
			got := metricValue(fams, "xfs3_requests_total", "op", op, "status", strconv.Itoa(status))
			if got != float64(n) {
				t.Errorf("%s %d: %v requests, want %d", op, status, got, n)
			}
		}
		total := 0
		for _, n := range c.byStatus {
			total += n
		}
		if got := metricValue(fams, "xfs3_request_duration_seconds", "op", op); got != float64(total) {
			t.Errorf("%s: %v latency observations, want %d", op, got, total)
		}
		if got := metricValue(fams, "xfs3_request_received_bytes_total", "op", op); got != float64(c.in) {
			t.Errorf("%s: %v bytes received, want %d", op, got, c.in)
		}
		if got := metricValue(fams, "xfs3_request_sent_bytes_total", "op", op); got != float64(c.out) {
			t.Errorf("%s: %v bytes sent, want %d", op, got, c.out)
		}
	}
	// The first scrape counts in the second, with the bytes it sent.
	if got := metricValue(fams, "xfs3_requests_total", "op", "Metrics", "status", "200"); got != 1 {
		t.Errorf("Metrics: %v scrapes counted, want 1", got)
	}
	if metricValue(first, "xfs3_requests_total", "op", "Metrics", "status", "200") != 0 {
		t.Error("the first scrape counted itself")
	}
	var stored float64
	for _, n := range objects {
		stored += float64(n)
	}
	if got := metricValue(fams, "xfs3_bucket_used_bytes", "bucket", "mtr"); got < stored {
		t.Errorf("bucket m charged %v bytes, holds %v", got, stored)
	}
	if metricValue(fams, "xfs3_volume_free_bytes") <= 0 || metricValue(fams, "xfs3_volume_inodes") <= 0 {
		t.Error("volume free space or inodes missing")
	}
	if metricValue(fams, "xfs3_log_commits_total") <= 0 || metricValue(fams, "xfs3_log_writes_total") <= 0 ||
		metricValue(fams, "xfs3_log_size_bytes") <= 0 {
		t.Error("log counters missing")
	}
	if metricValue(fams, "xfs3_metadata_cache_hits_total", "cache", "blocks") <= 0 || metricValue(fams, "xfs3_metadata_cache_bytes", "cache", "inodes") <= 0 {
		t.Error("metadata cache counters missing")
	}
	if got := metricValue(fams, "xfs3_inodegc_pending"); got != 0 {
		t.Errorf("inodegc pending %v after a drain, want 0", got)
	}
	for _, m := range fams["xfs3_inodegc_queue_depth"].GetMetric() {
		if m.Gauge.GetValue() != 0 {
			t.Errorf("inodegc queue %v: depth %v after a drain", m.GetLabel(), m.Gauge.GetValue())
		}
	}
}

// TestMetricsAccess checks who may scrape under each setting.
func TestMetricsAccess(t *testing.T) {
	token := admin.MetricsToken(testAccessKey, testSecretKey)
	cases := []struct {
		access MetricsAccess
		authz  string // "" none, "sigv4" signed, else the header
		status int
	}{
		{MetricsRoot, "", http.StatusForbidden},
		{MetricsRoot, "Bearer " + token, http.StatusOK},
		{MetricsRoot, "Bearer " + token[:len(token)-1] + "0", http.StatusForbidden},
		{MetricsRoot, "Bearer " + admin.MetricsToken(testAccessKey, "another secret"), http.StatusForbidden},
		{MetricsRoot, "Bearer nobody:00", http.StatusForbidden},
		{MetricsRoot, "sigv4", http.StatusOK},
		{"", "Bearer " + token, http.StatusOK},
		{MetricsPublic, "", http.StatusOK},
		{MetricsOff, "Bearer " + token, http.StatusNotFound},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%.12s", c.access, c.authz), func(t *testing.T) {
			ts := newTestServer(t, func(conf *Config) { conf.Metrics = c.access })
			req := ts.rawRequest(t, http.MethodGet, metricsPath, nil, nil)
			switch c.authz {
			case "":
			case "sigv4":
				req = signed(t, req, nil)
			default:
				req.Header.Set("Authorization", c.authz)
			}
			resp, body := send(t, req)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status == http.StatusOK {
				if fams := parseMetrics(t, body); fams["xfs3_build_info"] == nil {
					t.Error("no xfs3_build_info")
				}
			} else if !strings.Contains(string(body), `"Code"`) {
				t.Errorf("error answer is not an admin JSON error: %s", body)
			}
		})
	}
	if _, err := New(Config{Store: newTestServer(t).store, Credentials: map[string]string{"a": "b"}, Metrics: "sometimes"}); err == nil {
		t.Error("an unknown metrics access was accepted")
	}
}

// TestLogSampling: one in N successful requests is logged, every failure.
func TestLogSampling(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.LogSampleEvery = 4 })
	mustBucket(t, ts, "bkt")
	for i := 0; i < 12; i++ {
		ts.do(t, http.MethodPut, "/bkt/k", []byte("x"), nil)
	}
	for i := 0; i < 3; i++ {
		ts.do(t, http.MethodGet, "/bkt/missing", nil, nil)
	}
	var ok, failed int
	for _, line := range strings.Split(strings.TrimSpace(ts.log.String()), "\n") {
		var ev struct {
			Op        string `json:"op"`
			ErrorCode string `json:"error_code"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch {
		case ev.Op == "PutObject" && ev.ErrorCode == "":
			ok++
		case ev.Op == "GetObject" && ev.ErrorCode == "NoSuchKey":
			failed++
		}
	}
	if ok != 3 || failed != 3 {
		t.Errorf("%d successful and %d failed requests logged, want 3 and 3:\n%s", ok, failed, ts.log)
	}
}

// TestLogLevel: a logger above info level drops request lines but keeps
// internal errors (logged at error level).
func TestLogLevel(t *testing.T) {
	buf := &syncBuffer{}
	ts := newTestServer(t, func(c *Config) { c.Logger = zerolog.New(buf).Level(zerolog.WarnLevel) })
	mustBucket(t, ts, "bkt")
	ts.do(t, http.MethodPut, "/bkt/k", []byte("x"), nil)
	if buf.String() != "" {
		t.Errorf("request logged at warn level: %s", buf)
	}
}

// TestAdminInfo checks the info document against what the store holds.
func TestAdminInfo(t *testing.T) {
	v := admin.Version{Version: "v9.9.9", Revision: "abc", Go: "go1.x"}
	ts := newTestServer(t, func(c *Config) { c.Version = v })
	mustBucket(t, ts, "bkt1")
	mustBucket(t, ts, "bkt2")
	mustPut(t, ts, "bkt1", "k", strings.Repeat("x", 10000), store.Meta{})
	if err := ts.store.Quotas().Set("bkt2", store.BucketQuota{HardBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	// A copy of a 1 MiB object shares its 256 blocks.
	mustPut(t, ts, "bkt1", "big", strings.Repeat("y", 1<<20), store.Meta{})
	if _, err := ts.store.CopyObject("bkt1", "big", "bkt2", "copy", nil); err != nil {
		t.Fatal(err)
	}
	resp, body := ts.mcDo(t, http.MethodGet, admin.Prefix+admin.PathInfo, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("info: %d %s", resp.StatusCode, body)
	}
	var in admin.Info
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	if in.Version != v || in.Durability != admin.DurableOnAck || !in.Writable || in.GC.Mode == "" {
		t.Errorf("info header: %+v", in)
	}
	if in.Volume.BlockSize != 4096 || in.Volume.SizeBytes != 512<<20 || in.Volume.FreeBytes == 0 ||
		in.Volume.UsedBytes+in.Volume.FreeBytes+uint64(in.Volume.LogBytes) != in.Volume.SizeBytes ||
		in.Volume.SharedBytes != 1<<20 || in.Volume.SavedBytes != 1<<20 {
		t.Errorf("volume: %+v", in.Volume)
	}
	if len(in.Buckets) != 2 || in.Buckets[0].Bucket != "bkt1" || in.Buckets[0].Bytes < 10000 ||
		in.Buckets[1].HardBytes != 1<<20 || in.Buckets[0].Created.IsZero() {
		t.Errorf("buckets: %+v", in.Buckets)
	}
	unsigned, _ := send(t, ts.rawRequest(t, http.MethodGet, admin.Prefix+admin.PathInfo, nil, nil))
	if unsigned.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned info request: %d", unsigned.StatusCode)
	}
}
