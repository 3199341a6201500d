package integration

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// TestMinioTour drives the real server with minio-go through the S3 API
// the issue lists, then checks the volume with xfs_repair and a kernel
// mount against what the API reports.
func TestMinioTour(t *testing.T) {
	s := startServer(t, "2G")
	c := s.client(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))

	t.Run("buckets", func(t *testing.T) { tourBuckets(t, ctx, c) })
	t.Run("objects", func(t *testing.T) { tourObjects(t, ctx, c, rng) })
	t.Run("conditionals", func(t *testing.T) { tourConditionals(t, ctx, c) })
	t.Run("copy", func(t *testing.T) { tourCopy(t, ctx, c) })
	t.Run("tagging", func(t *testing.T) { tourTagging(t, ctx, c) })
	t.Run("presigned", func(t *testing.T) { tourPresigned(t, ctx, c) })
	t.Run("listing", func(t *testing.T) { tourListing(t, ctx, c) })
	t.Run("multipart", func(t *testing.T) { tourMultipart(t, ctx, c, rng) })

	want := s.apiView(t)
	s.checkKernelView(t, want)
}

// errCode returns the S3 error code of err ("" when it is not an S3 error).
func errCode(err error) string { return minio.ToErrorResponse(err).Code }

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error, want %s", code)
	} else if got := errCode(err); got != code {
		t.Errorf("error %v (code %q), want %s", err, got, code)
	}
}

func mustPut(t *testing.T, ctx context.Context, c *minio.Client, bucket, key string, body []byte, opts minio.PutObjectOptions) minio.UploadInfo {
	t.Helper()
	info, err := c.PutObject(ctx, bucket, key, bytes.NewReader(body), int64(len(body)), opts)
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return info
}

func mustGet(t *testing.T, ctx context.Context, c *minio.Client, bucket, key string, opts minio.GetObjectOptions) []byte {
	t.Helper()
	o, err := c.GetObject(ctx, bucket, key, opts)
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return b
}

func tourBuckets(t *testing.T, ctx context.Context, c *minio.Client) {
	for _, b := range []string{"tour", "list", "multi", "scratch"} {
		if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// us-east-1: making a bucket you own again succeeds, as on S3.
	if err := c.MakeBucket(ctx, "tour", minio.MakeBucketOptions{}); err != nil {
		t.Errorf("MakeBucket of an owned bucket: %v", err)
	}
	if ok, err := c.BucketExists(ctx, "tour"); !ok || err != nil {
		t.Errorf("BucketExists(tour) = %v, %v", ok, err)
	}
	if ok, err := c.BucketExists(ctx, "nothere"); ok || err != nil {
		t.Errorf("BucketExists(nothere) = %v, %v", ok, err)
	}
	list, err := c.ListBuckets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range list {
		names = append(names, b.Name)
		if b.CreationDate.IsZero() || time.Since(b.CreationDate) > time.Hour {
			t.Errorf("bucket %s created %v", b.Name, b.CreationDate)
		}
	}
	if !slices.Equal(names, []string{"list", "multi", "scratch", "tour"}) {
		t.Errorf("ListBuckets = %v", names)
	}
	if loc, err := c.GetBucketLocation(ctx, "tour"); err != nil || loc != region {
		t.Errorf("GetBucketLocation = %q, %v", loc, err)
	}
	if v, err := c.GetBucketVersioning(ctx, "tour"); err != nil || v.Status != "" {
		t.Errorf("GetBucketVersioning = %+v, %v", v, err)
	}
	mustPut(t, ctx, c, "scratch", "x", []byte("x"), minio.PutObjectOptions{})
	wantCode(t, c.RemoveBucket(ctx, "scratch"), "BucketNotEmpty")
	if err := c.RemoveObject(ctx, "scratch", "x", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveBucket(ctx, "scratch"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.RemoveBucket(ctx, "scratch"), "NoSuchBucket")
}

func tourObjects(t *testing.T, ctx context.Context, c *minio.Client, rng *rand.Rand) {
	body := make([]byte, 3<<20+123) // streamed with chunk signatures
	rng.Read(body)
	info := mustPut(t, ctx, c, "tour", "docs/report.bin", body, minio.PutObjectOptions{
		ContentType:  "application/x-report",
		CacheControl: "max-age=60",
		UserMetadata: map[string]string{"Owner": "ann", "Project": "xfs3"},
	})
	sum := md5.Sum(body)
	if info.ETag != hex.EncodeToString(sum[:]) {
		t.Errorf("ETag %s, want the MD5 %x", info.ETag, sum)
	}
	st, err := c.StatObject(ctx, "tour", "docs/report.bin", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != int64(len(body)) || st.ContentType != "application/x-report" || st.UserMetadata["Owner"] != "ann" ||
		st.UserMetadata["Project"] != "xfs3" || st.Metadata.Get("Cache-Control") != "max-age=60" || st.ETag != info.ETag {
		t.Errorf("StatObject = %+v", st)
	}
	if got := mustGet(t, ctx, c, "tour", "docs/report.bin", minio.GetObjectOptions{}); !bytes.Equal(got, body) {
		t.Errorf("GET returned %d bytes, not what was put", len(got))
	}
	for _, r := range [][2]int64{{0, 0}, {10, 19}, {int64(len(body)) - 5, int64(len(body)) - 1}, {1 << 20, 2<<20 + 7}} {
		var o minio.GetObjectOptions
		o.SetRange(r[0], r[1])
		if got := mustGet(t, ctx, c, "tour", "docs/report.bin", o); !bytes.Equal(got, body[r[0]:r[1]+1]) {
			t.Errorf("range %v: %d bytes, wrong content", r, len(got))
		}
	}
	var suffix minio.GetObjectOptions
	suffix.SetRange(0, -100)
	if got := mustGet(t, ctx, c, "tour", "docs/report.bin", suffix); !bytes.Equal(got, body[len(body)-100:]) {
		t.Errorf("suffix range: %d bytes, wrong content", len(got))
	}
	var beyond minio.GetObjectOptions
	beyond.SetRange(int64(len(body))+10, int64(len(body))+20)
	o, err := c.GetObject(ctx, "tour", "docs/report.bin", beyond)
	if err == nil {
		_, err = io.ReadAll(o)
		o.Close()
	}
	wantCode(t, err, "InvalidRange")

	// Overwrite is atomic and replaces metadata.
	mustPut(t, ctx, c, "tour", "docs/report.bin", []byte("short now"), minio.PutObjectOptions{ContentType: "text/plain"})
	if got := mustGet(t, ctx, c, "tour", "docs/report.bin", minio.GetObjectOptions{}); string(got) != "short now" {
		t.Errorf("after overwrite: %q", got)
	}
	st, _ = c.StatObject(ctx, "tour", "docs/report.bin", minio.StatObjectOptions{})
	if len(st.UserMetadata) != 0 || st.ContentType != "text/plain" {
		t.Errorf("overwrite kept old metadata: %+v", st.UserMetadata)
	}

	// Unknown size: minio-go switches to a multipart upload.
	stream := make([]byte, 6<<20+17)
	rng.Read(stream)
	if _, err := c.PutObject(ctx, "tour", "stream.bin", io.MultiReader(bytes.NewReader(stream)), -1, minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, ctx, c, "tour", "stream.bin", minio.GetObjectOptions{}); !bytes.Equal(got, stream) {
		t.Error("unknown-size upload reads back differently")
	}
	mustPut(t, ctx, c, "tour", "empty", nil, minio.PutObjectOptions{})
	if got := mustGet(t, ctx, c, "tour", "empty", minio.GetObjectOptions{}); len(got) != 0 {
		t.Errorf("empty object has %d bytes", len(got))
	}
	mustPut(t, ctx, c, "tour", "folder/", nil, minio.PutObjectOptions{})
	if _, err := c.StatObject(ctx, "tour", "folder/", minio.StatObjectOptions{}); err != nil {
		t.Errorf("folder marker: %v", err)
	}

	_, err = c.StatObject(ctx, "tour", "missing", minio.StatObjectOptions{})
	if minio.ToErrorResponse(err).StatusCode != http.StatusNotFound {
		t.Errorf("HEAD of a missing key: %v", err)
	}
	ob, err := c.GetObject(ctx, "nothere", "k", minio.GetObjectOptions{})
	if err == nil { // minio-go reports errors on the first read
		_, err = io.ReadAll(ob)
		ob.Close()
	}
	wantCode(t, err, "NoSuchBucket")
	if err := c.RemoveObject(ctx, "tour", "never-there", minio.RemoveObjectOptions{}); err != nil {
		t.Errorf("DELETE of a missing key: %v", err)
	}
}

func tourConditionals(t *testing.T, ctx context.Context, c *minio.Client) {
	info := mustPut(t, ctx, c, "tour", "cond", []byte("conditional body"), minio.PutObjectOptions{})
	st, err := c.StatObject(ctx, "tour", "cond", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		set  func(o *minio.GetObjectOptions)
		code string // "" success; "NotModified" for 304
	}{
		{"if-match", func(o *minio.GetObjectOptions) { o.SetMatchETag(info.ETag) }, ""},
		{"if-match wrong", func(o *minio.GetObjectOptions) { o.SetMatchETag("0123") }, "PreconditionFailed"},
		{"if-none-match", func(o *minio.GetObjectOptions) { o.SetMatchETagExcept(info.ETag) }, "NotModified"},
		{"if-none-match other", func(o *minio.GetObjectOptions) { o.SetMatchETagExcept("0123") }, ""},
		{"if-modified-since later", func(o *minio.GetObjectOptions) { o.SetModified(st.LastModified.Add(time.Hour)) }, "NotModified"},
		{"if-modified-since earlier", func(o *minio.GetObjectOptions) { o.SetModified(st.LastModified.Add(-time.Hour)) }, ""},
		{"if-unmodified-since earlier", func(o *minio.GetObjectOptions) { o.SetUnmodified(st.LastModified.Add(-time.Hour)) }, "PreconditionFailed"},
		{"if-unmodified-since later", func(o *minio.GetObjectOptions) { o.SetUnmodified(st.LastModified.Add(time.Hour)) }, ""},
	}
	for _, tc := range cases {
		var o minio.GetObjectOptions
		tc.set(&o)
		_, err := c.StatObject(ctx, "tour", "cond", minio.StatObjectOptions(o))
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code == "NotModified":
			if minio.ToErrorResponse(err).StatusCode != http.StatusNotModified {
				t.Errorf("%s: %v, want 304", tc.name, err)
			}
		case tc.code != "":
			if minio.ToErrorResponse(err).StatusCode != http.StatusPreconditionFailed {
				t.Errorf("%s: %v, want 412", tc.name, err)
			}
		}
	}
}

func tourCopy(t *testing.T, ctx context.Context, c *minio.Client) {
	src := mustPut(t, ctx, c, "tour", "copy/src", []byte("copy me"), minio.PutObjectOptions{
		ContentType: "text/plain", UserMetadata: map[string]string{"Color": "red"},
	})
	// COPY directive: metadata travels with the bytes.
	if _, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "list", Object: "copied"},
		minio.CopySrcOptions{Bucket: "tour", Object: "copy/src"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.StatObject(ctx, "list", "copied", minio.StatObjectOptions{})
	if err != nil || st.UserMetadata["Color"] != "red" || st.ContentType != "text/plain" || st.ETag != src.ETag {
		t.Errorf("copy: %+v, %v", st, err)
	}
	// REPLACE directive.
	if _, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "tour", Object: "copy/replaced", ReplaceMetadata: true,
		UserMetadata: map[string]string{"Color": "blue"}}, minio.CopySrcOptions{Bucket: "tour", Object: "copy/src"}); err != nil {
		t.Fatal(err)
	}
	st, err = c.StatObject(ctx, "tour", "copy/replaced", minio.StatObjectOptions{})
	if err != nil || st.UserMetadata["Color"] != "blue" {
		t.Errorf("copy with REPLACE: %+v, %v", st.UserMetadata, err)
	}
	// Copy-source conditions.
	_, err = c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "tour", Object: "copy/never"},
		minio.CopySrcOptions{Bucket: "tour", Object: "copy/src", MatchETag: "0000"})
	wantCode(t, err, "PreconditionFailed")
	_, err = c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "tour", Object: "copy/never"},
		minio.CopySrcOptions{Bucket: "tour", Object: "copy/missing"})
	wantCode(t, err, "NoSuchKey")
	if got := mustGet(t, ctx, c, "tour", "copy/replaced", minio.GetObjectOptions{}); string(got) != "copy me" {
		t.Errorf("copied bytes %q", got)
	}
}

func tourTagging(t *testing.T, ctx context.Context, c *minio.Client) {
	mustPut(t, ctx, c, "tour", "tagged", []byte("t"), minio.PutObjectOptions{UserTags: map[string]string{"env": "prod"}})
	got, err := c.GetObjectTagging(ctx, "tour", "tagged", minio.GetObjectTaggingOptions{})
	if err != nil || got.ToMap()["env"] != "prod" {
		t.Fatalf("tags after PUT with x-amz-tagging: %v, %v", got, err)
	}
	tg, _ := tags.NewTags(map[string]string{"a": "1", "b": "two words"}, true)
	if err := c.PutObjectTagging(ctx, "tour", "tagged", tg, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = c.GetObjectTagging(ctx, "tour", "tagged", minio.GetObjectTaggingOptions{})
	if err != nil || len(got.ToMap()) != 2 || got.ToMap()["b"] != "two words" {
		t.Errorf("tags = %v, %v", got, err)
	}
	st, _ := c.StatObject(ctx, "tour", "tagged", minio.StatObjectOptions{})
	if st.UserTagCount != 2 {
		t.Errorf("x-amz-tagging-count = %d, want 2", st.UserTagCount)
	}
	if err := c.RemoveObjectTagging(ctx, "tour", "tagged", minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = c.GetObjectTagging(ctx, "tour", "tagged", minio.GetObjectTaggingOptions{})
	if err != nil || len(got.ToMap()) != 0 {
		t.Errorf("tags after delete = %v, %v", got, err)
	}
}

func tourPresigned(t *testing.T, ctx context.Context, c *minio.Client) {
	put, err := c.PresignedPutObject(ctx, "tour", "presigned/up", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, put.String(), strings.NewReader("via presigned PUT"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: %s", resp.Status)
	}
	get, err := c.PresignedGetObject(ctx, "tour", "presigned/up", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(get.String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "via presigned PUT" {
		t.Errorf("presigned GET: %s %q", resp.Status, b)
	}
	// A tampered presigned URL is refused.
	bad := strings.Replace(get.String(), "presigned/up", "presigned/uq", 1)
	resp, err = http.Get(bad)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("tampered presigned GET: %s, want 403", resp.Status)
	}
}

// tourListing writes thousands of keys and pages through them with both
// list versions, with and without a delimiter.
func tourListing(t *testing.T, ctx context.Context, c *minio.Client) {
	var keys []string
	for d := 0; d < 12; d++ {
		for f := 0; f < 250; f++ {
			keys = append(keys, fmt.Sprintf("dir%02d/file%04d.txt", d, f))
		}
	}
	keys = append(keys, "top.txt", "a b+c%d.txt", "üñí/ç.txt")
	var wg sync.WaitGroup
	work := make(chan string)
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				if _, err := c.PutObject(ctx, "list", k, strings.NewReader(k), int64(len(k)), minio.PutObjectOptions{}); err != nil {
					select {
					case errs <- fmt.Errorf("put %s: %w", k, err):
					default:
					}
				}
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	keys = append(keys, "copied") // from tourCopy
	sort.Strings(keys)

	for _, v1 := range []bool{false, true} {
		var got []string
		for o := range c.ListObjects(ctx, "list", minio.ListObjectsOptions{Recursive: true, MaxKeys: 333, UseV1: v1}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			got = append(got, o.Key)
		}
		if !slices.Equal(got, keys) {
			t.Errorf("v1=%v: recursive listing gave %d keys, want %d in byte order", v1, len(got), len(keys))
		}
		var top []string
		for o := range c.ListObjects(ctx, "list", minio.ListObjectsOptions{UseV1: v1, MaxKeys: 5}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			top = append(top, o.Key)
		}
		wantTop := []string{"a b+c%d.txt", "copied"}
		for d := 0; d < 12; d++ {
			wantTop = append(wantTop, fmt.Sprintf("dir%02d/", d))
		}
		wantTop = append(wantTop, "top.txt", "üñí/")
		// minio-go yields a page's keys before its common prefixes.
		sort.Strings(top)
		if !slices.Equal(top, wantTop) {
			t.Errorf("v1=%v: delimited listing = %q, want %q", v1, top, wantTop)
		}
	}
	// One raw page, to check the page fields.
	core := minio.Core{Client: c}
	page, err := core.ListObjectsV2("list", "dir03/", "", "", "/", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Contents) != 100 || !page.IsTruncated || page.NextContinuationToken == "" {
		t.Errorf("page: %d keys, truncated %v, token %q", len(page.Contents), page.IsTruncated, page.NextContinuationToken)
	}
	next, err := core.ListObjectsV2("list", "dir03/", "", page.NextContinuationToken, "/", 1000)
	if err != nil || len(next.Contents) != 150 || next.IsTruncated || next.Contents[0].Key != "dir03/file0100.txt" {
		t.Errorf("second page: %d keys, %v", len(next.Contents), err)
	}

	// Multi-object delete of two directories' worth.
	del := make(chan minio.ObjectInfo)
	go func() {
		defer close(del)
		for _, k := range keys {
			if strings.HasPrefix(k, "dir00/") || strings.HasPrefix(k, "dir01/") {
				del <- minio.ObjectInfo{Key: k}
			}
		}
	}()
	for e := range c.RemoveObjects(ctx, "list", del, minio.RemoveObjectsOptions{}) {
		t.Errorf("remove %s: %v", e.ObjectName, e.Err)
	}
	n := 0
	for o := range c.ListObjects(ctx, "list", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if strings.HasPrefix(o.Key, "dir00/") || strings.HasPrefix(o.Key, "dir01/") {
			t.Fatalf("%s survived the multi-delete", o.Key)
		}
		n++
	}
	if n != len(keys)-500 {
		t.Errorf("%d keys after deleting 500 of %d", n, len(keys))
	}
}

func tourMultipart(t *testing.T, ctx context.Context, c *minio.Client, rng *rand.Rand) {
	core := minio.Core{Client: c}
	body := make([]byte, 3*(5<<20)+4321)
	rng.Read(body)
	id, err := core.NewMultipartUpload(ctx, "multi", "big/object", minio.PutObjectOptions{
		ContentType: "application/x-big", UserMetadata: map[string]string{"Kind": "multipart"},
	})
	if err != nil {
		t.Fatal(err)
	}
	bounds := []int{0, 5 << 20, 10 << 20, 15 << 20, len(body)}
	var parts []minio.CompletePart
	for i := len(bounds) - 2; i >= 0; i-- { // out of order on purpose
		p, err := core.PutObjectPart(ctx, "multi", "big/object", id, i+1, bytes.NewReader(body[bounds[i]:bounds[i+1]]),
			int64(bounds[i+1]-bounds[i]), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append([]minio.CompletePart{{PartNumber: i + 1, ETag: p.ETag}}, parts...)
	}
	lp, err := core.ListObjectParts(ctx, "multi", "big/object", id, 0, 2)
	if err != nil || len(lp.ObjectParts) != 2 || !lp.IsTruncated || lp.ObjectParts[0].Size != 5<<20 {
		t.Errorf("ListObjectParts: %+v, %v", lp, err)
	}
	ups, err := core.ListMultipartUploads(ctx, "multi", "", "", "", "", 100)
	if err != nil || len(ups.Uploads) != 1 || ups.Uploads[0].UploadID != id || ups.Uploads[0].Key != "big/object" {
		t.Errorf("ListMultipartUploads: %+v, %v", ups, err)
	}
	// Wrong order and a wrong ETag are refused.
	_, err = core.CompleteMultipartUpload(ctx, "multi", "big/object", id, []minio.CompletePart{parts[1], parts[0]}, minio.PutObjectOptions{})
	wantCode(t, err, "InvalidPartOrder")
	_, err = core.CompleteMultipartUpload(ctx, "multi", "big/object", id,
		[]minio.CompletePart{parts[0], {PartNumber: 2, ETag: "00000000000000000000000000000000"}}, minio.PutObjectOptions{})
	wantCode(t, err, "InvalidPart")
	info, err := core.CompleteMultipartUpload(ctx, "multi", "big/object", id, parts, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.ETag, "-4") {
		t.Errorf("multipart ETag %q does not end in -4", info.ETag)
	}
	if got := mustGet(t, ctx, c, "multi", "big/object", minio.GetObjectOptions{}); !bytes.Equal(got, body) {
		t.Error("completed object reads back differently")
	}
	st, err := c.StatObject(ctx, "multi", "big/object", minio.StatObjectOptions{})
	if err != nil || st.ContentType != "application/x-big" || st.UserMetadata["Kind"] != "multipart" {
		t.Errorf("completed object metadata: %+v, %v", st, err)
	}
	// Each part reads back by its number.
	for i := range len(bounds) - 1 {
		if got := mustGet(t, ctx, c, "multi", "big/object", minio.GetObjectOptions{PartNumber: i + 1}); !bytes.Equal(got, body[bounds[i]:bounds[i+1]]) {
			t.Errorf("part %d reads back %d bytes, want %d", i+1, len(got), bounds[i+1]-bounds[i])
		}
	}
	// A part the object lacks: 416 (minio-go asks with HEAD, whose error
	// has no body to name the code).
	_, err = c.StatObject(ctx, "multi", "big/object", minio.StatObjectOptions{PartNumber: len(bounds)})
	if status := minio.ToErrorResponse(err).StatusCode; status != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("stat of part %d: %v (status %d)", len(bounds), err, status)
	}
	// Sent again, the completion answers the same object; with other
	// parts, the upload is gone.
	again, err := core.CompleteMultipartUpload(ctx, "multi", "big/object", id, parts, minio.PutObjectOptions{})
	if err != nil || again.ETag != info.ETag {
		t.Errorf("repeated completion: %+v, %v", again, err)
	}
	_, err = core.CompleteMultipartUpload(ctx, "multi", "big/object", id, parts[:2], minio.PutObjectOptions{})
	wantCode(t, err, "NoSuchUpload")

	// Parts below 5 MiB (other than the last) are refused at completion.
	id2, err := core.NewMultipartUpload(ctx, "multi", "small-parts", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var small []minio.CompletePart
	for i := 1; i <= 2; i++ {
		p, err := core.PutObjectPart(ctx, "multi", "small-parts", id2, i, strings.NewReader("tiny"), 4, minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		small = append(small, minio.CompletePart{PartNumber: i, ETag: p.ETag})
	}
	_, err = core.CompleteMultipartUpload(ctx, "multi", "small-parts", id2, small, minio.PutObjectOptions{})
	wantCode(t, err, "EntityTooSmall")
	if err := core.AbortMultipartUpload(ctx, "multi", "small-parts", id2); err != nil {
		t.Fatal(err)
	}
	wantCode(t, core.AbortMultipartUpload(ctx, "multi", "small-parts", id2), "NoSuchUpload")

	// UploadPartCopy with a source range: a 5 MiB slice of the object.
	id3, err := core.NewMultipartUpload(ctx, "multi", "composed", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := core.CopyObjectPart(ctx, "multi", "big/object", "multi", "composed", id3, 1, 1<<20, 5<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := core.PutObjectPart(ctx, "multi", "composed", id3, 2, strings.NewReader("tail"), 4, minio.PutObjectPartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.CompleteMultipartUpload(ctx, "multi", "composed", id3, []minio.CompletePart{
		{PartNumber: 1, ETag: cp.ETag}, {PartNumber: 2, ETag: tail.ETag}}, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(body[1<<20:6<<20]), "tail"...)
	if got := mustGet(t, ctx, c, "multi", "composed", minio.GetObjectOptions{}); !bytes.Equal(got, want) {
		t.Error("UploadPartCopy result differs")
	}

	// minio-go's own multipart path for a large PutObject.
	large := make([]byte, 17<<20)
	rng.Read(large)
	if _, err := c.PutObject(ctx, "multi", "auto", bytes.NewReader(large), int64(len(large)), minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, ctx, c, "multi", "auto", minio.GetObjectOptions{}); !bytes.Equal(got, large) {
		t.Error("minio-go multipart PutObject reads back differently")
	}
}
