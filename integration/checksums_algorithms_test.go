package integration

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/store/checksum"
)

// newAlgorithms are the checksums minio-go sends beyond the first five,
// with this package's algorithm for each.
var newAlgorithms = []struct {
	ct  minio.ChecksumType
	alg *checksum.Algorithm
}{
	{minio.ChecksumMD5, checksum.MD5},
	{minio.ChecksumSHA512, checksum.SHA512},
	{minio.ChecksumXXHash64, checksum.XXHASH64},
	{minio.ChecksumXXHash3, checksum.XXHASH3},
	{minio.ChecksumXXHash128, checksum.XXHASH128},
}

// attrChecksum is the value GetObjectAttributes reports for ct.
func attrChecksum(a *minio.ObjectAttributes, ct minio.ChecksumType) string {
	c := a.Checksum
	return map[minio.ChecksumType]string{
		minio.ChecksumCRC32: c.ChecksumCRC32, minio.ChecksumCRC32C: c.ChecksumCRC32C, minio.ChecksumCRC64NVME: c.ChecksumCRC64NVME,
		minio.ChecksumMD5: c.ChecksumMD5, minio.ChecksumSHA1: c.ChecksumSHA1, minio.ChecksumSHA256: c.ChecksumSHA256,
		minio.ChecksumSHA512: c.ChecksumSHA512, minio.ChecksumXXHash64: c.ChecksumXXHash64, minio.ChecksumXXHash3: c.ChecksumXXHash3,
		minio.ChecksumXXHash128: c.ChecksumXXHash128,
	}[ct]
}

// attrPartChecksum is the value GetObjectAttributes reports for ct of a part.
func attrPartChecksum(p *minio.ObjectAttributePart, ct minio.ChecksumType) string {
	return map[minio.ChecksumType]string{
		minio.ChecksumCRC32: p.ChecksumCRC32, minio.ChecksumCRC32C: p.ChecksumCRC32C, minio.ChecksumCRC64NVME: p.ChecksumCRC64NVME,
		minio.ChecksumMD5: p.ChecksumMD5, minio.ChecksumSHA1: p.ChecksumSHA1, minio.ChecksumSHA256: p.ChecksumSHA256,
		minio.ChecksumSHA512: p.ChecksumSHA512, minio.ChecksumXXHash64: p.ChecksumXXHash64, minio.ChecksumXXHash3: p.ChecksumXXHash3,
		minio.ChecksumXXHash128: p.ChecksumXXHash128,
	}[ct]
}

// uploadChecksum is the value an UploadInfo reports for ct.
func uploadChecksum(u minio.UploadInfo, ct minio.ChecksumType) string {
	return map[minio.ChecksumType]string{
		minio.ChecksumCRC32: u.ChecksumCRC32, minio.ChecksumCRC32C: u.ChecksumCRC32C, minio.ChecksumCRC64NVME: u.ChecksumCRC64NVME,
		minio.ChecksumMD5: u.ChecksumMD5, minio.ChecksumSHA1: u.ChecksumSHA1, minio.ChecksumSHA256: u.ChecksumSHA256,
		minio.ChecksumSHA512: u.ChecksumSHA512, minio.ChecksumXXHash64: u.ChecksumXXHash64, minio.ChecksumXXHash3: u.ChecksumXXHash3,
		minio.ChecksumXXHash128: u.ChecksumXXHash128,
	}[ct]
}

// TestChecksumsMinioAlgorithms: minio-go's MD5, SHA512, XXHASH64, XXHASH3
// and XXHASH128 through the real binary: PutObject with each as a
// trailer (single PUT and a composite multipart upload) and as a header
// (a wrong value refused), StatObject and GetObject in checksum mode
// (minio-go verifies a full-object checksum while it reads),
// GetObjectAttributes, CopyObject keeping, recomputing or changing the
// checksum, and ComposeObject (UploadPartCopy) in an algorithm.
func TestChecksumsMinioAlgorithms(t *testing.T) {
	s := startServer(t, "1G")
	c, cx := checksumClient(t, s), t.Context()
	const partSize = 5 << 20
	big := make([]byte, 2*partSize+12345)
	rand.Read(big)
	small := []byte("a small object, put at once with a new checksum")
	for _, a := range newAlgorithms {
		for _, data := range [][]byte{small, big} {
			key := fmt.Sprintf("%s-%d", a.alg.Name(), len(data))
			want, wantType := a.alg.Of(data), "FULL_OBJECT"
			if len(data) > partSize {
				want, wantType = expectMultipart(a.alg, "COMPOSITE", data, []int{partSize, partSize, len(data) - 2*partSize}), "COMPOSITE"
			}
			put, err := c.PutObject(cx, "sums", key, bytes.NewReader(data), int64(len(data)),
				minio.PutObjectOptions{Checksum: a.ct, PartSize: partSize, DisableContentSha256: true})
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if got := uploadChecksum(put, a.ct); got != want || put.ChecksumMode != wantType {
				t.Errorf("%s: PutObject answered %s %s, want %s %s", key, got, put.ChecksumMode, want, wantType)
			}
			info, err := c.StatObject(cx, "sums", key, minio.StatObjectOptions{Checksum: true})
			if err != nil || info.Checksum(a.ct) != want || info.ChecksumMode != wantType {
				t.Errorf("%s: stat reports %s %s (%v), want %s %s", key, info.Checksum(a.ct), info.ChecksumMode, err, want, wantType)
			}
			o, err := c.GetObject(cx, "sums", key, minio.GetObjectOptions{Checksum: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(o)
			o.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s: GetObject in checksum mode: %d bytes, %v", key, len(got), err)
			}
			attrs, err := c.GetObjectAttributes(cx, "sums", key, minio.ObjectAttributesOptions{MaxParts: 1000})
			if err != nil {
				t.Fatalf("%s: attributes: %v", key, err)
			}
			if attrs.ObjectSize != len(data) || attrs.Checksum.ChecksumType != wantType || attrChecksum(attrs, a.ct) != checksum.WithoutPartCount(want) {
				t.Errorf("%s: attributes %+v", key, attrs.ObjectAttributesResponse)
			}
			if len(data) > partSize {
				parts := attrs.ObjectParts.Parts
				if attrs.ObjectParts.PartsCount != 3 || len(parts) != 3 || attrPartChecksum(parts[2], a.ct) != a.alg.Of(data[2*partSize:]) {
					t.Errorf("%s: parts %+v", key, attrs.ObjectParts)
				}
			}

			// A copy keeps a full-object checksum and recomputes a
			// composite one (it has no parts); either is FULL_OBJECT.
			cp, err := c.CopyObject(cx, minio.CopyDestOptions{Bucket: "sums", Object: key + "-copy"}, minio.CopySrcOptions{Bucket: "sums", Object: key})
			if err != nil || uploadChecksum(cp, a.ct) != a.alg.Of(data) || cp.ChecksumMode != "FULL_OBJECT" {
				t.Errorf("%s: copy answered %+v (%v)", key, cp, err)
			}
			info, err = c.StatObject(cx, "sums", key+"-copy", minio.StatObjectOptions{Checksum: true})
			if err != nil || info.Checksum(a.ct) != a.alg.Of(data) || info.ChecksumMode != "FULL_OBJECT" {
				t.Errorf("%s: the copy has %s %s (%v)", key, info.Checksum(a.ct), info.ChecksumMode, err)
			}
		}

		// The checksum as a header, as minio-go's own functional tests
		// send it: a wrong value is refused and nothing is stored.
		key := a.alg.Name() + "-header"
		for _, value := range []string{a.alg.Of(nil), a.alg.Of(small)} {
			_, err := c.PutObject(cx, "sums", key, bytes.NewReader(small), int64(len(small)), minio.PutObjectOptions{DisableMultipart: true,
				DisableContentSha256: true, UserMetadata: map[string]string{"x-amz-checksum-algorithm": a.alg.Name(), a.ct.Key(): value}})
			if wrong := value != a.alg.Of(small); wrong != (err != nil) || wrong && minio.ToErrorResponse(err).Code != "BadDigest" {
				t.Errorf("%s: PUT with %s: %v", key, value, err)
			}
			if _, serr := c.StatObject(cx, "sums", key, minio.StatObjectOptions{}); (serr == nil) != (err == nil) {
				t.Errorf("%s: PUT with %s answered %v, then stat %v", key, value, err, serr)
			}
		}
	}

	// A copy asked for a new algorithm computes it; a copy of an object
	// without a checksum (this client sends none) gets a CRC64NVME.
	plain, err := minio.New(s.Host, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Region: region})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.PutObject(cx, "sums", "plain", bytes.NewReader(small), int64(len(small)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if info, err := c.StatObject(cx, "sums", "plain", minio.StatObjectOptions{Checksum: true}); err != nil || info.ChecksumMode != "" {
		t.Fatalf("plain: %+v (%v)", info, err)
	}
	for _, ct := range []minio.ChecksumType{minio.ChecksumNone, minio.ChecksumXXHash128, minio.ChecksumSHA512} {
		want := minio.ChecksumCRC64NVME
		if ct.IsSet() {
			want = ct
		}
		for _, replace := range []bool{false, true} {
			dst := minio.CopyDestOptions{Bucket: "sums", Object: "plain-copy", ChecksumType: ct, ReplaceMetadata: replace}
			cp, err := plain.CopyObject(cx, dst, minio.CopySrcOptions{Bucket: "sums", Object: "plain"})
			if err != nil || uploadChecksum(cp, want) != want.EncodeToString(small) || cp.ChecksumMode != "FULL_OBJECT" {
				t.Errorf("copy of plain asking %v (replace %v): %+v (%v)", ct, replace, cp, err)
			}
			info, err := plain.StatObject(cx, "sums", "plain-copy", minio.StatObjectOptions{Checksum: true})
			if err != nil || info.Checksum(want) != want.EncodeToString(small) || info.ChecksumMode != "FULL_OBJECT" {
				t.Errorf("copy of plain asking %v (replace %v) has %+v (%v)", ct, replace, info, err)
			}
		}
	}

	// ComposeObject: an upload in XXHASH3 whose parts are UploadPartCopy
	// ranges of big, completed composite.
	srcs := []minio.CopySrcOptions{
		{Bucket: "sums", Object: "XXHASH3-" + fmt.Sprint(len(big)), MatchRange: true, Start: 0, End: partSize - 1},
		{Bucket: "sums", Object: "plain"},
	}
	up, err := c.ComposeObject(cx, minio.CopyDestOptions{Bucket: "sums", Object: "composed", ChecksumType: minio.ChecksumXXHash3}, srcs...)
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	whole := append(append([]byte(nil), big[:partSize]...), small...)
	want := expectMultipart(checksum.XXHASH3, "COMPOSITE", whole, []int{partSize, len(small)})
	info, err := c.StatObject(cx, "sums", "composed", minio.StatObjectOptions{Checksum: true})
	if err != nil || info.Size != int64(len(whole)) || info.ChecksumXXHash3 != want || info.ChecksumMode != "COMPOSITE" {
		t.Errorf("composed: %+v, %+v (%v), want %s", up, info, err, want)
	}
	s.stop(t)
}
