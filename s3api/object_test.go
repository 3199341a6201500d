package s3api

import (
	"net/http"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store"
)

// TestConditionalMatrix checks RFC 7232 precedence on GET and HEAD.
func TestConditionalMatrix(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "bkt")
	info := mustPut(t, ts, "bkt", "k", "content", store.Meta{})
	etag := `"` + info.ETag + `"`
	before := info.LastModified.Add(-time.Hour).UTC().Format(http.TimeFormat)
	after := info.LastModified.Add(time.Hour).UTC().Format(http.TimeFormat)
	exact := info.LastModified.UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		name                           string
		match, noneMatch, since, unmod string
		status                         int
	}{
		{name: "none", status: 200},
		{name: "if-match hit", match: etag, status: 200},
		{name: "if-match list", match: `"x", ` + etag, status: 200},
		{name: "if-match star", match: "*", status: 200},
		{name: "if-match unquoted", match: info.ETag, status: 200},
		{name: "if-match miss", match: `"x"`, status: 412},
		{name: "if-none-match hit", noneMatch: etag, status: 304},
		{name: "if-none-match weak", noneMatch: "W/" + etag, status: 304},
		{name: "if-none-match star", noneMatch: "*", status: 304},
		{name: "if-none-match miss", noneMatch: `"x"`, status: 200},
		{name: "modified since before", since: before, status: 200},
		{name: "modified since exact", since: exact, status: 304},
		{name: "modified since after", since: after, status: 304},
		{name: "modified since invalid", since: "yesterday", status: 200},
		{name: "unmodified since after", unmod: after, status: 200},
		{name: "unmodified since exact", unmod: exact, status: 200},
		{name: "unmodified since before", unmod: before, status: 412},
		{name: "unmodified since invalid", unmod: "yesterday", status: 200},
		// If-Match wins over If-Unmodified-Since, If-None-Match over
		// If-Modified-Since (RFC 7232 section 6; S3 documents the same).
		{name: "match true, unmodified false", match: etag, unmod: before, status: 200},
		{name: "match false, unmodified true", match: `"x"`, unmod: after, status: 412},
		{name: "none-match false, modified true", noneMatch: etag, since: before, status: 304},
		{name: "none-match true, modified false", noneMatch: `"x"`, since: after, status: 200},
		{name: "match true, none-match false", match: etag, noneMatch: etag, status: 304},
		{name: "match false, none-match true", match: `"x"`, noneMatch: `"x"`, status: 412},
		{name: "unmodified false, modified false", unmod: before, since: after, status: 412},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			t.Run(method+" "+c.name, func(t *testing.T) {
				h := http.Header{}
				for k, v := range map[string]string{"If-Match": c.match, "If-None-Match": c.noneMatch, "If-Modified-Since": c.since, "If-Unmodified-Since": c.unmod} {
					if v != "" {
						h.Set(k, v)
					}
				}
				resp, body := ts.do(t, method, "/bkt/k", nil, h)
				switch c.status {
				case 200:
					if resp.StatusCode != 200 || (method == "GET" && string(body) != "content") {
						t.Fatalf("status %d body %q", resp.StatusCode, body)
					}
				case 304:
					wantError(t, resp, body, 304, "")
					if resp.Header.Get("ETag") != etag || resp.Header.Get("Last-Modified") != exact {
						t.Errorf("304 without validators: %v", resp.Header)
					}
				default:
					wantError(t, resp, body, c.status, "PreconditionFailed")
				}
			})
		}
	}
}

// TestRangeMatrix checks single ranges, the ones S3 ignores and the
// unsatisfiable ones, on GET and HEAD.
func TestRangeMatrix(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "bkt")
	mustPut(t, ts, "bkt", "k", "0123456789", store.Meta{})
	mustPut(t, ts, "bkt", "empty", "", store.Meta{})
	for _, c := range []struct {
		key, rng     string
		status       int
		contentRange string
		body         string
	}{
		{"k", "bytes=0-0", 206, "bytes 0-0/10", "0"},
		{"k", "bytes=2-5", 206, "bytes 2-5/10", "2345"},
		{"k", "bytes=7-", 206, "bytes 7-9/10", "789"},
		{"k", "bytes=7-100", 206, "bytes 7-9/10", "789"},
		{"k", "bytes=-3", 206, "bytes 7-9/10", "789"},
		{"k", "bytes=-20", 206, "bytes 0-9/10", "0123456789"},
		{"k", "bytes=9-9", 206, "bytes 9-9/10", "9"},
		{"k", "bytes = 2-3", 200, "", "0123456789"},   // not "bytes="
		{"k", "bytes=3-2", 200, "", "0123456789"},     // last before first: ignored
		{"k", "bytes=0-1,3-4", 200, "", "0123456789"}, // several ranges: ignored
		{"k", "bytes=a-b", 200, "", "0123456789"},
		{"k", "items=0-1", 200, "", "0123456789"},
		{"k", "bytes=-", 200, "", "0123456789"},
		{"k", "bytes=+1-2", 200, "", "0123456789"},
		{"k", "bytes=10-", 416, "bytes */10", ""},
		{"k", "bytes=10-20", 416, "bytes */10", ""},
		{"k", "bytes=-0", 416, "bytes */10", ""},
		{"empty", "bytes=0-", 416, "bytes */0", ""},
		{"empty", "bytes=-1", 416, "bytes */0", ""},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			t.Run(method+" "+c.key+" "+c.rng, func(t *testing.T) {
				resp, body := ts.do(t, method, "/bkt/"+c.key, nil, http.Header{"Range": {c.rng}})
				if c.status == 416 {
					wantError(t, resp, body, 416, "InvalidRange")
				} else if resp.StatusCode != c.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
				}
				if got := resp.Header.Get("Content-Range"); got != c.contentRange {
					t.Errorf("Content-Range %q, want %q", got, c.contentRange)
				}
				if c.status == 416 {
					return
				}
				if method == "GET" && string(body) != c.body {
					t.Errorf("body %q, want %q", body, c.body)
				}
				if resp.ContentLength != int64(len(c.body)) {
					t.Errorf("Content-Length %d, want %d", resp.ContentLength, len(c.body))
				}
			})
		}
	}
}

func TestResponseOverrides(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "bkt")
	mustPut(t, ts, "bkt", "k", "x", store.Meta{ContentType: "text/plain", CacheControl: "no-cache"})
	resp, body := ts.do(t, "GET", "/bkt/k?response-content-type=image/png&response-content-language=fr&response-expires=Thu,%2001%20Dec%201994%2016:00:00%20GMT&response-cache-control=max-age%3D1&response-content-disposition=attachment&response-content-encoding=gzip", nil, nil)
	if resp.StatusCode != 200 || string(body) != "x" {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	for k, want := range map[string]string{
		"Content-Type": "image/png", "Content-Language": "fr", "Expires": "Thu, 01 Dec 1994 16:00:00 GMT",
		"Cache-Control": "max-age=1", "Content-Disposition": "attachment", "Content-Encoding": "gzip",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	resp, _ = ts.do(t, "HEAD", "/bkt/k", nil, nil)
	if resp.Header.Get("Content-Type") != "text/plain" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("stored headers: %v", resp.Header)
	}
}

func TestDefaultContentTypeAndFolders(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "bkt")
	resp, body := ts.do(t, "PUT", "/bkt/dir/", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("folder marker: %d %s", resp.StatusCode, body)
	}
	resp, body = ts.do(t, "PUT", "/bkt/plain", []byte("x"), nil)
	if resp.StatusCode != 200 || resp.Header.Get("ETag") != `"9dd4e461268c8034f5c8564e155c67a6"` {
		t.Fatalf("put: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, _ = ts.do(t, "GET", "/bkt/plain", nil, nil)
	if resp.Header.Get("Content-Type") != "binary/octet-stream" || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("headers: %v", resp.Header)
	}
	resp, body = ts.do(t, "HEAD", "/bkt/dir/", nil, nil)
	if resp.StatusCode != 200 || resp.ContentLength != 0 {
		t.Errorf("folder head: %d %d", resp.StatusCode, resp.ContentLength)
	}
}

// TestPartNumberRead: an object stored whole is one part.
func TestPartNumberRead(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "bkt")
	mustPut(t, ts, "bkt", "k", "whole", store.Meta{})
	resp, body := ts.do(t, "GET", "/bkt/k?partNumber=1", nil, nil)
	if resp.StatusCode != 206 || string(body) != "whole" || resp.Header.Get("Content-Range") != "bytes 0-4/5" ||
		resp.Header.Get("X-Amz-Mp-Parts-Count") != "" {
		t.Errorf("part 1: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = ts.do(t, "GET", "/bkt/k?partNumber=2", nil, nil)
	wantError(t, resp, body, 416, "InvalidPartNumber")
	resp, body = ts.do(t, "HEAD", "/bkt/k?partNumber=2", nil, nil)
	wantError(t, resp, body, 416, "InvalidPartNumber")
	resp, body = ts.do(t, "GET", "/bkt/missing?partNumber=2", nil, nil)
	wantError(t, resp, body, 404, "NoSuchKey")
	resp, body = ts.do(t, "GET", "/bkt/k?partNumber=0", nil, nil)
	wantError(t, resp, body, 400, "InvalidArgument")
	resp, body = ts.do(t, "GET", "/bkt/k?partNumber=1", nil, http.Header{"Range": {"bytes=0-1"}})
	wantError(t, resp, body, 400, "InvalidRequest")
}
