package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

// TestErrorCodes sends one request per S3 error code and checks its status
// and XML body.
func TestErrorCodes(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "full")
	mustBucket(t, ts, "empty")
	mustPut(t, ts, "full", "five", "12345", store.Meta{})
	md5of := func(s string) string { sum := md5.Sum([]byte(s)); return base64.StdEncoding.EncodeToString(sum[:]) }
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tags := make([]string, 11)
	for i := range tags {
		tags[i] = fmt.Sprintf("k%d=v", i)
	}
	type tc struct {
		name         string
		method, path string
		body         string
		header       http.Header
		req          func(t *testing.T) *http.Request // instead of method/path when set
		status       int
		code         string
	}
	for _, c := range []tc{
		{name: "no such bucket", method: "GET", path: "/nothere/k", status: 404, code: "NoSuchBucket"},
		{name: "no such bucket head", method: "HEAD", path: "/nothere", status: 404, code: "NoSuchBucket"},
		{name: "no such key", method: "GET", path: "/full/missing", status: 404, code: "NoSuchKey"},
		{name: "no such key head", method: "HEAD", path: "/full/missing", status: 404, code: "NoSuchKey"},
		{name: "bucket not empty", method: "DELETE", path: "/full", status: 409, code: "BucketNotEmpty"},
		{name: "invalid bucket name", method: "PUT", path: "/Bad_Name", status: 400, code: "InvalidBucketName"},
		{name: "system directory", method: "GET", path: "/.xfs3/tmp", status: 400, code: "InvalidBucketName"},
		{name: "key too long", method: "PUT", path: "/full/" + strings.Repeat("k", 1025), body: "x", status: 400, code: "KeyTooLongError"},
		{name: "invalid range", method: "GET", path: "/full/five", header: hdr("Range", "bytes=5-"), status: 416, code: "InvalidRange"},
		{name: "precondition", method: "GET", path: "/full/five", header: hdr("If-Match", `"nope"`), status: 412, code: "PreconditionFailed"},
		{name: "not modified", method: "GET", path: "/full/five", header: hdr("If-None-Match", "*"), status: 304, code: "NotModified"},
		{name: "bad digest", method: "PUT", path: "/full/k", body: "abc", header: hdr("Content-MD5", md5of("abd")), status: 400, code: "BadDigest"},
		{name: "invalid digest", method: "PUT", path: "/full/k", body: "abc", header: hdr("Content-MD5", "bm90IGFuIG1kNQ=="), status: 400, code: "InvalidDigest"},
		{name: "bad crc32", method: "PUT", path: "/full/k", body: "abc", header: hdr("X-Amz-Checksum-Crc32", "AAAAAA=="), status: 400, code: "BadDigest"},
		{name: "invalid crc32", method: "PUT", path: "/full/k", body: "abc", header: hdr("X-Amz-Checksum-Crc32", "AAAA"), status: 400, code: "InvalidRequest"},
		{name: "two checksums", method: "PUT", path: "/full/k", body: "abc", header: hdr("X-Amz-Checksum-Crc32", "NSRBwg==", "X-Amz-Checksum-Sha1", "qZk+NkcGgWq6PiVxeFDCbJzQ2J0="), status: 400, code: "InvalidRequest"},
		{name: "malformed xml", method: "POST", path: "/full?delete", body: "<Delete><Object>", status: 400, code: "MalformedXML"},
		{name: "empty delete", method: "POST", path: "/full?delete", body: "<Delete></Delete>", status: 400, code: "MalformedXML"},
		{name: "delete bad md5", method: "POST", path: "/full?delete", body: "<Delete><Object><Key>a</Key></Object></Delete>", header: hdr("Content-MD5", md5of("x")), status: 400, code: "BadDigest"},
		{name: "too many deletes", method: "POST", path: "/full?delete", body: "<Delete>" + strings.Repeat("<Object><Key>a</Key></Object>", 1001) + "</Delete>", status: 400, code: "MalformedXML"},
		{name: "xml too large", method: "POST", path: "/full?delete", body: "<Delete>" + strings.Repeat(" ", maxXMLBody) + "</Delete>", status: 400, code: "MaxMessageLengthExceeded"},
		{name: "create bucket bad xml", method: "PUT", path: "/newbucket", body: "<CreateBucketConfiguration>", status: 400, code: "MalformedXML"},
		{name: "max-keys", method: "GET", path: "/full?max-keys=-1", status: 400, code: "InvalidArgument"},
		{name: "encoding type", method: "GET", path: "/full?encoding-type=base64", status: 400, code: "InvalidArgument"},
		{name: "continuation token", method: "GET", path: "/full?list-type=2&continuation-token=%25%25", status: 400, code: "InvalidArgument"},
		{name: "list type", method: "GET", path: "/full?list-type=3", status: 400, code: "InvalidArgument"},
		{name: "part number", method: "PUT", path: "/full/k?partNumber=0&uploadId=x", body: "x", status: 400, code: "InvalidArgument"},
		{name: "too many tags", method: "PUT", path: "/full/k", body: "x", header: hdr("X-Amz-Tagging", strings.Join(tags, "&")), status: 400, code: "BadRequest"},
		{name: "invalid tag", method: "PUT", path: "/full/k", body: "x", header: hdr("X-Amz-Tagging", "="+strings.Repeat("v", 10)), status: 400, code: "InvalidTag"},
		{name: "bad tagging body", method: "PUT", path: "/full/five?tagging", body: "<Tagging><TagSet><Tag><Key></Key><Value>v</Value></Tag></TagSet></Tagging>", status: 400, code: "InvalidTag"},
		{name: "copy source", method: "PUT", path: "/full/k", header: hdr("X-Amz-Copy-Source", "full"), status: 400, code: "InvalidArgument"},
		{name: "copy to itself", method: "PUT", path: "/full/five", header: hdr("X-Amz-Copy-Source", "/full/five"), status: 400, code: "InvalidRequest"},
		{name: "copy missing source", method: "PUT", path: "/full/k", header: hdr("X-Amz-Copy-Source", "/full/missing"), status: 404, code: "NoSuchKey"},
		{name: "copy precondition", method: "PUT", path: "/full/k", header: hdr("X-Amz-Copy-Source", "/full/five", "X-Amz-Copy-Source-If-None-Match", "*"), status: 412, code: "PreconditionFailed"},
		{name: "directive", method: "PUT", path: "/full/k", header: hdr("X-Amz-Copy-Source", "/full/five", "X-Amz-Metadata-Directive", "MOVE"), status: 400, code: "InvalidArgument"},
		{name: "no policy", method: "GET", path: "/full?policy", status: 404, code: "NoSuchBucketPolicy"},
		{name: "put empty policy", method: "PUT", path: "/full?policy", body: "{}", status: 400, code: "MalformedPolicy"},
		{name: "object policy", method: "GET", path: "/full/k?policy", status: 501, code: "NotImplemented"},
		{name: "versions", method: "PUT", path: "/full?versions", status: 501, code: "NotImplemented"},
		{name: "retention", method: "PUT", path: "/full/five?retention", body: "x", status: 400, code: "MalformedXML"},
		{name: "retention without object lock", method: "GET", path: "/full/five?retention", status: 400, code: "InvalidRequest"},
		{name: "no object lock", method: "GET", path: "/full?object-lock", status: 404, code: "ObjectLockConfigurationNotFoundError"},
		{name: "delete retention", method: "DELETE", path: "/full/five?retention", status: 501, code: "NotImplemented"},
		{name: "bucket tagging", method: "GET", path: "/full?tagging", status: 404, code: "NoSuchTagSet"},
		{name: "conditional put", method: "PUT", path: "/full/five", body: "x", header: hdr("If-None-Match", "*"), status: 412, code: "PreconditionFailed"},
		{name: "conditional put, no object", method: "PUT", path: "/full/k", body: "x", header: hdr("If-Match", `"abc"`), status: 404, code: "NoSuchKey"},
		{name: "conditional copy", method: "PUT", path: "/full/k", header: hdr("X-Amz-Copy-Source", "/full/five", "If-None-Match", "*"), status: 501, code: "NotImplemented"},
		{name: "sse-c", method: "PUT", path: "/full/k", body: "x", header: hdr("X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256"), status: 501, code: "NotImplemented"},
		{name: "kms", method: "POST", path: "/full/k?uploads", header: hdr("X-Amz-Server-Side-Encryption", "aws:kms"), status: 501, code: "NotImplemented"},
		{name: "object lock", method: "PUT", path: "/full/k", header: hdr("X-Amz-Copy-Source", "/full/five", "X-Amz-Object-Lock-Mode", "GOVERNANCE"), status: 400, code: "InvalidArgument"},
		{name: "object lock without config", method: "PUT", path: "/full/k", header: hdr("X-Amz-Copy-Source", "/full/five", "X-Amz-Object-Lock-Legal-Hold", "ON"), status: 400, code: "InvalidRequest"},
		{name: "post service", method: "POST", path: "/", status: 405, code: "MethodNotAllowed"},
		{name: "post object", method: "POST", path: "/full/five", status: 405, code: "MethodNotAllowed"},
		{name: "too large", req: func(t *testing.T) *http.Request {
			r := ts.rawRequest(t, "PUT", "/full/big", []byte("0\r\n\r\n"), hdr(
				"X-Amz-Content-Sha256", sigv4.StreamingUnsignedTrailer,
				"X-Amz-Decoded-Content-Length", fmt.Sprint(int64(store.MaxObjectSize)+1), "Content-Encoding", "aws-chunked"))
			return signed(t, r, nil)
		}, status: 400, code: "EntityTooLarge"},
		{name: "anonymous", req: func(t *testing.T) *http.Request {
			return ts.rawRequest(t, "GET", "/", nil, nil)
		}, status: 403, code: "AccessDenied"},
		{name: "wrong secret", req: func(t *testing.T) *http.Request {
			r := ts.rawRequest(t, "GET", "/", nil, hdr("X-Amz-Content-Sha256", sigv4.UnsignedPayload))
			return signer.SignV4(*r, testAccessKey, "wrong", "", testRegion)
		}, status: 403, code: "SignatureDoesNotMatch"},
		{name: "unknown key", req: func(t *testing.T) *http.Request {
			r := ts.rawRequest(t, "GET", "/", nil, hdr("X-Amz-Content-Sha256", sigv4.UnsignedPayload))
			return signer.SignV4(*r, "NOBODY", testSecretKey, "", testRegion)
		}, status: 403, code: "InvalidAccessKeyId"},
		{name: "malformed authorization", req: func(t *testing.T) *http.Request {
			return ts.rawRequest(t, "GET", "/", nil, hdr("Authorization", "AWS4-HMAC-SHA256 Credential=x"))
		}, status: 400, code: "AuthorizationHeaderMalformed"},
		{name: "payload hash", req: func(t *testing.T) *http.Request {
			r := ts.rawRequest(t, "PUT", "/full/k", []byte("abc"), nil)
			return signed(t, r, []byte("abd"))
		}, status: 400, code: "XAmzContentSHA256Mismatch"},
		{name: "tampered", req: func(t *testing.T) *http.Request {
			r := signed(t, ts.rawRequest(t, "GET", "/full/five", nil, nil), nil)
			r.URL.Path = "/full/other"
			return r
		}, status: 403, code: "SignatureDoesNotMatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var req *http.Request
			if c.req != nil {
				req = c.req(t)
			} else {
				body := []byte(c.body)
				if c.body == "" {
					body = nil
				}
				req = signed(t, ts.rawRequest(t, c.method, c.path, body, c.header), body)
			}
			resp, body := send(t, req)
			wantError(t, resp, body, c.status, c.code)
		})
	}
	if _, err := ts.store.HeadObject("full", "k"); !errors.Is(err, store.ErrNoSuchKey) {
		t.Errorf("a failed request left full/k: %v", err)
	}
	if _, err := ts.store.HeadObject("full", "big"); !errors.Is(err, store.ErrNoSuchKey) {
		t.Errorf("a failed request left full/big: %v", err)
	}
}

// TestTimeErrors: a skewed clock and an expired presigned URL.
func TestTimeErrors(t *testing.T) {
	offset := time.Hour
	ts := newTestServer(t, func(c *Config) { c.Now = func() time.Time { return time.Now().Add(offset) } })
	resp, body := ts.do(t, "GET", "/", nil, nil)
	wantError(t, resp, body, 403, "RequestTimeTooSkewed")

	offset = 2 * time.Minute
	r := ts.rawRequest(t, "GET", "/b/k", nil, nil)
	presigned := signer.PreSignV4(*r, testAccessKey, testSecretKey, "", testRegion, 60)
	resp, body = send(t, presigned)
	wantError(t, resp, body, 403, "AccessDenied")
}

// TestErrorTable: every code has a status and a message, and the mapping
// of lower-layer kinds ends in known codes; anything unknown is an
// InternalError.
func TestErrorTable(t *testing.T) {
	for code, info := range codes {
		if info.status < 300 || info.message == "" {
			t.Errorf("%s: %+v", code, info)
		}
	}
	for _, k := range kinds {
		if _, ok := codes[k.code]; !ok {
			t.Errorf("%v maps to unknown code %s", k.kind, k.code)
		}
		if got := toS3Error(fmt.Errorf("wrapped: %w", k.kind)); got.code != k.code {
			t.Errorf("%v: %s, want %s", k.kind, got.code, k.code)
		}
	}
	e := toS3Error(errors.New("disk on fire"))
	if e.code != "InternalError" || e.Status() != 500 || messageOf(e) == "disk on fire" {
		t.Errorf("unknown error: %+v", e)
	}
}
