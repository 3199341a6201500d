package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/xfs3/xfs3/xfs/oracle"
)

const pathLifecycle = "/minio/admin/v3/xfs3/lifecycle"

// lifecycleDoc is the part of GET /xfs3/lifecycle the tests read.
type lifecycleDoc struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	DaySeconds      float64 `json:"day_seconds"`
	Passes          uint64  `json:"passes"`
	Totals          struct {
		Expired    int64 `json:"expired"`
		Versions   int64 `json:"noncurrent_deleted"`
		Markers    int64 `json:"markers_removed"`
		Uploads    int64 `json:"uploads_aborted"`
		BytesFreed int64 `json:"bytes_freed"`
	} `json:"totals"`
}

func (s *server) lifecycleStatus(t *testing.T) lifecycleDoc {
	t.Helper()
	code, raw := s.do(t, "GET", pathLifecycle, nil, nil, "")
	var d lifecycleDoc
	if code != 200 || json.Unmarshal(raw, &d) != nil {
		t.Fatalf("GET %s: %d %s", pathLifecycle, code, raw)
	}
	return d
}

// waitUntil polls cond for up to a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLifecycleAwsCLI: the real server with a lifecycle day of two
// seconds and a pass every second. The aws CLI sets rules (expiry of a
// prefix, noncurrent versions beyond the newest, expired delete markers,
// abandoned uploads) and reads them back; objects show x-amz-expiration;
// what the rules say goes, goes on time, and the rest stays; the space
// comes back (statfs, and the volume file's allocated size after trim);
// xfs_repair is clean at the end.
func TestLifecycleAwsCLI(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	s := startServer(t, "512M", "--lifecycle-day", "2s", "--lifecycle-interval", "1s", "--trim-interval", "1s")
	aws, home := awsClient(t, s)
	c := s.client(t)
	ctx := t.Context()
	logOff, logLen := oracle.LogRange(t, s.Volume)
	allocated := func() int64 { return oracle.AllocatedOutside(t, s.Volume, logOff, logLen) }

	aws.run("s3api", "create-bucket", "--bucket", "logs")
	aws.run("s3api", "create-bucket", "--bucket", "docs")
	aws.run("s3api", "put-bucket-versioning", "--bucket", "docs", "--versioning-configuration", "Status=Enabled")
	rules := filepath.Join(home, "rules.json")
	os.WriteFile(rules, []byte(`{"Rules":[
 {"ID":"tmp","Status":"Enabled","Filter":{"Prefix":"tmp/"},"Expiration":{"Days":1}},
 {"ID":"uploads","Status":"Enabled","Filter":{"Prefix":""},"AbortIncompleteMultipartUpload":{"DaysAfterInitiation":1}}]}`), 0o644)
	aws.run("s3api", "put-bucket-lifecycle-configuration", "--bucket", "logs", "--lifecycle-configuration", "file://"+rules)
	var got struct{ Rules []struct{ ID, Status string } }
	decode(t, aws.run("s3api", "get-bucket-lifecycle-configuration", "--bucket", "logs"), &got)
	if len(got.Rules) != 2 || got.Rules[0].ID != "tmp" || got.Rules[1].Status != "Enabled" {
		t.Fatalf("get-bucket-lifecycle-configuration: %+v", got)
	}
	os.WriteFile(rules, []byte(`{"Rules":[
 {"ID":"old","Status":"Enabled","Filter":{"Prefix":"reports/"},"NoncurrentVersionExpiration":{"NoncurrentDays":1,"NewerNoncurrentVersions":1}},
 {"ID":"trash","Status":"Enabled","Filter":{"Prefix":"trash/"},"NoncurrentVersionExpiration":{"NoncurrentDays":1},"Expiration":{"ExpiredObjectDeleteMarker":true}}]}`), 0o644)
	aws.run("s3api", "put-bucket-lifecycle-configuration", "--bucket", "docs", "--lifecycle-configuration", "file://"+rules)

	// Space: 8 MiB under tmp/ that will expire.
	big := bytes.Repeat([]byte("expiring bytes. "), 512<<10)
	mustPut(t, ctx, c, "logs", "tmp/big.log", big, minio.PutObjectOptions{})
	// Measured at once: a lifecycle day is 2 s here, and the aws CLI calls
	// below can take longer than that, so the object may expire before
	// they end. What the other writes add is far below the slack.
	usedBefore := s.volumeUsed(t)
	allocBefore := allocated()
	mustPut(t, ctx, c, "logs", "tmp/small.log", []byte("small"), minio.PutObjectOptions{})
	mustPut(t, ctx, c, "logs", "keep/app.log", []byte("kept"), minio.PutObjectOptions{})
	var head struct{ Expiration string }
	decode(t, aws.run("s3api", "head-object", "--bucket", "logs", "--key", "tmp/small.log"), &head)
	if !strings.Contains(head.Expiration, `rule-id="tmp"`) || !strings.Contains(head.Expiration, "expiry-date=") {
		t.Errorf("head-object Expiration: %q", head.Expiration)
	}
	var upload struct{ UploadId string }
	decode(t, aws.run("s3api", "create-multipart-upload", "--bucket", "logs", "--key", "keep/abandoned"), &upload)
	for i := 0; i < 4; i++ {
		mustPut(t, ctx, c, "docs", "reports/q.txt", fmt.Appendf(nil, "version %d", i), minio.PutObjectOptions{})
	}
	mustPut(t, ctx, c, "docs", "trash/gone.txt", []byte("deleted soon"), minio.PutObjectOptions{})
	if err := c.RemoveObject(ctx, "docs", "trash/gone.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	waitUntil(t, "expiry of tmp/", func() bool {
		_, err := c.StatObject(ctx, "logs", "tmp/big.log", minio.StatObjectOptions{})
		_, err2 := c.StatObject(ctx, "logs", "tmp/small.log", minio.StatObjectOptions{})
		return minio.ToErrorResponse(err).Code == "NoSuchKey" && minio.ToErrorResponse(err2).Code == "NoSuchKey"
	})
	waitUntil(t, "the abandoned upload aborted", func() bool {
		out := aws.run("s3api", "list-multipart-uploads", "--bucket", "logs")
		return !strings.Contains(out, upload.UploadId)
	})
	waitUntil(t, "noncurrent versions beyond the newest one and the lone marker gone", func() bool {
		vs := bucketVersions(t, c, "docs")
		return len(vs) == 2 // reports/q.txt: the current one and the newest noncurrent
	})
	if _, err := c.StatObject(ctx, "logs", "keep/app.log", minio.StatObjectOptions{}); err != nil {
		t.Errorf("keep/app.log, which no rule expires: %v", err)
	}
	if vs := bucketVersions(t, c, "docs"); len(vs) != 2 || vs[0].Key != "reports/q.txt" || vs[1].Key != "reports/q.txt" {
		t.Errorf("docs keeps %v, want reports/q.txt's current version and its newest noncurrent one", vs)
	}
	d := s.lifecycleStatus(t)
	if d.DaySeconds != 2 || d.IntervalSeconds != 1 || d.Totals.Expired < 2 || d.Totals.Versions < 2 || d.Totals.Markers < 1 || d.Totals.Uploads < 1 || d.Totals.BytesFreed < int64(len(big)) {
		t.Errorf("lifecycle status: %+v", d)
	}
	// The space comes back: statfs at once (inodegc), the host after trim.
	if used := s.volumeUsed(t); usedBefore-used < int64(len(big))*9/10 {
		t.Errorf("volume used %d before the expiry, %d after: %d bytes came back of %d", usedBefore, used, usedBefore-used, len(big))
	}
	waitUntil(t, "the host getting the space back", func() bool { return allocBefore-allocated() >= int64(len(big))*9/10 })
	s.stop(t)
	oracle.Repair(t, s.Volume)
}

// volumeUsed is the volume's used bytes, as the info document says.
func (s *server) volumeUsed(t *testing.T) int64 {
	t.Helper()
	code, raw := s.do(t, "GET", "/minio/admin/v3/xfs3/info", nil, nil, "")
	var in struct {
		Volume struct {
			UsedBytes int64 `json:"used_bytes"`
		} `json:"volume"`
	}
	if code != 200 || json.Unmarshal(raw, &in) != nil {
		t.Fatalf("GET info: %d %s", code, raw)
	}
	return in.Volume.UsedBytes
}

// TestLifecycleBoto3: boto3 sets and reads rules, sees x-amz-expiration,
// and a pass asked for with a signed admin request expires on time.
func TestLifecycleBoto3(t *testing.T) {
	py := boto3Python(t)
	s := startServer(t, "512M", "--lifecycle-day", "2s", "--lifecycle-interval", "0")
	script := `
import boto3, json, sys, time
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3],
    region_name=sys.argv[4], config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
s3.create_bucket(Bucket="blogs")
s3.put_bucket_lifecycle_configuration(Bucket="blogs", LifecycleConfiguration={"Rules": [
    {"ID": "cold", "Status": "Enabled",
     "Filter": {"And": {"Prefix": "cold/", "Tags": [{"Key": "tier", "Value": "cold"}], "ObjectSizeGreaterThan": 3}},
     "Expiration": {"Days": 1}}]})
rules = s3.get_bucket_lifecycle_configuration(Bucket="blogs")["Rules"]
put = s3.put_object(Bucket="blogs", Key="cold/a", Body=b"cold data", Tagging="tier=cold")
s3.put_object(Bucket="blogs", Key="cold/untagged", Body=b"cold data")
s3.put_object(Bucket="blogs", Key="cold/tiny", Body=b"x", Tagging="tier=cold")
head = s3.head_object(Bucket="blogs", Key="cold/a")
try:
    s3.put_bucket_lifecycle_configuration(Bucket="blogs", LifecycleConfiguration={"Rules": [
        {"ID": "t", "Status": "Enabled", "Filter": {"Prefix": ""}, "Transitions": [{"Days": 1, "StorageClass": "GLACIER"}]}]})
    transition = ""
except Exception as e:
    transition = e.response["Error"]["Code"]
print(json.dumps({"rules": [r["ID"] for r in rules], "put_expiration": put.get("Expiration", ""),
    "head_expiration": head.get("Expiration", ""), "transition": transition}))
`
	cmd := exec.Command(py, "-c", script, s.URL, accessKey, secretKey, region)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("boto3: %v\n%s", err, stderr.String())
	}
	var out struct {
		Rules          []string `json:"rules"`
		PutExpiration  string   `json:"put_expiration"`
		HeadExpiration string   `json:"head_expiration"`
		Transition     string   `json:"transition"`
	}
	decode(t, string(raw), &out)
	if len(out.Rules) != 1 || out.Rules[0] != "cold" || !strings.Contains(out.PutExpiration, `rule-id="cold"`) ||
		out.HeadExpiration != out.PutExpiration || out.Transition == "" {
		t.Fatalf("boto3 saw %+v", out)
	}
	c := s.client(t)
	ctx := t.Context()
	time.Sleep(5 * time.Second) // two days and a midnight of two seconds
	// xfs3 lifecycle --endpoint asks for a pass (POST) and waits for it.
	if out := string(runCLI(t, "lifecycle", "--endpoint", s.URL)); !strings.Contains(out, "last: lifecycle pass") || !strings.Contains(out, "expired 1,") {
		t.Errorf("xfs3 lifecycle --endpoint:\n%s", out)
	}
	if _, err := c.StatObject(ctx, "blogs", "cold/a", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Errorf("cold/a after the pass: %v", err)
	}
	var st lifecycleDoc
	decode(t, string(runCLI(t, "lifecycle", "--endpoint", s.URL, "--status", "--json")), &st)
	if st.Passes != 1 || st.Totals.Expired != 1 || st.IntervalSeconds != 0 || st.DaySeconds != 2 {
		t.Errorf("xfs3 lifecycle --status --json: %+v", st)
	}
	for _, k := range []string{"cold/untagged", "cold/tiny"} {
		if _, err := c.StatObject(ctx, "blogs", k, minio.StatObjectOptions{}); err != nil {
			t.Errorf("%s, which the rule's filter does not match: %v", k, err)
		}
	}
	s.stop(t)
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, s.Volume)
}
