package integration

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestCompatSweepBoto3: bucket names S3 refuses since ("-.", ".-"),
// metadata beyond ASCII, and url-encoded listings, through the binary
// with boto3 (issue 44 items 3, 4, 5).
func TestCompatSweepBoto3(t *testing.T) {
	s := startServer(t, "1G")
	// boto3 refuses to send metadata beyond ASCII; other clients send
	// UTF-8 bytes, as this raw request does.
	if st, body := s.do(t, "PUT", "/sweep", nil, nil, region); st != 200 {
		t.Fatalf("create: %d %s", st, body)
	}
	key := "/sweep/" + url.PathEscape("dir with space") + "/" + url.PathEscape("café x")
	if st, body := s.do(t, "PUT", key, []byte("1"), http.Header{"X-Amz-Meta-City": {"Zürich"}}, region); st != 200 {
		t.Fatalf("put: %d %s", st, body)
	}
	out := runBoto3(t, s, `
from botocore.exceptions import ClientError
for name in ["a-.b", "a.-b"]:
    try:
        s3.create_bucket(Bucket=name)
        print("created", name)
    except ClientError as e:
        print(name, e.response["Error"]["Code"])
import email.header
h = s3.head_object(Bucket="sweep", Key="dir with space/caf\u00e9 x")
raw = h["Metadata"]["city"]
print("meta", str(email.header.make_header(email.header.decode_header(raw))), raw.startswith("=?UTF-8?"))
r = s3.list_objects_v2(Bucket="sweep", Delimiter="/", EncodingType="url")
print("prefix", r["CommonPrefixes"][0]["Prefix"])
r = s3.list_objects_v2(Bucket="sweep", Prefix="dir with space/", EncodingType="url")
print("key", r["Contents"][0]["Key"])
r = s3.list_objects_v2(Bucket="sweep", Prefix="dir with space/")
print("decoded", r["Contents"][0]["Key"])
r = s3.list_objects_v2(Bucket="sweep", ContinuationToken="")
print("empty token", r["KeyCount"])
`)
	for _, want := range []string{"a-.b InvalidBucketName", "a.-b InvalidBucketName", "meta Zürich True",
		"prefix dir%20with%20space/", "key dir%20with%20space/caf%C3%A9%20x", "decoded dir with space/café x", "empty token 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("boto3 printed\n%s\nwant a line %q", out, want)
		}
	}
}

// TestCompatSweepMinio: minio-go's UTF-8 metadata and WithMetadata
// listings through the binary.
func TestCompatSweepMinio(t *testing.T) {
	s := startServer(t, "1G")
	c, ctx := s.client(t), context.Background()
	if err := c.MakeBucket(ctx, "sweep", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := minio.PutObjectOptions{UserMetadata: map[string]string{"city": "Zürich 日本"}, UserTags: map[string]string{"team": "a b"}, ContentType: "text/plain"}
	if _, err := c.PutObject(ctx, "sweep", "k", strings.NewReader("v"), 1, opts); err != nil {
		t.Fatal(err)
	}
	info, err := c.StatObject(ctx, "sweep", "k", minio.StatObjectOptions{})
	if err != nil || info.UserMetadata["City"] != "Zürich 日本" {
		t.Fatalf("StatObject: %v, %v", info.UserMetadata, err)
	}
	n := 0
	for o := range c.ListObjects(ctx, "sweep", minio.ListObjectsOptions{WithMetadata: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		n++
		if o.UserMetadataStripped["City"] != "Zürich 日本" || o.UserMetadata["content-type"] != "text/plain" || o.UserTags["team"] != "a b" {
			t.Errorf("WithMetadata: %+v", o)
		}
	}
	if n != 1 {
		t.Errorf("listed %d objects", n)
	}
}
