package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/store/checksum"
)

// expectMultipart is the checksum S3 gives an object of these part sizes
// and content: full object, or composite over the parts' digests.
func expectMultipart(alg *checksum.Algorithm, typ string, data []byte, sizes []int) string {
	if typ == string(checksum.FullObject) {
		return alg.Of(data)
	}
	var digests []byte
	off := 0
	for _, n := range sizes {
		d, _ := alg.Decode(alg.Of(data[off : off+n]))
		digests = append(digests, d...)
		off += n
	}
	return fmt.Sprintf("%s-%d", alg.Of(digests), len(sizes))
}

// minioChecksum is the value minio-go reports for alg.
func minioChecksum(o minio.ObjectInfo, alg *checksum.Algorithm) string {
	return map[string]string{"CRC32": o.ChecksumCRC32, "CRC32C": o.ChecksumCRC32C, "CRC64NVME": o.ChecksumCRC64NVME,
		"SHA1": o.ChecksumSHA1, "SHA256": o.ChecksumSHA256}[alg.Name()]
}

// TestChecksumsMinio: minio-go's checksum options (each algorithm, single
// PUT and multipart, composite and full object, its own CRC64NVME),
// StatObject in checksum mode, GetObjectAttributes, and a copy asking for
// a new checksum, through the real binary.
func TestChecksumsMinio(t *testing.T) {
	s := startServer(t, "1G")
	c, cx := checksumClient(t, s), t.Context()
	const partSize = 5 << 20
	big := make([]byte, 2*partSize+12345)
	rand.Read(big)
	small := []byte("a small object, put at once")
	for _, ct := range []minio.ChecksumType{minio.ChecksumCRC32, minio.ChecksumCRC32C, minio.ChecksumCRC64NVME, minio.ChecksumSHA1,
		minio.ChecksumSHA256, minio.ChecksumFullObjectCRC32, minio.ChecksumFullObjectCRC32C} {
		alg, _ := checksum.Lookup(ct.Base().String())
		typ := string(alg.DefaultType())
		if ct.FullObjectRequested() {
			typ = string(checksum.FullObject)
		}
		for _, data := range [][]byte{small, big} {
			key := fmt.Sprintf("%s-%d", ct, len(data))
			_, err := c.PutObject(cx, "sums", key, bytes.NewReader(data), int64(len(data)),
				minio.PutObjectOptions{Checksum: ct, PartSize: partSize, DisableContentSha256: true})
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			info, err := c.StatObject(cx, "sums", key, minio.StatObjectOptions{Checksum: true})
			if err != nil {
				t.Fatal(err)
			}
			want, wantType := alg.Of(data), "FULL_OBJECT"
			if len(data) > partSize {
				want, wantType = expectMultipart(alg, typ, data, []int{partSize, partSize, len(data) - 2*partSize}), typ
			}
			if got := minioChecksum(info, alg); got != want || info.ChecksumMode != wantType {
				t.Errorf("%s: stat reports %s %s, want %s %s", key, got, info.ChecksumMode, want, wantType)
			}
			attrs, err := c.GetObjectAttributes(cx, "sums", key, minio.ObjectAttributesOptions{MaxParts: 2})
			if err != nil {
				t.Fatalf("%s: attributes: %v", key, err)
			}
			sums := attrs.Checksum
			got := map[string]string{"CRC32": sums.ChecksumCRC32, "CRC32C": sums.ChecksumCRC32C, "CRC64NVME": sums.ChecksumCRC64NVME,
				"SHA1": sums.ChecksumSHA1, "SHA256": sums.ChecksumSHA256}[alg.Name()]
			if attrs.ObjectSize != len(data) || attrs.StorageClass != "STANDARD" || sums.ChecksumType != wantType ||
				got != checksum.WithoutPartCount(want) {
				t.Errorf("%s: attributes %+v", key, attrs.ObjectAttributesResponse)
			}
			if len(data) > partSize {
				op := attrs.ObjectParts
				if op.PartsCount != 3 || len(op.Parts) != 2 || !op.IsTruncated || op.Parts[0].Size != partSize || op.NextPartNumberMarker != 2 {
					t.Errorf("%s: parts %+v", key, op)
				}
			}
		}
	}
	// A copy computes the algorithm it is asked for.
	_, err := c.CopyObject(cx, minio.CopyDestOptions{Bucket: "sums", Object: "copy", ChecksumType: minio.ChecksumSHA256},
		minio.CopySrcOptions{Bucket: "sums", Object: fmt.Sprintf("%s-%d", minio.ChecksumCRC32, len(big))})
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.StatObject(cx, "sums", "copy", minio.StatObjectOptions{Checksum: true})
	if err != nil || info.ChecksumSHA256 != checksum.SHA256.Of(big) || info.ChecksumCRC32 != "" {
		t.Errorf("copy: %+v %v", info, err)
	}
	s.stop(t)
}

// TestChecksumsAwsCLI: the aws CLI's --checksum-algorithm on put-object,
// upload-part and s3 cp of a file big enough for multipart, get-object
// and head-object in checksum mode (the CLI verifies what it downloads),
// and get-object-attributes, through the real binary. CRC32C and CRC64NVME
// need the CLI's CRT extension (awscrt), as do the xxHashes; without it
// those are left to the minio-go and boto3 tests, and the log says so.
// The same for an algorithm the CLI's botocore does not know (MD5 in
// botocore 1.43): TestChecksumsMinioAlgorithms covers it.
func TestChecksumsAwsCLI(t *testing.T) {
	s := startServer(t, "1G")
	aws, home := awsClient(t, s)
	aws.run("s3", "mb", "s3://sums")
	small := []byte("checksummed by the aws CLI")
	smallFile := home + "/small"
	writeFile(t, smallFile, small)
	for _, alg := range checksum.All {
		out, err := aws.try("s3api", "put-object", "--bucket", "sums", "--key", alg.Header(), "--body", smallFile, "--checksum-algorithm", alg.Name())
		if err != nil && strings.Contains(out, "botocore[crt]") {
			t.Logf("%s: this aws CLI lacks awscrt, skipping it here: %s", alg.Name(), strings.TrimSpace(out))
			continue
		}
		if err != nil && strings.Contains(out, "Unsupported checksum algorithm") {
			t.Logf("%s: this aws CLI does not know it, skipping it here: %s", alg.Name(), strings.TrimSpace(out))
			continue
		}
		if err != nil {
			t.Fatalf("put-object %s: %v\n%s", alg.Name(), err, out)
		}
		var put map[string]string
		decode(t, out, &put)
		if put["Checksum"+alg.Name()] != alg.Of(small) {
			t.Errorf("put-object %s answered %v", alg.Name(), put)
		}
		var head map[string]any
		decode(t, aws.run("s3api", "head-object", "--bucket", "sums", "--key", alg.Header(), "--checksum-mode", "ENABLED"), &head)
		if head["Checksum"+alg.Name()] != alg.Of(small) || head["ChecksumType"] != "FULL_OBJECT" {
			t.Errorf("head-object %s: %v", alg.Name(), head)
		}
		aws.run("s3api", "get-object", "--bucket", "sums", "--key", alg.Header(), "--checksum-mode", "ENABLED", home+"/out")
		if got := readFile(t, home+"/out"); !bytes.Equal(got, small) {
			t.Errorf("get-object %s differs", alg.Name())
		}
	}

	// Multipart by hand with a CRC32 composite checksum.
	part1 := make([]byte, 5<<20)
	rand.Read(part1)
	part2 := []byte("the last part")
	writeFile(t, home+"/p1", part1)
	writeFile(t, home+"/p2", part2)
	var created struct{ UploadId, ChecksumAlgorithm, ChecksumType string }
	decode(t, aws.run("s3api", "create-multipart-upload", "--bucket", "sums", "--key", "mp", "--checksum-algorithm", "CRC32"), &created)
	if created.ChecksumAlgorithm != "CRC32" || created.ChecksumType != "COMPOSITE" {
		t.Errorf("create-multipart-upload answered %+v", created)
	}
	var parts []map[string]any
	for i, p := range []string{"/p1", "/p2"} {
		var up map[string]string
		decode(t, aws.run("s3api", "upload-part", "--bucket", "sums", "--key", "mp", "--upload-id", created.UploadId,
			"--part-number", fmt.Sprint(i+1), "--body", home+p, "--checksum-algorithm", "CRC32"), &up)
		parts = append(parts, map[string]any{"PartNumber": i + 1, "ETag": up["ETag"], "ChecksumCRC32": up["ChecksumCRC32"]})
	}
	var done map[string]string
	decode(t, aws.run("s3api", "complete-multipart-upload", "--bucket", "sums", "--key", "mp", "--upload-id", created.UploadId,
		"--multipart-upload", mustJSON(t, map[string]any{"Parts": parts})), &done)
	whole := append(append([]byte(nil), part1...), part2...)
	want := expectMultipart(checksum.CRC32, "COMPOSITE", whole, []int{len(part1), len(part2)})
	if done["ChecksumCRC32"] != want || done["ChecksumType"] != "COMPOSITE" {
		t.Errorf("complete-multipart-upload answered %v, want %s", done, want)
	}
	aws.run("s3api", "get-object", "--bucket", "sums", "--key", "mp", "--checksum-mode", "ENABLED", home+"/out")
	if !bytes.Equal(readFile(t, home+"/out"), whole) {
		t.Error("get-object of the multipart object differs")
	}
	var attrs struct {
		ETag        string
		ObjectSize  int
		Checksum    map[string]string
		ObjectParts struct {
			TotalPartsCount int
			Parts           []struct {
				PartNumber    int
				Size          int
				ChecksumCRC32 string
			}
		}
	}
	decode(t, aws.run("s3api", "get-object-attributes", "--bucket", "sums", "--key", "mp",
		"--object-attributes", "ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"), &attrs)
	if attrs.ObjectSize != len(whole) || attrs.Checksum["ChecksumCRC32"] != checksum.WithoutPartCount(want) ||
		attrs.ObjectParts.TotalPartsCount != 2 || len(attrs.ObjectParts.Parts) != 2 ||
		attrs.ObjectParts.Parts[1].ChecksumCRC32 != checksum.CRC32.Of(part2) {
		t.Errorf("get-object-attributes: %+v", attrs)
	}

	// aws s3 cp of a file over the multipart threshold.
	big := make([]byte, 20<<20+777)
	rand.Read(big)
	writeFile(t, home+"/big", big)
	aws.run("s3", "cp", "--checksum-algorithm", "SHA256", home+"/big", "s3://sums/big")
	decode(t, aws.run("s3api", "get-object-attributes", "--bucket", "sums", "--key", "big",
		"--object-attributes", "Checksum", "ObjectParts", "ObjectSize"), &attrs)
	var sizes []int
	for _, p := range attrs.ObjectParts.Parts {
		sizes = append(sizes, p.Size)
	}
	if len(sizes) < 2 || attrs.ObjectSize != len(big) {
		t.Fatalf("s3 cp did not upload in parts: %+v", attrs)
	}
	want = expectMultipart(checksum.SHA256, attrs.Checksum["ChecksumType"], big, sizes)
	if attrs.Checksum["ChecksumSHA256"] != checksum.WithoutPartCount(want) {
		t.Errorf("s3 cp stored %v, want %s", attrs.Checksum, want)
	}
	aws.run("s3", "cp", "s3://sums/big", home+"/big.out")
	if !bytes.Equal(readFile(t, home+"/big.out"), big) {
		t.Error("s3 cp round trip differs")
	}
	s.stop(t)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChecksumsBoto3: boto3's flexible checksums on put_object (each
// algorithm its botocore computes without the CRT), a FULL_OBJECT CRC32
// multipart upload with the part checksums in the Complete list,
// head_object and get_object in checksum mode (botocore verifies the
// body against the header), get_object_attributes and copy_object with a
// new algorithm; and refusals with S3's codes.
func TestChecksumsBoto3(t *testing.T) {
	s := startServer(t, "1G")
	out := runBoto3(t, s, `
import base64, hashlib, zlib, os
def b64(b): return base64.b64encode(b).decode()
res = {}
s3.create_bucket(Bucket="sums")
body = b"boto3 checksums " * 1000
for alg in ["CRC32", "SHA1", "SHA256"]:
    put = s3.put_object(Bucket="sums", Key=alg, Body=body, ChecksumAlgorithm=alg)
    head = s3.head_object(Bucket="sums", Key=alg, ChecksumMode="ENABLED")
    got = s3.get_object(Bucket="sums", Key=alg, ChecksumMode="ENABLED")
    assert got["Body"].read() == body
    res[alg] = [put.get("Checksum" + alg), head.get("Checksum" + alg), head.get("ChecksumType"), got.get("Checksum" + alg)]
expect = {"CRC32": b64(zlib.crc32(body).to_bytes(4, "big")), "SHA1": b64(hashlib.sha1(body).digest()), "SHA256": b64(hashlib.sha256(body).digest())}
for alg, v in res.items():
    assert v == [expect[alg], expect[alg], "FULL_OBJECT", expect[alg]], (alg, v)

up = s3.create_multipart_upload(Bucket="sums", Key="full", ChecksumAlgorithm="CRC32", ChecksumType="FULL_OBJECT")
assert up.get("ChecksumType") == "FULL_OBJECT", up
p1, p2 = os.urandom(5 << 20), os.urandom(1000)
parts = []
for n, p in enumerate([p1, p2], 1):
    r = s3.upload_part(Bucket="sums", Key="full", UploadId=up["UploadId"], PartNumber=n, Body=p, ChecksumAlgorithm="CRC32")
    parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
done = s3.complete_multipart_upload(Bucket="sums", Key="full", UploadId=up["UploadId"], MultipartUpload={"Parts": parts},
    ChecksumCRC32=b64(zlib.crc32(p1 + p2).to_bytes(4, "big")), ChecksumType="FULL_OBJECT")
assert done["ChecksumCRC32"] == b64(zlib.crc32(p1 + p2).to_bytes(4, "big")) and done["ChecksumType"] == "FULL_OBJECT", done
got = s3.get_object(Bucket="sums", Key="full", ChecksumMode="ENABLED")
assert got["Body"].read() == p1 + p2 and got["ChecksumType"] == "FULL_OBJECT"
attrs = s3.get_object_attributes(Bucket="sums", Key="full", ObjectAttributes=["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"], MaxParts=1)
assert attrs["ObjectSize"] == len(p1) + len(p2) and attrs["StorageClass"] == "STANDARD", attrs
assert attrs["Checksum"]["ChecksumCRC32"] == done["ChecksumCRC32"], attrs
op = attrs["ObjectParts"]
assert op["TotalPartsCount"] == 2 and op["IsTruncated"] and len(op["Parts"]) == 1 and op["Parts"][0]["Size"] == len(p1), op
assert op["Parts"][0]["ChecksumCRC32"] == parts[0]["ChecksumCRC32"], op

cp = s3.copy_object(Bucket="sums", Key="copy", CopySource={"Bucket": "sums", "Key": "full"}, ChecksumAlgorithm="SHA1")
assert cp["CopyObjectResult"]["ChecksumSHA1"] == b64(hashlib.sha1(p1 + p2).digest()), cp

codes = []
for call in [
    lambda: s3.put_object(Bucket="sums", Key="bad", Body=body, ChecksumSHA256=b64(hashlib.sha256(b"other").digest())),
    lambda: s3.create_multipart_upload(Bucket="sums", Key="bad", ChecksumAlgorithm="SHA1", ChecksumType="FULL_OBJECT"),
]:
    try:
        call()
        codes.append("accepted")
    except botocore.exceptions.ClientError as e:
        codes.append(e.response["Error"]["Code"])
assert codes == ["BadDigest", "InvalidRequest"], codes
try:
    s3.head_object(Bucket="sums", Key="bad")
    raise AssertionError("a refused object was stored")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "404"
print("ok")
`)
	if out != "ok" {
		t.Errorf("boto3 script printed %q", out)
	}
	s.stop(t)
}

// checksumClient is a minio-go client of s that sends trailers, with the
// bucket "sums" made.
func checksumClient(t *testing.T, s *server) *minio.Client {
	t.Helper()
	c, err := minio.New(s.Host, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Region: region, TrailingHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(t.Context(), "sums", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}
