package s3api

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math/rand"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/store"
)

// TestListBucketsPaging pages random bucket sets with random prefixes and
// max-buckets and compares the walk with the sorted, filtered names.
func TestListBucketsPaging(t *testing.T) {
	ts := newTestServer(t)
	rng := rand.New(rand.NewSource(5))
	var names []string
	for len(names) < 40 {
		n := fmt.Sprintf("%c%c-%d", 'a'+rng.Intn(3), 'a'+rng.Intn(3), rng.Intn(1000))
		if err := ts.store.CreateBucket(n); err == nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for round := range 40 {
		prefix := []string{"", "a", "ab", "c", "cc-", "zz"}[rng.Intn(6)]
		max := 1 + rng.Intn(12)
		var want []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
		var got []string
		token := ""
		for pages := 0; ; pages++ {
			if pages > len(names)+1 {
				t.Fatalf("round %d: no end", round)
			}
			q := url.Values{"max-buckets": {strconv.Itoa(max)}}
			if prefix != "" {
				q.Set("prefix", prefix)
			}
			if token != "" {
				q.Set("continuation-token", token)
			}
			resp, body := ts.do(t, "GET", "/?"+q.Encode(), nil, nil)
			var doc listAllMyBucketsResult
			if err := xml.Unmarshal(body, &doc); err != nil || resp.StatusCode != 200 {
				t.Fatalf("round %d: %d %s", round, resp.StatusCode, body)
			}
			if doc.Prefix != prefix || len(doc.Buckets) > max || (doc.ContinuationToken != "" && len(doc.Buckets) != max) {
				t.Fatalf("round %d: prefix %q, %d buckets of %d, token %q", round, doc.Prefix, len(doc.Buckets), max, doc.ContinuationToken)
			}
			for _, b := range doc.Buckets {
				if b.BucketRegion != DefaultRegion {
					t.Errorf("region %q", b.BucketRegion)
				}
				got = append(got, b.Name)
			}
			if token = doc.ContinuationToken; token == "" {
				break
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("round %d prefix %q max %d:\n got %v\nwant %v", round, prefix, max, got, want)
		}
	}
	// Without max-buckets: every bucket at once, no token.
	_, body := ts.do(t, "GET", "/", nil, nil)
	var doc listAllMyBucketsResult
	if err := xml.Unmarshal(body, &doc); err != nil || len(doc.Buckets) != len(names) || doc.ContinuationToken != "" {
		t.Errorf("unpaged: %d buckets, token %q, %v", len(doc.Buckets), doc.ContinuationToken, err)
	}
	for _, q := range []string{"max-buckets=0", "max-buckets=10001", "max-buckets=x", "max-buckets=-1", "continuation-token=%25%25"} {
		resp, body := ts.do(t, "GET", "/?"+q, nil, nil)
		wantError(t, resp, body, 400, "InvalidArgument")
	}
	resp, _ := ts.do(t, "GET", "/?max-buckets=10000", nil, nil)
	if resp.StatusCode != 200 {
		t.Errorf("max-buckets=10000: %d", resp.StatusCode)
	}
	for region, count := range map[string]int{DefaultRegion: len(names), "eu-west-3": 0} {
		_, body := ts.do(t, "GET", "/?bucket-region="+region, nil, nil)
		var doc listAllMyBucketsResult
		if err := xml.Unmarshal(body, &doc); err != nil || len(doc.Buckets) != count {
			t.Errorf("bucket-region=%s: %d buckets, want %d (%v)", region, len(doc.Buckets), count, err)
		}
	}
}

// TestCreateOwnedBucket: in us-east-1, creating a bucket you own answers
// 200 and keeps its objects.
func TestCreateOwnedBucket(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "mine")
	mustPut(t, ts, "mine", "k", "kept", store.Meta{})
	resp, body := ts.do(t, "PUT", "/mine", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Location") != "/mine" || len(body) != 0 {
		t.Errorf("create again: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if info, err := ts.store.HeadObject("mine", "k"); err != nil || info.Size != 4 {
		t.Errorf("object after re-create: %+v, %v", info, err)
	}
}

// completedFixture makes bucket and completes an upload of key in parts 1
// (5 MiB), 3 (5 MiB) and 4 (7 bytes). It returns the parts' bytes by
// number, the completion request, the upload ID and the answer.
func completedFixture(t *testing.T, ts *testServer, bucket, key string) (data map[int][]byte, complete []byte, id string, answer []byte) {
	t.Helper()
	mustBucket(t, ts, bucket)
	c := ctx(t)
	id, err := ts.core.NewMultipartUpload(c, bucket, key, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data = map[int][]byte{1: pattern(store.MinPartSize, 1), 3: pattern(store.MinPartSize, 3), 4: []byte("the end")}
	var doc bytes.Buffer
	doc.WriteString("<CompleteMultipartUpload>")
	for _, n := range []int{1, 3, 4} {
		p, err := ts.core.PutObjectPart(c, bucket, key, id, n, bytes.NewReader(data[n]), int64(len(data[n])), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&doc, `<Part><PartNumber>%d</PartNumber><ETag>"%s"</ETag></Part>`, n, p.ETag)
	}
	doc.WriteString("</CompleteMultipartUpload>")
	resp, answer := ts.do(t, "POST", "/"+bucket+"/"+key+"?uploadId="+id, doc.Bytes(), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("complete: %d %s", resp.StatusCode, answer)
	}
	return data, doc.Bytes(), id, answer
}

// TestGetPartNumber: ?partNumber serves a completed part's bytes, by the
// number it was completed with, with 206, Content-Range and the count.
func TestGetPartNumber(t *testing.T) {
	ts := newTestServer(t)
	data, _, _, _ := completedFixture(t, ts, "mpu", "obj")
	size := int64(2*store.MinPartSize + 7)
	offsets := map[int]int64{1: 0, 3: store.MinPartSize, 4: 2 * store.MinPartSize}
	for _, n := range []int{1, 3, 4} {
		for _, method := range []string{"GET", "HEAD"} {
			resp, body := ts.do(t, method, fmt.Sprintf("/mpu/obj?partNumber=%d", n), nil, nil)
			first, last := offsets[n], offsets[n]+int64(len(data[n]))-1
			h := resp.Header
			if resp.StatusCode != 206 || h.Get("X-Amz-Mp-Parts-Count") != "3" ||
				h.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", first, last, size) ||
				h.Get("Content-Length") != strconv.Itoa(len(data[n])) || !strings.HasSuffix(h.Get("ETag"), `-3"`) {
				t.Errorf("%s part %d: %d %v", method, n, resp.StatusCode, h)
			}
			if method == "GET" && !bytes.Equal(body, data[n]) {
				t.Errorf("part %d: %d bytes differ", n, len(body))
			}
		}
	}
	for _, n := range []int{2, 5, 10000} {
		resp, body := ts.do(t, "GET", fmt.Sprintf("/mpu/obj?partNumber=%d", n), nil, nil)
		wantError(t, resp, body, 416, "InvalidPartNumber")
		if resp.Header.Get("X-Amz-Mp-Parts-Count") != "3" {
			t.Errorf("part %d: no parts count", n)
		}
	}
	// Preconditions apply to the object, then the part is served.
	head, _ := ts.do(t, "HEAD", "/mpu/obj", nil, nil)
	resp, _ := ts.do(t, "GET", "/mpu/obj?partNumber=4", nil, map[string][]string{"If-None-Match": {head.Header.Get("ETag")}})
	if resp.StatusCode != 304 {
		t.Errorf("If-None-Match with a part: %d", resp.StatusCode)
	}
	// The whole object has no parts count (S3 sends it only with a part).
	resp, body := ts.do(t, "GET", "/mpu/obj", nil, nil)
	if resp.StatusCode != 200 || int64(len(body)) != size || resp.Header.Get("X-Amz-Mp-Parts-Count") != "" {
		t.Errorf("whole object: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
	}
	// An empty object stored whole: part 1 is its nothing.
	mustPut(t, ts, "mpu", "empty", "", store.Meta{})
	resp, body = ts.do(t, "GET", "/mpu/empty?partNumber=1", nil, nil)
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Range") != "" {
		t.Errorf("empty object part 1: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestRepeatedCompleteMultipart: a completion sent again answers the same
// 200 document; another part list then gets NoSuchUpload.
func TestRepeatedCompleteMultipart(t *testing.T) {
	ts := newTestServer(t)
	_, complete, id, first := completedFixture(t, ts, "mpu", "obj")
	resp, again := ts.do(t, "POST", "/mpu/obj?uploadId="+id, complete, nil)
	if resp.StatusCode != 200 || !bytes.Equal(again, first) {
		t.Errorf("again: %d\n%s\nfirst\n%s", resp.StatusCode, again, first)
	}
	fewer := bytes.Replace(complete, []byte("<Part><PartNumber>4"), []byte("<Ignored><PartNumber>4"), 1)
	fewer = bytes.Replace(fewer, []byte("</Part></CompleteMultipartUpload>"), []byte("</Ignored></CompleteMultipartUpload>"), 1)
	resp, body := ts.do(t, "POST", "/mpu/obj?uploadId="+id, fewer, nil)
	wantError(t, resp, body, 404, "NoSuchUpload")
	resp, body = ts.do(t, "POST", "/mpu/other?uploadId="+id, complete, nil)
	wantError(t, resp, body, 404, "NoSuchUpload")
}

// TestDeleteBucketWithUploads: DeleteBucket aborts the uploads of a bucket
// without objects; with an object it is BucketNotEmpty.
func TestDeleteBucketWithUploads(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "ups")
	c := ctx(t)
	id, err := ts.core.NewMultipartUpload(c, "ups", "k", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.core.PutObjectPart(c, "ups", "k", id, 1, strings.NewReader("p"), 1, minio.PutObjectPartOptions{}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, ts, "ups", "obj", "o", store.Meta{})
	resp, body := ts.do(t, "DELETE", "/ups", nil, nil)
	wantError(t, resp, body, 409, "BucketNotEmpty")
	if err := ts.store.DeleteObject("ups", "obj"); err != nil {
		t.Fatal(err)
	}
	resp, body = ts.do(t, "DELETE", "/ups", nil, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("delete a bucket with only an upload: %d %s", resp.StatusCode, body)
	}
	mustBucket(t, ts, "ups")
	resp, body = ts.do(t, "GET", "/ups?uploads", nil, nil)
	if resp.StatusCode != 200 || strings.Contains(string(body), "<Upload>") {
		t.Errorf("uploads after re-create: %s", body)
	}
}
