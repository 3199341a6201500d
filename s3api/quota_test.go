package s3api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
)

// mcDo sends an admin request shaped as mc sends it (admin-wire.md):
// SigV4 with an empty region, X-Amz-Content-Sha256 of the body, mc's
// Accept-Encoding and User-Agent.
func (ts *testServer) mcDo(t *testing.T, method, target string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req := ts.rawRequest(t, method, target, body, http.Header{
		"Accept-Encoding": {"zstd,gzip"},
		"User-Agent":      {"MinIO (linux; amd64) madmin-go/3.0.70 mc/RELEASE.2025-08-13T08-35-41Z"},
	})
	req.Header.Set("X-Amz-Content-Sha256", hexSHA256(body))
	req = signer.SignV4(*req, testAccessKey, testSecretKey, "", "")
	if !strings.Contains(req.Header.Get("Authorization"), "//s3/aws4_request") {
		t.Fatalf("not signed with an empty region: %s", req.Header.Get("Authorization"))
	}
	return send(t, req)
}

// adminCase is an admin request that must fail with status and code.
type adminCase struct {
	name, method, target, body string
	status                     int
	code                       string
}

func (c adminCase) check(t *testing.T, ts *testServer) {
	t.Run(c.name, func(t *testing.T) {
		var b []byte
		if c.body != "" {
			b = []byte(c.body)
		}
		resp, body := ts.mcDo(t, c.method, c.target, b)
		wantJSONError(t, resp, body, c.status, c.code)
	})
}

// mcQuotaBody is the body mc sends for "mc quota set --size N".
func mcQuotaBody(n uint64) []byte {
	return fmt.Appendf(nil, `{"quota":%d,"size":0,"rate":0,"requests":0,"quotatype":"hard"}`, n)
}

// mcClearBody is the body mc sends for "mc quota clear".
var mcClearBody = []byte(`{"quota":0,"size":0,"rate":0,"requests":0}`)

// usageOf is a bucket's usage and limits as the store reports them.
func usageOf(t *testing.T, ts *testServer, bucket string) store.BucketUsage {
	t.Helper()
	u, err := ts.store.Quotas().Get(bucket)
	if err != nil && !errors.Is(err, store.ErrNoQuota) {
		t.Fatal(err)
	}
	return u
}

// fillUntilRefused PUTs objects of size bytes into bucket until one is
// refused, which must be with XMinioAdminBucketQuotaExceeded, leaving
// nothing behind: the refused key is absent and the usage unchanged. It
// returns how many PUTs succeeded.
func fillUntilRefused(t *testing.T, ts *testServer, bucket string, size int) int {
	t.Helper()
	body := bytes.Repeat([]byte("q"), size)
	for i := 0; i < 1000; i++ {
		before := usageOf(t, ts, bucket)
		key := fmt.Sprintf("fill/%04d", i)
		resp, answer := ts.do(t, "PUT", "/"+bucket+"/"+key, body, nil)
		if resp.StatusCode == 200 {
			continue
		}
		wantError(t, resp, answer, 400, "XMinioAdminBucketQuotaExceeded")
		if !strings.Contains(string(answer), "Bucket quota exceeded") {
			t.Errorf("quota error message: %s", answer)
		}
		if _, err := ts.store.HeadObject(bucket, key); !errors.Is(err, store.ErrNoSuchKey) {
			t.Errorf("the refused PUT left %s: %v", key, err)
		}
		if after := usageOf(t, ts, bucket); after.Bytes != before.Bytes || after.Objects != before.Objects {
			t.Errorf("the refused PUT changed the usage: %d bytes %d objects, then %d and %d",
				before.Bytes, before.Objects, after.Bytes, after.Objects)
		}
		return i
	}
	t.Fatalf("1000 PUTs of %d bytes into %s were all accepted", size, bucket)
	return 0
}

// TestMinioQuotaEndpoints drives set-bucket-quota and get-bucket-quota
// with the requests mc sends: set, info, writes refused over the limit,
// clear, and the errors.
func TestMinioQuotaEndpoints(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "qta1")
	const set, get = "/minio/admin/v3/set-bucket-quota", "/minio/admin/v3/get-bucket-quota"

	resp, body := ts.mcDo(t, "GET", get+"?bucket=qta1", nil)
	wantJSONError(t, resp, body, 404, "XMinioAdminNoSuchQuotaConfiguration")

	// mc quota set ALIAS/qta1 --size 8MiB
	resp, body = ts.mcDo(t, "PUT", set+"?bucket=qta1", mcQuotaBody(8<<20))
	if resp.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("set-bucket-quota: %d %q", resp.StatusCode, body)
	}
	// mc quota info ALIAS/qta1
	resp, body = ts.mcDo(t, "GET", get+"?bucket=qta1", nil)
	var info map[string]any
	if err := json.Unmarshal(body, &info); err != nil || resp.StatusCode != 200 ||
		info["quota"] != float64(8<<20) || info["size"] != float64(8<<20) || info["quotatype"] != "hard" {
		t.Fatalf("get-bucket-quota: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}

	// Newer clients send size, which wins over quota.
	resp, body = ts.mcDo(t, "PUT", set+"?bucket=qta1", []byte(`{"quota":1,"size":65536,"rate":0,"requests":0,"quotatype":"hard"}`))
	if resp.StatusCode != 200 {
		t.Fatalf("set with size: %d %s", resp.StatusCode, body)
	}
	if u := usageOf(t, ts, "qta1"); u.Quota != (store.BucketQuota{HardBytes: 65536}) {
		t.Fatalf("limits after set with size: %+v", u.Quota)
	}
	n := fillUntilRefused(t, ts, "qta1", 8<<10)
	if u := usageOf(t, ts, "qta1"); n == 0 || u.Bytes > 65536 {
		t.Errorf("%d PUTs fitted, usage %d bytes over a 64 KiB limit", n, u.Bytes)
	}

	// The limits MinIO does not know survive its set.
	if err := ts.store.Quotas().Set("qta1", store.BucketQuota{HardBytes: 65536, SoftBytes: 32768, HardObjects: 500, SoftObjects: 400}); err != nil {
		t.Fatal(err)
	}
	resp, body = ts.mcDo(t, "PUT", set+"?bucket=qta1", mcQuotaBody(1<<20))
	if resp.StatusCode != 200 {
		t.Fatalf("set: %d %s", resp.StatusCode, body)
	}
	if u := usageOf(t, ts, "qta1"); u.Quota != (store.BucketQuota{HardBytes: 1 << 20, SoftBytes: 32768, HardObjects: 500, SoftObjects: 400}) {
		t.Errorf("mc set changed xfs3's own limits: %+v", u.Quota)
	}
	resp, body = ts.do(t, "PUT", "/qta1/more", bytes.Repeat([]byte("m"), 8<<10), nil)
	if resp.StatusCode != 200 {
		t.Errorf("PUT after raising the limit: %d %s", resp.StatusCode, body)
	}

	// mc quota clear: every limit goes, writes pass again.
	resp, body = ts.mcDo(t, "PUT", set+"?bucket=qta1", mcClearBody)
	if resp.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("clear: %d %q", resp.StatusCode, body)
	}
	if u := usageOf(t, ts, "qta1"); u.Quota != (store.BucketQuota{}) {
		t.Errorf("limits after clear: %+v", u.Quota)
	}
	resp, body = ts.mcDo(t, "GET", get+"?bucket=qta1", nil)
	wantJSONError(t, resp, body, 404, "XMinioAdminNoSuchQuotaConfiguration")
	mustPut(t, ts, "qta1", "after-clear", strings.Repeat("c", 128<<10), store.Meta{})

	// Only byte limits of xfs3's own: no MinIO quota to show.
	if err := ts.store.Quotas().Set("qta1", store.BucketQuota{HardObjects: 1000}); err != nil {
		t.Fatal(err)
	}
	resp, body = ts.mcDo(t, "GET", get+"?bucket=qta1", nil)
	wantJSONError(t, resp, body, 404, "XMinioAdminNoSuchQuotaConfiguration")

	for _, c := range []adminCase{
		{"set: no such bucket", "PUT", set + "?bucket=nothere", string(mcQuotaBody(1 << 20)), 404, "NoSuchBucket"},
		{"get: no such bucket", "GET", get + "?bucket=nothere", "", 404, "NoSuchBucket"},
		{"set: no bucket", "PUT", set, string(mcQuotaBody(1 << 20)), 400, "XMinioAdminInvalidArgument"},
		{"get: no bucket", "GET", get, "", 400, "XMinioAdminInvalidArgument"},
		{"set: bad bucket name", "PUT", set + "?bucket=Bad_Name", string(mcQuotaBody(1 << 20)), 400, "InvalidBucketName"},
		{"malformed JSON", "PUT", set + "?bucket=qta1", `{"quota":`, 400, "XMinioAdminInvalidArgument"},
		{"negative", "PUT", set + "?bucket=qta1", `{"quota":-1}`, 400, "XMinioAdminInvalidArgument"},
		{"empty body", "PUT", set + "?bucket=qta1", "", 400, "XMinioAdminInvalidArgument"},
		{"fifo", "PUT", set + "?bucket=qta1", `{"quota":1048576,"quotatype":"fifo"}`, 400, "XMinioAdminInvalidArgument"},
		{"rate", "PUT", set + "?bucket=qta1", `{"quota":1048576,"rate":5,"quotatype":"hard"}`, 400, "XMinioAdminInvalidArgument"},
		{"too large", "PUT", set + "?bucket=qta1", `{"size":18446744073709551615,"quotatype":"hard"}`, 400, "XMinioAdminInvalidArgument"},
		{"wrong method", "POST", set + "?bucket=qta1", "", 501, "NotImplemented"},
	} {
		c.check(t, ts)
	}
	// A refused set changed nothing.
	if u := usageOf(t, ts, "qta1"); u.Quota != (store.BucketQuota{HardObjects: 1000}) {
		t.Errorf("limits after refused sets: %+v", u.Quota)
	}

	// The body is covered by the signature's payload hash.
	req := ts.rawRequest(t, "PUT", set+"?bucket=qta1", mcQuotaBody(4096), nil)
	req.Header.Set("X-Amz-Content-Sha256", hexSHA256(mcQuotaBody(8192)))
	resp, body = send(t, signer.SignV4(*req, testAccessKey, testSecretKey, "", ""))
	wantJSONError(t, resp, body, 400, "XAmzContentSHA256Mismatch")
	req = ts.rawRequest(t, "PUT", set+"?bucket=qta1", mcQuotaBody(4096), nil)
	resp, body = send(t, req)
	wantJSONError(t, resp, body, 403, "AccessDenied")
	if u := usageOf(t, ts, "qta1"); u.Quota.HardBytes != 0 {
		t.Errorf("a request refused by its signature set a limit: %+v", u.Quota)
	}
}

// TestXfs3QuotaEndpoints: xfs3's own endpoints read exact usage and every
// limit, change some limits keeping the others, set grace periods, and
// enforce object limits; the admin client reads their errors.
func TestXfs3QuotaEndpoints(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "alpha")
	mustBucket(t, ts, "beta")
	mustPut(t, ts, "alpha", "a/1", "one", store.Meta{})
	const quota, grace = "/minio/admin/v3/xfs3/quota", "/minio/admin/v3/xfs3/quota/grace"

	report := func(target string) admin.QuotaReport {
		t.Helper()
		resp, body := ts.mcDo(t, "GET", target, nil)
		var r admin.QuotaReport
		if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", target, resp.StatusCode, body)
		}
		return r
	}
	r := report(quota)
	week := int64(7 * 24 * 3600)
	if r.BytesSeconds != week || r.ObjectsSeconds != week || len(r.Buckets) != 2 || r.Buckets[0].Bucket != "alpha" || r.Buckets[1].Bucket != "beta" {
		t.Fatalf("report: %+v", r)
	}
	a := r.Buckets[0]
	// alpha holds its directory, the prefix a/ and the object: 3 inodes.
	if a.Objects != 3 || a.Bytes == 0 || a.Project == 0 || a.Project == r.Buckets[1].Project || a.HardBytes != 0 {
		t.Errorf("alpha: %+v", a)
	}
	if u := usageOf(t, ts, "alpha"); u.Bytes != a.Bytes || u.Objects != a.Objects {
		t.Errorf("report %+v, store %+v", a, u)
	}
	if one := report(quota + "?bucket=beta"); len(one.Buckets) != 1 || one.Buckets[0].Bucket != "beta" || one.BytesSeconds != week {
		t.Errorf("one bucket: %+v", one)
	}

	// Set some limits: the others stay.
	resp, body := ts.mcDo(t, "PUT", quota+"?bucket=alpha", []byte(`{"hard_bytes":1048576,"soft_objects":4}`))
	var q admin.BucketQuota
	if err := json.Unmarshal(body, &q); err != nil || resp.StatusCode != 200 || q.HardBytes != 1<<20 || q.SoftObjects != 4 || q.Bucket != "alpha" {
		t.Fatalf("PUT limits: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.mcDo(t, "PUT", quota+"?bucket=alpha", []byte(`{"hard_objects":6,"soft_bytes":100000}`))
	json.Unmarshal(body, &q)
	// Byte limits are kept in whole 4 KiB blocks, rounded up.
	if want := (admin.BucketQuota{Bucket: "alpha", Project: a.Project, Bytes: a.Bytes, Objects: 3,
		HardBytes: 1 << 20, SoftBytes: 102400, HardObjects: 6, SoftObjects: 4}); resp.StatusCode != 200 || q != want {
		t.Fatalf("PUT more limits: %d %s, want %+v", resp.StatusCode, body, want)
	}

	// Grace periods: set one, the other stays.
	resp, body = ts.mcDo(t, "PUT", grace, []byte(`{"bytes_grace_seconds":3600}`))
	var g admin.Grace
	if err := json.Unmarshal(body, &g); err != nil || resp.StatusCode != 200 || g != (admin.Grace{BytesSeconds: 3600, ObjectsSeconds: week}) {
		t.Fatalf("PUT grace: %d %s", resp.StatusCode, body)
	}

	// Over the soft object limit a grace period runs; at the hard limit
	// writes are refused.
	start := time.Now()
	mustPut(t, ts, "alpha", "a/2", "two", store.Meta{})
	mustPut(t, ts, "alpha", "b", "three", store.Meta{})
	r = report(quota + "?bucket=alpha")
	if ends := r.Buckets[0].ObjectsGraceEnds; r.Buckets[0].Objects != 5 || ends == nil || ends.Before(start.Add(time.Duration(week)*time.Second-time.Minute)) || r.Buckets[0].BytesGraceEnds != nil {
		t.Errorf("over the soft object limit: %+v", r.Buckets[0])
	}
	mustPut(t, ts, "alpha", "c", "four", store.Meta{})
	resp, body = ts.do(t, "PUT", "/alpha/d", []byte("five"), nil)
	wantError(t, resp, body, 400, "XMinioAdminBucketQuotaExceeded")
	if _, err := ts.store.HeadObject("alpha", "d"); !errors.Is(err, store.ErrNoSuchKey) {
		t.Errorf("the refused PUT left alpha/d: %v", err)
	}
	if u := usageOf(t, ts, "alpha"); u.Objects != 6 {
		t.Errorf("objects at the hard limit: %d", u.Objects)
	}
	// Removing a limit (0) lets writes through.
	resp, body = ts.mcDo(t, "PUT", quota+"?bucket=alpha", []byte(`{"hard_objects":0}`))
	if resp.StatusCode != 200 {
		t.Fatalf("remove the object limit: %d %s", resp.StatusCode, body)
	}
	mustPut(t, ts, "alpha", "d", "five", store.Meta{})

	for _, c := range []adminCase{
		{"no such bucket", "GET", quota + "?bucket=nothere", "", 404, "NoSuchBucket"},
		{"set: no such bucket", "PUT", quota + "?bucket=nothere", `{"hard_bytes":1}`, 404, "NoSuchBucket"},
		{"set: no bucket", "PUT", quota, `{"hard_bytes":1}`, 400, "XMinioAdminInvalidArgument"},
		{"misspelt limit", "PUT", quota + "?bucket=alpha", `{"hard_byte":1}`, 400, "XMinioAdminInvalidArgument"},
		{"two documents", "PUT", quota + "?bucket=alpha", `{} {}`, 400, "XMinioAdminInvalidArgument"},
		{"text", "PUT", quota + "?bucket=alpha", `{"hard_bytes":"1G"}`, 400, "XMinioAdminInvalidArgument"},
		{"too large", "PUT", quota + "?bucket=alpha", `{"soft_bytes":1152921504606846977}`, 400, "XMinioAdminInvalidArgument"},
		{"negative grace", "PUT", grace, `{"objects_grace_seconds":-1}`, 400, "XMinioAdminInvalidArgument"},
		{"grace too long", "PUT", grace, `{"bytes_grace_seconds":4294967296}`, 400, "XMinioAdminInvalidArgument"},
		{"grace: misspelt", "PUT", grace, `{"bytes_grace":60}`, 400, "XMinioAdminInvalidArgument"},
		{"delete", "DELETE", quota + "?bucket=alpha", "", 501, "NotImplemented"},
	} {
		c.check(t, ts)
	}
	if u := usageOf(t, ts, "alpha"); u.Quota != (store.BucketQuota{HardBytes: 1 << 20, SoftBytes: 102400, SoftObjects: 4}) {
		t.Errorf("limits after refused requests: %+v", u.Quota)
	}

	// The admin client: the same documents, errors as *admin.Error.
	c := &admin.Client{Endpoint: ts.url, AccessKey: testAccessKey, SecretKey: testSecretKey}
	bg := context.Background()
	zero := uint64(0)
	if q, err := c.SetQuota(bg, "alpha", admin.Limits{HardBytes: &zero, SoftBytes: &zero, SoftObjects: &zero}); err != nil || q.HardBytes != 0 || q.SoftObjects != 0 {
		t.Errorf("client SetQuota: %+v, %v", q, err)
	}
	if g, err := c.SetGrace(bg, admin.Grace{ObjectsSeconds: 60}); err != nil || g != (admin.Grace{BytesSeconds: 3600, ObjectsSeconds: 60}) {
		t.Errorf("client SetGrace: %+v, %v", g, err)
	}
	if r, err := c.Quotas(bg, ""); err != nil || len(r.Buckets) != 2 || r.ObjectsSeconds != 60 {
		t.Errorf("client Quotas: %+v, %v", r, err)
	}
	var ae *admin.Error
	if _, err := c.Quotas(bg, "nothere"); !errors.As(err, &ae) || ae.Status != 404 || ae.Code != "NoSuchBucket" {
		t.Errorf("client Quotas(nothere): %v", err)
	}
	bad := *c
	bad.SecretKey = "wrong-secret"
	if _, err := bad.Quotas(bg, ""); !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "SignatureDoesNotMatch" {
		t.Errorf("client with a wrong secret: %v", err)
	}
}

// TestMinioGoQuotaExceeded: minio-go sees a write over a bucket's quota as
// an error whose Code is XMinioAdminBucketQuotaExceeded, for a PUT of
// known size, a streamed PUT of unknown size, a copy and a multipart
// upload, and nothing is left behind.
func TestMinioGoQuotaExceeded(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "capped")
	c := ctx(t)
	resp, body := ts.mcDo(t, "PUT", "/minio/admin/v3/set-bucket-quota?bucket=capped", mcQuotaBody(1<<20))
	if resp.StatusCode != 200 {
		t.Fatalf("set quota: %d %s", resp.StatusCode, body)
	}
	small := bytes.Repeat([]byte("s"), 600<<10)
	if _, err := ts.client.PutObject(c, "capped", "first", bytes.NewReader(small), int64(len(small)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	before := usageOf(t, ts, "capped")
	wantQuotaErr := func(what string, err error) {
		t.Helper()
		if code := minio.ToErrorResponse(err).Code; code != "XMinioAdminBucketQuotaExceeded" {
			t.Errorf("%s over the quota: %v (code %q)", what, err, code)
		}
		if u := usageOf(t, ts, "capped"); u.Bytes != before.Bytes || u.Objects != before.Objects {
			t.Errorf("%s left something behind: usage %d bytes %d objects, was %d and %d", what, u.Bytes, u.Objects, before.Bytes, before.Objects)
		}
	}
	_, err := ts.client.PutObject(c, "capped", "second", bytes.NewReader(small), int64(len(small)), minio.PutObjectOptions{})
	wantQuotaErr("PUT of known size", err)
	// A body of unknown length (chunked transfer encoding): the engine
	// refuses the block that would pass the limit, mid-write.
	req, err := http.NewRequest("PUT", ts.url+"/capped/streamed", io.MultiReader(bytes.NewReader(small)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	resp, body = send(t, signer.SignV4(*req, testAccessKey, testSecretKey, "", testRegion))
	wantError(t, resp, body, 400, "XMinioAdminBucketQuotaExceeded")
	wantQuotaErr("streamed PUT", minio.ErrorResponse{Code: s3CodeOf(body)})
	_, err = ts.client.CopyObject(c, minio.CopyDestOptions{Bucket: "capped", Object: "copy"}, minio.CopySrcOptions{Bucket: "capped", Object: "first"})
	wantQuotaErr("copy", err)
	big := bytes.Repeat([]byte("b"), 6<<20)
	_, err = ts.client.PutObject(c, "capped", "multi", bytes.NewReader(big), int64(len(big)), minio.PutObjectOptions{PartSize: 5 << 20})
	wantQuotaErr("multipart upload", err)
	for _, k := range []string{"second", "streamed", "copy", "multi"} {
		if _, err := ts.client.StatObject(c, "capped", k, minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Errorf("%s exists after a refused write: %v", k, err)
		}
	}
	for u := range ts.client.ListIncompleteUploads(c, "capped", "", true) {
		t.Errorf("upload left in progress: %+v", u)
	}
}

// s3CodeOf is the Code of an S3 XML error body.
func s3CodeOf(body []byte) string {
	var e errorBody
	xmlUnmarshal(body, &e)
	return e.Code
}
