package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/store"
)

// putVersion PUTs a body and returns the version ID the answer carries.
func putVersion(t *testing.T, ts *testServer, target, body string) string {
	t.Helper()
	resp, rb := ts.do(t, "PUT", target, []byte(body), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("PUT %s: %d %s", target, resp.StatusCode, rb)
	}
	return resp.Header.Get("X-Amz-Version-Id")
}

// TestVersioningWire checks the requests and answers of versioning: the
// bucket's state, the version headers of writes, reads and deletes, a
// delete marker read without and with its ID, DeleteObjects with
// versions, copies from a version, and the version listing document.
func TestVersioningWire(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "ver")
	resp, rb := ts.do(t, "GET", "/ver?versioning", nil, nil)
	if resp.StatusCode != 200 || strings.Contains(string(rb), "<Status>") {
		t.Fatalf("GET ?versioning of a new bucket: %d %s", resp.StatusCode, rb)
	}
	for body, code := range map[string]string{
		`<VersioningConfiguration><Status>On</Status></VersioningConfiguration>`:                                    "IllegalVersioningConfigurationException",
		`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`: "NotImplemented",
		`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Maybe</MfaDelete></VersioningConfiguration>`:   "IllegalVersioningConfigurationException",
		`<Versioning`: "MalformedXML",
	} {
		resp, rb := ts.do(t, "PUT", "/ver?versioning", []byte(body), nil)
		wantError(t, resp, rb, toS3Error(errorf(code, "")).Status(), code)
	}
	old := putVersion(t, ts, "/ver/k", "zero")
	if old != "" {
		t.Fatalf("a PUT before versioning answered version %q", old)
	}
	enable := `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>`
	if resp, rb := ts.do(t, "PUT", "/ver?versioning", []byte(enable), nil); resp.StatusCode != 200 {
		t.Fatalf("enable: %d %s", resp.StatusCode, rb)
	}
	if _, rb := ts.do(t, "GET", "/ver?versioning", nil, nil); !strings.Contains(string(rb), "<Status>Enabled</Status>") {
		t.Fatalf("GET ?versioning: %s", rb)
	}
	v1 := putVersion(t, ts, "/ver/k", "one")
	v2 := putVersion(t, ts, "/ver/k", "two")
	if store.CheckVersionID(v1) != nil || v1 == v2 || v1 == "null" {
		t.Fatalf("versions %q, %q", v1, v2)
	}
	for id, want := range map[string]string{"null": "zero", v1: "one", v2: "two"} {
		resp, rb := ts.do(t, "GET", "/ver/k?versionId="+id, nil, nil)
		if resp.StatusCode != 200 || string(rb) != want || resp.Header.Get("X-Amz-Version-Id") != id {
			t.Errorf("GET version %s: %d %q %q", id, resp.StatusCode, rb, resp.Header.Get("X-Amz-Version-Id"))
		}
	}
	if resp, _ := ts.do(t, "HEAD", "/ver/k", nil, nil); resp.Header.Get("X-Amz-Version-Id") != v2 {
		t.Errorf("HEAD: version %q, want %q", resp.Header.Get("X-Amz-Version-Id"), v2)
	}
	// Copies: from an old version, onto its own key (a restore).
	resp, rb = ts.do(t, "PUT", "/ver/k", nil, http.Header{"X-Amz-Copy-Source": {"/ver/k?versionId=" + v1}})
	v3 := resp.Header.Get("X-Amz-Version-Id")
	if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Copy-Source-Version-Id") != v1 || store.CheckVersionID(v3) != nil || v3 == v2 {
		t.Fatalf("restore by copy: %d %s %v", resp.StatusCode, rb, resp.Header)
	}
	// DELETE makes a marker; the key reads as missing, the marker by ID
	// is no object.
	resp, _ = ts.do(t, "DELETE", "/ver/k", nil, nil)
	marker := resp.Header.Get("X-Amz-Version-Id")
	if resp.StatusCode != 204 || resp.Header.Get("X-Amz-Delete-Marker") != "true" || store.CheckVersionID(marker) != nil {
		t.Fatalf("DELETE: %d %v", resp.StatusCode, resp.Header)
	}
	for _, method := range []string{"GET", "HEAD"} {
		resp, rb := ts.do(t, method, "/ver/k", nil, nil)
		wantError(t, resp, rb, 404, "NoSuchKey")
		if resp.Header.Get("X-Amz-Delete-Marker") != "true" || resp.Header.Get("X-Amz-Version-Id") != marker {
			t.Errorf("%s of a deleted key: %v", method, resp.Header)
		}
		resp, rb = ts.do(t, method, "/ver/k?versionId="+marker, nil, nil)
		wantError(t, resp, rb, 405, "MethodNotAllowed")
		if resp.Header.Get("X-Amz-Delete-Marker") != "true" || resp.Header.Get("Allow") != "DELETE" {
			t.Errorf("%s of a marker by ID: %v", method, resp.Header)
		}
	}
	resp, rb = ts.do(t, "PUT", "/ver/c", nil, http.Header{"X-Amz-Copy-Source": {"/ver/k?versionId=" + marker}})
	wantError(t, resp, rb, 400, "InvalidRequest")
	resp, rb = ts.do(t, "GET", "/ver/k?tagging&versionId="+v1, nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Version-Id") != v1 {
		t.Errorf("GET tagging of a version: %d %s", resp.StatusCode, rb)
	}
	// The listing interleaves versions and markers, newest first.
	resp, rb = ts.do(t, "GET", "/ver?versions", nil, nil)
	var doc versionsDoc
	if err := xml.Unmarshal(rb, &doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("list: %d %s", resp.StatusCode, rb)
	}
	s := string(rb)
	order := []string{"<DeleteMarker><Key>k</Key><VersionId>" + marker + "</VersionId><IsLatest>true</IsLatest>",
		"<Version><Key>k</Key><VersionId>" + v3 + "</VersionId><IsLatest>false</IsLatest>",
		"<VersionId>" + v2 + "</VersionId>", "<VersionId>" + v1 + "</VersionId>", "<VersionId>null</VersionId>"}
	at := 0
	for _, want := range order {
		i := strings.Index(s[at:], want)
		if i < 0 {
			t.Fatalf("listing lacks %q after byte %d: %s", want, at, s)
		}
		at += i
	}
	// DeleteObjects: a marker for one key, a version of another.
	doc2 := `<Delete><Object><Key>k</Key><VersionId>` + marker + `</VersionId></Object><Object><Key>other</Key></Object>` +
		`<Object><Key>k</Key><VersionId>` + v1 + `</VersionId></Object></Delete>`
	resp, rb = ts.do(t, "POST", "/ver?delete", []byte(doc2), http.Header{"Content-Md5": {md5Of(doc2)}})
	for _, want := range []string{
		"<Deleted><Key>k</Key><VersionId>" + marker + "</VersionId><DeleteMarker>true</DeleteMarker><DeleteMarkerVersionId>" + marker + "</DeleteMarkerVersionId></Deleted>",
		"<Deleted><Key>other</Key><DeleteMarker>true</DeleteMarker><DeleteMarkerVersionId>",
		"<Deleted><Key>k</Key><VersionId>" + v1 + "</VersionId></Deleted>",
	} {
		if resp.StatusCode != 200 || !strings.Contains(string(rb), want) {
			t.Errorf("DeleteObjects lacks %s: %d %s", want, resp.StatusCode, rb)
		}
	}
	if resp, rb := ts.do(t, "GET", "/ver/k", nil, nil); string(rb) != "one" || resp.Header.Get("X-Amz-Version-Id") != v3 {
		t.Errorf("after the marker went: %q %v", rb, resp.Header)
	}
	// DELETE of a version answers its ID.
	resp, _ = ts.do(t, "DELETE", "/ver/k?versionId="+v2, nil, nil)
	if resp.StatusCode != 204 || resp.Header.Get("X-Amz-Version-Id") != v2 || resp.Header.Get("X-Amz-Delete-Marker") != "" {
		t.Errorf("DELETE of a version: %d %v", resp.StatusCode, resp.Header)
	}
	// Suspended: null versions.
	suspend := `<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>`
	if resp, rb := ts.do(t, "PUT", "/ver?versioning", []byte(suspend), nil); resp.StatusCode != 200 {
		t.Fatalf("suspend: %d %s", resp.StatusCode, rb)
	}
	if id := putVersion(t, ts, "/ver/k", "n"); id != "null" {
		t.Errorf("suspended PUT: version %q", id)
	}
	resp, rb = ts.do(t, "DELETE", "/ver", nil, nil)
	wantError(t, resp, rb, 409, "BucketNotEmpty")
}
