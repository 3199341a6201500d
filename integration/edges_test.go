package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// botoEdges checks, through boto3, the multipart and bucket edges S3
// clients rely on: version listing with every parameter, part reads,
// repeated completion, ListBuckets paging, re-creating an owned bucket
// and deleting a bucket that holds only uploads.
const botoEdges = `
b = sys.argv[1]
s3.create_bucket(Bucket=b)
assert code(s3.create_bucket, Bucket=b) == (None, 200), "re-create in us-east-1"
keys = sorted(["a b/%d" % i for i in range(7)] + ["a+b", "c/d/e", "c/x", "z%"])
for k in keys:
    s3.put_object(Bucket=b, Key=k, Body=k.encode())

# ListObjectVersions, paged by hand through both markers.
def walk(**kw):
    seen, pages, km, vm = [], 0, None, None
    while True:
        args = dict(kw, Bucket=b)
        if km is not None:
            args["KeyMarker"] = km
            if vm:
                args["VersionIdMarker"] = vm
        r = s3.list_object_versions(**args)
        pages += 1
        seen += [("K", v["Key"]) for v in r.get("Versions", [])]
        seen += [("P", p["Prefix"]) for p in r.get("CommonPrefixes", [])]
        for v in r.get("Versions", []):
            assert v["VersionId"] == "null" and v["IsLatest"], v
        assert not r.get("DeleteMarkers")
        if not r["IsTruncated"]:
            return sorted(seen, key=lambda e: e[1]), pages
        km, vm = r["NextKeyMarker"], r.get("NextVersionIdMarker")
got, pages = walk(MaxKeys=2)
assert got == [("K", k) for k in keys] and pages == 6, (got, pages)
got, pages = walk(MaxKeys=1, Delimiter="/")
assert got == [("P", "a b/"), ("K", "a+b"), ("P", "c/"), ("K", "z%")], got
got, _ = walk(Prefix="c/", Delimiter="/", EncodingType="url")
assert got == [("P", "c/d/"), ("K", "c/x")], got
pg = s3.get_paginator("list_object_versions")
n = sum(len(p.get("Versions", [])) for p in pg.paginate(Bucket=b, PaginationConfig={"PageSize": 3}))
assert n == len(keys), n
assert code(s3.list_object_versions, Bucket=b, VersionIdMarker="null") == ("InvalidArgument", 400)

# Multipart: parts 1, 2 and 4; part reads by number; a repeated completion.
p1, p2, p4 = os.urandom(5 << 20), os.urandom(5 << 20), b"tail"
up = s3.create_multipart_upload(Bucket=b, Key="mp")["UploadId"]
parts = []
for n, body in ((1, p1), (2, p2), (4, p4)):
    e = s3.upload_part(Bucket=b, Key="mp", UploadId=up, PartNumber=n, Body=body)["ETag"]
    parts.append({"PartNumber": n, "ETag": e})
first = s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up, MultipartUpload={"Parts": parts})
again = s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up, MultipartUpload={"Parts": parts})
assert first["ETag"] == again["ETag"] and again["ResponseMetadata"]["HTTPStatusCode"] == 200
assert code(s3.complete_multipart_upload, Bucket=b, Key="mp", UploadId=up, MultipartUpload={"Parts": parts[:2]}) == ("NoSuchUpload", 404)
for n, body, first_byte in ((1, p1, 0), (2, p2, 5 << 20), (4, p4, 10 << 20)):
    r = s3.get_object(Bucket=b, Key="mp", PartNumber=n)
    assert r["Body"].read() == body and r["PartsCount"] == 3, n
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert r["ContentRange"] == "bytes %d-%d/%d" % (first_byte, first_byte + len(body) - 1, (10 << 20) + 4), r["ContentRange"]
    h = s3.head_object(Bucket=b, Key="mp", PartNumber=n)
    assert h["ContentLength"] == len(body) and h["PartsCount"] == 3
assert code(s3.get_object, Bucket=b, Key="mp", PartNumber=3) == ("InvalidPartNumber", 416)
r = s3.get_object(Bucket=b, Key="z%", PartNumber=1)
assert r["Body"].read() == b"z%" and "PartsCount" not in r

# ListBuckets: paged by hand and by the paginator, with a prefix.
for i in range(5):
    s3.create_bucket(Bucket="%s-x%d" % (b, i))
names, token = [], None
while True:
    args = {"MaxBuckets": 2, "Prefix": b + "-x"}
    if token:
        args["ContinuationToken"] = token
    r = s3.list_buckets(**args)
    assert r["Prefix"] == b + "-x"
    names += [x["Name"] for x in r["Buckets"]]
    token = r.get("ContinuationToken")
    if not token:
        break
assert names == ["%s-x%d" % (b, i) for i in range(5)], names
pg = s3.get_paginator("list_buckets")
all_names = [x["Name"] for p in pg.paginate(PaginationConfig={"PageSize": 2}) for x in p["Buckets"]]
assert all_names == sorted([b] + names), all_names
assert code(s3.list_buckets, MaxBuckets=10001)[1] == 400

# A bucket holding only an upload in progress deletes, the upload with it.
s3.create_multipart_upload(Bucket=b + "-x0", Key="pending")
s3.delete_bucket(Bucket=b + "-x0")
assert code(s3.head_bucket, Bucket=b + "-x0") == ("404", 404)
# One with objects does not.
assert code(s3.delete_bucket, Bucket=b) == ("BucketNotEmpty", 409)
print("ok")
`

// TestClientEdges drives ListObjectVersions, part reads, repeated
// completion, ListBuckets paging and bucket re-creation and deletion
// through boto3 and the aws CLI.
func TestClientEdges(t *testing.T) {
	s := startServer(t, "1G")
	t.Run("boto3", func(t *testing.T) {
		py := boto3Client(t, s)
		if out := py.run(botoEdges, "boto-edges"); strings.TrimSpace(out) != "ok" {
			t.Errorf("boto3:\n%s", out)
		}
	})
	t.Run("aws CLI", func(t *testing.T) { awsEdges(t, s) })
	s.stop(t)
}

func awsEdges(t *testing.T, s *server) {
	aws, home := awsClient(t, s)
	aws.run("s3api", "create-bucket", "--bucket", "cli-edges")
	aws.run("s3api", "create-bucket", "--bucket", "cli-edges") // owned: 200 in us-east-1
	c := s.client(t)
	ctx := context.Background()
	for _, k := range []string{"x/1", "x/2", "y"} {
		if _, err := c.PutObject(ctx, "cli-edges", k, strings.NewReader(k), int64(len(k)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var versions struct {
		Versions       []struct{ Key, VersionId string }
		CommonPrefixes []struct{ Prefix string }
	}
	decode(t, aws.run("s3api", "list-object-versions", "--bucket", "cli-edges", "--delimiter", "/", "--page-size", "1"), &versions)
	if len(versions.Versions) != 1 || versions.Versions[0].Key != "y" || versions.Versions[0].VersionId != "null" ||
		len(versions.CommonPrefixes) != 1 || versions.CommonPrefixes[0].Prefix != "x/" {
		t.Errorf("list-object-versions: %+v", versions)
	}

	// A multipart object: part reads and a completion sent twice.
	uploadID, parts := awsTwoParts(t, aws, home, "cli-edges", "mp", "last")
	doc, _ := json.Marshal(map[string]any{"Parts": parts})
	var first, again struct{ ETag string }
	for _, into := range []*struct{ ETag string }{&first, &again} {
		decode(t, aws.run("s3api", "complete-multipart-upload", "--bucket", "cli-edges", "--key", "mp",
			"--upload-id", uploadID, "--multipart-upload", string(doc)), into)
	}
	if first.ETag == "" || again.ETag != first.ETag {
		t.Errorf("completions: %q then %q", first.ETag, again.ETag)
	}
	var got struct {
		ContentLength, PartsCount int
		ContentRange              string
	}
	out := filepath.Join(home, "part2.out")
	decode(t, aws.run("s3api", "get-object", "--bucket", "cli-edges", "--key", "mp", "--part-number", "2", out), &got)
	if data, _ := os.ReadFile(out); string(data) != "last" || got.PartsCount != 2 || got.ContentRange != fmt.Sprintf("bytes %d-%d/%d", 5<<20, 5<<20+3, 5<<20+4) {
		t.Errorf("get-object --part-number 2: %+v %q", got, data)
	}
	if o, err := aws.try("s3api", "head-object", "--bucket", "cli-edges", "--key", "mp", "--part-number", "3"); err == nil || !strings.Contains(o, "416") {
		t.Errorf("head-object of a part the object lacks: %v %s", err, o)
	}

	// ListBuckets, paged by the CLI; a bucket with only an upload deletes.
	aws.run("s3api", "create-bucket", "--bucket", "cli-edges-2")
	aws.run("s3api", "create-multipart-upload", "--bucket", "cli-edges-2", "--key", "pending")
	var buckets struct{ Buckets []struct{ Name string } }
	decode(t, aws.run("s3api", "list-buckets", "--page-size", "1", "--prefix", "cli-edges"), &buckets)
	var names []string
	for _, b := range buckets.Buckets {
		names = append(names, b.Name)
	}
	if strings.Join(names, ",") != "cli-edges,cli-edges-2" {
		t.Errorf("list-buckets: %v", names)
	}
	aws.run("s3api", "delete-bucket", "--bucket", "cli-edges-2")
	if o, err := aws.try("s3api", "delete-bucket", "--bucket", "cli-edges"); err == nil || !strings.Contains(o, "BucketNotEmpty") {
		t.Errorf("delete-bucket with objects: %v %s", err, o)
	}
	if !bytes.Contains([]byte(aws.run("s3", "ls")), []byte("cli-edges\n")) {
		t.Error("cli-edges is gone")
	}
}
