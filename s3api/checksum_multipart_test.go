package s3api

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/checksum"
)

// createUpload starts an upload with header and returns its ID.
func createUpload(t *testing.T, ts *testServer, target string, header http.Header) (string, *http.Response) {
	t.Helper()
	resp, body := ts.do(t, "POST", target+"?uploads", nil, header)
	var init initiateMultipartUploadResult
	if err := xmlUnmarshal(body, &init); err != nil || resp.StatusCode != 200 {
		t.Fatalf("create %s: %d %s", target, resp.StatusCode, body)
	}
	return init.UploadID, resp
}

// completeBody lists parts 1..n with their ETags and, when alg is set,
// their checksums.
func completeBody(etags []string, alg *checksum.Algorithm, sums []string) []byte {
	var b strings.Builder
	b.WriteString("<CompleteMultipartUpload>")
	for i, e := range etags {
		fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag>", i+1, e)
		if alg != nil && sums[i] != "" {
			fmt.Fprintf(&b, "<Checksum%s>%s</Checksum%s>", alg.Name(), sums[i], alg.Name())
		}
		b.WriteString("</Part>")
	}
	b.WriteString("</CompleteMultipartUpload>")
	return []byte(b.String())
}

// TestMultipartChecksumTypes: for every algorithm and type S3 allows, an
// upload whose parts carry checksums completes with the composite or
// full-object checksum, which HEAD (checksum mode), GET, ListParts and
// GetObjectAttributes report as S3 does; the type a algorithm lacks is
// refused at creation.
func TestMultipartChecksumTypes(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "mpu")
	rng := rand.New(rand.NewSource(4))
	first := make([]byte, store.MinPartSize)
	rng.Read(first)
	second := []byte("the last part, short")
	whole := append(append([]byte(nil), first...), second...)
	for _, alg := range checksum.All {
		for _, typ := range []checksum.Type{checksum.Composite, checksum.FullObject} {
			header := http.Header{"X-Amz-Checksum-Algorithm": {alg.Name()}, "X-Amz-Checksum-Type": {string(typ)}}
			key := "/mpu/" + alg.Header() + "-" + string(typ)
			if !alg.Supports(typ) {
				resp, body := ts.do(t, "POST", key+"?uploads", nil, header)
				wantError(t, resp, body, 400, "InvalidRequest")
				continue
			}
			t.Run(alg.Name()+"-"+string(typ), func(t *testing.T) {
				id, resp := createUpload(t, ts, key, header)
				if resp.Header.Get("X-Amz-Checksum-Algorithm") != alg.Name() || resp.Header.Get("X-Amz-Checksum-Type") != string(typ) {
					t.Errorf("create answers %v", resp.Header)
				}
				var etags, sums []string
				var digests []byte
				for i, p := range [][]byte{first, second} {
					sum := alg.Of(p)
					resp, body := ts.do(t, "PUT", fmt.Sprintf("%s?partNumber=%d&uploadId=%s", key, i+1, id), p,
						http.Header{"X-Amz-Checksum-" + alg.Header(): {sum}})
					if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Checksum-"+alg.Header()) != sum {
						t.Fatalf("part %d: %d %s %v", i+1, resp.StatusCode, body, resp.Header)
					}
					etags, sums = append(etags, resp.Header.Get("ETag")), append(sums, sum)
					d, _ := alg.Decode(sum)
					digests = append(digests, d...)
				}
				resp, body := ts.do(t, "GET", key+"?uploadId="+id, nil, nil)
				var lp listPartsResult
				if err := xmlUnmarshal(body, &lp); err != nil || lp.ChecksumAlgorithm != alg.Name() || lp.ChecksumType != string(typ) ||
					len(lp.Parts) != 2 || lp.Parts[1].xmlChecksums.store().Value(alg) != sums[1] {
					t.Errorf("ListParts: %s", body)
				}
				want := alg.Of(whole)
				if typ == checksum.Composite {
					want = alg.Of(digests) + "-2"
				}
				resp, body = ts.do(t, "POST", key+"?uploadId="+id, completeBody(etags, alg, sums), nil)
				var done completeMultipartUploadResult
				if err := xmlUnmarshal(body, &done); err != nil || resp.StatusCode != 200 {
					t.Fatalf("complete: %d %s", resp.StatusCode, body)
				}
				if done.xmlChecksums.store().Value(alg) != want || done.ChecksumType != string(typ) {
					t.Errorf("complete: %s, want %s", body, want)
				}
				for _, method := range []string{"HEAD", "GET"} {
					resp, _ = ts.do(t, method, key, nil, http.Header{"X-Amz-Checksum-Mode": {"ENABLED"}})
					if resp.Header.Get("X-Amz-Checksum-"+alg.Header()) != want || resp.Header.Get("X-Amz-Checksum-Type") != string(typ) {
						t.Errorf("%s: %v, want %s", method, resp.Header, want)
					}
				}
				resp, body = ts.do(t, "GET", key+"?attributes", nil, http.Header{"X-Amz-Object-Attributes": {"ETag,Checksum,ObjectParts,StorageClass,ObjectSize"}})
				var attrs getObjectAttributesResponse
				if err := xml.Unmarshal(body, &attrs); err != nil || resp.StatusCode != 200 {
					t.Fatalf("attributes: %d %s", resp.StatusCode, body)
				}
				if attrs.Checksum == nil || attrs.Checksum.xmlChecksums.store().Value(alg) != checksum.WithoutPartCount(want) ||
					attrs.Checksum.ChecksumType != string(typ) || attrs.ObjectSize == nil || *attrs.ObjectSize != int64(len(whole)) ||
					attrs.StorageClass != "STANDARD" || attrs.ETag != strings.Trim(done.ETag, `"`) ||
					attrs.ObjectParts == nil || attrs.ObjectParts.PartsCount != 2 || len(attrs.ObjectParts.Parts) != 2 ||
					attrs.ObjectParts.Parts[0].Size != int64(len(first)) || attrs.ObjectParts.Parts[1].xmlChecksums.store().Value(alg) != sums[1] {
					t.Errorf("attributes: %s", body)
				}
			})
		}
	}
}

// TestMultipartChecksumErrors: what S3 refuses on the way to a checksummed
// object is refused, with S3's code, and leaves nothing behind.
func TestMultipartChecksumErrors(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "mpu")
	part := []byte("a single, last part")
	sum := checksum.CRC32C.Of(part)
	for _, c := range []struct {
		name   string
		header http.Header
	}{
		{"type without algorithm", http.Header{"X-Amz-Checksum-Type": {"COMPOSITE"}}},
		{"unknown algorithm", http.Header{"X-Amz-Checksum-Algorithm": {"SHA384"}}},
		{"unknown type", http.Header{"X-Amz-Checksum-Algorithm": {"CRC32"}, "X-Amz-Checksum-Type": {"PARTIAL"}}},
		{"full-object SHA", http.Header{"X-Amz-Checksum-Algorithm": {"SHA1"}, "X-Amz-Checksum-Type": {"FULL_OBJECT"}}},
		{"full-object MD5", http.Header{"X-Amz-Checksum-Algorithm": {"MD5"}, "X-Amz-Checksum-Type": {"FULL_OBJECT"}}},
		{"full-object XXHASH3", http.Header{"X-Amz-Checksum-Algorithm": {"XXHASH3"}, "X-Amz-Checksum-Type": {"FULL_OBJECT"}}},
		{"composite CRC64NVME", http.Header{"X-Amz-Checksum-Algorithm": {"CRC64NVME"}, "X-Amz-Checksum-Type": {"COMPOSITE"}}},
	} {
		resp, body := ts.do(t, "POST", "/mpu/k?uploads", nil, c.header)
		if resp.StatusCode != 400 || !bytes.Contains(body, []byte("<Code>InvalidRequest</Code>")) {
			t.Errorf("create with %s: %d %s", c.name, resp.StatusCode, body)
		}
	}
	id, _ := createUpload(t, ts, "/mpu/k", http.Header{"X-Amz-Checksum-Algorithm": {"crc32c"}})
	target := "/mpu/k?partNumber=1&uploadId=" + id
	for _, c := range []struct {
		name   string
		header http.Header
		status int
		code   string
	}{
		{"wrong value", http.Header{"X-Amz-Checksum-Crc32c": {checksum.CRC32C.Of([]byte("x"))}}, 400, "BadDigest"},
		{"malformed value", http.Header{"X-Amz-Checksum-Crc32c": {"AAAA"}}, 400, "InvalidRequest"},
		{"other algorithm", http.Header{"X-Amz-Checksum-Sha1": {checksum.SHA1.Of(part)}}, 400, "InvalidRequest"},
		{"unknown algorithm header", http.Header{"X-Amz-Checksum-Sha384": {"AAAAAAAAAAAAAAAAAAAAAA=="}}, 400, "InvalidRequest"},
		{"other new algorithm", http.Header{"X-Amz-Checksum-Md5": {checksum.MD5.Of(part)}}, 400, "InvalidRequest"},
		{"two checksums", http.Header{"X-Amz-Checksum-Crc32c": {sum}, "X-Amz-Checksum-Crc32": {checksum.CRC32.Of(part)}}, 400, "InvalidRequest"},
	} {
		resp, body := ts.do(t, "PUT", target, part, c.header)
		wantError(t, resp, body, c.status, c.code)
	}
	resp, body := ts.do(t, "GET", "/mpu/k?uploadId="+id, nil, nil)
	if bytes.Contains(body, []byte("<Part>")) {
		t.Fatalf("a refused part was kept: %s", body)
	}
	// A part without a checksum gets the upload's computed.
	resp, body = ts.do(t, "PUT", target, part, nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Checksum-Crc32c") != sum {
		t.Fatalf("part without checksum: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	etag := resp.Header.Get("ETag")
	for _, c := range []struct {
		name   string
		body   []byte
		header http.Header
		code   string
	}{
		{"missing part checksum", completeBody([]string{etag}, nil, nil), nil, "InvalidRequest"},
		{"wrong part checksum", completeBody([]string{etag}, checksum.CRC32C, []string{checksum.CRC32C.Of(nil)}), nil, "InvalidPart"},
		{"malformed part checksum", completeBody([]string{etag}, checksum.CRC32C, []string{"zz"}), nil, "InvalidRequest"},
		{"wrong object checksum", completeBody([]string{etag}, checksum.CRC32C, []string{sum}), http.Header{"X-Amz-Checksum-Crc32c": {checksum.CRC32C.Of(nil) + "-1"}}, "BadDigest"},
		{"other type", completeBody([]string{etag}, checksum.CRC32C, []string{sum}), http.Header{"X-Amz-Checksum-Type": {"FULL_OBJECT"}}, "InvalidRequest"},
	} {
		resp, body := ts.do(t, "POST", "/mpu/k?uploadId="+id, c.body, c.header)
		wantError(t, resp, body, 400, c.code)
		if resp, _ := ts.do(t, "HEAD", "/mpu/k", nil, nil); resp.StatusCode != 404 {
			t.Fatalf("%s: an object was stored", c.name)
		}
	}
	sums, _ := checksum.CRC32C.Decode(sum)
	want := checksum.CRC32C.Encode(mustDigest(checksum.CRC32C, sums)) + "-1"
	resp, body = ts.do(t, "POST", "/mpu/k?uploadId="+id, completeBody([]string{etag}, checksum.CRC32C, []string{sum}),
		http.Header{"X-Amz-Checksum-Crc32c": {want}, "X-Amz-Checksum-Type": {"COMPOSITE"}})
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("<ChecksumCRC32C>"+want+"</ChecksumCRC32C>")) {
		t.Fatalf("complete: %d %s", resp.StatusCode, body)
	}
}

func mustDigest(alg *checksum.Algorithm, data []byte) []byte {
	h := alg.New()
	h.Write(data)
	return h.Sum(nil)
}

// TestUploadPartWithoutUploadChecksum: a part of an upload created without
// a checksum may carry one (SDKs send CRC32 by default): it is verified
// and listed with the part, and the object gets no checksum.
func TestUploadPartWithoutUploadChecksum(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "mpu")
	id, _ := createUpload(t, ts, "/mpu/k", nil)
	part := []byte("x")
	target := "/mpu/k?partNumber=1&uploadId=" + id
	resp, body := ts.do(t, "PUT", target, part, http.Header{"X-Amz-Checksum-Crc32": {checksum.CRC32.Of([]byte("y"))}})
	wantError(t, resp, body, 400, "BadDigest")
	resp, _ = ts.do(t, "PUT", target, part, http.Header{"X-Amz-Sdk-Checksum-Algorithm": {"CRC32"}})
	if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Checksum-Crc32") != checksum.CRC32.Of(part) {
		t.Fatalf("part: %d %v", resp.StatusCode, resp.Header)
	}
	etag := resp.Header.Get("ETag")
	if _, body := ts.do(t, "GET", "/mpu/k?uploadId="+id, nil, nil); !bytes.Contains(body, []byte("<ChecksumCRC32>"+checksum.CRC32.Of(part)+"</ChecksumCRC32>")) {
		t.Errorf("ListParts: %s", body)
	}
	resp, body = ts.do(t, "POST", "/mpu/k?uploadId="+id, completeBody([]string{etag}, checksum.CRC32, []string{checksum.CRC32.Of(part)}), nil)
	if resp.StatusCode != 200 || bytes.Contains(body, []byte("<Checksum")) {
		t.Fatalf("complete: %d %s", resp.StatusCode, body)
	}
}

// TestCopyObjectChecksum: a copy keeps a full-object checksum, computes
// the algorithm x-amz-checksum-algorithm names, and recomputes a
// composite one, which describes parts the copy does not have.
func TestCopyObjectChecksum(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "cpy")
	data := []byte("copy me")
	resp, body := ts.do(t, "PUT", "/cpy/src", data, http.Header{"X-Amz-Checksum-Crc32": {checksum.CRC32.Of(data)}})
	if resp.StatusCode != 200 {
		t.Fatalf("put: %s", body)
	}
	for _, c := range []struct {
		header http.Header
		alg    *checksum.Algorithm
	}{
		{http.Header{}, checksum.CRC32},
		{http.Header{"X-Amz-Checksum-Algorithm": {"SHA256"}}, checksum.SHA256},
		{http.Header{"X-Amz-Checksum-Algorithm": {"crc64nvme"}, "X-Amz-Metadata-Directive": {"REPLACE"}}, checksum.CRC64NVME},
	} {
		c.header.Set("X-Amz-Copy-Source", "/cpy/src")
		resp, body := ts.do(t, "PUT", "/cpy/dst", nil, c.header)
		var res copyResult
		if err := xmlUnmarshal(body, &res); err != nil || resp.StatusCode != 200 ||
			res.xmlChecksums.store().Value(c.alg) != c.alg.Of(data) || res.ChecksumType != "FULL_OBJECT" {
			t.Errorf("copy with %v: %d %s", c.header, resp.StatusCode, body)
		}
		resp, _ = ts.do(t, "HEAD", "/cpy/dst", nil, http.Header{"X-Amz-Checksum-Mode": {"ENABLED"}})
		if resp.Header.Get("X-Amz-Checksum-"+c.alg.Header()) != c.alg.Of(data) {
			t.Errorf("copy with %v: HEAD %v", c.header, resp.Header)
		}
	}
	resp, body = ts.do(t, "PUT", "/cpy/dst", nil, http.Header{"X-Amz-Copy-Source": {"/cpy/src"}, "X-Amz-Checksum-Algorithm": {"SHA384"}})
	wantError(t, resp, body, 400, "InvalidRequest")
}

// TestGetObjectAttributesRequests: header validation, paging of parts and
// a single PUT's attributes.
func TestGetObjectAttributesRequests(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "att")
	data := []byte("attributes")
	ts.do(t, "PUT", "/att/one", data, http.Header{"X-Amz-Checksum-Sha1": {checksum.SHA1.Of(data)}})
	for _, c := range []struct {
		header http.Header
		status int
		code   string
	}{
		{http.Header{}, 400, "InvalidArgument"},
		{http.Header{"X-Amz-Object-Attributes": {"ETag,Colour"}}, 400, "InvalidArgument"},
		{http.Header{"X-Amz-Object-Attributes": {"ObjectParts"}, "X-Amz-Max-Parts": {"-1"}}, 400, "InvalidArgument"},
	} {
		resp, body := ts.do(t, "GET", "/att/one?attributes", nil, c.header)
		wantError(t, resp, body, c.status, c.code)
	}
	resp, body := ts.do(t, "GET", "/att/missing?attributes", nil, http.Header{"X-Amz-Object-Attributes": {"ETag"}})
	wantError(t, resp, body, 404, "NoSuchKey")
	resp, body = ts.do(t, "GET", "/att/one?attributes", nil, http.Header{"X-Amz-Object-Attributes": {"Checksum", "ObjectSize,ObjectParts"}})
	var attrs getObjectAttributesResponse
	if err := xml.Unmarshal(body, &attrs); err != nil || resp.StatusCode != 200 || attrs.ETag != "" || attrs.ObjectParts != nil ||
		attrs.Checksum == nil || attrs.Checksum.ChecksumSHA1 != checksum.SHA1.Of(data) || attrs.Checksum.ChecksumType != "FULL_OBJECT" ||
		attrs.ObjectSize == nil || *attrs.ObjectSize != int64(len(data)) || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("attributes: %d %s", resp.StatusCode, body)
	}
	// Three parts, paged one at a time.
	id, _ := createUpload(t, ts, "/att/mp", http.Header{"X-Amz-Checksum-Algorithm": {"SHA256"}})
	parts := [][]byte{bytes.Repeat([]byte("a"), store.MinPartSize), bytes.Repeat([]byte("b"), store.MinPartSize), []byte("c")}
	var etags, sums []string
	for i, p := range parts {
		resp, _ := ts.do(t, "PUT", fmt.Sprintf("/att/mp?partNumber=%d&uploadId=%s", i+1, id), p, nil)
		etags, sums = append(etags, resp.Header.Get("ETag")), append(sums, resp.Header.Get("X-Amz-Checksum-Sha256"))
	}
	if resp, body := ts.do(t, "POST", "/att/mp?uploadId="+id, completeBody(etags, checksum.SHA256, sums), nil); resp.StatusCode != 200 {
		t.Fatalf("complete: %s", body)
	}
	marker := 0
	for i := range parts {
		resp, body := ts.do(t, "GET", "/att/mp?attributes", nil, http.Header{"X-Amz-Object-Attributes": {"ObjectParts"},
			"X-Amz-Max-Parts": {"1"}, "X-Amz-Part-Number-Marker": {fmt.Sprint(marker)}})
		var a getObjectAttributesResponse
		if err := xml.Unmarshal(body, &a); err != nil || resp.StatusCode != 200 || a.ObjectParts == nil {
			t.Fatalf("page %d: %s", i, body)
		}
		op := a.ObjectParts
		if op.PartsCount != 3 || len(op.Parts) != 1 || op.Parts[0].PartNumber != i+1 || op.Parts[0].ChecksumSHA256 != sums[i] ||
			op.IsTruncated != (i < 2) || op.MaxParts != 1 || op.PartNumberMarker != marker {
			t.Errorf("page %d: %s", i, body)
		}
		marker = op.NextPartNumberMarker
	}
}
