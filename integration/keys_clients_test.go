package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestAwkwardKeysMinio puts, stats, gets, lists (recursive and by
// delimiter) and removes every awkward key through minio-go; the listing
// must give back exactly the keys put, in S3 byte order.
func TestAwkwardKeysMinio(t *testing.T) {
	s := startServer(t, "1G")
	c := s.client(t)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "mkeys", minio.MakeBucketOptions{Region: region}); err != nil {
		t.Fatal(err)
	}
	keys := awkwardKeys()
	for _, k := range keys {
		body := []byte("minio " + k)
		if _, err := c.PutObject(ctx, "mkeys", k, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %q: %v", k, err)
		}
	}
	for _, k := range keys {
		if st, err := c.StatObject(ctx, "mkeys", k, minio.StatObjectOptions{}); err != nil || st.Size != int64(len("minio "+k)) {
			t.Errorf("stat %q: %+v %v", k, st.Size, err)
		}
		if got := mustGet(t, ctx, c, "mkeys", k, minio.GetObjectOptions{}); string(got) != "minio "+k {
			t.Errorf("get %q: %q", k, got)
		}
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	var listed []string
	for obj := range c.ListObjects(ctx, "mkeys", minio.ListObjectsOptions{Recursive: true, MaxKeys: 3}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		listed = append(listed, obj.Key)
	}
	if !slices.Equal(listed, want) {
		t.Errorf("recursive listing:\n got %q\nwant %q", listed, want)
	}
	// One level with delimiter "/": the keys without a slash and the first
	// components of the others, as S3 computes them.
	var top, wantTop []string
	seen := map[string]bool{}
	for _, k := range want {
		if i := strings.IndexByte(k, '/'); i >= 0 {
			k = k[:i+1]
		}
		if !seen[k] {
			seen[k] = true
			wantTop = append(wantTop, k)
		}
	}
	for obj := range c.ListObjects(ctx, "mkeys", minio.ListObjectsOptions{}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		top = append(top, obj.Key)
	}
	// minio-go yields a page's objects before its prefixes: compare sorted.
	slices.Sort(top)
	if !slices.Equal(top, wantTop) {
		t.Errorf("delimited listing:\n got %q\nwant %q", top, wantTop)
	}
	objects := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		objects <- minio.ObjectInfo{Key: k}
	}
	close(objects)
	for e := range c.RemoveObjects(ctx, "mkeys", objects, minio.RemoveObjectsOptions{}) {
		t.Errorf("remove %q: %v", e.ObjectName, e.Err)
	}
	if err := c.RemoveBucket(ctx, "mkeys"); err != nil {
		t.Errorf("remove the emptied bucket: %v", err)
	}
}

// TestAwkwardKeysBoto3 does the same with boto3: put, head, get, a
// paginated ListObjectsV2 (page size 2), copy, delete one by one.
func TestAwkwardKeysBoto3(t *testing.T) {
	s := startServer(t, "1G")
	keys, err := json.Marshal(awkwardKeys())
	if err != nil {
		t.Fatal(err)
	}
	out := runBoto3(t, s, `keys = json.loads(`+"'''"+string(keys)+"'''"+`)
s3.create_bucket(Bucket="bkeys")
for k in keys:
    s3.put_object(Bucket="bkeys", Key=k, Body=("boto " + k).encode())
for k in keys:
    assert s3.head_object(Bucket="bkeys", Key=k)["ContentLength"] == len(("boto " + k).encode()), k
    assert s3.get_object(Bucket="bkeys", Key=k)["Body"].read() == ("boto " + k).encode(), k
listed = []
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="bkeys", PaginationConfig={"PageSize": 2}):
    listed += [o["Key"] for o in page.get("Contents", [])]
want = sorted(keys, key=lambda k: k.encode())
assert listed == want, (listed, want)
s3.copy_object(Bucket="bkeys", Key="copy of ..", CopySource={"Bucket": "bkeys", "Key": ".."})
assert s3.get_object(Bucket="bkeys", Key="copy of ..")["Body"].read() == b"boto .."
for k in keys + ["copy of .."]:
    s3.delete_object(Bucket="bkeys", Key=k)
assert "Contents" not in s3.list_objects_v2(Bucket="bkeys")
s3.delete_bucket(Bucket="bkeys")
print("ok", len(listed))
`)
	if !strings.HasPrefix(out, "ok ") {
		t.Fatalf("boto3: %s", out)
	}
}
