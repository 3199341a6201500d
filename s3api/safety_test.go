package s3api

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/store"
)

// confinedKeys are the objects of two buckets; every key and body names
// its bucket, so a response can be checked for anything from elsewhere.
var confinedKeys = map[string][]string{
	"alpha": {"a/1", "a/b/2", "top", "x/y/z"},
	"beta":  {"private/secret.txt", "betatop"},
}

// hostileValues are what a client might send as a prefix, marker, token,
// delimiter or upload ID to reach outside its bucket.
var hostileValues = []string{
	"..", "../", "../x", "../beta/", "../beta/private/", "../.xfs3/", "../../", "/", "//", "./", "a/./",
	"%2e%2e/", "a/../../", "a/../../beta/", "a/..", "\x00", "a/\x00/", ".", "\xff\xfe/", "\xc0\xae\xc0\xae/",
	strings.Repeat("a", 2048), strings.Repeat("../", 700), "a/b/../../../beta/",
}

// confinedServer is a test server holding confinedKeys and one upload in
// progress in each bucket.
func confinedServer(t *testing.T) *testServer {
	ts := newTestServer(t)
	for b, keys := range confinedKeys {
		mustBucket(t, ts, b)
		for _, k := range keys {
			mustPut(t, ts, b, k, "content of "+b+"/"+k, store.Meta{})
		}
		if _, err := ts.store.Uploads().Create(b, keys[0], store.Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// listedKeys returns the keys and common prefixes a listing names,
// unescaped when the request asked for encoding-type=url.
func listedKeys(body []byte, urlEncoded bool) (keys, prefixes []string, err error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	var path []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return keys, prefixes, nil
		}
		if err != nil {
			return nil, nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			path = append(path, tok.Name.Local)
		case xml.EndElement:
			path = path[:len(path)-1]
		case xml.CharData:
			if len(path) < 2 {
				continue
			}
			v := string(tok)
			if urlEncoded {
				if v, err = url.QueryUnescape(v); err != nil {
					return nil, nil, err
				}
			}
			switch parent, leaf := path[len(path)-2], path[len(path)-1]; {
			case leaf == "Key" && (parent == "Contents" || parent == "Upload" || parent == "Version"):
				keys = append(keys, v)
			case leaf == "Prefix" && parent == "CommonPrefixes":
				prefixes = append(prefixes, v)
			}
		}
	}
}

// checkConfined fails unless a response to a request addressed to bucket
// names only that bucket's keys (and prefixes of them), returns only its
// content, and is neither an internal error nor a redirect.
func checkConfined(t *testing.T, what, bucket string, q url.Values, resp *http.Response, body []byte) {
	t.Helper()
	// 501 (a refused feature) and 507 (a full volume) are answers; 500 is
	// a fault, and a redirect means the request never reached the router.
	if resp.StatusCode == http.StatusInternalServerError || resp.StatusCode >= 300 && resp.StatusCode < 400 {
		t.Errorf("%s: status %d: %s", what, resp.StatusCode, body)
		return
	}
	if resp.StatusCode != http.StatusOK {
		return
	}
	if c, ok := bytes.CutPrefix(body, []byte("content of ")); ok && !bytes.HasPrefix(c, []byte(bucket+"/")) {
		t.Errorf("%s: served another bucket's content %q", what, body)
	}
	if !bytes.HasPrefix(body, []byte("<?xml")) {
		return
	}
	keys, prefixes, err := listedKeys(body, q.Get("encoding-type") == "url")
	if err != nil {
		t.Errorf("%s: %v in %s", what, err, body)
		return
	}
	own := confinedKeys[bucket]
	for _, k := range keys {
		if !contains(own, k) {
			t.Errorf("%s: answered key %q, not in bucket %s", what, k, bucket)
		}
	}
	for _, p := range prefixes {
		if !anyHasPrefix(own, p) {
			t.Errorf("%s: answered common prefix %q, of no key in bucket %s", what, p, bucket)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func anyHasPrefix(list []string, p string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

// TestListingConfined: every listing parameter a client controls, given
// a value that would reach outside the bucket as a path, answers 200 with
// only that bucket's keys, or a 4xx; never a 500, never a key from
// elsewhere.
func TestListingConfined(t *testing.T) {
	ts := confinedServer(t)
	upload := ts.store // the upload ID of alpha's upload, for ListParts
	ups, err := upload.Uploads().List("alpha", store.ListUploadsOptions{})
	if err != nil || len(ups.Uploads) != 1 {
		t.Fatalf("uploads: %+v %v", ups, err)
	}
	uploadID := ups.Uploads[0].UploadID
	lists := []struct {
		base   url.Values
		params []string
	}{
		{url.Values{}, []string{"prefix", "marker", "delimiter"}},
		{url.Values{"list-type": {"2"}}, []string{"prefix", "start-after", "continuation-token", "delimiter"}},
		{url.Values{"list-type": {"2"}, "delimiter": {"/"}}, []string{"prefix", "start-after", "continuation-token"}},
		{url.Values{"uploads": {""}}, []string{"prefix", "key-marker", "upload-id-marker", "delimiter"}},
	}
	send := func(target string, q url.Values) {
		resp, body := ts.do(t, "GET", target+"?"+q.Encode(), nil, nil)
		checkConfined(t, "GET "+target+"?"+q.Encode(), "alpha", q, resp, body)
	}
	for _, l := range lists {
		for _, p := range l.params {
			for _, v := range hostileValues {
				for _, val := range []string{v, b64([]byte(v))} {
					q := url.Values{}
					for k, vs := range l.base {
						q[k] = vs
					}
					q.Set(p, val)
					send("/alpha", q)
					q.Set("encoding-type", "url")
					send("/alpha", q)
				}
			}
		}
	}
	for _, v := range hostileValues {
		send("/alpha/a/1", url.Values{"uploadId": {v}})
		send("/alpha/"+url.PathEscape(v), url.Values{"uploadId": {uploadID}})
		send("/alpha/a/1", url.Values{"uploadId": {uploadID}, "part-number-marker": {v}})
	}
	// "prefix=/" used to be a 500 ("empty name").
	resp, body := ts.do(t, "GET", "/alpha?list-type=2&prefix=/", nil, nil)
	if resp.StatusCode != 200 || strings.Contains(string(body), "<Contents>") {
		t.Errorf("prefix=/: %d %s", resp.StatusCode, body)
	}
}

// TestPathsReachRouter: keys that are not clean paths reach the S3 router
// (no redirect) and are keys of the addressed bucket, stored, read and
// deleted as sent; beta's object is never reached through alpha.
func TestPathsReachRouter(t *testing.T) {
	ts := confinedServer(t)
	for _, p := range []string{"/alpha/a//b", "/alpha/a/./b", "/alpha//lead", "/alpha/x/../y", "/alpha/../beta/private/secret.txt", "/alpha/./top"} {
		// net/http sends the path as given: it never cleans it.
		if resp, body := ts.do(t, "GET", p, nil, nil); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "<Code>NoSuchKey</Code>") {
			t.Errorf("GET %s before PUT: %d %s", p, resp.StatusCode, body)
		}
		if resp, body := ts.do(t, "PUT", p, []byte("via "+p), nil); resp.StatusCode != http.StatusOK {
			t.Errorf("PUT %s: %d %s", p, resp.StatusCode, body)
		}
		if resp, body := ts.do(t, "GET", p, nil, nil); resp.StatusCode != http.StatusOK || string(body) != "via "+p {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		}
		if resp, body := ts.do(t, "DELETE", p, nil, nil); resp.StatusCode != http.StatusNoContent {
			t.Errorf("DELETE %s: %d %s", p, resp.StatusCode, body)
		}
	}
	if resp, body := ts.do(t, "GET", "/beta/private/secret.txt", nil, nil); resp.StatusCode != http.StatusOK || strings.Contains(string(body), "via") {
		t.Errorf("beta's object: %d %s", resp.StatusCode, body)
	}
}

// TestVersionID: in a bucket without versioning "null" names each
// object; an ID of the store's form names no version (NoSuchVersion; a
// DELETE of it deletes nothing and succeeds, as S3's does), and any other
// ID is malformed (InvalidArgument).
func TestVersionID(t *testing.T) {
	ts := confinedServer(t)
	missing := "00000000000000000000000000"
	malformed := url.QueryEscape("3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nrjfkd")
	cases := []struct {
		method, query string
		status        int
		code          string
	}{
		{"GET", "versionId=null", 200, ""},
		{"HEAD", "versionId=null", 200, ""},
		{"GET", "tagging&versionId=null", 200, ""},
		{"GET", "versionId=" + missing, 404, "NoSuchVersion"},
		{"HEAD", "versionId=" + missing, 404, "NoSuchVersion"},
		{"DELETE", "versionId=" + missing, 204, ""},
		{"GET", "versionId=" + malformed, 400, "InvalidArgument"},
		{"DELETE", "versionId=" + malformed, 400, "InvalidArgument"},
		{"DELETE", "versionId=", 400, "InvalidArgument"},
		{"DELETE", "versionId=" + url.QueryEscape("bad version\x01"), 400, "InvalidArgument"},
		{"GET", "tagging&versionId=" + missing, 404, "NoSuchVersion"},
		{"PUT", "tagging&versionId=" + missing, 404, "NoSuchVersion"},
		{"DELETE", "tagging&versionId=" + missing, 404, "NoSuchVersion"},
		{"GET", "acl&versionId=" + missing, 404, "NoSuchVersion"},
		{"GET", "acl&versionId=" + malformed, 400, "InvalidArgument"},
	}
	for _, c := range cases {
		var body []byte
		if c.method == "PUT" {
			body = []byte("<Tagging><TagSet></TagSet></Tagging>")
		}
		resp, rb := ts.do(t, c.method, "/alpha/top?"+c.query, body, nil)
		if c.code == "" {
			if resp.StatusCode != c.status {
				t.Errorf("%s ?%s: %d %s", c.method, c.query, resp.StatusCode, rb)
			}
			continue
		}
		wantError(t, resp, rb, c.status, c.code)
	}
	if _, err := ts.store.HeadObject("alpha", "top"); err != nil {
		t.Fatalf("a DELETE naming a version deleted the object: %v", err)
	}
	// DeleteObjects: a malformed version is an error for its key alone.
	doc := `<Delete><Object><Key>top</Key><VersionId>3HL4kqtJlcpXroDTDmJ</VersionId></Object>` +
		`<Object><Key>a/1</Key><VersionId>null</VersionId></Object><Object><Key>x/y/z</Key></Object></Delete>`
	resp, rb := ts.do(t, "POST", "/alpha?delete", []byte(doc), http.Header{"Content-Md5": {md5Of(doc)}})
	if resp.StatusCode != 200 || !strings.Contains(string(rb), "<Error><Key>top</Key><VersionId>3HL4kqtJlcpXroDTDmJ</VersionId><Code>InvalidArgument</Code>") ||
		!strings.Contains(string(rb), "<Deleted><Key>a/1</Key><VersionId>null</VersionId></Deleted>") || !strings.Contains(string(rb), "<Deleted><Key>x/y/z</Key></Deleted>") {
		t.Errorf("DeleteObjects: %d %s", resp.StatusCode, rb)
	}
	if _, err := ts.store.HeadObject("alpha", "top"); err != nil {
		t.Errorf("DeleteObjects deleted a key whose version does not exist: %v", err)
	}
	if _, err := ts.store.HeadObject("alpha", "a/1"); err == nil {
		t.Errorf("DeleteObjects kept version null of a/1")
	}
	// Copy sources: "null" copies, another version does not exist.
	for src, code := range map[string]string{"/alpha/top?versionId=null": "", "/alpha/top?versionId=" + missing: "NoSuchVersion"} {
		resp, rb := ts.do(t, "PUT", "/alpha/copied", nil, http.Header{"X-Amz-Copy-Source": {src}})
		if code == "" && resp.StatusCode != 200 {
			t.Errorf("copy from %s: %d %s", src, resp.StatusCode, rb)
		} else if code != "" {
			wantError(t, resp, rb, 404, code)
		}
	}
}

// TestHeaderRules: each header that changes S3 semantics is honoured or
// refused with an error naming it; never accepted and dropped.
func TestHeaderRules(t *testing.T) {
	ts := confinedServer(t)
	cases := []struct {
		method, target, header, value string
		status                        int
		code                          string
	}{
		{"PUT", "/worm", "X-Amz-Bucket-Object-Lock-Enabled", "true", 200, ""},
		{"PUT", "/locked", "X-Amz-Bucket-Object-Lock-Enabled", "maybe", 400, "InvalidArgument"},
		{"PUT", "/acl-bucket", "X-Amz-Acl", "public-read", 400, "AccessControlListNotSupported"},
		{"PUT", "/acl-bucket", "X-Amz-Grant-Read", "id=x", 400, "AccessControlListNotSupported"},
		{"PUT", "/acl-bucket", "X-Amz-Object-Ownership", "ObjectWriter", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "X-Amz-Server-Side-Encryption", "AES256", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "X-Amz-Server-Side-Encryption", "aws:kms", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256", 501, "NotImplemented"},
		{"GET", "/alpha/top", "X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "X-Amz-Object-Lock-Mode", "GOVERNANCE", 400, "InvalidArgument"},
		{"PUT", "/alpha/k", "X-Amz-Object-Lock-Legal-Hold", "ON", 400, "InvalidRequest"},
		{"PUT", "/alpha/k", "X-Amz-Object-Lock-Legal-Hold", "MAYBE", 400, "InvalidArgument"},
		{"PUT", "/alpha/k", "X-Amz-Website-Redirect-Location", "/x", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "X-Amz-Storage-Class", "COLD", 400, "InvalidStorageClass"},
		{"PUT", "/alpha/k", "X-Amz-Acl", "public-read-write", 400, "AccessControlListNotSupported"},
		{"PUT", "/alpha/k", "X-Amz-Acl", "nonsense", 400, "InvalidArgument"},
		{"PUT", "/alpha/k", "X-Amz-Write-Offset-Bytes", "0", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "If-None-Match", `"abc"`, 501, "NotImplemented"},
		{"POST", "/alpha/k?uploads", "If-None-Match", "*", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "X-Amz-Expected-Bucket-Owner", "111122223333", 403, "AccessDenied"},
		{"GET", "/alpha/top", "X-Amz-Expected-Bucket-Owner", "111122223333", 403, "AccessDenied"},
		{"GET", "/alpha", "X-Amz-Expected-Bucket-Owner", "111122223333", 403, "AccessDenied"},
		{"DELETE", "/alpha/top", "X-Amz-Mfa", "serial 123456", 501, "NotImplemented"},
		{"DELETE", "/alpha/top", "If-Match", `"abc"`, 501, "NotImplemented"},
		{"DELETE", "/alpha/top", "X-Amz-If-Match-Size", "4", 501, "NotImplemented"},
		{"POST", "/alpha/k?uploads", "X-Amz-Checksum-Type", "HALF_OBJECT", 400, "InvalidRequest"},
		{"POST", "/alpha/k?uploads", "X-Amz-Server-Side-Encryption", "AES256", 501, "NotImplemented"},
		{"PUT", "/alpha/k", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Algorithm", "AES256", 0, ""}, // not a copy: no rule
		// Accepted, and honoured as S3 honours them here.
		{"PUT", "/alpha/k", "X-Amz-Acl", "bucket-owner-full-control", 200, ""},
		{"PUT", "/alpha/k", "X-Amz-Storage-Class", "STANDARD", 200, ""},
		{"PUT", "/alpha/k", "X-Amz-Storage-Class", "GLACIER", 200, ""},
		{"PUT", "/alpha/k", "X-Amz-Expected-Bucket-Owner", ownerID(testAccessKey), 200, ""},
		{"PUT", "/alpha/k", "X-Amz-Request-Payer", "requester", 200, ""},
		{"PUT", "/owned", "X-Amz-Object-Ownership", "BucketOwnerEnforced", 200, ""},
		{"PUT", "/unlocked", "X-Amz-Bucket-Object-Lock-Enabled", "false", 200, ""},
	}
	for _, c := range cases {
		var body []byte
		if c.method == "PUT" && strings.Count(c.target, "/") > 1 {
			body = []byte("data")
		}
		resp, rb := ts.do(t, c.method, c.target, body, http.Header{c.header: {c.value}})
		switch {
		case c.code != "":
			wantError(t, resp, rb, c.status, c.code)
		case c.status != 0 && resp.StatusCode != c.status:
			t.Errorf("%s %s with %s: %s: %d %s", c.method, c.target, c.header, c.value, resp.StatusCode, rb)
		}
	}
	// A refused bucket was not made; the object lock one in particular.
	for _, b := range []string{"locked", "acl-bucket"} {
		if _, err := ts.store.HeadBucket(b); err == nil {
			t.Errorf("bucket %s was created although the request was refused", b)
		}
	}
	if cfg, err := ts.store.Locks().Config("worm"); err != nil || !cfg.Enabled {
		t.Errorf("bucket worm made with object lock: %+v %v", cfg, err)
	}
}

// TestSystemEndpoints: /minio/ belongs to the server: unsigned health
// probes, signed admin requests with MinIO's empty region answered in
// JSON, and "minio" can never be a bucket; "healthz" is an ordinary one.
func TestSystemEndpoints(t *testing.T) {
	ts := newTestServer(t)
	for _, p := range []string{"/minio/health/live", "/minio/health/ready"} {
		for _, m := range []string{"GET", "HEAD"} {
			req, _ := http.NewRequest(m, ts.url+p, nil)
			if resp, body := send(t, req); resp.StatusCode != 200 {
				t.Errorf("%s %s: %d %s", m, p, resp.StatusCode, body)
			}
		}
	}
	resp, body := ts.do(t, "PUT", "/minio", nil, nil)
	wantJSONError(t, resp, body, 404, "XMinioUnknownAPIRequest")
	if err := ts.store.CreateBucket("minio"); err == nil {
		t.Error("the store made a bucket named minio")
	}
	// A bucket called healthz is a bucket like any other.
	mustBucket(t, ts, "healthz")
	mustPut(t, ts, "healthz", "k", "v", store.Meta{})
	if resp, body := ts.do(t, "GET", "/healthz", nil, nil); resp.StatusCode != 200 || !strings.Contains(string(body), "<Key>k</Key>") {
		t.Errorf("GET /healthz: %d %s", resp.StatusCode, body)
	}
	// Admin requests: unsigned ones are refused; signed with an empty
	// region (as mc signs) they reach the admin API.
	req, _ := http.NewRequest("GET", ts.url+"/minio/admin/v3/info", nil)
	resp, body = send(t, req)
	wantJSONError(t, resp, body, 403, "AccessDenied")
	resp, body = send(t, signedAdmin(t, ts.url+"/minio/admin/v3/heal/", testSecretKey))
	wantJSONError(t, resp, body, 501, "NotImplemented")
	resp, body = send(t, signedAdmin(t, ts.url+"/minio/admin/v3/info", "wrong-secret"))
	wantJSONError(t, resp, body, 403, "SignatureDoesNotMatch")
	resp, body = ts.do(t, "GET", "/minio/nothing/here", nil, nil)
	wantJSONError(t, resp, body, 404, "XMinioUnknownAPIRequest")
	// S3 requests keep refusing the empty region.
	req = ts.rawRequest(t, "GET", "/", nil, nil)
	req.Header.Set("X-Amz-Content-Sha256", hexSHA256(nil))
	resp, body = send(t, signer.SignV4(*req, testAccessKey, testSecretKey, "", ""))
	wantError(t, resp, body, 400, "AuthorizationHeaderMalformed")
}

// signedAdmin signs a GET the way mc does: SigV4 with an empty region.
func signedAdmin(t *testing.T, target, secret string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Content-Sha256", hexSHA256(nil))
	return signer.SignV4(*req, testAccessKey, secret, "", "")
}

func md5Of(s string) string {
	sum := md5.Sum([]byte(s))
	return b64(sum[:])
}

func wantJSONError(t *testing.T, resp *http.Response, body []byte, status int, code string) {
	t.Helper()
	var e struct{ Code, Message string }
	if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != status || e.Code != code || e.Message == "" {
		t.Errorf("%s %s: %d %q, want %d with JSON code %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, body, status, code)
	}
}

// FuzzConfinement sends signed GET and HEAD requests with any path and
// query through the whole handler stack, router included: whatever comes
// in, the answer is never a server error or a redirect, and every key,
// common prefix and object body it carries belongs to the addressed
// bucket.
func FuzzConfinement(f *testing.F) {
	seeds := [][2]string{
		{"/alpha", "list-type=2&prefix=../"}, {"/alpha", "prefix=../beta/&delimiter=/"},
		{"/alpha", "marker=../beta/private/"}, {"/alpha", "list-type=2&continuation-token=Li4vYmV0YS8="},
		{"/alpha", "uploads&prefix=../&key-marker=../beta"}, {"/alpha/a/1", "uploadId=../../beta"},
		{"/alpha/../beta/private/secret.txt", ""}, {"/alpha/a/../../beta/betatop", ""},
		{"/alpha", "list-type=2&start-after=../&encoding-type=url"}, {"/alpha/%2e%2e/beta/betatop", ""},
		{"/alpha", "prefix=/"}, {"/alpha", "prefix=a%2F..%2F..%2F"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, path, query string, head bool) {
		h := confinedHandler.get(t, func(st *store.Store) error {
			for b, keys := range confinedKeys {
				if err := st.CreateBucket(b); err != nil {
					return err
				}
				for _, k := range keys {
					body := "content of " + b + "/" + k
					if _, err := st.PutObject(b, k, strings.NewReader(body), int64(len(body)), store.Meta{}); err != nil {
						return err
					}
				}
				if _, err := st.Uploads().Create(b, keys[0], store.Meta{}); err != nil {
					return err
				}
			}
			return nil
		})
		u, err := url.Parse("http://fuzz.test" + path + "?" + query)
		if err != nil || !strings.HasPrefix(path, "/") || u.Path == "" {
			return
		}
		method := "GET"
		if head {
			method = "HEAD"
		}
		req := &http.Request{Method: method, URL: u, Host: "fuzz.test", Header: http.Header{},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody}
		req.Header.Set("X-Amz-Content-Sha256", hexSHA256(nil))
		req = signer.SignV4(*req, testAccessKey, testSecretKey, "", testRegion)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		bucket, _ := splitPath(u.Path)
		what := method + " " + u.RequestURI()
		checkConfined(t, what, bucket, u.Query(), rec.Result(), rec.Body.Bytes())
	})
}

// TestControlCharacterKeys: keys holding NUL and other control characters
// are stored; XML cannot carry them, so listings name them exactly with
// encoding-type=url.
func TestControlCharacterKeys(t *testing.T) {
	ts := confinedServer(t)
	if resp, body := ts.do(t, "PUT", "/alpha/ctl%01/nul%00end", []byte("ctl"), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	if resp, body := ts.do(t, "GET", "/alpha/ctl%01/nul%00end", nil, nil); resp.StatusCode != http.StatusOK || string(body) != "ctl" {
		t.Fatalf("GET: %d %s", resp.StatusCode, body)
	}
	resp, body := ts.do(t, "GET", "/alpha?list-type=2&encoding-type=url&prefix=ctl", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<Key>ctl%01/nul%00end</Key>") {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
}

// TestConditionalDeletesRefused: S3 deletes only when If-Match (or an
// object's ETag, LastModifiedTime or Size in DeleteObjects) holds; this
// server does not check them, so it refuses them and deletes nothing
// rather than deleting whatever the condition says.
func TestConditionalDeletesRefused(t *testing.T) {
	ts := confinedServer(t)
	resp, rb := ts.do(t, "DELETE", "/alpha/top", nil, http.Header{"If-Match": {`"not-its-etag"`}})
	wantError(t, resp, rb, 501, "NotImplemented")
	doc := `<Delete><Object><Key>top</Key><ETag>"not-its-etag"</ETag></Object>` +
		`<Object><Key>a/1</Key><Size>1</Size></Object><Object><Key>x/y/z</Key></Object></Delete>`
	resp, rb = ts.do(t, "POST", "/alpha?delete", []byte(doc), http.Header{"Content-Md5": {md5Of(doc)}})
	if resp.StatusCode != 200 || !strings.Contains(string(rb), "<Error><Key>top</Key><Code>NotImplemented</Code>") ||
		!strings.Contains(string(rb), "<Error><Key>a/1</Key><Code>NotImplemented</Code>") ||
		!strings.Contains(string(rb), "<Deleted><Key>x/y/z</Key></Deleted>") {
		t.Errorf("DeleteObjects: %d %s", resp.StatusCode, rb)
	}
	for _, k := range []string{"top", "a/1"} {
		if _, err := ts.store.HeadObject("alpha", k); err != nil {
			t.Errorf("%s was deleted under a condition nobody checked: %v", k, err)
		}
	}
	if _, err := ts.store.HeadObject("alpha", "x/y/z"); err == nil {
		t.Error("the unconditional key of DeleteObjects was kept")
	}
	// A PUT naming an S3 Express operation is not a PutObject.
	resp, rb = ts.do(t, "PUT", "/alpha/top?renameObject", nil, http.Header{"X-Amz-Rename-Source": {"/alpha/a/1"}})
	wantError(t, resp, rb, 501, "NotImplemented")
	if got, err := ts.store.HeadObject("alpha", "top"); err != nil || got.Size == 0 {
		t.Errorf("PUT ?renameObject changed the object: %+v %v", got, err)
	}
}
