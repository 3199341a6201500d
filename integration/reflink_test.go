package integration

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// The store makes a copy by sharing its source's blocks when the copy is
// more than 128 KiB and starts on a block boundary of the source
// (store/clone.go). These tests drive it through the real binary with the
// clients people copy with, and check the sharing where it shows: the
// saved blocks of the info document and of `xfs3 vol df` (both read the
// refcount btrees), the kernel's FIEMAP, and every copy's bytes once its
// source is gone.

// Thresholds of the store's copies (store/clone.go).
const (
	cloneBlock = 4096        // the volumes' block size: a clone's source must start on one
	cloneMin   = 128<<10 + 1 // smaller copies copy bytes
)

// cloneModel counts, for every source object, how many copies map each of
// its blocks, from the copies the test made and the store's rules: only
// copies of at least cloneMin bytes starting on a block boundary share;
// they share the whole blocks of their range, and the source's last
// partial block only when the range ends at the source's end.
type cloneModel map[string]map[int64]int // source → block → copies mapping it

func (m cloneModel) copied(source string, sourceSize, off, n int64) {
	if off%cloneBlock != 0 || n < cloneMin {
		return
	}
	end := (off + n) / cloneBlock
	if off+n == sourceSize && sourceSize%cloneBlock != 0 {
		end++
	}
	if m[source] == nil {
		m[source] = map[int64]int{}
	}
	for b := off / cloneBlock; b < end; b++ {
		m[source][b]++
	}
}

// saved is the blocks the refcount btrees must count as saved (the
// mappings beyond the first of every block): with the sources still there
// every copy's mapping is one beyond; once they are gone, the first copy
// of a block takes the source's place.
func (m cloneModel) saved(sourcesGone bool) uint64 {
	var n uint64
	for _, blocks := range m {
		for _, copies := range blocks {
			if sourcesGone {
				copies--
			}
			n += uint64(max(copies, 0))
		}
	}
	return n
}

// volumeSharing is the volume's shared and saved blocks and used bytes,
// as the running server's info document reports them.
func (s *server) volumeSharing(t *testing.T) (shared, saved, used uint64) {
	t.Helper()
	code, raw := s.do(t, "GET", "/minio/admin/v3/xfs3/info", nil, nil, "")
	var in struct {
		Volume struct {
			BlockSize   uint64 `json:"block_size"`
			UsedBytes   uint64 `json:"used_bytes"`
			SharedBytes uint64 `json:"shared_bytes"`
			SavedBytes  uint64 `json:"saved_bytes"`
		} `json:"volume"`
	}
	if code != 200 || json.Unmarshal(raw, &in) != nil || in.Volume.BlockSize == 0 {
		t.Fatalf("GET info: %d %s", code, raw)
	}
	v := in.Volume
	return v.SharedBytes / v.BlockSize, v.SavedBytes / v.BlockSize, v.UsedBytes
}

// dfShared runs `xfs3 vol df` on a stopped server's volume and answers
// the blocks its "shared:" line reports mapped more than once and saved.
func dfShared(t *testing.T, img string) (shared, saved uint64) {
	t.Helper()
	out := string(runCLI(t, "vol", "df", img))
	for _, line := range strings.Split(out, "\n") {
		if _, err := fmt.Sscanf(line, "shared: %d blocks mapped by more than one file; sharing saves %d", &shared, &saved); err == nil {
			return shared, saved
		}
	}
	t.Fatalf("xfs3 vol df reports no shared blocks (a volume without reflink?):\n%s", out)
	return 0, 0
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// randomBytes answers n bytes that no two objects share by chance.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// readSHA256 reads an object whole through minio-go and answers the
// sha256 of its bytes.
func readSHA256(t *testing.T, ctx context.Context, c *minio.Client, bucket, key string) (string, int64) {
	t.Helper()
	o, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer o.Close()
	h := sha256.New()
	n, err := io.Copy(h, o)
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// TestReflinkCopies: copies made by the aws CLI (s3 cp, s3api
// copy-object), boto3 (copy_object with either metadata directive, onto
// itself, from a version; upload_part_copy of aligned and unaligned
// ranges and of a whole object) and minio-go (CopyObject, ComposeObject)
// share their sources' blocks exactly as the store's rules say: the
// saved blocks the info document reports are the ones the copies made
// should save, before and after the sources are deleted, and `xfs3 vol
// df` agrees once the server is stopped. Every copy then still reads the
// bytes that were uploaded, through the API and on a read-only kernel
// mount, where FIEMAP flags the surviving copies' extents shared;
// xfs_repair -n is clean and each bucket is charged for its copies in
// full.
func TestReflinkCopies(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	boto3Python(t)
	s := startServer(t, "1G")
	aws, _ := awsClient(t, s)
	c := s.client(t)
	ctx := context.Background()
	for _, b := range []string{"src", "ver", "dst1", "dst2"} {
		if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.EnableVersioning(ctx, "ver"); err != nil {
		t.Fatal(err)
	}

	// Sources. a and big are put whole, so that their ETags are MD5s a
	// whole copy can take over; parts is completed from three parts, so a
	// copy must compute its MD5; small is below the clone threshold.
	a := randomBytes(3<<20 + 5)
	big := randomBytes(64 << 20)
	parts := randomBytes(12 << 20)
	small := randomBytes(100 << 10)
	docV1, docV2 := randomBytes(2<<20+17), randomBytes(1<<20)
	whole := minio.PutObjectOptions{DisableMultipart: true}
	mustPut(t, ctx, c, "src", "a", a, minio.PutObjectOptions{DisableMultipart: true, UserMetadata: map[string]string{"origin": "minio"}, ContentType: "application/x-a"})
	mustPut(t, ctx, c, "src", "big", big, whole)
	if info := mustPut(t, ctx, c, "src", "parts", parts, minio.PutObjectOptions{PartSize: 5 << 20}); !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("src/parts was not completed from three parts: ETag %s", info.ETag)
	}
	mustPut(t, ctx, c, "src", "small", small, whole)
	v1 := mustPut(t, ctx, c, "ver", "doc", docV1, whole).VersionID
	mustPut(t, ctx, c, "ver", "doc", docV2, whole)
	wantVersionID(t, "ver/doc v1", v1)

	model := cloneModel{}
	want := map[string][]byte{} // bucket/key of every copy → its bytes
	copied := func(dst string, body []byte, source string, sourceSize, off int64) {
		want[dst] = body
		model.copied(source, sourceSize, off, int64(len(body)))
	}

	// aws CLI. s3 cp copies a: one CopyObject. big is above the CLI's
	// multipart threshold (8 MiB): it is copied by UploadPartCopy of 8 MiB
	// ranges, which start on block boundaries, into an upload the CLI
	// makes without a checksum algorithm (aws-cli 1.45): the parts share
	// blocks. A CLI that asked for one would get its parts copied byte
	// for byte, and the object a checksum, which tells them apart.
	aws.run("s3", "cp", "--no-progress", "s3://src/a", "s3://dst1/a-cli")
	copied("dst1/a-cli", a, "src/a", int64(len(a)), 0)
	aws.run("s3", "cp", "--no-progress", "s3://src/big", "s3://dst1/big-cli")
	want["dst1/big-cli"] = big
	var attrs struct{ Checksum map[string]any }
	decode(t, aws.run("s3api", "get-object-attributes", "--bucket", "dst1", "--key", "big-cli", "--object-attributes", "Checksum"), &attrs)
	if len(attrs.Checksum) == 0 {
		for off := int64(0); off < int64(len(big)); off += 8 << 20 {
			model.copied("src/big", int64(len(big)), off, 8<<20)
		}
	} else {
		t.Logf("aws s3 cp made its upload with a checksum algorithm (%v): its parts copy bytes", attrs.Checksum)
	}
	var cliCopy struct{ CopyObjectResult struct{ ETag string } }
	decode(t, aws.run("s3api", "copy-object", "--bucket", "dst2", "--key", "parts-cli", "--copy-source", "src/parts"), &cliCopy)
	if got := strings.Trim(cliCopy.CopyObjectResult.ETag, `"`); got != md5Hex(parts) {
		t.Errorf("copy-object of a multipart source: ETag %s, want the MD5 of its bytes %s", got, md5Hex(parts))
	}
	copied("dst2/parts-cli", parts, "src/parts", int64(len(parts)), 0)

	// boto3.
	unaligned := [2]int64{10<<20 + 100, 16<<20 + 99} // first and last byte
	out := runBoto3(t, s, fmt.Sprintf(`
out = {}
r = s3.copy_object(Bucket="dst2", Key="a-copy", CopySource={"Bucket": "src", "Key": "a"}, MetadataDirective="COPY")
h = s3.head_object(Bucket="dst2", Key="a-copy")
out["copy"] = [r["CopyObjectResult"]["ETag"], h["ContentType"], h["Metadata"]]
r = s3.copy_object(Bucket="dst2", Key="a-replace", CopySource={"Bucket": "src", "Key": "a"},
    MetadataDirective="REPLACE", ContentType="text/plain", Metadata={"stage": "replaced"})
h = s3.head_object(Bucket="dst2", Key="a-replace")
out["replace"] = [r["CopyObjectResult"]["ETag"], h["ContentType"], h["Metadata"]]
r = s3.copy_object(Bucket="dst1", Key="a-cli", CopySource={"Bucket": "dst1", "Key": "a-cli"},
    MetadataDirective="REPLACE", Metadata={"stage": "self"})
h = s3.head_object(Bucket="dst1", Key="a-cli")
out["self"] = [r["CopyObjectResult"]["ETag"], h["ContentType"], h["Metadata"]]
r = s3.copy_object(Bucket="dst2", Key="doc-v1", CopySource={"Bucket": "ver", "Key": "doc", "VersionId": %q})
out["version"] = [r["CopyObjectResult"]["ETag"], r.get("CopySourceVersionId", "")]
u = s3.create_multipart_upload(Bucket="dst2", Key="assembled")
out["upload_algorithm"] = u.get("ChecksumAlgorithm", "")
parts = []
for n, (key, rng) in enumerate([("big", "bytes=0-%d"), ("big", "bytes=%d-%d"), ("a", "")], 1):
    kw = dict(Bucket="dst2", Key="assembled", UploadId=u["UploadId"], PartNumber=n, CopySource={"Bucket": "src", "Key": key})
    if rng:
        kw["CopySourceRange"] = rng
    p = s3.upload_part_copy(**kw)
    parts.append({"PartNumber": n, "ETag": p["CopyPartResult"]["ETag"]})
done = s3.complete_multipart_upload(Bucket="dst2", Key="assembled", UploadId=u["UploadId"], MultipartUpload={"Parts": parts})
out["parts"] = [p["ETag"] for p in parts]
out["assembled"] = done["ETag"]
print(json.dumps(out))
`, v1, 8<<20-1, unaligned[0], unaligned[1]))
	var boto struct {
		Copy, Replace, Self []any
		Version             []string
		UploadAlgorithm     string `json:"upload_algorithm"`
		Parts               []string
		Assembled           string
	}
	decode(t, out, &boto)
	etag := func(v any) string { s, _ := v.(string); return strings.Trim(s, `"`) }
	meta := func(v any) string { return fmt.Sprint(v) }
	if etag(boto.Copy[0]) != md5Hex(a) || boto.Copy[1] != "application/x-a" || meta(boto.Copy[2]) != "map[origin:minio]" {
		t.Errorf("copy_object COPY: ETag, content type, metadata %v; want %s, the source's type and metadata", boto.Copy, md5Hex(a))
	}
	if etag(boto.Replace[0]) != md5Hex(a) || boto.Replace[1] != "text/plain" || meta(boto.Replace[2]) != "map[stage:replaced]" {
		t.Errorf("copy_object REPLACE: %v", boto.Replace)
	}
	if etag(boto.Self[0]) != md5Hex(a) || meta(boto.Self[2]) != "map[stage:self]" {
		t.Errorf("copy_object onto itself with REPLACE: %v", boto.Self)
	}
	if etag(boto.Version[0]) != md5Hex(docV1) || boto.Version[1] != v1 {
		t.Errorf("copy_object of version %s: ETag %s, source version %q; want %s", v1, etag(boto.Version[0]), boto.Version[1], md5Hex(docV1))
	}
	copied("dst2/a-copy", a, "src/a", int64(len(a)), 0)
	copied("dst2/a-replace", a, "src/a", int64(len(a)), 0)
	// a-cli copied onto itself maps the same blocks: its old file, and
	// that file's count on them, go.
	copied("dst2/doc-v1", docV1, "ver/doc@v1", int64(len(docV1)), 0)
	if boto.UploadAlgorithm != "" {
		t.Fatalf("boto3 made the upload with checksum algorithm %s: its copied parts are bytes, not shared", boto.UploadAlgorithm)
	}
	partBodies := [][]byte{big[:8<<20], big[unaligned[0] : unaligned[1]+1], a}
	partOffsets := []int64{0, unaligned[0], 0}
	partSources := []string{"src/big", "src/big", "src/a"}
	var assembled []byte
	var md5s []byte
	for i, body := range partBodies {
		if got := etag(boto.Parts[i]); got != md5Hex(body) {
			t.Errorf("upload_part_copy part %d: ETag %s, want the MD5 of its bytes %s", i+1, got, md5Hex(body))
		}
		sum := md5.Sum(body)
		md5s = append(md5s, sum[:]...)
		assembled = append(assembled, body...)
		srcSize := int64(len(big))
		if partSources[i] == "src/a" {
			srcSize = int64(len(a))
		}
		model.copied(partSources[i], srcSize, partOffsets[i], int64(len(body)))
	}
	want["dst2/assembled"] = assembled
	if got, w := etag(boto.Assembled), md5Hex(md5s)+"-3"; got != w {
		t.Errorf("complete_multipart_upload: ETag %s, want %s", got, w)
	}

	// minio-go. mc is not installable here; `mc cp ALIAS/src/a
	// ALIAS/dst1/a-mc` is minio-go's CopyObject (ComposeObject above 5 GiB),
	// which is what mc is built on, so these calls replay it.
	for _, cp := range []struct {
		src  minio.CopySrcOptions
		dst  string
		body []byte
	}{
		{minio.CopySrcOptions{Bucket: "src", Object: "a"}, "a-mc", a},
		{minio.CopySrcOptions{Bucket: "src", Object: "parts"}, "parts-mc", parts},
		{minio.CopySrcOptions{Bucket: "ver", Object: "doc", VersionID: v1}, "doc-v1-mc", docV1},
		{minio.CopySrcOptions{Bucket: "src", Object: "small"}, "small-mc", small},
	} {
		info, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "dst1", Object: cp.dst}, cp.src)
		if err != nil {
			t.Fatalf("CopyObject to dst1/%s: %v", cp.dst, err)
		}
		if info.ETag != md5Hex(cp.body) {
			t.Errorf("CopyObject to dst1/%s: ETag %s, want %s", cp.dst, info.ETag, md5Hex(cp.body))
		}
		source := cp.src.Bucket + "/" + cp.src.Object
		if cp.src.VersionID != "" {
			source += "@v1"
		}
		copied("dst1/"+cp.dst, cp.body, source, int64(len(cp.body)), 0)
	}
	// ComposeObject: an aligned 6 MiB range of big, then all of a.
	composeRange := [2]int64{16 << 20, 22<<20 - 1}
	if _, err := c.ComposeObject(ctx, minio.CopyDestOptions{Bucket: "dst1", Object: "composed"},
		minio.CopySrcOptions{Bucket: "src", Object: "big", MatchRange: true, Start: composeRange[0], End: composeRange[1]},
		minio.CopySrcOptions{Bucket: "src", Object: "a"}); err != nil {
		t.Fatal(err)
	}
	model.copied("src/big", int64(len(big)), composeRange[0], composeRange[1]-composeRange[0]+1)
	model.copied("src/a", int64(len(a)), 0, int64(len(a)))
	want["dst1/composed"] = append(append([]byte{}, big[composeRange[0]:composeRange[1]+1]...), a...)

	// Each bucket is charged for every block its objects map, shared or
	// not, as the kernel charges reflinked files.
	for _, bucket := range []string{"dst1", "dst2"} {
		var logical uint64
		for k, body := range want {
			if strings.HasPrefix(k, bucket+"/") {
				logical += uint64(len(body))
			}
		}
		if q := s.quotaOf(t, bucket); q.Bytes < logical {
			t.Errorf("bucket %s is charged %d bytes for copies of %d bytes", bucket, q.Bytes, logical)
		}
	}

	// The sharing, with the sources still there.
	sharedBlocks, saved, used := s.volumeSharing(t)
	t.Logf("with the sources: %d blocks shared, %d saved; %d MiB used", sharedBlocks, saved, used>>20)
	if w := model.saved(false); saved != w {
		t.Errorf("the info document counts %d blocks saved by sharing, the copies made should save %d", saved, w)
	}

	// Delete the sources, every version of the versioned one included.
	for _, k := range []string{"a", "big", "parts", "small"} {
		if err := c.RemoveObject(ctx, "src", k, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for o := range c.ListObjects(ctx, "ver", minio.ListObjectsOptions{WithVersions: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if err := c.RemoveObject(ctx, "ver", o.Key, minio.RemoveObjectOptions{VersionID: o.VersionID}); err != nil {
			t.Fatal(err)
		}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		bucket, key, _ := strings.Cut(k, "/")
		if sum, n := readSHA256(t, ctx, c, bucket, key); sum != sha256Hex(want[k]) || n != int64(len(want[k])) {
			t.Errorf("%s after its source was deleted: %d bytes sha256 %s, want %d bytes %s", k, n, sum, len(want[k]), sha256Hex(want[k]))
		}
	}

	sharedBlocks, saved, used = s.volumeSharing(t)
	t.Logf("without the sources: %d blocks shared, %d saved; %d MiB used", sharedBlocks, saved, used>>20)
	if w := model.saved(true); saved != w {
		t.Errorf("without the sources the info document counts %d blocks saved, the copies should still save %d", saved, w)
	}
	s.stop(t)
	if dfShared, dfSaved := dfShared(t, s.Volume); dfShared != sharedBlocks || dfSaved != saved {
		t.Errorf("xfs3 vol df: %d blocks shared, %d saved; the server reported %d and %d", dfShared, dfSaved, sharedBlocks, saved)
	}

	oracle.Repair(t, s.Volume)
	mnt := oracle.Mount(t, s.Volume, true)
	snap, err := oracle.SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	onKernel := map[string]oracle.Entry{}
	for _, e := range snap {
		onKernel[e.Path] = e
	}
	for _, k := range keys {
		e, ok := onKernel[k]
		if !ok || e.Type != oracle.TypeFile || e.SHA256 != sha256Hex(want[k]) {
			t.Errorf("the kernel shows %s as %+v, want a file of %d bytes sha256 %s", k, e, len(want[k]), sha256Hex(want[k]))
		}
	}
	// FIEMAP: copies whose blocks another copy still maps are shared for
	// the kernel too; the small copy was copied byte for byte.
	if oracle.Optional(t, "FIEMAP's shared flags are not checked", "filefrag") {
		for k, wantShared := range map[string]bool{"dst1/a-mc": true, "dst1/parts-mc": true, "dst1/doc-v1-mc": true, "dst2/assembled": true, "dst1/small-mc": false} {
			out, err := exec.Command("filefrag", "-v", filepath.Join(mnt, k)).CombinedOutput()
			if err != nil {
				t.Fatalf("filefrag -v %s: %v\n%s", k, err, out)
			}
			if got := strings.Contains(string(out), "shared"); got != wantShared {
				t.Errorf("filefrag -v %s: shared extents %v, want %v:\n%s", k, got, wantShared, out)
			}
		}
	}
}
