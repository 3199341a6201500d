package s3api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/checksum"
)

// TestChecksumTrailerAlgorithms: every algorithm's checksum arrives as a
// signed aws-chunked trailer (as minio-go sends it): a right one is
// stored, answered and given back in checksum mode and by
// GetObjectAttributes under S3's element name; a wrong one is BadDigest
// and stores nothing.
func TestChecksumTrailerAlgorithms(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "sums")
	data := []byte(strings.Repeat("trailed by every algorithm ", 3000))
	for _, alg := range checksum.All {
		t.Run(alg.Name(), func(t *testing.T) {
			trailer := "X-Amz-Checksum-" + alg.Header()
			key := "/sums/" + alg.Header()
			send := func(value string) (*http.Response, []byte) {
				req := ts.rawRequest(t, "PUT", key, data, http.Header{"X-Amz-Content-Sha256": {sigv4.StreamingUnsignedTrailer},
					"X-Amz-Checksum-Algorithm": {alg.Name()}})
				req = signer.SignV4Trailer(*req, testAccessKey, testSecretKey, "", testRegion, http.Header{trailer: {value}})
				return send(t, req)
			}
			resp, body := send(alg.Of([]byte("other")))
			wantError(t, resp, body, 400, "BadDigest")
			if _, err := ts.store.HeadObject("sums", alg.Header()); err == nil {
				t.Fatal("a body that failed its trailer was stored")
			}
			want := alg.Of(data)
			resp, body = send(want)
			if resp.StatusCode != 200 || resp.Header.Get(trailer) != want || resp.Header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
				t.Fatalf("PUT: %d %v %s", resp.StatusCode, resp.Header, body)
			}
			resp, _ = ts.do(t, "HEAD", key, nil, http.Header{"X-Amz-Checksum-Mode": {"ENABLED"}})
			if resp.Header.Get(trailer) != want || resp.Header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
				t.Errorf("HEAD: %v", resp.Header)
			}
			resp, body = ts.do(t, "GET", key+"?attributes", nil, http.Header{"X-Amz-Object-Attributes": {"Checksum"}})
			element := fmt.Sprintf("<Checksum%s>%s</Checksum%s>", alg.Name(), want, alg.Name())
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte(element)) || !bytes.Contains(body, []byte("<ChecksumType>FULL_OBJECT</ChecksumType>")) {
				t.Errorf("attributes: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// TestChecksumFormAlgorithms: a form upload names any algorithm to compute
// (x-amz-checksum-algorithm) or sends its value (x-amz-checksum-<name>),
// which is verified.
func TestChecksumFormAlgorithms(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "forms")
	hour := time.Now().Add(time.Hour)
	file := []byte("a form's file")
	for _, alg := range checksum.All {
		field := "x-amz-checksum-" + alg.Header()
		for _, c := range []struct {
			name, field, value string
			code               string
		}{
			{"named", "x-amz-checksum-algorithm", alg.Name(), ""},
			{"sent", field, alg.Of(file), ""},
			{"wrong", field, alg.Of([]byte("other")), "BadDigest"},
		} {
			key := alg.Header() + "-" + c.name
			conds := []any{map[string]string{"bucket": "forms"}, []any{"eq", "$key", key}, map[string]string{c.field: c.value}}
			fields := append(signedForm(t, hour, conds), formField{"key", key}, formField{c.field, c.value})
			resp, body := ts.postForm(t, "forms", fields, "f", file)
			if c.code != "" {
				wantError(t, resp, body, 400, c.code)
				if _, err := ts.store.HeadObject("forms", key); err == nil {
					t.Errorf("%s: a refused form was stored", key)
				}
				continue
			}
			if resp.StatusCode != http.StatusNoContent || resp.Header.Get(field) != alg.Of(file) {
				t.Errorf("%s: %d %v %s", key, resp.StatusCode, resp.Header, body)
			}
			if info, err := ts.store.HeadObject("forms", key); err != nil || info.Meta.Checksums.Value(alg) != alg.Of(file) {
				t.Errorf("%s: stored %+v (%v)", key, info.Meta.Checksums, err)
			}
		}
	}
}

// TestCopyChecksumAlgorithms: a copy computes any algorithm it is asked
// for; one of an object without a checksum gets a CRC64NVME, as S3; a
// composite source of a new algorithm gives a full-object copy of it;
// UploadPartCopy computes its upload's algorithm. CopyObjectResult
// always says FULL_OBJECT.
func TestCopyChecksumAlgorithms(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "cpy")
	data := bytes.Repeat([]byte("copied "), store.MinPartSize/7+1)
	if resp, body := ts.do(t, "PUT", "/cpy/plain", data, nil); resp.StatusCode != 200 {
		t.Fatalf("put: %s", body)
	}
	copyTo := func(dst string, header http.Header) copyResult {
		t.Helper()
		header.Set("X-Amz-Copy-Source", "/cpy/plain")
		resp, body := ts.do(t, "PUT", dst, nil, header)
		var res copyResult
		if err := xmlUnmarshal(body, &res); err != nil || resp.StatusCode != 200 {
			t.Fatalf("copy to %s with %v: %d %s", dst, header, resp.StatusCode, body)
		}
		return res
	}
	for _, c := range []struct {
		header http.Header
		alg    *checksum.Algorithm
	}{
		{http.Header{}, checksum.CRC64NVME},
		{http.Header{"X-Amz-Metadata-Directive": {"REPLACE"}}, checksum.CRC64NVME},
		{http.Header{"X-Amz-Checksum-Algorithm": {"MD5"}}, checksum.MD5},
		{http.Header{"X-Amz-Checksum-Algorithm": {"sha512"}}, checksum.SHA512},
		{http.Header{"X-Amz-Checksum-Algorithm": {"XXHASH64"}}, checksum.XXHASH64},
		{http.Header{"X-Amz-Checksum-Algorithm": {"XXHASH3"}}, checksum.XXHASH3},
		{http.Header{"X-Amz-Checksum-Algorithm": {"XXHASH128"}, "X-Amz-Metadata-Directive": {"REPLACE"}}, checksum.XXHASH128},
	} {
		res := copyTo("/cpy/dst", c.header)
		if res.xmlChecksums.store() != sumOf(c.alg, c.alg.Of(data)) || res.ChecksumType != "FULL_OBJECT" {
			t.Errorf("copy with %v: %+v", c.header, res)
		}
		resp, _ := ts.do(t, "HEAD", "/cpy/dst", nil, http.Header{"X-Amz-Checksum-Mode": {"ENABLED"}})
		if resp.Header.Get("X-Amz-Checksum-"+c.alg.Header()) != c.alg.Of(data) || resp.Header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
			t.Errorf("copy with %v: HEAD %v", c.header, resp.Header)
		}
	}

	// A composite XXHASH64 object copies to a full-object XXHASH64.
	id, _ := createUpload(t, ts, "/cpy/mp", http.Header{"X-Amz-Checksum-Algorithm": {"XXHASH64"}})
	halves := [][]byte{data[:store.MinPartSize], data[store.MinPartSize:]}
	var etags, sums []string
	for i, p := range halves {
		resp, body := ts.do(t, "PUT", fmt.Sprintf("/cpy/mp?partNumber=%d&uploadId=%s", i+1, id), p, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("part %d: %s", i+1, body)
		}
		etags, sums = append(etags, resp.Header.Get("ETag")), append(sums, resp.Header.Get("X-Amz-Checksum-Xxhash64"))
	}
	if resp, body := ts.do(t, "POST", "/cpy/mp?uploadId="+id, completeBody(etags, checksum.XXHASH64, sums), nil); resp.StatusCode != 200 ||
		!bytes.Contains(body, []byte("-2</ChecksumXXHASH64>")) || !bytes.Contains(body, []byte("<ChecksumType>COMPOSITE</ChecksumType>")) {
		t.Fatalf("complete: %d %s", resp.StatusCode, body)
	}
	resp, body := ts.do(t, "PUT", "/cpy/flat", nil, http.Header{"X-Amz-Copy-Source": {"/cpy/mp"}})
	var res copyResult
	if err := xmlUnmarshal(body, &res); err != nil || resp.StatusCode != 200 ||
		res.ChecksumXXHASH64 != checksum.XXHASH64.Of(data) || res.ChecksumType != "FULL_OBJECT" {
		t.Errorf("copy of the composite object: %d %s", resp.StatusCode, body)
	}

	// UploadPartCopy into an XXHASH3 upload: the part gets its XXHASH3.
	id, _ = createUpload(t, ts, "/cpy/parts", http.Header{"X-Amz-Checksum-Algorithm": {"XXHASH3"}})
	resp, body = ts.do(t, "PUT", "/cpy/parts?partNumber=1&uploadId="+id, nil,
		http.Header{"X-Amz-Copy-Source": {"/cpy/plain"}, "X-Amz-Copy-Source-Range": {"bytes=0-99"}})
	res = copyResult{}
	if err := xmlUnmarshal(body, &res); err != nil || resp.StatusCode != 200 ||
		res.xmlChecksums.store() != sumOf(checksum.XXHASH3, checksum.XXHASH3.Of(data[:100])) || res.ChecksumType != "" {
		t.Errorf("UploadPartCopy: %d %s", resp.StatusCode, body)
	}
}

// TestChecksumAlgorithmRefusals: the combinations S3 refuses are refused
// with InvalidRequest before anything is stored: a full-object multipart
// checksum of a hash, a part of another algorithm than its upload's, two
// checksums on one body, a value of the wrong length or spelling.
func TestChecksumAlgorithmRefusals(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "nay")
	part := []byte("part")
	for _, alg := range checksum.All {
		resp, body := ts.do(t, "POST", "/nay/k?uploads", nil, http.Header{"X-Amz-Checksum-Algorithm": {alg.Name()}, "X-Amz-Checksum-Type": {"FULL_OBJECT"}})
		if alg.IsCRC() != (resp.StatusCode == 200) {
			t.Errorf("full-object %s upload: %d %s", alg.Name(), resp.StatusCode, body)
		}
		if !alg.IsCRC() {
			wantError(t, resp, body, 400, "InvalidRequest")
		}
	}
	id, resp := createUpload(t, ts, "/nay/k", http.Header{"X-Amz-Checksum-Algorithm": {"SHA512"}})
	if resp.Header.Get("X-Amz-Checksum-Type") != "COMPOSITE" {
		t.Errorf("a SHA512 upload's default type: %v", resp.Header)
	}
	for _, h := range []http.Header{
		{"X-Amz-Checksum-Md5": {checksum.MD5.Of(part)}},
		{"X-Amz-Checksum-Sha512": {checksum.SHA512.Of(part)}, "X-Amz-Checksum-Xxhash3": {checksum.XXHASH3.Of(part)}},
		{"X-Amz-Checksum-Sha512": {checksum.SHA256.Of(part)}},
		{"X-Amz-Checksum-Xxhash128": {checksum.XXHASH64.Of(part)}},
	} {
		resp, body := ts.do(t, "PUT", "/nay/k?partNumber=1&uploadId="+id, part, h)
		wantError(t, resp, body, 400, "InvalidRequest")
	}
	for _, h := range []http.Header{
		{"X-Amz-Checksum-Xxhash64": {checksum.XXHASH128.Of(part)}},
		// Base64 that decodes to 4 bytes but is not their spelling.
		{"X-Amz-Checksum-Crc32": {"000000=="}},
	} {
		resp, body := ts.do(t, "PUT", "/nay/one", part, h)
		wantError(t, resp, body, 400, "InvalidRequest")
	}
	resp, body := ts.do(t, "POST", "/nay/k?uploads", nil, http.Header{"X-Amz-Checksum-Algorithm": {"XXHASH"}})
	wantError(t, resp, body, 400, "InvalidRequest")
	if !bytes.Contains(body, []byte("[CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64]")) {
		t.Errorf("the refusal lists other algorithms: %s", body)
	}
	if _, body := ts.do(t, "GET", "/nay/k?uploadId="+id, nil, nil); bytes.Contains(body, []byte("<Part>")) {
		t.Errorf("a refused part was kept: %s", body)
	}
}

// TestCompleteListsNewAlgorithms: a Complete request's parts carry the
// new algorithms' elements (ChecksumXXHASH128…), which are checked
// against the stored parts.
func TestCompleteListsNewAlgorithms(t *testing.T) {
	parts, err := parseCompleteMultipartUpload([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag>` +
		`<ChecksumXXHASH128>` + checksum.XXHASH128.Of(nil) + `</ChecksumXXHASH128></Part></CompleteMultipartUpload>`))
	if err != nil || len(parts) != 1 || parts[0].Checksums.XXHASH128 != checksum.XXHASH128.Of(nil) {
		t.Fatalf("parsed %+v (%v)", parts, err)
	}
	_, err = parseCompleteMultipartUpload([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag>` +
		`<ChecksumSHA512>` + checksum.SHA256.Of(nil) + `</ChecksumSHA512></Part></CompleteMultipartUpload>`))
	var s3err *s3Error
	if !errors.As(err, &s3err) || s3err.code != "InvalidRequest" {
		t.Errorf("a SHA256-sized ChecksumSHA512: %v", err)
	}
	out, err := xml.Marshal(toXMLChecksums(store.Checksums{MD5: "m", SHA512: "s", XXHASH128: "x128", XXHASH3: "x3", XXHASH64: "x64"}))
	if err != nil || !bytes.Contains(out, []byte("<ChecksumMD5>m</ChecksumMD5><ChecksumSHA512>s</ChecksumSHA512>"+
		"<ChecksumXXHASH128>x128</ChecksumXXHASH128><ChecksumXXHASH3>x3</ChecksumXXHASH3><ChecksumXXHASH64>x64</ChecksumXXHASH64>")) {
		t.Errorf("elements: %s (%v)", out, err)
	}
}

// sumOf is checksums holding only v, of algorithm alg.
func sumOf(alg *checksum.Algorithm, v string) store.Checksums {
	var c store.Checksums
	c.Set(alg, v)
	return c
}
