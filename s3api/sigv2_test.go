package s3api

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

func hmacV2(sts string) string {
	m := hmac.New(sha1.New, []byte(testSecretKey))
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// presignV2 presigns a GET as botocore does: the bucket-level resource
// ends in "/", the query's other parameters are not signed.
func (ts *testServer) presignV2(t *testing.T, path, query, resource string, expires int64) *http.Request {
	t.Helper()
	e := strconv.FormatInt(expires, 10)
	auth := url.Values{"AWSAccessKeyId": {testAccessKey}, "Expires": {e}, "Signature": {hmacV2("GET\n\n\n" + e + "\n" + resource)}}
	if query != "" {
		query += "&"
	}
	return ts.rawRequest(t, "GET", path+"?"+query+auth.Encode(), nil, nil)
}

// TestSigV2Requests: boto3's presigned bucket-level URL works, and each
// V2 refusal answers S3's status and code.
func TestSigV2Requests(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "sigv2")
	mustPut(t, ts, "sigv2", "a b/k", "data", store.Meta{})
	hour := time.Now().Add(time.Hour).Unix()

	resp, body := send(t, ts.presignV2(t, "/sigv2", "list-type=2&prefix=a%20b%2F&encoding-type=url", "/sigv2/", hour))
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<Key>a%20b/k</Key>") {
		t.Fatalf("presigned list-objects-v2: %d %s", resp.StatusCode, body)
	}
	resp, body = send(t, ts.presignV2(t, "/sigv2", "location", "/sigv2/?location", hour))
	if resp.StatusCode != 200 {
		t.Fatalf("presigned location: %d %s", resp.StatusCode, body)
	}
	resp, body = send(t, ts.presignV2(t, "/sigv2/a%20b/k", "", "/sigv2/a%20b/k", hour))
	if resp.StatusCode != 200 || string(body) != "data" {
		t.Fatalf("presigned get: %d %s", resp.StatusCode, body)
	}

	withHeader := func(h http.Header, drop ...string) *http.Request {
		r := ts.rawRequest(t, "GET", "/sigv2", nil, h)
		s := signer.SignV2(*r, testAccessKey, testSecretKey, false)
		for _, d := range drop {
			s.Header.Del(d)
		}
		return s
	}
	for _, c := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"expired", ts.presignV2(t, "/sigv2", "", "/sigv2/", 1), 403, "AccessDenied"},
		{"expires not a number", ts.rawRequest(t, "GET", "/sigv2?AWSAccessKeyId="+testAccessKey+"&Expires=soon&Signature=x", nil, nil), 403, "AccessDenied"},
		{"no signature", ts.rawRequest(t, "GET", "/sigv2?AWSAccessKeyId="+testAccessKey+"&Expires=1900000000", nil, nil), 403, "AccessDenied"},
		{"wrong signature", ts.presignV2(t, "/sigv2", "acl", "/sigv2/", hour), 403, "SignatureDoesNotMatch"},
		{"unknown key", ts.rawRequest(t, "GET", "/sigv2?AWSAccessKeyId=nobody&Expires=1900000000&Signature=x", nil, nil), 403, "InvalidAccessKeyId"},
		{"not AK:signature", ts.rawRequest(t, "GET", "/sigv2", nil, http.Header{"Authorization": {"AWS HAHAHA"}}), 400, "InvalidArgument"},
		{"header and query", ts.rawRequest(t, "GET", "/sigv2?AWSAccessKeyId=a&Expires=1&Signature=x", nil, http.Header{"Authorization": {"AWS a:b"}}), 400, "InvalidArgument"},
		{"no date", withHeader(nil, "Date"), 403, "AccessDenied"},
		{"bad date", withHeader(http.Header{"X-Amz-Date": {"Bad Date"}}), 403, "AccessDenied"},
		{"before the epoch", withHeader(http.Header{"X-Amz-Date": {"Tue, 07 Jul 1950 21:53:04 GMT"}}), 403, "AccessDenied"},
		{"years ago", withHeader(http.Header{"X-Amz-Date": {"Tue, 07 Jul 2010 21:53:04 GMT"}}), 403, "RequestTimeTooSkewed"},
		{"far ahead", withHeader(http.Header{"X-Amz-Date": {"Tue, 07 Jul 9999 21:53:04 GMT"}}), 403, "RequestTimeTooSkewed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := send(t, c.req)
			wantError(t, resp, body, c.status, c.code)
		})
	}
	resp, body = send(t, withHeader(http.Header{"X-Amz-Date": {time.Now().UTC().Format(http.TimeFormat)}}))
	if resp.StatusCode != 200 {
		t.Errorf("x-amz-date in RFC 1123: %d %s", resp.StatusCode, body)
	}
}

// signedFormV2 is a policy with its V2 signature fields (AWSAccessKeyId,
// policy, signature), as boto3's generate_presigned_post and ceph's
// tests send them.
func signedFormV2(t testing.TB, expiration time.Time, conditions []any) []formField {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"expiration": expiration.UTC().Format("2006-01-02T15:04:05Z"), "conditions": conditions})
	if err != nil {
		t.Fatal(err)
	}
	return signRawV2(string(doc))
}

func signRawV2(doc string) []formField {
	policy := base64.StdEncoding.EncodeToString([]byte(doc))
	return []formField{{"AWSAccessKeyId", testAccessKey}, {"policy", policy}, {"signature", sigv4.SignPostPolicyV2(testSecretKey, policy)}}
}

// TestPostFormV2: forms signed with V2 store under V4's policy rules, and
// each refusal answers S3's status and code (those of ceph's
// test_post_object_* tests).
func TestPostFormV2(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "forms")
	hour := time.Now().Add(time.Hour)
	conds := []any{
		map[string]string{"bucket": "forms"},
		[]any{"starts-with", "$key", "foo"},
		map[string]string{"acl": "private"},
		[]any{"starts-with", "$Content-Type", "text/plain"},
		[]any{"content-length-range", 0, 1024},
	}
	object := []formField{{"key", "foo.txt"}, {"acl", "private"}, {"Content-Type", "text/plain"}}
	good := func() []formField { return append(signedFormV2(t, hour, conds), object...) }

	resp, body := ts.postForm(t, "forms", good(), "bar", []byte("bar"))
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("V2 form: %d %s", resp.StatusCode, body)
	}
	o, err := ts.store.GetObject("forms", "foo.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, o.Reader()); got != "bar" || o.Info.Meta.ContentType != "text/plain" {
		t.Fatalf("stored %q, %+v", got, o.Info.Meta)
	}
	o.Close()
	ts.store.DeleteObject("forms", "foo.txt")

	// boto3's own form: only bucket and key named, success_action_status
	// covered by the policy.
	boto := append(signedFormV2(t, hour, []any{map[string]string{"bucket": "forms"}, map[string]string{"key": "k"},
		map[string]string{"success_action_status": "201"}}), formField{"key", "k"}, formField{"success_action_status", "201"})
	if resp, body := ts.postForm(t, "forms", boto, "f", []byte("x")); resp.StatusCode != http.StatusCreated {
		t.Fatalf("boto3-like form: %d %s", resp.StatusCode, body)
	}
	ts.store.DeleteObject("forms", "k")

	without := func(fields []formField, name string) []formField {
		var out []formField
		for _, f := range fields {
			if f.name != name {
				out = append(out, f)
			}
		}
		return out
	}
	policyOf := func(doc string) []formField { return append(signRawV2(doc), object...) }
	exp := hour.UTC().Format("2006-01-02T15:04:05Z")
	for _, c := range []struct {
		name   string
		fields []formField
		file   string
		status int
		code   string
	}{
		{"missing signature", without(good(), "signature"), "bar", 400, "InvalidArgument"},
		{"empty access key", replaceField(good(), "AWSAccessKeyId", ""), "bar", 400, "InvalidArgument"},
		{"bad access key", replaceField(good(), "AWSAccessKeyId", "foo"), "bar", 403, "InvalidAccessKeyId"},
		{"invalid signature", replaceField(good(), "signature", "aaaa"+good()[2].value[4:]), "bar", 403, "SignatureDoesNotMatch"},
		{"expired policy", append(signedFormV2(t, time.Now().Add(-time.Minute), conds), object...), "bar", 403, "AccessDenied"},
		{"wrong bucket", append(signedFormV2(t, hour, append([]any{map[string]string{"bucket": "other"}}, conds[1:]...)), object...), "bar", 403, "AccessDenied"},
		{"field the policy does not name", append(good(), formField{"x-amz-meta-foo", "barclamp"}), "bar", 403, "AccessDenied"},
		{"condition failed", replaceField(good(), "Content-Type", "image/png"), "bar", 403, "AccessDenied"},
		{"no key", without(good(), "key"), "bar", 400, "InvalidArgument"},
		{"too large", good(), string(make([]byte, 1025)), 400, "EntityTooLarge"},
		{"below the minimum", append(signedFormV2(t, hour, append(conds[:4:4], []any{"content-length-range", 512, 1000})), object...), "bar", 400, "EntityTooSmall"},
		{"CONDITIONS", policyOf(`{"expiration":"` + exp + `","CONDITIONS":[{"bucket":"forms"}]}`), "bar", 400, "InvalidPolicyDocument"},
		{"EXPIRATION", policyOf(`{"EXPIRATION":"` + exp + `","conditions":[{"bucket":"forms"}]}`), "bar", 400, "InvalidPolicyDocument"},
		{"no expiration", policyOf(`{"conditions":[{"bucket":"forms"}]}`), "bar", 400, "InvalidPolicyDocument"},
		{"no conditions", policyOf(`{"expiration":"` + exp + `"}`), "bar", 400, "InvalidPolicyDocument"},
		{"date not ISO 8601", policyOf(`{"expiration":"Mon, 06 Dec 2027 11:00:00 GMT","conditions":[{"bucket":"forms"}]}`), "bar", 400, "InvalidPolicyDocument"},
		{"length range of one", policyOf(`{"expiration":"` + exp + `","conditions":[["content-length-range", 0]]}`), "bar", 400, "InvalidPolicyDocument"},
		{"negative length range", policyOf(`{"expiration":"` + exp + `","conditions":[["content-length-range", -1, 0]]}`), "bar", 400, "InvalidPolicyDocument"},
		{"empty condition", policyOf(`{"expiration":"` + exp + `","conditions":[{}]}`), "bar", 400, "InvalidPolicyDocument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := ts.postForm(t, "forms", c.fields, "bar", []byte(c.file))
			wantError(t, resp, body, c.status, c.code)
			if _, err := ts.store.HeadObject("forms", "foo.txt"); err == nil {
				t.Fatal("the refused form stored foo.txt")
			}
		})
	}
}
