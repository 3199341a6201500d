package integration

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// mcInfo is what mc reads of GET /minio/admin/v3/info, by the wire names
// of admin-wire.md.
type mcInfo struct {
	Mode          string                 `json:"mode"`
	DeploymentID  string                 `json:"deploymentID"`
	Buckets       struct{ Count uint64 } `json:"buckets"`
	Objects       struct{ Count uint64 } `json:"objects"`
	Versions      struct{ Count uint64 } `json:"versions"`
	DeleteMarkers struct{ Count uint64 } `json:"deletemarkers"`
	Usage         struct{ Size uint64 }  `json:"usage"`
	Backend       struct {
		Type         string `json:"backendType"`
		OnlineDisks  int    `json:"onlineDisks"`
		OfflineDisks int    `json:"offlineDisks"`
	} `json:"backend"`
	Servers []struct {
		State    string            `json:"state"`
		Endpoint string            `json:"endpoint"`
		Uptime   int64             `json:"uptime"`
		Version  string            `json:"version"`
		Network  map[string]string `json:"network"`
		Drives   []struct {
			Path       string `json:"path"`
			State      string `json:"state"`
			UUID       string `json:"uuid"`
			TotalSpace uint64 `json:"totalspace"`
			UsedSpace  uint64 `json:"usedspace"`
			AvailSpace uint64 `json:"availspace"`
			UsedInodes uint64 `json:"used_inodes"`
			FreeInodes uint64 `json:"free_inodes"`
			Local      bool   `json:"local"`
		} `json:"drives"`
		MemStats       struct{ Alloc, HeapAlloc uint64 } `json:"mem_stats"`
		GoMaxProcs     int                               `json:"go_max_procs"`
		NumCPU         int                               `json:"num_cpu"`
		RuntimeVersion string                            `json:"runtime_version"`
	} `json:"servers"`
}

// mcAdminInfo sends "mc admin info"'s request, signed as mc signs.
func (s *server) mcAdminInfo(t *testing.T) mcInfo {
	t.Helper()
	code, body := s.do(t, "GET", "/minio/admin/v3/info?metrics=false&no-cache=false", nil, mcHeader, "")
	var in mcInfo
	if err := json.Unmarshal(body, &in); err != nil || code != 200 || len(in.Servers) != 1 || len(in.Servers[0].Drives) != 1 {
		t.Fatalf("mc admin info: %d %s (%v)", code, body, err)
	}
	return in
}

// mcPrometheusToken is the bearer token "mc admin prometheus generate"
// prints, made here from its definition (admin-wire.md), not by xfs3.
func mcPrometheusToken(ak, sk string, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	signing := enc([]byte(`{"alg":"HS512","typ":"JWT"}`)) + "." +
		enc(fmt.Appendf(nil, `{"iss":"prometheus","sub":%q,"exp":%d}`, ak, exp.Unix()))
	m := hmac.New(sha512.New, []byte(sk))
	m.Write([]byte(signing))
	return signing + "." + enc(m.Sum(nil))
}

// TestServerInfoThroughBinary replays mc against the real binary: "mc
// admin info" gets MinIO's document with the counts of what the test
// stored and the volume as its drive (UUID and size as xfs_db reads them
// from the image, the same UUID after a restart); "mc ready" and its
// read variant get 200 with MinIO's quorum headers; the scrape config
// of "mc admin prometheus generate" (v2 path, JWT) scrapes.
func TestServerInfoThroughBinary(t *testing.T) {
	s := startServer(t, "1G")
	mustDo := func(method, path, body string) {
		t.Helper()
		if code, b := s.do(t, method, path, []byte(body), nil, region); code != 200 && code != 204 {
			t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
	}
	mustDo("PUT", "/media", "")
	mustDo("PUT", "/media/a.jpg", strings.Repeat("a", 10000))
	mustDo("PUT", "/media/dir/", "")
	mustDo("PUT", "/media/dir/b.jpg", "b")
	mustDo("PUT", "/archive", "")
	mustDo("PUT", "/archive?versioning", `<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`)
	mustDo("PUT", "/archive/k", "one")
	mustDo("PUT", "/archive/k", "two")
	mustDo("PUT", "/archive/gone", "x")
	mustDo("DELETE", "/archive/gone", "")

	in := s.mcAdminInfo(t)
	srv, d := in.Servers[0], in.Servers[0].Drives[0]
	// Objects: a.jpg, dir/, dir/b.jpg, k; versions: those and k's older
	// one and gone's; gone is under a delete marker.
	if in.Mode != "online" || in.Buckets.Count != 2 || in.Objects.Count != 4 || in.Versions.Count != 6 ||
		in.DeleteMarkers.Count != 1 || in.Usage.Size < 10000 {
		t.Errorf("counts: %+v", in)
	}
	if in.Backend.Type != "Erasure" || in.Backend.OnlineDisks != 1 || in.Backend.OfflineDisks != 0 {
		t.Errorf("backend: %+v", in.Backend)
	}
	version := strings.Fields(string(runCLI(t, "version")))[1]
	if srv.State != "online" || srv.Endpoint != s.Host || srv.Network[s.Host] != "online" || srv.Version != version ||
		srv.Uptime < 0 || srv.Uptime > 600 || srv.MemStats.Alloc == 0 || srv.NumCPU < 1 || srv.GoMaxProcs < 1 ||
		!strings.HasPrefix(srv.RuntimeVersion, "go") {
		t.Errorf("server: %+v (xfs3 version %s)", srv, version)
	}
	if d.Path != s.Volume || d.State != "ok" || !d.Local || d.UUID != in.DeploymentID ||
		d.UsedSpace+d.AvailSpace != d.TotalSpace || d.UsedInodes == 0 || d.FreeInodes == 0 {
		t.Errorf("drive: %+v", d)
	}

	// mc ready, mc ready --cluster-read: unsigned.
	for _, p := range []struct{ path, header string }{
		{"/minio/health/cluster", "X-Minio-Write-Quorum"}, {"/minio/health/cluster/read", "X-Minio-Read-Quorum"},
	} {
		for _, m := range []string{"GET", "HEAD"} {
			req, _ := http.NewRequest(m, s.URL+p.path, nil)
			resp, err := rawClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get(p.header) != "1" {
				t.Errorf("%s %s: %s, %s %q", m, p.path, resp.Status, p.header, resp.Header.Get(p.header))
			}
		}
	}

	// The scrape config mc generates: metrics_path /minio/v2/metrics/cluster,
	// bearer_token the JWT.
	scrape := func(token string) (int, *http.Response) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"/minio/v2/metrics/cluster", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := rawClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp
	}
	code, resp := scrape(mcPrometheusToken(accessKey, secretKey, time.Now().Add(100*365*24*time.Hour)))
	if code != 200 {
		t.Fatalf("scrape with mc's token: %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := series(fams, "minio_cluster_bucket_total"); v != 2 {
		t.Errorf("minio_cluster_bucket_total %v, want 2", v)
	}
	if v, _ := series(fams, "minio_cluster_capacity_usable_total_bytes"); v != float64(d.TotalSpace) {
		t.Errorf("usable capacity %v, the drive %d", v, d.TotalSpace)
	}
	if _, ok := series(fams, "xfs3_bucket_used_bytes", "bucket", "media"); !ok {
		t.Error("the v2 path lacks the v3 series xfs3_bucket_used_bytes")
	}
	for name, token := range map[string]string{
		"expired":        mcPrometheusToken(accessKey, secretKey, time.Now().Add(-time.Minute)),
		"another secret": mcPrometheusToken(accessKey, "not-"+secretKey, time.Now().Add(time.Hour)),
	} {
		if code, resp := scrape(token); code != 403 {
			t.Errorf("%s token: %d", name, code)
		} else {
			resp.Body.Close()
		}
	}

	// The volume seen by XFS's own tools: its UUID is the deployment ID,
	// its size less the log the drive's total; a restart keeps both.
	s.stop(t)
	sb := oracle.ParseFields(oracle.DB(t, s.Volume, "sb 0", "print uuid dblocks logblocks blocksize"))
	num := func(f string) uint64 { n, _ := strconv.ParseUint(sb[f], 10, 64); return n }
	if sb["uuid"] != in.DeploymentID {
		t.Errorf("deploymentID %s; xfs_db reads uuid %s", in.DeploymentID, sb["uuid"])
	}
	if want := (num("dblocks") - num("logblocks")) * num("blocksize"); d.TotalSpace != want || want == 0 {
		t.Errorf("drive total %d; xfs_db: (dblocks - logblocks) × blocksize = %d", d.TotalSpace, want)
	}
	s = startServerOn(t, s.Volume, "1G")
	if again := s.mcAdminInfo(t); again.DeploymentID != in.DeploymentID || again.Objects.Count != 4 || again.Servers[0].Endpoint != s.Host {
		t.Errorf("after a restart: deploymentID %s (was %s), %d objects, endpoint %s",
			again.DeploymentID, in.DeploymentID, again.Objects.Count, again.Servers[0].Endpoint)
	}
}
