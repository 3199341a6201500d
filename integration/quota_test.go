package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// mcHeader is what mc sends beside the signature (admin-wire.md).
var mcHeader = http.Header{
	"Accept-Encoding": {"zstd,gzip"},
	"User-Agent":      {"MinIO (linux; amd64) madmin-go/3.0.70 mc/RELEASE.2025-08-13T08-35-41Z"},
}

// quotaEntry is one bucket of GET /minio/admin/v3/xfs3/quota, by the
// wire names.
type quotaEntry struct {
	Bucket    string `json:"bucket"`
	Project   uint32 `json:"project"`
	Bytes     uint64 `json:"bytes"`
	Objects   uint64 `json:"objects"`
	HardBytes uint64 `json:"hard_bytes"`
}

// quotaOf reads one bucket's usage and limits from xfs3's own endpoint.
func (s *server) quotaOf(t *testing.T, bucket string) quotaEntry {
	t.Helper()
	code, body := s.do(t, "GET", "/minio/admin/v3/xfs3/quota?bucket="+bucket, nil, mcHeader, "")
	var r struct {
		Buckets []quotaEntry `json:"buckets"`
	}
	if err := json.Unmarshal(body, &r); err != nil || code != 200 || len(r.Buckets) != 1 || r.Buckets[0].Bucket != bucket {
		t.Fatalf("xfs3/quota?bucket=%s: %d %s", bucket, code, body)
	}
	return r.Buckets[0]
}

// TestQuotaThroughBinary: a bucket quota set the way mc sets it is
// enforced at once by the real server (PUTs until one is refused with
// XMinioAdminBucketQuotaExceeded, usage never past the limit), survives a
// restart (and shows in the start log), is read by mc's info request and
// by "xfs3 quota" and "xfs3 vol quota" alike, and once cleared lets writes
// through again; xfs_repair agrees with every count.
func TestQuotaThroughBinary(t *testing.T) {
	s := startServer(t, "1G")
	if code, body := s.do(t, "PUT", "/qta1", nil, nil, region); code != 200 {
		t.Fatalf("create bucket: %d %s", code, body)
	}
	// mc quota set ALIAS/qta1 --size 1MiB
	const limit = 1 << 20
	code, body := s.do(t, "PUT", "/minio/admin/v3/set-bucket-quota?bucket=qta1",
		fmt.Appendf(nil, `{"quota":%d,"size":0,"rate":0,"requests":0,"quotatype":"hard"}`, limit), mcHeader, "")
	if code != 200 || len(body) != 0 {
		t.Fatalf("set-bucket-quota: %d %q", code, body)
	}
	// mc quota info ALIAS/qta1
	code, body = s.do(t, "GET", "/minio/admin/v3/get-bucket-quota?bucket=qta1", nil, mcHeader, "")
	var info struct {
		Quota, Size uint64
		Type        string `json:"quotatype"`
	}
	if err := json.Unmarshal(body, &info); err != nil || code != 200 || info.Quota != limit || info.Size != limit || info.Type != "hard" {
		t.Fatalf("get-bucket-quota: %d %s", code, body)
	}

	obj := bytes.Repeat([]byte("q"), 100<<10)
	accepted := 0
	for ; ; accepted++ {
		key := fmt.Sprintf("/qta1/o%03d", accepted)
		code, body := s.do(t, "PUT", key, obj, nil, region)
		if code == 200 {
			if accepted > 20 {
				t.Fatalf("%d PUTs of 100 KiB passed a 1 MiB quota", accepted)
			}
			continue
		}
		if code != 400 || s3Code(body) != "XMinioAdminBucketQuotaExceeded" || !strings.Contains(string(body), "Bucket quota exceeded") {
			t.Fatalf("PUT %s over the quota: %d %s", key, code, body)
		}
		if code, _ := s.do(t, "HEAD", key, nil, nil, region); code != 404 {
			t.Errorf("the refused PUT left %s: HEAD %d", key, code)
		}
		break
	}
	u := s.quotaOf(t, "qta1")
	if accepted < 8 || u.Bytes > limit || u.Bytes < uint64(accepted)*uint64(len(obj)) || u.HardBytes != limit || u.Objects != uint64(accepted)+1 {
		t.Errorf("%d PUTs accepted; usage %+v", accepted, u)
	}

	// The limit is on disk: after a restart it holds, and the start log
	// shows the bucket's usage and limit.
	s.stop(t)
	s = startServerOn(t, s.Volume, "1G")
	if code, body := s.do(t, "PUT", "/qta1/again", obj, nil, region); code != 400 || s3Code(body) != "XMinioAdminBucketQuotaExceeded" {
		t.Errorf("PUT over the quota after a restart: %d %s", code, body)
	}
	var logged map[string]any
	for _, l := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(l, `"message":"bucket quota"`) && json.Unmarshal([]byte(l), &logged) == nil && logged["bucket"] == "qta1" {
			break
		}
		logged = nil
	}
	if logged == nil || logged["hard_bytes"] != float64(limit) || logged["bytes"] != float64(u.Bytes) || logged["objects"] != float64(u.Objects) {
		t.Errorf("start log line of qta1: %v", logged)
	}

	// xfs3 quota, the binary, with the server's credentials from the
	// environment, reads the same numbers.
	cli := func(args ...string) string { t.Helper(); return string(runCLI(t, args...)) }
	var report struct {
		Buckets []quotaEntry `json:"buckets"`
	}
	if err := json.Unmarshal([]byte(cli("quota", "get", "qta1", "--json", "--endpoint", s.URL)), &report); err != nil ||
		len(report.Buckets) != 1 || report.Buckets[0] != u {
		t.Errorf("xfs3 quota get: %+v, want %+v (%v)", report.Buckets, u, err)
	}

	// mc quota clear ALIAS/qta1: no quota, writes pass again.
	code, body = s.do(t, "PUT", "/minio/admin/v3/set-bucket-quota?bucket=qta1", []byte(`{"quota":0,"size":0,"rate":0,"requests":0}`), mcHeader, "")
	if code != 200 || len(body) != 0 {
		t.Fatalf("clear: %d %q", code, body)
	}
	code, body = s.do(t, "GET", "/minio/admin/v3/get-bucket-quota?bucket=qta1", nil, mcHeader, "")
	var e struct{ Code, Message string }
	if json.Unmarshal(body, &e); code != 404 || e.Code != "XMinioAdminNoSuchQuotaConfiguration" {
		t.Errorf("get-bucket-quota after clear: %d %s", code, body)
	}
	for i := 0; i < 5; i++ {
		if code, body := s.do(t, "PUT", fmt.Sprintf("/qta1/after%d", i), obj, nil, region); code != 200 {
			t.Fatalf("PUT after clear: %d %s", code, body)
		}
	}
	u = s.quotaOf(t, "qta1")
	if u.HardBytes != 0 || u.Bytes <= limit || u.Objects != uint64(accepted)+6 {
		t.Errorf("usage after clear and five more PUTs: %+v", u)
	}

	// Stopped: xfs_repair checks the dquot counts against the inodes, and
	// xfs3 vol quota reads what the server reported.
	s.stop(t)
	oracle.Repair(t, s.Volume)
	if err := json.Unmarshal([]byte(cli("vol", "quota", "get", "--json", s.Volume, "qta1")), &report); err != nil ||
		len(report.Buckets) != 1 || report.Buckets[0] != u {
		t.Errorf("xfs3 vol quota get: %+v, want %+v (%v)", report.Buckets, u, err)
	}
	f := oracle.ParseFields(oracle.DB(t, s.Volume, fmt.Sprintf("dquot -p %d", u.Project), "print"))
	if f["diskdq.blk_hardlimit"] != "0" || f["diskdq.icount"] != fmt.Sprint(u.Objects) || f["diskdq.bcount"] != fmt.Sprint(u.Bytes/4096) {
		t.Errorf("xfs_db dquot of project %d: hard %s, icount %s, bcount %s; want 0, %d, %d",
			u.Project, f["diskdq.blk_hardlimit"], f["diskdq.icount"], f["diskdq.bcount"], u.Objects, u.Bytes/4096)
	}
}
