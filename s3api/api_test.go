package s3api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/store"
)

func TestNewRejectsBadConfig(t *testing.T) {
	ts := newTestServer(t)
	for name, c := range map[string]Config{
		"no store":       {Credentials: map[string]string{"a": "b"}},
		"no credentials": {Store: ts.store},
		"empty secret":   {Store: ts.store, Credentials: map[string]string{"a": ""}},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A zero Logger is a silent one.
	if _, err := New(Config{Store: ts.store, Credentials: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
}

// TestRequestLog: one JSON line per request with the fields operators
// need, the error code when there is one.
func TestRequestLog(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "logs")
	ts.do(t, "PUT", "/logs/a/b", []byte("12345"), nil)
	resp, _ := ts.do(t, "GET", "/logs/missing", nil, nil)
	ts.do(t, "GET", "/logs/a/b", nil, nil)
	lines := strings.Split(strings.TrimSpace(ts.log.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines:\n%s", len(lines), ts.log.String())
	}
	var entries []map[string]any
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		entries = append(entries, e)
	}
	put, miss, get := entries[0], entries[1], entries[2]
	for k, want := range map[string]any{"op": "PutObject", "method": "PUT", "bucket": "logs", "key": "a/b", "status": 200.0, "bytes_in": 5.0, "access_key": testAccessKey} {
		if put[k] != want {
			t.Errorf("put log %s = %v, want %v (%v)", k, put[k], want, put)
		}
	}
	if miss["error_code"] != "NoSuchKey" || miss["status"] != 404.0 || miss["request_id"] != resp.Header.Get("X-Amz-Request-Id") {
		t.Errorf("error log: %v", miss)
	}
	if get["bytes_out"] != 5.0 || get["latency"] == nil {
		t.Errorf("get log: %v", get)
	}
}

// TestRequestIDsUnique: every response carries its own IDs.
func TestRequestIDsUnique(t *testing.T) {
	ts := newTestServer(t)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		resp, _ := ts.do(t, "GET", "/", nil, nil)
		id := resp.Header.Get("X-Amz-Request-Id")
		if len(id) != 16 || seen[id] {
			t.Fatalf("request id %q (seen %v)", id, seen[id])
		}
		seen[id] = true
	}
}

// TestBucketDocuments pins the small bucket documents.
func TestBucketDocuments(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "docs")
	for _, c := range []struct{ target, want string }{
		{"/docs?location", `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></LocationConstraint>`},
		{"/docs?versioning", `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></VersioningConfiguration>`},
	} {
		resp, body := ts.do(t, "GET", c.target, nil, nil)
		if resp.StatusCode != 200 || string(body) != `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+c.want {
			t.Errorf("%s: %d %s", c.target, resp.StatusCode, body)
		}
	}
	resp, body := ts.do(t, "GET", "/docs?acl", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<Permission>FULL_CONTROL</Permission>") {
		t.Errorf("acl: %s", body)
	}
	// CreateBucket takes a location body; with no region configured, any
	// region (region_test.go has the rest).
	located := func(region string) []byte {
		return []byte(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>` + region + `</LocationConstraint></CreateBucketConfiguration>`)
	}
	resp, _ = ts.do(t, "PUT", "/located", located("eu-west-1"), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Location") != "/located" {
		t.Errorf("create with configuration: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = ts.do(t, "DELETE", "/located", nil, nil)
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("delete bucket: %d", resp.StatusCode)
	}
	// ListBuckets with the owner.
	_, body = ts.do(t, "GET", "/", nil, nil)
	info, _ := ts.store.HeadBucket("docs")
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>` + ownerID(testAccessKey) +
		`</ID><DisplayName>` + testAccessKey + `</DisplayName></Owner><Buckets><Bucket><Name>docs</Name><CreationDate>` + isoTime(info.Created) + `</CreationDate><BucketRegion>` + DefaultRegion + `</BucketRegion></Bucket></Buckets></ListAllMyBucketsResult>`
	if string(body) != want {
		t.Errorf("ListBuckets\n%s\nwant\n%s", body, want)
	}
}

// TestRegion: a configured region is what GetBucketLocation reports.
func TestRegion(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Region = "eu-central-1" })
	mustBucket(t, ts, "docs")
	_, body := ts.do(t, "GET", "/docs?location", nil, nil)
	if !strings.Contains(string(body), ">eu-central-1</LocationConstraint>") {
		t.Errorf("location: %s", body)
	}
	// Outside us-east-1 S3 refuses to create a bucket you own.
	resp, body := ts.do(t, "PUT", "/docs", nil, nil)
	wantError(t, resp, body, 409, "BucketAlreadyOwnedByYou")
}

// TestClientDisconnectLogged: a client that goes away mid-download is
// logged as such, not as an internal error.
func TestClientDisconnectLogged(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "logs")
	data := pattern(32<<20, 5)
	if _, err := ts.store.PutObject("logs", "big", bytes.NewReader(data), int64(len(data)), store.Meta{}); err != nil {
		t.Fatal(err)
	}
	req := signed(t, ts.rawRequest(t, "GET", "/logs/big", nil, nil), nil)
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 1024))
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(ts.log.String(), `"error_code":"ClientDisconnected"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no ClientDisconnected in log:\n%s", ts.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(ts.log.String(), `"level":"error"`) {
		t.Errorf("a disconnect logged at error level:\n%s", ts.log.String())
	}
}
