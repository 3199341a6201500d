package s3api

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"

	"github.com/xfs3/xfs3/store"
	rules "github.com/xfs3/xfs3/store/lifecycle"
)

// lifecycleXML is a LifecycleConfiguration of the rules given, each the
// inner XML of one Rule.
func lifecycleXML(rules ...string) string {
	return `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule>` +
		strings.Join(rules, `</Rule><Rule>`) + `</Rule></LifecycleConfiguration>`
}

func (ts *testServer) putLifecycle(t *testing.T, bucket, doc string) {
	t.Helper()
	resp, body := ts.do(t, "PUT", "/"+bucket+"?lifecycle", []byte(doc), nil)
	if resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Fatalf("PutBucketLifecycleConfiguration: %d %s", resp.StatusCode, body)
	}
}

// TestBucketLifecycleOperations: PUT answers 200 and keeps the canonical
// form, which GET gives back; DELETE answers 204, with or without one;
// refusals leave the configuration as it was.
func TestBucketLifecycleOperations(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "logs")
	resp, body := ts.do(t, "GET", "/logs?lifecycle", nil, nil)
	wantError(t, resp, body, http.StatusNotFound, "NoSuchLifecycleConfiguration")
	var e errorBody
	if xml.Unmarshal(body, &e); e.Bucket != "logs" || e.Message != "The lifecycle configuration does not exist" {
		t.Errorf("NoSuchLifecycleConfiguration body: %s", body)
	}

	sent := `<?xml version="1.0" encoding="UTF-8"?>
<LifecycleConfiguration>
  <Rule>
    <Filter><Prefix>tmp/</Prefix></Filter>
    <Status>Enabled</Status>
    <Expiration><Days>7</Days></Expiration>
    <AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>
  </Rule>
  <Rule>
    <ID>old &amp; versions</ID>
    <Filter/>
    <Status>Disabled</Status>
    <NoncurrentVersionExpiration><NoncurrentDays>30</NoncurrentDays></NoncurrentVersionExpiration>
  </Rule>
</LifecycleConfiguration>`
	ts.putLifecycle(t, "logs", sent)
	want := xml.Header + `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Rule><ID>rule-1</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>7</Days></Expiration>` +
		`<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>` +
		`<Rule><ID>old &amp; versions</ID><Filter></Filter><Status>Disabled</Status>` +
		`<NoncurrentVersionExpiration><NoncurrentDays>30</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`
	resp, body = ts.do(t, "GET", "/logs?lifecycle", nil, nil)
	if resp.StatusCode != http.StatusOK || string(body) != want || resp.Header.Get("Content-Type") != "application/xml" {
		t.Errorf("GetBucketLifecycleConfiguration: %d %s\nwant %s", resp.StatusCode, body, want)
	}
	if doc, err := ts.store.BucketConfigs().Get("logs", store.LifecycleConfig); err != nil || xml.Header+string(doc) != want {
		t.Errorf("stored document %q, %v", doc, err)
	}

	refusals := []struct {
		name, doc, code string
		status          int
	}{
		{"not XML", `{"Rules": []}`, "MalformedXML", http.StatusBadRequest},
		{"an unknown element", lifecycleXML(`<Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration><Color>red</Color>`), "MalformedXML", http.StatusBadRequest},
		{"Days 0", lifecycleXML(`<Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration>`), "InvalidArgument", http.StatusBadRequest},
		{"no action", lifecycleXML(`<Filter/><Status>Enabled</Status>`), "InvalidRequest", http.StatusBadRequest},
		{"a tag filter on uploads", lifecycleXML(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status>` +
			`<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`), "InvalidRequest", http.StatusBadRequest},
		{"a transition", lifecycleXML(`<Filter/><Status>Enabled</Status><Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>`), "NotImplemented", http.StatusNotImplemented},
		{"a body over 2 MiB", strings.Repeat(" ", 2<<20+1), "MaxMessageLengthExceeded", http.StatusBadRequest},
		// Under 2 MiB as sent, over 64 KiB in canonical form.
		{"a canonical form over 64 KiB", lifecycleXML(strings.Repeat(`<Filter><Prefix>`+strings.Repeat("p", 1000)+`</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule><Rule>`, 70) +
			`<Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`), "MaxMessageLengthExceeded", http.StatusBadRequest},
	}
	for _, r := range refusals {
		resp, body := ts.do(t, "PUT", "/logs?lifecycle", []byte(r.doc), nil)
		wantError(t, resp, body, r.status, r.code)
	}
	if _, body = ts.do(t, "GET", "/logs?lifecycle", nil, nil); string(body) != want {
		t.Errorf("after refused PUTs: %s", body)
	}

	for range 2 {
		if resp, body = ts.do(t, "DELETE", "/logs?lifecycle", nil, nil); resp.StatusCode != http.StatusNoContent {
			t.Errorf("DeleteBucketLifecycle: %d %s", resp.StatusCode, body)
		}
	}
	resp, body = ts.do(t, "GET", "/logs?lifecycle", nil, nil)
	wantError(t, resp, body, http.StatusNotFound, "NoSuchLifecycleConfiguration")

	resp, body = ts.do(t, "PUT", "/nowhere?lifecycle", []byte(want), nil)
	wantError(t, resp, body, http.StatusNotFound, "NoSuchBucket")
	resp, body = ts.do(t, "PUT", "/logs/k?lifecycle", []byte(want), nil)
	wantError(t, resp, body, http.StatusNotImplemented, "NotImplemented")
	resp, body = ts.do(t, "POST", "/logs?lifecycle", []byte(want), nil)
	wantError(t, resp, body, http.StatusNotImplemented, "NotImplemented")
	if _, err := ts.store.HeadObject("logs", "k"); !errors.Is(err, store.ErrNoSuchKey) {
		t.Errorf("PUT /logs/k?lifecycle wrote an object: %v", err)
	}
}

// wantExpiration checks the x-amz-expiration of h: "" for none.
func wantExpiration(t *testing.T, what string, h http.Header, want string) {
	t.Helper()
	if got := h.Get("X-Amz-Expiration"); got != want {
		t.Errorf("%s: x-amz-expiration %q, want %q", what, got, want)
	}
}

// expirationOf is the header a version written at mtime gets from a rule
// of days.
func expirationOf(mtime time.Time, days int, ruleID string) string {
	at := rules.ExpiresAt(mtime, days, 24*time.Hour)
	return `expiry-date="` + at.Format(http.TimeFormat) + `", rule-id="` + ruleID + `"`
}

// TestExpirationHeader: PUT, GET and HEAD of an object its bucket's rules
// expire carry x-amz-expiration, the earliest rule's; objects no rule
// expires, buckets without rules and noncurrent versions read by ID do
// not.
func TestExpirationHeader(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "photos")
	mustBucket(t, ts, "plain")
	ts.putLifecycle(t, "photos", lifecycleXML(
		`<ID>picture deletion</ID><Filter><Prefix>pic/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration>`,
		`<ID>soon</ID><Filter><And><Prefix>pic/</Prefix><Tag><Key>kind</Key><Value>draft</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration>`,
		`<ID>new year</ID><Filter><Prefix>year/</Prefix></Filter><Status>Enabled</Status><Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration>`,
		`<ID>off</ID><Filter/><Status>Disabled</Status><Expiration><Days>1</Days></Expiration>`,
		`<ID>markers</ID><Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`,
	))

	resp, body := ts.do(t, "PUT", "/photos/pic/a.jpg", []byte("jpeg"), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
	info, err := ts.store.HeadObject("photos", "pic/a.jpg")
	if err != nil {
		t.Fatal(err)
	}
	want := expirationOf(info.LastModified, 30, "picture+deletion") // URL-encoded, as S3 sends it
	wantExpiration(t, "PUT", resp.Header, want)
	for _, method := range []string{"GET", "HEAD"} {
		resp, _ := ts.do(t, method, "/photos/pic/a.jpg", nil, nil)
		wantExpiration(t, method, resp.Header, want)
	}

	// The earliest matching rule: tags from the request's x-amz-tagging.
	resp, _ = ts.do(t, "PUT", "/photos/pic/draft.jpg", []byte("jpeg"), http.Header{"X-Amz-Tagging": {"kind=draft"}})
	info, _ = ts.store.HeadObject("photos", "pic/draft.jpg")
	wantExpiration(t, "PUT with tags", resp.Header, expirationOf(info.LastModified, 2, "soon"))
	resp, _ = ts.do(t, "HEAD", "/photos/pic/draft.jpg", nil, nil)
	wantExpiration(t, "HEAD with tags", resp.Header, expirationOf(info.LastModified, 2, "soon"))

	resp, _ = ts.do(t, "PUT", "/photos/year/x", []byte("x"), nil)
	wantExpiration(t, "a Date rule", resp.Header, `expiry-date="Tue, 01 Jan 2030 00:00:00 GMT", rule-id="new+year"`)
	resp, _ = ts.do(t, "PUT", "/photos/other", []byte("x"), nil)
	wantExpiration(t, "no rule expires it", resp.Header, "")
	resp, _ = ts.do(t, "PUT", "/plain/pic/a.jpg", []byte("x"), nil)
	wantExpiration(t, "a bucket without rules", resp.Header, "")

	// Copies and completed uploads are new objects: they get it too.
	resp, body = ts.do(t, "PUT", "/photos/pic/copy.jpg", nil, http.Header{"X-Amz-Copy-Source": {"/photos/pic/a.jpg"}})
	info, _ = ts.store.HeadObject("photos", "pic/copy.jpg")
	wantExpiration(t, "CopyObject "+string(body), resp.Header, expirationOf(info.LastModified, 30, "picture+deletion"))
	c := ctx(t)
	id, err := ts.core.NewMultipartUpload(c, "photos", "pic/big.jpg", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	part, err := ts.core.PutObjectPart(c, "photos", "pic/big.jpg", id, 1, strings.NewReader("part"), 4, minio.PutObjectPartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"` + part.ETag + `"</ETag></Part></CompleteMultipartUpload>`
	resp, body = ts.do(t, "POST", "/photos/pic/big.jpg?uploadId="+id, []byte(done), nil)
	info, _ = ts.store.HeadObject("photos", "pic/big.jpg")
	wantExpiration(t, "CompleteMultipartUpload "+string(body), resp.Header, expirationOf(info.LastModified, 30, "picture+deletion"))

	// minio-go reads the header back.
	st, err := ts.client.StatObject(c, "photos", "pic/a.jpg", minio.StatObjectOptions{})
	info, _ = ts.store.HeadObject("photos", "pic/a.jpg")
	if err != nil || !st.Expiration.Equal(rules.ExpiresAt(info.LastModified, 30, 24*time.Hour)) || st.ExpirationRuleID != "picture+deletion" {
		t.Errorf("StatObject: %v %q, %v", st.Expiration, st.ExpirationRuleID, err)
	}

	// A change of rules is seen at once.
	ts.putLifecycle(t, "photos", lifecycleXML(`<ID>all</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`))
	resp, _ = ts.do(t, "HEAD", "/photos/other", nil, nil)
	info, _ = ts.store.HeadObject("photos", "other")
	wantExpiration(t, "after a new configuration", resp.Header, expirationOf(info.LastModified, 1, "all"))
	if resp, body = ts.do(t, "DELETE", "/photos?lifecycle", nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteBucketLifecycle: %d %s", resp.StatusCode, body)
	}
	resp, _ = ts.do(t, "GET", "/photos/other", nil, nil)
	wantExpiration(t, "after the configuration is deleted", resp.Header, "")
}

// TestExpirationHeaderVersions: a version read by ID has x-amz-expiration
// while it is current, not once it is noncurrent.
func TestExpirationHeaderVersions(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.LifecycleDay = time.Hour })
	mustBucket(t, ts, "ver")
	if err := ts.store.Versions().SetState("ver", store.VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	ts.putLifecycle(t, "ver", lifecycleXML(`<ID>r</ID><Filter/><Status>Enabled</Status><Expiration><Days>3</Days></Expiration>`))
	resp, _ := ts.do(t, "PUT", "/ver/k", []byte("one"), nil)
	first := resp.Header.Get("X-Amz-Version-Id")
	info, _ := ts.store.Versions().Head("ver", "k", first)
	// Hours for days: the configured day length counts.
	want := `expiry-date="` + rules.ExpiresAt(info.LastModified, 3, time.Hour).Format(http.TimeFormat) + `", rule-id="r"`
	wantExpiration(t, "PUT", resp.Header, want)
	resp, _ = ts.do(t, "HEAD", "/ver/k?versionId="+first, nil, nil)
	wantExpiration(t, "HEAD of the current version by ID", resp.Header, want)

	if resp, _ = ts.do(t, "PUT", "/ver/k", []byte("two"), nil); resp.Header.Get("X-Amz-Expiration") == "" {
		t.Error("the second version has no x-amz-expiration")
	}
	for _, method := range []string{"GET", "HEAD"} {
		resp, _ := ts.do(t, method, "/ver/k?versionId="+first, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s of the noncurrent version: %d", method, resp.StatusCode)
		}
		wantExpiration(t, method+" of a noncurrent version", resp.Header, "")
	}
}

// TestBucketLifecycleMinio: minio-go's calls, as mc ilm rule add|ls|edit|rm
// and mc ilm export|import make them, with the rules mc makes: each
// comes back as it was sent.
func TestBucketLifecycleMinio(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "data")
	if _, err := ts.client.GetBucketLifecycle(c, "data"); minio.ToErrorResponse(err).Code != "NoSuchLifecycleConfiguration" {
		t.Fatalf("GetBucketLifecycle without one: %v", err)
	}
	cfg := lifecycle.NewConfiguration()
	cfg.Rules = []lifecycle.Rule{
		{ID: "d4g3qf6tbq6nh3hrh5n0", Status: "Enabled", RuleFilter: lifecycle.Filter{Prefix: "logs/"},
			Expiration: lifecycle.Expiration{Days: 90}},
		{ID: "noncurrent", Status: "Enabled",
			NoncurrentVersionExpiration: lifecycle.NoncurrentVersionExpiration{NoncurrentDays: 30, NewerNoncurrentVersions: 3}},
		{ID: "keep-5", Status: "Enabled",
			NoncurrentVersionExpiration: lifecycle.NoncurrentVersionExpiration{NewerNoncurrentVersions: 5}},
		{ID: "markers", Status: "Enabled", RuleFilter: lifecycle.Filter{Prefix: "tmp/"},
			Expiration: lifecycle.Expiration{DeleteMarker: true}},
		{ID: "uploads", Status: "Enabled",
			AbortIncompleteMultipartUpload: lifecycle.AbortIncompleteMultipartUpload{DaysAfterInitiation: 2}},
		{ID: "tagged", Status: "Enabled", RuleFilter: lifecycle.Filter{And: lifecycle.And{Prefix: "docs/",
			Tags: []lifecycle.Tag{{Key: "project", Value: "x"}, {Key: "tier", Value: "cold"}}}},
			Expiration: lifecycle.Expiration{Days: 10}},
		{ID: "one tag", Status: "Enabled", RuleFilter: lifecycle.Filter{And: lifecycle.And{Tags: []lifecycle.Tag{{Key: "temp", Value: "yes"}}}},
			Expiration: lifecycle.Expiration{Days: 1}},
		{ID: "big", Status: "Enabled", RuleFilter: lifecycle.Filter{ObjectSizeGreaterThan: 1 << 30},
			Expiration: lifecycle.Expiration{Days: 7}},
		{ID: "small logs", Status: "Disabled", RuleFilter: lifecycle.Filter{And: lifecycle.And{Prefix: "logs/",
			ObjectSizeGreaterThan: 10, ObjectSizeLessThan: 4096}},
			NoncurrentVersionExpiration: lifecycle.NoncurrentVersionExpiration{NoncurrentDays: 1}},
		{ID: "dated", Status: "Enabled",
			Expiration: lifecycle.Expiration{Date: lifecycle.ExpirationDate{Time: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	}
	if err := ts.client.SetBucketLifecycle(c, "data", cfg); err != nil {
		t.Fatal(err)
	}
	got, err := ts.client.GetBucketLifecycle(c, "data")
	if err != nil {
		t.Fatal(err)
	}
	sent, _ := json.Marshal(cfg.Rules)
	back, _ := json.Marshal(got.Rules)
	if string(back) != string(sent) {
		t.Errorf("GetBucketLifecycle:\n got %s\nwant %s", back, sent)
	}

	// mc ilm rule edit: read, change a rule, write back whole.
	got.Rules[0].Expiration.Days = 30
	if err := ts.client.SetBucketLifecycle(c, "data", got); err != nil {
		t.Fatal(err)
	}
	if again, err := ts.client.GetBucketLifecycle(c, "data"); err != nil || again.Rules[0].Expiration.Days != 30 {
		t.Errorf("after an edit: %+v, %v", again, err)
	}

	// mc refuses nothing it cannot send; the server refuses transitions.
	bad := lifecycle.NewConfiguration()
	bad.Rules = []lifecycle.Rule{{ID: "tier", Status: "Enabled", Transition: lifecycle.Transition{Days: 30, StorageClass: "WARM"}}}
	wantCode(t, "a transition", ts.client.SetBucketLifecycle(c, "data", bad), "NotImplemented")

	// mc ilm rule rm of the last rule: an empty configuration deletes it.
	if err := ts.client.SetBucketLifecycle(c, "data", lifecycle.NewConfiguration()); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.GetBucketLifecycle(c, "data"); minio.ToErrorResponse(err).Code != "NoSuchLifecycleConfiguration" {
		t.Errorf("GetBucketLifecycle after removal: %v", err)
	}
}

// TestBucketLifecyclePermissions: s3:GetLifecycleConfiguration reads the
// rules, s3:PutLifecycleConfiguration sets and deletes them.
func TestBucketLifecyclePermissions(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "data")
	root := ts.adminClient(testAccessKey, testSecretKey)
	for name, action := range map[string]string{"reader": "s3:GetLifecycleConfiguration", "writer": "s3:PutLifecycleConfiguration"} {
		doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["` + action + `"],"Resource":["arn:aws:s3:::data"]}]}`
		if err := root.AddPolicy(c, name, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		if err := root.AddUser(c, name, name+"-secret-1", true); err != nil {
			t.Fatal(err)
		}
		if _, err := root.AttachPolicies(c, name, name); err != nil {
			t.Fatal(err)
		}
	}
	reader, writer := ts.clientAs(t, "reader", "reader-secret-1"), ts.clientAs(t, "writer", "writer-secret-1")
	cfg := lifecycle.NewConfiguration()
	cfg.Rules = []lifecycle.Rule{{ID: "r", Status: "Enabled", Expiration: lifecycle.Expiration{Days: 1}}}
	wantCode(t, "reader sets", reader.SetBucketLifecycle(c, "data", cfg), "AccessDenied")
	if err := writer.SetBucketLifecycle(c, "data", cfg); err != nil {
		t.Fatalf("writer sets: %v", err)
	}
	if _, err := reader.GetBucketLifecycle(c, "data"); err != nil {
		t.Fatalf("reader gets: %v", err)
	}
	_, err := writer.GetBucketLifecycle(c, "data")
	wantCode(t, "writer gets", err, "AccessDenied")
	wantCode(t, "reader deletes", reader.SetBucketLifecycle(c, "data", lifecycle.NewConfiguration()), "AccessDenied")
	if err := writer.SetBucketLifecycle(c, "data", lifecycle.NewConfiguration()); err != nil {
		t.Fatalf("writer deletes: %v", err)
	}
}
