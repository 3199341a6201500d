package s3api

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/store"
)

func locationBody(region string) []byte {
	return []byte(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>` + region + `</LocationConstraint></CreateBucketConfiguration>`)
}

// regionsSeen is what a client reads of each bucket's region: the
// location (empty for us-east-1), HeadBucket's header and ListBuckets'.
func regionsSeen(t *testing.T, ts *testServer, query string) map[string][2]string {
	t.Helper()
	_, body := ts.do(t, "GET", "/"+query, nil, nil)
	var doc listAllMyBucketsResult
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("ListBuckets: %v: %s", err, body)
	}
	out := map[string][2]string{}
	for _, b := range doc.Buckets {
		_, loc := ts.do(t, "GET", "/"+b.Name+"?location", nil, nil)
		var lc struct {
			Region string `xml:",chardata"`
		}
		if err := xml.Unmarshal(loc, &lc); err != nil {
			t.Fatalf("location of %s: %v", b.Name, err)
		}
		head, _ := ts.do(t, "HEAD", "/"+b.Name, nil, nil)
		if h := head.Header.Get("X-Amz-Bucket-Region"); h != b.BucketRegion {
			t.Errorf("%s: HeadBucket says %q, ListBuckets %q", b.Name, h, b.BucketRegion)
		}
		out[b.Name] = [2]string{lc.Region, b.BucketRegion}
	}
	return out
}

// TestBucketRegions: with no region configured, CreateBucket takes any
// LocationConstraint and the bucket keeps it; a bucket made without one
// is in us-east-1, whose location S3 reports as empty.
func TestBucketRegions(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		bucket string
		body   []byte
	}{
		{"irish", locationBody("eu-west-1")},
		{"plain", nil},
		{"east", locationBody("us-east-1")},
		{"legacy", locationBody("EU")},
	} {
		resp, body := ts.do(t, "PUT", "/"+c.bucket, c.body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("create %s: %d %s", c.bucket, resp.StatusCode, body)
		}
	}
	want := map[string][2]string{
		"irish": {"eu-west-1", "eu-west-1"}, "plain": {"", DefaultRegion},
		"east": {"", DefaultRegion}, "legacy": {"EU", "EU"},
	}
	got := regionsSeen(t, ts, "")
	for b, w := range want {
		if got[b] != w {
			t.Errorf("%s: location and region %q, want %q", b, got[b], w)
		}
	}
	if doc, err := ts.store.BucketConfigs().Get("irish", store.ConfigLocation); err != nil || string(doc) != "eu-west-1" {
		t.Errorf("recorded %q, %v", doc, err)
	}
	if got := regionsSeen(t, ts, "?bucket-region=eu-west-1"); len(got) != 1 || got["irish"][1] != "eu-west-1" {
		t.Errorf("bucket-region=eu-west-1: %v", got)
	}
	if got := regionsSeen(t, ts, "?bucket-region="+DefaultRegion); len(got) != 2 || got["plain"][1] != DefaultRegion || got["east"][1] != DefaultRegion {
		t.Errorf("bucket-region=%s: %v", DefaultRegion, got)
	}

	// Re-creating: S3's legacy 200 holds only for a us-east-1 bucket asked
	// for in us-east-1.
	for _, c := range []struct {
		bucket string
		body   []byte
		status int
	}{
		{"plain", nil, 200},
		{"plain", locationBody("eu-west-1"), 409},
		{"irish", nil, 409},
		{"irish", locationBody("eu-west-1"), 409},
	} {
		resp, body := ts.do(t, "PUT", "/"+c.bucket, c.body, nil)
		if resp.StatusCode != c.status {
			t.Errorf("re-create %s with %q: %d %s, want %d", c.bucket, c.body, resp.StatusCode, body, c.status)
		}
	}
	if got := regionsSeen(t, ts, ""); got["plain"] != want["plain"] || got["irish"] != want["irish"] {
		t.Errorf("re-creating changed regions: %v", got)
	}

	// A name no region can have is refused, and no bucket is made.
	for _, bad := range []string{"eu/west-1", "eu west", strings.Repeat("r", 65)} {
		resp, body := ts.do(t, "PUT", "/badloc", locationBody(bad), nil)
		wantError(t, resp, body, 400, "InvalidLocationConstraint")
	}
	if _, err := ts.store.HeadBucket("badloc"); err == nil {
		t.Error("a refused CreateBucket made the bucket")
	}

	// The region goes with the bucket.
	if resp, _ := ts.do(t, "DELETE", "/irish", nil, nil); resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	ts.do(t, "PUT", "/irish", nil, nil)
	if got := regionsSeen(t, ts, ""); got["irish"] != want["plain"] {
		t.Errorf("made again without a constraint: %v", got["irish"])
	}
}

// TestMakeBucketRegionMinio: minio-go's MakeBucket in another region,
// then its own region lookup, and requests signed for that region.
func TestMakeBucketRegionMinio(t *testing.T) {
	ts := newTestServer(t)
	host := strings.TrimPrefix(ts.url, "http://")
	// No client region: minio-go asks each bucket's location and signs
	// for it.
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(testAccessKey, testSecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(ctx(t), "dublin", minio.MakeBucketOptions{Region: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	if loc, err := c.GetBucketLocation(ctx(t), "dublin"); err != nil || loc != "eu-west-1" {
		t.Fatalf("GetBucketLocation = %q, %v", loc, err)
	}
	// A fresh client finds the region itself.
	c2, _ := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(testAccessKey, testSecretKey, "")})
	if _, err := c2.PutObject(ctx(t), "dublin", "k", bytes.NewReader([]byte("hello")), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := c2.GetObject(ctx(t), "dublin", "k", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, o); got != "hello" {
		t.Fatalf("read %q", got)
	}
	// The client with us-east-1 configured still reaches the bucket: the
	// server checks each signature against the region it names.
	if _, err := ts.client.StatObject(ctx(t), "dublin", "k", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("signed for us-east-1: %v", err)
	}
}

// TestConfiguredRegion: with a region configured, buckets are made there
// and in no other region.
func TestConfiguredRegion(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Region = "eu-central-1" })
	resp, body := ts.do(t, "PUT", "/elsewhere", locationBody("eu-west-1"), nil)
	wantError(t, resp, body, 400, "IllegalLocationConstraintException")
	resp, body = ts.do(t, "PUT", "/east", locationBody(DefaultRegion), nil)
	wantError(t, resp, body, 400, "IllegalLocationConstraintException")
	for _, c := range []struct {
		bucket string
		body   []byte
	}{{"here", locationBody("eu-central-1")}, {"plain", nil}} {
		if resp, body := ts.do(t, "PUT", "/"+c.bucket, c.body, nil); resp.StatusCode != 200 {
			t.Fatalf("create %s: %d %s", c.bucket, resp.StatusCode, body)
		}
	}
	got := regionsSeen(t, ts, "")
	for _, b := range []string{"here", "plain"} {
		if got[b] != [2]string{"eu-central-1", "eu-central-1"} {
			t.Errorf("%s: %v", b, got[b])
		}
	}
	if len(got) != 2 {
		t.Errorf("buckets %v", got)
	}
	if _, err := New(Config{Store: ts.store, Credentials: map[string]string{"ak": "secret-key"}, Region: "eu/central"}); err == nil {
		t.Error("New took a region that is not a name")
	}
}
