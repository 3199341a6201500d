package s3api

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store/checksum"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// expectedSums are the x-amz-checksum-* values of data, by algorithm.
func expectedSums(data []byte) map[string]string {
	out := map[string]string{}
	for _, alg := range checksum.All {
		out[alg.Header()] = alg.Of(data)
	}
	return out
}

func TestChecksumHeaders(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "sums")
	data := []byte("The quick brown fox jumps over the lazy dog")
	sums := expectedSums(data)
	// Known values of this sentence, so the tables are the right ones.
	if sums["crc32"] != b64(be32(0x414fa339)) || sums["crc32c"] != b64(be32(0x22620404)) {
		t.Fatalf("test vectors: %v", sums)
	}
	for alg, sum := range sums {
		t.Run(alg, func(t *testing.T) {
			key := "/sums/" + alg
			resp, body := ts.do(t, "PUT", key, data, http.Header{"X-Amz-Checksum-" + alg: {sum}, "X-Amz-Sdk-Checksum-Algorithm": {strings.ToUpper(alg)}})
			if resp.StatusCode != 200 {
				t.Fatalf("PUT: %d %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("X-Amz-Checksum-" + alg); got != sum || resp.Header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
				t.Errorf("PUT echoes %q, want %q", got, sum)
			}
			resp, _ = ts.do(t, "HEAD", key, nil, http.Header{"X-Amz-Checksum-Mode": {"ENABLED"}})
			if resp.Header.Get("X-Amz-Checksum-"+alg) != sum || resp.Header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
				t.Errorf("HEAD with checksum mode: %v", resp.Header)
			}
			resp, _ = ts.do(t, "GET", key, nil, nil)
			if resp.Header.Get("X-Amz-Checksum-"+alg) != "" {
				t.Errorf("checksum sent without checksum mode")
			}
			bad := expectedSums([]byte("other"))[alg]
			resp, body = ts.do(t, "PUT", key+"-bad", data, http.Header{"X-Amz-Checksum-" + alg: {bad}})
			wantError(t, resp, body, 400, "BadDigest")
		})
	}
	resp, body := ts.do(t, "PUT", "/sums/x", data, http.Header{"X-Amz-Sdk-Checksum-Algorithm": {"MD6"}})
	wantError(t, resp, body, 400, "InvalidRequest")
	resp, body = ts.do(t, "PUT", "/sums/x", data, http.Header{"X-Amz-Sdk-Checksum-Algorithm": {"SHA1"}, "X-Amz-Checksum-Crc32": {sums["crc32"]}})
	wantError(t, resp, body, 400, "InvalidRequest")
}

// TestChecksumTrailer: checksums sent as an aws-chunked trailer, unsigned
// and signed, are verified at the end of the body.
func TestChecksumTrailer(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "sums")
	data := []byte(strings.Repeat("trailer payload ", 5000))
	sum := expectedSums(data)["crc32c"]
	for _, c := range []struct {
		name, value string
		status      int
	}{
		{"good", sum, 200},
		{"bad", expectedSums([]byte("x"))["crc32c"], 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := ts.rawRequest(t, "PUT", "/sums/trailed-"+c.name, data, http.Header{"X-Amz-Content-Sha256": {sigv4.StreamingUnsignedTrailer}})
			req = signer.SignV4Trailer(*req, testAccessKey, testSecretKey, "", testRegion, http.Header{"X-Amz-Checksum-Crc32c": {c.value}})
			resp, body := send(t, req)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if c.status != 200 {
				wantError(t, resp, body, 400, "BadDigest")
				return
			}
			if resp.Header.Get("X-Amz-Checksum-Crc32c") != sum {
				t.Errorf("response checksum: %v", resp.Header)
			}
			o, err := ts.store.GetObject("sums", "trailed-good")
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if readAll(t, o.Reader()) != string(data) {
				t.Errorf("stored content differs")
			}
			if o.Info.Meta.Checksums.CRC32C != sum {
				t.Errorf("the trailer's checksum was not stored: %+v", o.Info.Meta.Checksums)
			}
		})
	}
}

// TestChecksumMinio: minio-go's own checksum options round-trip, each
// algorithm it knows sent as a trailer, and come back in checksum mode.
func TestChecksumMinio(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "sums")
	c := ctx(t)
	data := strings.Repeat("minio checksum ", 1000)
	client, err := minio.New(strings.TrimPrefix(ts.url, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(testAccessKey, testSecretKey, ""), Region: testRegion, TrailingHeaders: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []minio.ChecksumType{minio.ChecksumCRC32, minio.ChecksumCRC32C, minio.ChecksumCRC64NVME, minio.ChecksumMD5,
		minio.ChecksumSHA1, minio.ChecksumSHA256, minio.ChecksumSHA512, minio.ChecksumXXHash128, minio.ChecksumXXHash3, minio.ChecksumXXHash64} {
		t.Run(ct.String(), func(t *testing.T) {
			alg, ok := checksum.Lookup(ct.String())
			if !ok {
				t.Fatalf("minio-go's %s is unknown here", ct)
			}
			put, err := client.PutObject(c, "sums", "m-"+ct.String(), strings.NewReader(data), int64(len(data)),
				minio.PutObjectOptions{Checksum: ct})
			if err != nil {
				t.Fatal(err)
			}
			st, err := client.StatObject(c, "sums", "m-"+ct.String(), minio.StatObjectOptions{Checksum: true})
			if err != nil || st.Checksum(ct) != alg.Of([]byte(data)) || st.ChecksumMode != "FULL_OBJECT" || put.ChecksumMode != "FULL_OBJECT" {
				t.Errorf("stat: %+v (%v)", st, err)
			}
			o, err := ts.store.GetObject("sums", "m-"+ct.String())
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if readAll(t, o.Reader()) != data {
				t.Errorf("content differs")
			}
		})
	}
}

// FuzzChecksumHeaders: whatever checksum headers and body arrive, the
// verifying reader either refuses them up front, or fails at the end, or
// ends cleanly only when the body has exactly the checksum sent; it
// never panics and never reports a checksum the body does not have.
func FuzzChecksumHeaders(f *testing.F) {
	f.Add("crc32", checksum.CRC32.Of([]byte("body")), "", []byte("body"))
	f.Add("sha256", "", "SHA256", []byte("x"))
	f.Add("crc64nvme", "AAAAAAAAAAA=", "crc32", []byte{})
	f.Add("md5", "AAAA", "", []byte("y"))
	f.Add("xxhash128", checksum.XXHASH128.Of([]byte("z")), "XXHASH128", []byte("z"))
	f.Add("sha512", "", "xxhash3", []byte("w"))
	f.Fuzz(func(t *testing.T, name, value, named string, body []byte) {
		h := http.Header{}
		if name != "" && value != "" {
			h.Set("X-Amz-Checksum-"+name, value)
		}
		if named != "" {
			h.Set("X-Amz-Sdk-Checksum-Algorithm", named)
		}
		v, err := newVerifyingReader(h, bytes.NewReader(body))
		if err != nil {
			return
		}
		got, err := io.ReadAll(v)
		if err != nil {
			return
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("read %q of %q", got, body)
		}
		sums := v.Checksums()
		for _, alg := range checksum.All {
			if s := sums.Value(alg); s != "" && s != alg.Of(body) {
				t.Fatalf("reported %s %s for a body whose is %s", alg.Name(), s, alg.Of(body))
			}
		}
		if value != "" {
			if alg, ok := checksum.Lookup(name); ok && sums.Value(alg) != value {
				t.Fatalf("accepted %s %q for a body whose is %s", name, value, alg.Of(body))
			}
		}
	})
}
