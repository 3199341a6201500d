package s3api

import (
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

func TestMinioBucketsAndObjects(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	if err := ts.client.MakeBucket(c, "photos", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	// us-east-1: creating a bucket you own again succeeds (S3's legacy
	// behaviour; TestRegion checks the 409 elsewhere).
	if err := ts.client.MakeBucket(c, "photos", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("second MakeBucket: %v", err)
	}
	ok, err := ts.client.BucketExists(c, "photos")
	if err != nil || !ok {
		t.Fatalf("BucketExists = %v, %v", ok, err)
	}
	ok, err = ts.client.BucketExists(c, "nothere")
	if err != nil || ok {
		t.Fatalf("BucketExists(nothere) = %v, %v", ok, err)
	}
	buckets, err := ts.client.ListBuckets(c)
	if err != nil || len(buckets) != 1 || buckets[0].Name != "photos" {
		t.Fatalf("ListBuckets = %+v, %v", buckets, err)
	}

	body := "hello, world"
	up, err := ts.client.PutObject(c, "photos", "2024/a.txt", strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{
		ContentType:        "text/plain",
		ContentEncoding:    "identity",
		ContentDisposition: "inline",
		ContentLanguage:    "en",
		CacheControl:       "max-age=60",
		Expires:            time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		UserMetadata:       map[string]string{"Owner": "ann"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.ETag != "e4d7f1b4ed2e42d15898f4b27b019da4" {
		t.Errorf("ETag = %q", up.ETag)
	}
	obj, err := ts.client.GetObject(c, "photos", "2024/a.txt", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, obj); got != body {
		t.Errorf("body = %q", got)
	}
	st, err := obj.Stat()
	if err != nil {
		t.Fatal(err)
	}
	h := st.Metadata
	for name, want := range map[string]string{
		"Content-Type": "text/plain", "Content-Encoding": "identity", "Content-Disposition": "inline",
		"Content-Language": "en", "Cache-Control": "max-age=60",
		"X-Amz-Meta-Owner": "ann",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if !st.Expires.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("Expires = %v", st.Expires)
	}
	st, err = ts.client.StatObject(c, "photos", "2024/a.txt", minio.StatObjectOptions{})
	if err != nil || st.Size != int64(len(body)) || st.ETag != up.ETag {
		t.Errorf("stat = %+v, %v", st, err)
	}

	// Copy, then list.
	if _, err := ts.client.CopyObject(c, minio.CopyDestOptions{Bucket: "photos", Object: "copy.txt"},
		minio.CopySrcOptions{Bucket: "photos", Object: "2024/a.txt"}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for o := range ts.client.ListObjects(c, "photos", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	if strings.Join(keys, ",") != "2024/a.txt,copy.txt" {
		t.Errorf("keys = %v", keys)
	}
	keys = nil
	for o := range ts.client.ListObjects(c, "photos", minio.ListObjectsOptions{UseV1: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	if strings.Join(keys, ",") != "copy.txt,2024/" {
		t.Errorf("v1 keys = %v", keys)
	}

	// Remove: one, then many, then the bucket.
	if err := ts.client.RemoveObject(c, "photos", "copy.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ts.client.RemoveObject(c, "photos", "copy.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("removing a missing key: %v", err)
	}
	err = ts.client.RemoveBucket(c, "photos")
	if code := minio.ToErrorResponse(err).Code; code != "BucketNotEmpty" {
		t.Fatalf("RemoveBucket non-empty: %v", err)
	}
	objs := make(chan minio.ObjectInfo, 3)
	for _, k := range []string{"2024/a.txt", "missing", "x"} {
		objs <- minio.ObjectInfo{Key: k}
	}
	close(objs)
	for e := range ts.client.RemoveObjects(c, "photos", objs, minio.RemoveObjectsOptions{}) {
		t.Errorf("RemoveObjects: %v", e.Err)
	}
	if err := ts.client.RemoveBucket(c, "photos"); err != nil {
		t.Fatal(err)
	}
	_, err = ts.client.GetObjectACL(c, "photos", "x")
	if code := minio.ToErrorResponse(err).Code; code != "NoSuchBucket" {
		t.Fatalf("stat after bucket removal: %v", err)
	}
	if !strings.Contains(ts.log.String(), `"op":"PutObject"`) {
		t.Errorf("no PutObject log line in %s", ts.log.String())
	}
}
