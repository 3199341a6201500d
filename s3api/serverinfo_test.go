package s3api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// mcServerInfo is the server-info document as mc decodes it: the field
// names of madmin's InfoMessage, written here from the wire facts
// (admin-wire.md), not from our own types.
type mcServerInfo struct {
	Mode         string `json:"mode"`
	DeploymentID string `json:"deploymentID"`
	Buckets      struct {
		Count uint64 `json:"count"`
		Error string `json:"error"`
	} `json:"buckets"`
	Objects struct {
		Count uint64 `json:"count"`
		Error string `json:"error"`
	} `json:"objects"`
	Versions struct {
		Count uint64 `json:"count"`
	} `json:"versions"`
	DeleteMarkers struct {
		Count uint64 `json:"count"`
	} `json:"deletemarkers"`
	Usage struct {
		Size uint64 `json:"size"`
	} `json:"usage"`
	Backend struct {
		Type             string `json:"backendType"`
		OnlineDisks      int    `json:"onlineDisks"`
		OfflineDisks     int    `json:"offlineDisks"`
		StandardSCParity int    `json:"standardSCParity"`
		TotalSets        []int  `json:"totalSets"`
		DrivesPerSet     []int  `json:"totalDrivesPerSet"`
	} `json:"backend"`
	Servers []struct {
		State    string            `json:"state"`
		Endpoint string            `json:"endpoint"`
		Uptime   int64             `json:"uptime"`
		Version  string            `json:"version"`
		CommitID string            `json:"commitID"`
		Network  map[string]string `json:"network"`
		Drives   []struct {
			Endpoint   string `json:"endpoint"`
			Path       string `json:"path"`
			State      string `json:"state"`
			UUID       string `json:"uuid"`
			TotalSpace uint64 `json:"totalspace"`
			UsedSpace  uint64 `json:"usedspace"`
			AvailSpace uint64 `json:"availspace"`
			UsedInodes uint64 `json:"used_inodes"`
			FreeInodes uint64 `json:"free_inodes"`
			Local      bool   `json:"local"`
			PoolIndex  int    `json:"pool_index"`
			SetIndex   int    `json:"set_index"`
			DiskIndex  int    `json:"disk_index"`
		} `json:"drives"`
		PoolNumbers []int `json:"poolNumbers"`
		MemStats    struct {
			Alloc, TotalAlloc, Mallocs, Frees, HeapAlloc uint64
		} `json:"mem_stats"`
		GoMaxProcs     int    `json:"go_max_procs"`
		NumCPU         int    `json:"num_cpu"`
		RuntimeVersion string `json:"runtime_version"`
	} `json:"servers"`
}

// mcInfoTarget is the request "mc admin info" sends.
const mcInfoTarget = admin.Prefix + "/info?metrics=false&no-cache=false"

// serverInfo asks for the document as mc does and decodes it.
func (ts *testServer) serverInfo(t *testing.T, target string) mcServerInfo {
	t.Helper()
	resp, body := ts.mcDo(t, http.MethodGet, target, nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("info: %d %s", resp.StatusCode, body)
	}
	var in mcServerInfo
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatalf("info: %v\n%s", err, body)
	}
	return in
}

// offsetClock is time.Now moved by an offset the test sets (signatures
// stay within the allowed skew).
type offsetClock struct{ off atomic.Int64 }

func (c *offsetClock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *offsetClock) advance(d time.Duration) { c.off.Add(int64(d)) }

var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestServerInfo: mc's info request is answered with MinIO's document,
// every value checked against the store: the counts of a walk (kept
// until stale or refreshed with no-cache=true), the usage the quotas
// charge, the volume as the drive, the build and the runtime.
func TestServerInfo(t *testing.T) {
	clock := &offsetClock{}
	v := admin.Version{Version: "v1.2.3", Revision: "0123abcd", Go: runtime.Version()}
	ts := newTestServer(t, func(c *Config) { c.Version, c.Volume, c.Now = v, "/srv/xfs3/volume.xfs", clock.now })
	mustBucket(t, ts, "photos")
	mustBucket(t, ts, "docs")
	for _, k := range []string{"a.jpg", "p/", "p/q.jpg"} {
		mustPut(t, ts, "photos", k, strings.Repeat("x", 5000), store.Meta{})
	}
	if err := ts.store.Versions().SetState("docs", store.VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	mustPut(t, ts, "docs", "k", "one", store.Meta{})
	mustPut(t, ts, "docs", "k", "two", store.Meta{})
	mustPut(t, ts, "docs", "gone", "x", store.Meta{})
	if _, err := ts.store.Versions().Delete("docs", "gone", ""); err != nil {
		t.Fatal(err)
	}
	clock.advance(90 * time.Second)

	in := ts.serverInfo(t, mcInfoTarget)
	// photos: 3 objects; docs: k (two versions), gone (a version under
	// a delete marker: not an object).
	if in.Mode != "online" || in.Buckets.Count != 2 || in.Objects.Count != 4 || in.Versions.Count != 6 ||
		in.DeleteMarkers.Count != 1 || in.Objects.Error != "" {
		t.Errorf("mode and counts: %+v", in)
	}
	usage, err := ts.store.Quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	var charged uint64
	for _, u := range usage {
		charged += u.Bytes
	}
	if in.Usage.Size != charged || charged < 3*5000 {
		t.Errorf("usage %d, the quotas charge %d", in.Usage.Size, charged)
	}
	b := in.Backend
	if b.Type != "Erasure" || b.OnlineDisks != 1 || b.OfflineDisks != 0 || b.StandardSCParity != 0 ||
		fmt.Sprint(b.TotalSets, b.DrivesPerSet) != "[1] [1]" {
		t.Errorf("backend %+v", b)
	}
	if len(in.Servers) != 1 || len(in.Servers[0].Drives) != 1 {
		t.Fatalf("servers %+v", in.Servers)
	}
	srv, d := in.Servers[0], in.Servers[0].Drives[0]
	host := strings.TrimPrefix(ts.url, "http://")
	if srv.State != "online" || srv.Endpoint != host || srv.Network[host] != "online" || len(srv.Network) != 1 ||
		srv.Version != "v1.2.3" || srv.CommitID != "0123abcd" || srv.Uptime < 90 || srv.Uptime > 150 ||
		fmt.Sprint(srv.PoolNumbers) != "[1]" {
		t.Errorf("server %+v", srv)
	}
	if srv.MemStats.Alloc == 0 || srv.MemStats.TotalAlloc < srv.MemStats.Alloc || srv.MemStats.Mallocs == 0 ||
		srv.NumCPU != runtime.NumCPU() || srv.GoMaxProcs != runtime.GOMAXPROCS(0) || srv.RuntimeVersion != runtime.Version() {
		t.Errorf("runtime %+v", srv)
	}

	// The drive is the volume: its XFS UUID, its space as df shows it.
	u := ts.store.Volume().Superblock().UUID
	id := fmt.Sprintf("%x-%x-%x-%x-%x", u[:4], u[4:6], u[6:8], u[8:10], u[10:])
	if !uuidForm.MatchString(in.DeploymentID) || in.DeploymentID != id || d.UUID != id {
		t.Errorf("deploymentID %q, drive uuid %q; the volume's UUID is %s", in.DeploymentID, d.UUID, id)
	}
	vs, err := ts.store.VolumeStats()
	if err != nil {
		t.Fatal(err)
	}
	bs := uint64(vs.BlockSize)
	if d.TotalSpace != (vs.Blocks-vs.LogBlocks)*bs || d.TotalSpace >= 512<<20 || d.TotalSpace < 400<<20 ||
		d.UsedSpace+d.AvailSpace != d.TotalSpace || d.UsedSpace == 0 {
		t.Errorf("drive space %+v; volume %d blocks of %d, log %d", d, vs.Blocks, bs, vs.LogBlocks)
	}
	if d.UsedInodes != vs.Inodes-vs.FreeInodes || d.FreeInodes < vs.FreeInodes || d.UsedInodes < 8 {
		t.Errorf("drive inodes %+v; volume %d allocated, %d free", d, vs.Inodes, vs.FreeInodes)
	}
	if d.State != "ok" || !d.Local || d.Path != "/srv/xfs3/volume.xfs" || d.Endpoint != d.Path ||
		d.PoolIndex != 0 || d.SetIndex != 0 || d.DiskIndex != 0 {
		t.Errorf("drive %+v", d)
	}

	// Counts are kept a minute; no-cache=true (mc's --no-cache) walks.
	mustPut(t, ts, "photos", "b.jpg", "b", store.Meta{})
	if again := ts.serverInfo(t, mcInfoTarget); again.Objects.Count != 4 {
		t.Errorf("fresh counts were walked again: %d objects", again.Objects.Count)
	}
	if again := ts.serverInfo(t, admin.Prefix+"/info?metrics=false&no-cache=true"); again.Objects.Count != 5 {
		t.Errorf("no-cache: %d objects, want 5", again.Objects.Count)
	}
	mustPut(t, ts, "photos", "c.jpg", "c", store.Meta{})
	clock.advance(admin.MinCountAge)
	if again := ts.serverInfo(t, mcInfoTarget); again.Objects.Count != 6 || again.Versions.Count != 8 {
		t.Errorf("after %v: %d objects, %d versions; want 6, 8", admin.MinCountAge, again.Objects.Count, again.Versions.Count)
	}
}

// mcDoAs is mcDo signed with another key.
func (ts *testServer) mcDoAs(t *testing.T, ak, sk, method, target string) (*http.Response, []byte) {
	t.Helper()
	req := ts.rawRequest(t, method, target, nil, http.Header{"Accept-Encoding": {"zstd,gzip"}})
	req.Header.Set("X-Amz-Content-Sha256", hexSHA256(nil))
	return send(t, signer.SignV4(*req, ak, sk, "", ""))
}

// addUser makes a user with a policy allowing actions (none: no policy).
func (ts *testServer) addUser(t *testing.T, ak, sk string, actions ...string) {
	t.Helper()
	c, root := ctx(t), ts.adminClient(testAccessKey, testSecretKey)
	if err := root.AddUser(c, ak, sk, true); err != nil {
		t.Fatal(err)
	}
	if len(actions) == 0 {
		return
	}
	doc, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Effect": "Allow", "Action": actions, "Resource": []string{"arn:aws:s3:::*"}}}})
	if err := root.AddPolicy(c, ak+"-policy", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := root.AttachPolicies(c, ak, ak+"-policy"); err != nil {
		t.Fatal(err)
	}
}

// TestServerInfoAuthorization: the info call is admin:ServerInfo, as in
// MinIO: root, or a user whose policy allows it.
func TestServerInfoAuthorization(t *testing.T) {
	ts := newTestServer(t)
	ts.addUser(t, "watcher", "watcher-secret", "admin:ServerInfo")
	ts.addUser(t, "nobody", "nobody-secret")
	if resp, body := ts.mcDoAs(t, "watcher", "watcher-secret", http.MethodGet, mcInfoTarget); resp.StatusCode != http.StatusOK {
		t.Errorf("user allowed admin:ServerInfo: %d %s", resp.StatusCode, body)
	}
	resp, body := ts.mcDoAs(t, "nobody", "nobody-secret", http.MethodGet, mcInfoTarget)
	wantJSONError(t, resp, body, http.StatusForbidden, "AccessDenied")
	resp, body = send(t, ts.rawRequest(t, http.MethodGet, mcInfoTarget, nil, nil))
	wantJSONError(t, resp, body, http.StatusForbidden, "AccessDenied")
}

// probe sends an unsigned health probe and returns its status and the
// header named (if any).
func (ts *testServer) probe(t *testing.T, method, path, header string) (int, string) {
	t.Helper()
	resp, _ := send(t, ts.rawRequest(t, method, path, nil, nil))
	return resp.StatusCode, resp.Header.Get(header)
}

// TestHealthCluster: mc ready's probes, unsigned, GET and HEAD: 200 with
// MinIO's quorum headers while the volume accepts changes; once a
// failed write shuts it down, writes report 503 and reads 200, and the
// info document shows the drive faulty. Maintenance is never safe for
// the only server.
func TestHealthCluster(t *testing.T) {
	img := filepath.Join(t.TempDir(), "h.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	d, closeBase, err := dev.OpenFault(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBase() })
	v, err := xfs.OpenDevice(d, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	st, err := store.New(v)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServerOn(t, st)
	check := func(when, path string, status int, header, value string) {
		t.Helper()
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			if got, h := ts.probe(t, m, path, header); got != status || h != value {
				t.Errorf("%s: %s %s: %d, %s %q; want %d, %q", when, m, path, got, header, h, status, value)
			}
		}
	}
	check("healthy", "/minio/health/cluster", 200, "X-Minio-Write-Quorum", "1")
	check("healthy", "/minio/health/cluster/read", 200, "X-Minio-Read-Quorum", "1")
	check("healthy", "/minio/health/cluster?maintenance=true", 412, "X-Minio-Write-Quorum", "1")
	check("healthy", "/minio/health/cluster/read?maintenance=true", 412, "X-Minio-Read-Quorum", "1")
	if in := ts.serverInfo(t, mcInfoTarget); in.Servers[0].Drives[0].State != "ok" {
		t.Errorf("healthy drive: %+v", in.Servers[0].Drives[0])
	}

	d.Cut()
	if err := ts.store.CreateBucket("lost"); err == nil || ts.store.Err() == nil {
		t.Fatalf("a write after the cut: %v; volume error %v", err, ts.store.Err())
	}
	check("shut down", "/minio/health/cluster", 503, "X-Minio-Write-Quorum", "1")
	check("shut down", "/minio/health/cluster/read", 200, "X-Minio-Read-Quorum", "1")
	resp, body := send(t, ts.rawRequest(t, http.MethodGet, "/minio/health/cluster", nil, nil))
	wantJSONError(t, resp, body, 503, "XMinioServerNotInitialized")
	in := ts.serverInfo(t, mcInfoTarget)
	if in.Servers[0].Drives[0].State != "faulty" || in.Backend.OnlineDisks != 0 || in.Backend.OfflineDisks != 1 {
		t.Errorf("shut down: drive %+v, backend %+v", in.Servers[0].Drives[0], in.Backend)
	}
}

// scrapeAt fetches a metrics path with an Authorization header.
func (ts *testServer) scrapeAt(t *testing.T, path, authz string) (*http.Response, []byte) {
	t.Helper()
	req := ts.rawRequest(t, http.MethodGet, path, nil, nil)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	return send(t, req)
}

// TestPrometheusToken: a token made as "mc admin prometheus generate"
// makes it scrapes /minio/v2/metrics/cluster (and v3): every v3 series
// and MinIO's v2 names with the volume's values. An expired token, one
// signed with another secret or by a key without admin:Prometheus is
// refused; the older token keeps working.
func TestPrometheusToken(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "one")
	mustBucket(t, ts, "two")
	ts.addUser(t, "scraper", "scraper-secret", "admin:Prometheus")
	ts.addUser(t, "viewer", "viewer-secret", "admin:ServerInfo")
	year := time.Now().Add(100 * 365 * 24 * time.Hour) // mc's expiry
	mc := admin.PrometheusToken(testAccessKey, testSecretKey, year)

	resp, v2 := ts.scrapeAt(t, metricsV2Path, "Bearer "+mc)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("v2 scrape with mc's token: %d %s", resp.StatusCode, v2)
	}
	v2fams := parseMetrics(t, v2)
	resp, v3 := ts.scrapeAt(t, metricsPath, "Bearer "+mc)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("v3 scrape with mc's token: %d %s", resp.StatusCode, v3)
	}
	for name := range parseMetrics(t, v3) {
		if v2fams[name] == nil {
			t.Errorf("v2 lacks the v3 series %s", name)
		}
	}
	vs, err := ts.store.VolumeStats()
	if err != nil {
		t.Fatal(err)
	}
	total := float64((vs.Blocks - vs.LogBlocks) * uint64(vs.BlockSize))
	for name, want := range map[string]float64{
		"minio_cluster_capacity_raw_total_bytes": total, "minio_cluster_capacity_usable_total_bytes": total,
		"minio_cluster_bucket_total": 2, "minio_cluster_drive_online_total": 1, "minio_cluster_drive_offline_total": 0,
		"minio_cluster_drive_total": 1, "minio_cluster_nodes_online_total": 1, "minio_cluster_health_status": 1,
		"minio_cluster_write_quorum": 1,
	} {
		if _, ok := v2fams[name]; !ok || metricValue(v2fams, name) != want {
			t.Errorf("%s = %v, want %v", name, metricValue(v2fams, name), want)
		}
	}
	if free := metricValue(v2fams, "minio_cluster_capacity_usable_free_bytes"); free <= 0 || free > total {
		t.Errorf("usable free %v of %v", free, total)
	}

	for _, c := range []struct {
		name, authz string
		status      int
	}{
		{"a user allowed admin:Prometheus", "Bearer " + admin.PrometheusToken("scraper", "scraper-secret", year), 200},
		{"the older token", "Bearer " + admin.MetricsToken(testAccessKey, testSecretKey), 200},
		{"expired", "Bearer " + admin.PrometheusToken(testAccessKey, testSecretKey, time.Now().Add(-time.Second)), 403},
		{"another secret", "Bearer " + admin.PrometheusToken(testAccessKey, "not-the-secret", year), 403},
		{"unknown key", "Bearer " + admin.PrometheusToken("ghost", "ghost-secret", year), 403},
		{"a user without admin:Prometheus", "Bearer " + admin.PrometheusToken("viewer", "viewer-secret", year), 403},
		{"truncated", "Bearer " + mc[:len(mc)-2], 403},
		{"none", "", 403},
	} {
		for _, path := range []string{metricsV2Path, metricsPath} {
			resp, body := ts.scrapeAt(t, path, c.authz)
			if resp.StatusCode != c.status {
				t.Errorf("%s on %s: %d %s", c.name, path, resp.StatusCode, body)
			} else if c.status != 200 {
				wantJSONError(t, resp, body, c.status, "AccessDenied")
			}
		}
	}
	// Signed scrapes follow the same rule: root, or admin:Prometheus.
	for _, c := range []struct {
		ak, sk string
		status int
	}{{"scraper", "scraper-secret", 200}, {"viewer", "viewer-secret", 403}} {
		if resp, body := ts.mcDoAs(t, c.ak, c.sk, http.MethodGet, metricsV2Path); resp.StatusCode != c.status {
			t.Errorf("scrape signed by %s: %d %s", c.ak, resp.StatusCode, body)
		}
	}
}

// TestMetricsV2Access: the v2 path follows metrics_auth as v3 does.
func TestMetricsV2Access(t *testing.T) {
	public := newTestServer(t, func(c *Config) { c.Metrics = MetricsPublic })
	if resp, body := public.scrapeAt(t, metricsV2Path, ""); resp.StatusCode != 200 || !strings.Contains(string(body), "minio_cluster_drive_total 1") {
		t.Errorf("public v2 scrape: %d %.200s", resp.StatusCode, body)
	}
	off := newTestServer(t, func(c *Config) { c.Metrics = MetricsOff })
	mc := admin.PrometheusToken(testAccessKey, testSecretKey, time.Now().Add(time.Hour))
	if resp, body := off.scrapeAt(t, metricsV2Path, "Bearer "+mc); resp.StatusCode != 404 {
		t.Errorf("v2 scrape with metrics off: %d %s", resp.StatusCode, body)
	}
}
