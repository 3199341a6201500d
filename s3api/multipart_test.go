package s3api

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/store"
)

// pattern returns n bytes that differ from part to part.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

func TestMultipartMinio(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "parts")
	c := ctx(t)
	data := pattern(12<<20+123, 1)
	info, err := ts.client.PutObject(c, "parts", "big/object", bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{PartSize: 5 << 20, ContentType: "application/x-big", UserMetadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.ETag, "-3") {
		t.Errorf("multipart ETag %q", info.ETag)
	}
	obj, err := ts.client.GetObject(c, "parts", "big/object", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, obj)
	if got != string(data) {
		t.Fatalf("read back %d bytes, want %d (equal %v)", len(got), len(data), got == string(data))
	}
	st, _ := obj.Stat()
	if st.ContentType != "application/x-big" || st.UserMetadata["K"] != "v" {
		t.Errorf("metadata from CreateMultipartUpload: %+v", st)
	}
}

func TestMultipartCore(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "parts")
	c := ctx(t)
	core := ts.core
	id, err := core.NewMultipartUpload(c, "parts", "k", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1data, p2data := pattern(store.MinPartSize, 2), []byte("tail")
	p1, err := core.PutObjectPart(c, "parts", "k", id, 1, bytes.NewReader(p1data), int64(len(p1data)), minio.PutObjectPartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := core.PutObjectPart(c, "parts", "k", id, 2, bytes.NewReader(p2data), int64(len(p2data)), minio.PutObjectPartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(p2data)
	if p2.ETag != hex.EncodeToString(sum[:]) {
		t.Errorf("part ETag %q", p2.ETag)
	}

	ups, err := core.ListMultipartUploads(c, "parts", "", "", "", "", 0)
	if err != nil || len(ups.Uploads) != 1 || ups.Uploads[0].UploadID != id || ups.Uploads[0].Key != "k" {
		t.Fatalf("ListMultipartUploads: %+v, %v", ups, err)
	}
	parts, err := core.ListObjectParts(c, "parts", "k", id, 0, 1)
	if err != nil || len(parts.ObjectParts) != 1 || !parts.IsTruncated || parts.NextPartNumberMarker != 1 || parts.ObjectParts[0].Size != int64(len(p1data)) {
		t.Fatalf("ListObjectParts page 1: %+v, %v", parts, err)
	}
	parts, err = core.ListObjectParts(c, "parts", "k", id, 1, 0)
	if err != nil || len(parts.ObjectParts) != 1 || parts.ObjectParts[0].PartNumber != 2 || parts.IsTruncated {
		t.Fatalf("ListObjectParts page 2: %+v, %v", parts, err)
	}

	complete := func(ps ...minio.CompletePart) error {
		_, err := core.CompleteMultipartUpload(c, "parts", "k", id, ps, minio.PutObjectOptions{})
		return err
	}
	for _, tc := range []struct {
		name  string
		parts []minio.CompletePart
		code  string
	}{
		{"wrong etag", []minio.CompletePart{{PartNumber: 1, ETag: p1.ETag}, {PartNumber: 2, ETag: p1.ETag}}, "InvalidPart"},
		{"missing part", []minio.CompletePart{{PartNumber: 1, ETag: p1.ETag}, {PartNumber: 3, ETag: p2.ETag}}, "InvalidPart"},
		{"order", []minio.CompletePart{{PartNumber: 2, ETag: p2.ETag}, {PartNumber: 1, ETag: p1.ETag}}, "InvalidPartOrder"},
	} {
		if code := minio.ToErrorResponse(complete(tc.parts...)).Code; code != tc.code {
			t.Errorf("%s: code %q, want %s", tc.name, code, tc.code)
		}
	}

	// A copied part: bytes 1..5 of an object.
	mustPut(t, ts, "parts", "src", "0123456789", store.Meta{})
	cp, err := core.CopyObjectPart(c, "parts", "src", "parts", "k", id, 3, 1, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum = md5.Sum([]byte("12345"))
	if strings.Trim(cp.ETag, `"`) != hex.EncodeToString(sum[:]) {
		t.Errorf("copied part ETag %q", cp.ETag)
	}
	// A small part that is not the last is too small.
	err = complete(minio.CompletePart{PartNumber: 2, ETag: p2.ETag}, minio.CompletePart{PartNumber: 3, ETag: cp.ETag})
	if code := minio.ToErrorResponse(err).Code; code != "EntityTooSmall" {
		t.Errorf("small part: %v", err)
	}
	if err := complete(minio.CompletePart{PartNumber: 1, ETag: p1.ETag}, minio.CompletePart{PartNumber: 3, ETag: cp.ETag}); err != nil {
		t.Fatal(err)
	}
	o, err := ts.store.GetObject("parts", "k")
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, o.Reader())
	o.Close()
	if got != string(p1data)+"12345" {
		t.Errorf("completed object of %d bytes", len(got))
	}
	if code := minio.ToErrorResponse(core.AbortMultipartUpload(c, "parts", "k", id)).Code; code != "NoSuchUpload" {
		t.Errorf("abort after complete: %q", code)
	}

	// Abort removes an upload; its parts go with it.
	id2, err := core.NewMultipartUpload(c, "parts", "gone", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := core.AbortMultipartUpload(c, "parts", "gone", id2); err != nil {
		t.Fatal(err)
	}
	_, err = core.PutObjectPart(c, "parts", "gone", id2, 1, strings.NewReader("x"), 1, minio.PutObjectPartOptions{})
	if code := minio.ToErrorResponse(err).Code; code != "NoSuchUpload" {
		t.Errorf("part of an aborted upload: %v", err)
	}
}

// TestMultipartErrors drives the multipart error paths with raw requests.
func TestMultipartErrors(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "parts")
	resp, body := ts.do(t, "POST", "/parts/k?uploads", nil, nil)
	var init initiateMultipartUploadResult
	if err := xmlUnmarshal(body, &init); err != nil || init.UploadID == "" {
		t.Fatalf("initiate: %s %v", body, err)
	}
	id := init.UploadID
	for _, c := range []struct {
		name, method, target, body string
		header                     http.Header
		status                     int
		code                       string
	}{
		{"no such upload part", "PUT", "/parts/k?partNumber=1&uploadId=nope", "x", nil, 404, "NoSuchUpload"},
		{"no such upload list", "GET", "/parts/k?uploadId=nope", "", nil, 404, "NoSuchUpload"},
		{"no such upload abort", "DELETE", "/parts/k?uploadId=nope", "", nil, 404, "NoSuchUpload"},
		{"part number too big", "PUT", fmt.Sprintf("/parts/k?partNumber=10001&uploadId=%s", id), "x", nil, 400, "InvalidArgument"},
		{"complete empty", "POST", "/parts/k?uploadId=" + id, "<CompleteMultipartUpload></CompleteMultipartUpload>", nil, 400, "MalformedXML"},
		{"complete garbage", "POST", "/parts/k?uploadId=" + id, "<Complete", nil, 400, "MalformedXML"},
		{"complete missing part", "POST", "/parts/k?uploadId=" + id, "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>", nil, 400, "InvalidPart"},
		{"copy range", "PUT", "/parts/k?partNumber=1&uploadId=" + id, "", http.Header{"X-Amz-Copy-Source": {"/parts/src"}, "X-Amz-Copy-Source-Range": {"bytes=5-"}}, 400, "InvalidArgument"},
		{"copy range beyond", "PUT", "/parts/k?partNumber=1&uploadId=" + id, "", http.Header{"X-Amz-Copy-Source": {"/parts/src"}, "X-Amz-Copy-Source-Range": {"bytes=5-100"}}, 416, "InvalidRange"},
		{"bad part checksum", "PUT", "/parts/k?partNumber=1&uploadId=" + id, "abc", http.Header{"X-Amz-Checksum-Sha256": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}, 400, "BadDigest"},
		{"list uploads max", "GET", "/parts?uploads&max-uploads=x", "", nil, 400, "InvalidArgument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustPut(t, ts, "parts", "src", "0123456789", store.Meta{})
			var b []byte
			if c.body != "" {
				b = []byte(c.body)
			}
			resp, body := ts.do(t, c.method, c.target, b, c.header)
			wantError(t, resp, body, c.status, c.code)
		})
	}
	resp, body = ts.do(t, "GET", "/parts/k?uploadId="+id, nil, nil)
	var lp listPartsResult
	if err := xmlUnmarshal(body, &lp); err != nil || resp.StatusCode != 200 || len(lp.Parts) != 0 {
		t.Errorf("a failed part was kept: %s", body)
	}
}

// TestCompleteObjectSize: x-amz-mp-object-size is checked against the
// parts before any is consumed: another size is 400 InvalidRequest and the
// upload stays as it was; a malformed one is InvalidArgument; the right
// one completes.
func TestCompleteObjectSize(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "parts")
	_, body := ts.do(t, "POST", "/parts/k?uploads", nil, nil)
	var init initiateMultipartUploadResult
	if err := xmlUnmarshal(body, &init); err != nil || init.UploadID == "" {
		t.Fatalf("initiate: %s %v", body, err)
	}
	target := "/parts/k?uploadId=" + init.UploadID
	resp, body := ts.do(t, "PUT", "/parts/k?partNumber=1&uploadId="+init.UploadID, []byte("hello"), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("upload part: %d %s", resp.StatusCode, body)
	}
	complete := []byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>` + resp.Header.Get("ETag") + `</ETag></Part></CompleteMultipartUpload>`)
	for size, code := range map[string]string{"6": "InvalidRequest", "4": "InvalidRequest", "five": "InvalidArgument", "-5": "InvalidArgument"} {
		resp, body := ts.do(t, "POST", target, complete, http.Header{"X-Amz-Mp-Object-Size": {size}})
		wantError(t, resp, body, 400, code)
	}
	resp, body = ts.do(t, "GET", target, nil, nil)
	var lp listPartsResult
	if err := xmlUnmarshal(body, &lp); err != nil || len(lp.Parts) != 1 {
		t.Fatalf("the upload lost its part: %s %v", body, err)
	}
	resp, body = ts.do(t, "POST", target, complete, http.Header{"X-Amz-Mp-Object-Size": {"5"}})
	if resp.StatusCode != 200 {
		t.Fatalf("complete with the right size: %d %s", resp.StatusCode, body)
	}
	if info, err := ts.store.HeadObject("parts", "k"); err != nil || info.Size != 5 {
		t.Errorf("completed object: %+v %v", info, err)
	}
}
