package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// requireBoto3 returns the python3 that imports boto3 (boto3Python) and
// skips, or fails under XFS3_REQUIRE_ORACLES=1, when it cannot also
// import requests.
func requireBoto3(t *testing.T) string {
	t.Helper()
	py := boto3Python(t)
	if err := exec.Command(py, "-c", "import requests").Run(); err != nil {
		msg := "requests not importable by " + py + " (Debian package python3-requests): " + err.Error()
		if os.Getenv(oracle.RequireEnv) == "1" {
			t.Fatalf("%s (%s=1 makes this fatal)", msg, oracle.RequireEnv)
		}
		t.Skip(msg)
	}
	return py
}

// TestConformance2Boto3: browser form uploads from generate_presigned_post
// posted with requests and with urllib, conditional writes, bucket
// tagging, storage classes, canned ACLs and an expired presigned URL, all
// through boto3 against the real binary.
func TestConformance2Boto3(t *testing.T) {
	py := requireBoto3(t)
	s := startServer(t, "1G")
	cmd := exec.Command(py, "testdata/conformance2.py", s.URL, accessKey, secretKey, region)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("boto3 script: %v\n%s", err, stderr.String())
	}
	var out struct {
		PostStatus         int               `json:"post_status"`
		PostBody           string            `json:"post_body"`
		PostMeta           map[string]string `json:"post_meta"`
		PostType           string            `json:"post_type"`
		PostTooLarge       []any             `json:"post_too_large"`
		PostExtraField     []any             `json:"post_extra_field"`
		Redirect           []any             `json:"redirect"`
		PutNewIfNoneMatch  string            `json:"put_if_none_match_new"`
		PutAgainIfNone     string            `json:"put_if_none_match_again"`
		PutIfMatchWrong    string            `json:"put_if_match_wrong"`
		PutIfMatchRight    string            `json:"put_if_match_right"`
		CondBody           string            `json:"cond_body"`
		TagsNone           string            `json:"tags_none"`
		Tags               []map[string]string
		TagsDeleted        string            `json:"tags_deleted"`
		ClassHead          string            `json:"class_head"`
		ClassList          map[string]string `json:"class_list"`
		ClassBad           string            `json:"class_bad"`
		ACLPrivate         string            `json:"acl_private"`
		ACLPublic          string            `json:"acl_public"`
		PutObjectACL       string            `json:"put_object_acl"`
		PutBucketACLPublic string            `json:"put_bucket_acl_public"`
		PresignedExpired   []any             `json:"presigned_expired"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if out.PostStatus != 201 || !strings.Contains(out.PostBody, "<Key>uploads/hello.txt</Key>") {
		t.Errorf("form upload: %d %s", out.PostStatus, out.PostBody)
	}
	if out.PostMeta["origin"] != "boto3" || out.PostType != "text/plain" {
		t.Errorf("form upload metadata %v, type %q", out.PostMeta, out.PostType)
	}
	wantStatusCode := func(name string, got []any, status int, code string) {
		t.Helper()
		if len(got) != 2 || got[0] != float64(status) || !strings.Contains(got[1].(string), "<Code>"+code+"</Code>") {
			t.Errorf("%s: %v, want %d %s", name, got, status, code)
		}
	}
	wantStatusCode("form over content-length-range", out.PostTooLarge, 400, "EntityTooLarge")
	wantStatusCode("form with an extra field", out.PostExtraField, 403, "AccessDenied")
	wantStatusCode("expired presigned URL", out.PresignedExpired, 403, "AccessDenied")
	if len(out.Redirect) != 2 || out.Redirect[0] != float64(303) || !strings.HasPrefix(out.Redirect[1].(string), "http://127.0.0.1:1/done?") ||
		!strings.Contains(out.Redirect[1].(string), "key=redirected") {
		t.Errorf("redirect: %v", out.Redirect)
	}
	for _, c := range []struct{ name, got, want string }{
		{"If-None-Match on a new key", out.PutNewIfNoneMatch, "ok"},
		{"If-None-Match on an existing key", out.PutAgainIfNone, "PreconditionFailed"},
		{"If-Match with another ETag", out.PutIfMatchWrong, "PreconditionFailed"},
		{"If-Match with the ETag", out.PutIfMatchRight, "ok"},
		{"object after conditional writes", out.CondBody, "4"},
		{"tags of an untagged bucket", out.TagsNone, "NoSuchTagSet"},
		{"tags after delete", out.TagsDeleted, "NoSuchTagSet"},
		{"HEAD storage class", out.ClassHead, "GLACIER_IR"},
		{"listed storage class", out.ClassList["cold"], "GLACIER_IR"},
		{"listed STANDARD", out.ClassList["cond"], "STANDARD"},
		{"invalid storage class", out.ClassBad, "InvalidStorageClass"},
		{"ACL private", out.ACLPrivate, "ok"},
		{"ACL public-read", out.ACLPublic, "AccessControlListNotSupported"},
		{"PutObjectAcl bucket-owner-full-control", out.PutObjectACL, "ok"},
		{"PutBucketAcl public-read", out.PutBucketACLPublic, "AccessControlListNotSupported"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if len(out.Tags) != 1 || out.Tags[0]["Key"] != "team" || out.Tags[0]["Value"] != "storage" {
		t.Errorf("bucket tags: %v", out.Tags)
	}
	s.stop(t)
}

// TestConformance2AwsCLI: bucket tagging, storage classes, canned ACLs and
// conditional writes through the aws CLI.
func TestConformance2AwsCLI(t *testing.T) {
	s := startServer(t, "1G")
	aws, home := awsClient(t, s)
	body := home + "/body"
	os.WriteFile(body, []byte("content"), 0o644)
	aws.run("s3api", "create-bucket", "--bucket", "cli2")

	if out, err := aws.try("s3api", "get-bucket-tagging", "--bucket", "cli2"); err == nil || !strings.Contains(out, "NoSuchTagSet") {
		t.Errorf("tags of an untagged bucket: %v %s", err, out)
	}
	aws.run("s3api", "put-bucket-tagging", "--bucket", "cli2", "--tagging", "TagSet=[{Key=env,Value=test},{Key=owner,Value=xfs3}]")
	var tagged struct{ TagSet []struct{ Key, Value string } }
	decode(t, aws.run("s3api", "get-bucket-tagging", "--bucket", "cli2"), &tagged)
	if len(tagged.TagSet) != 2 || tagged.TagSet[0].Key != "env" || tagged.TagSet[1].Value != "xfs3" {
		t.Errorf("bucket tags: %+v", tagged)
	}
	aws.run("s3api", "delete-bucket-tagging", "--bucket", "cli2")
	if out, err := aws.try("s3api", "get-bucket-tagging", "--bucket", "cli2"); err == nil || !strings.Contains(out, "NoSuchTagSet") {
		t.Errorf("tags after delete: %v %s", err, out)
	}

	aws.run("s3api", "put-object", "--bucket", "cli2", "--key", "ia", "--body", body, "--storage-class", "STANDARD_IA")
	var head struct{ StorageClass string }
	decode(t, aws.run("s3api", "head-object", "--bucket", "cli2", "--key", "ia"), &head)
	if head.StorageClass != "STANDARD_IA" {
		t.Errorf("head-object StorageClass %q", head.StorageClass)
	}
	aws.run("s3", "cp", body, "s3://cli2/deep", "--storage-class", "DEEP_ARCHIVE")
	var list struct {
		Contents []struct{ Key, StorageClass string }
	}
	decode(t, aws.run("s3api", "list-objects-v2", "--bucket", "cli2"), &list)
	classes := map[string]string{}
	for _, c := range list.Contents {
		classes[c.Key] = c.StorageClass
	}
	if classes["ia"] != "STANDARD_IA" || classes["deep"] != "DEEP_ARCHIVE" {
		t.Errorf("listed classes %v", classes)
	}
	if out, err := aws.try("s3api", "put-object", "--bucket", "cli2", "--key", "x", "--body", body, "--storage-class", "COLD"); err == nil || !strings.Contains(out, "InvalidStorageClass") {
		t.Errorf("invalid class: %v %s", err, out)
	}

	aws.run("s3api", "put-object", "--bucket", "cli2", "--key", "acl", "--body", body, "--acl", "bucket-owner-full-control")
	aws.run("s3api", "put-object-acl", "--bucket", "cli2", "--key", "acl", "--acl", "private")
	aws.run("s3api", "put-bucket-acl", "--bucket", "cli2", "--acl", "private")
	for _, args := range [][]string{
		{"s3api", "put-object", "--bucket", "cli2", "--key", "acl", "--body", body, "--acl", "public-read"},
		{"s3api", "put-object-acl", "--bucket", "cli2", "--key", "acl", "--acl", "authenticated-read"},
		{"s3api", "put-object-acl", "--bucket", "cli2", "--key", "acl", "--grant-read", "uri=http://acs.amazonaws.com/groups/global/AllUsers"},
		{"s3api", "copy-object", "--bucket", "cli2", "--key", "acl2", "--copy-source", "cli2/acl", "--acl", "public-read"},
		{"s3api", "create-multipart-upload", "--bucket", "cli2", "--key", "mp", "--acl", "public-read-write"},
	} {
		if out, err := aws.try(args...); err == nil || !strings.Contains(out, "AccessControlListNotSupported") {
			t.Errorf("%s: %v %s", strings.Join(args, " "), err, out)
		}
	}

	aws.run("s3api", "put-object", "--bucket", "cli2", "--key", "once", "--body", body, "--if-none-match", "*")
	if out, err := aws.try("s3api", "put-object", "--bucket", "cli2", "--key", "once", "--body", body, "--if-none-match", "*"); err == nil || !strings.Contains(out, "PreconditionFailed") {
		t.Errorf("second If-None-Match put: %v %s", err, out)
	}
	s.stop(t)
}

// TestConformance2Minio: minio-go's presigned POST policy posted as a
// browser would, bucket tagging and storage classes, against the binary.
func TestConformance2Minio(t *testing.T) {
	s := startServer(t, "1G")
	c := s.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.MakeBucket(ctx, "mc2", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	p := minio.NewPostPolicy()
	for _, err := range []error{p.SetBucket("mc2"), p.SetKey("form/obj"), p.SetExpires(time.Now().UTC().Add(time.Minute)),
		p.SetContentType("text/csv"), p.SetContentLengthRange(1, 1<<20), p.SetUserMetadata("via", "minio-go")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	u, form, err := c.PresignedPostPolicy(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range form {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", "obj.csv")
	fw.Write([]byte("a,b\n1,2\n"))
	mw.Close()
	resp, err := http.Post(u.String(), mw.FormDataContentType(), &b)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("form upload: %d", resp.StatusCode)
	}
	st, err := c.StatObject(ctx, "mc2", "form/obj", minio.StatObjectOptions{})
	if err != nil || st.ContentType != "text/csv" || st.UserMetadata["Via"] != "minio-go" || st.Size != 8 {
		t.Fatalf("form object %+v %v", st, err)
	}

	set, _ := tags.NewTags(map[string]string{"project": "xfs3"}, false)
	if err := c.SetBucketTagging(ctx, "mc2", set); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketTagging(ctx, "mc2")
	if err != nil || got.ToMap()["project"] != "xfs3" {
		t.Fatalf("bucket tags %v %v", got, err)
	}
	if err := c.RemoveBucketTagging(ctx, "mc2"); err != nil {
		t.Fatal(err)
	}

	if _, err := c.PutObject(ctx, "mc2", "cold", strings.NewReader("c"), 1, minio.PutObjectOptions{StorageClass: "GLACIER"}); err != nil {
		t.Fatal(err)
	}
	st, err = c.StatObject(ctx, "mc2", "cold", minio.StatObjectOptions{})
	// minio-go leaves ObjectInfo.StorageClass to listings; Stat keeps the header.
	if err != nil || st.Metadata.Get("X-Amz-Storage-Class") != "GLACIER" {
		t.Fatalf("stat of a GLACIER object: %v %v", st.Metadata, err)
	}
	for obj := range c.ListObjects(ctx, "mc2", minio.ListObjectsOptions{Recursive: true}) {
		want := "STANDARD"
		if obj.Key == "cold" {
			want = "GLACIER"
		}
		if obj.Err != nil || obj.StorageClass != want {
			t.Errorf("listed %s as %q (%v)", obj.Key, obj.StorageClass, obj.Err)
		}
	}
	s.stop(t)
}

// TestFormUploadFlatMemory posts a 512 MiB file in a browser form (a
// minio-go presigned POST policy) to the binary: the bytes arrive whole
// and the server's peak memory stays far below the file's size, so the
// file part streams to the volume.
func TestFormUploadFlatMemory(t *testing.T) {
	const size = 512 << 20
	s := startServer(t, "2G")
	c := s.client(t)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "bigform", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	p := minio.NewPostPolicy()
	for _, err := range []error{p.SetBucket("bigform"), p.SetKey("one.bin"), p.SetExpires(time.Now().UTC().Add(time.Hour)),
		p.SetContentLengthRange(size, size)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	u, form, err := c.PresignedPostPolicy(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for k, v := range form {
			mw.WriteField(k, v)
		}
		fw, err := mw.CreateFormFile("file", "one.bin")
		if err == nil {
			_, err = io.Copy(fw, &patternReader{size: size})
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, err := http.Post(u.String(), mw.FormDataContentType(), pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("form upload: %d", resp.StatusCode)
	}
	want := sha256.New()
	io.Copy(want, &patternReader{size: size})
	o, err := c.GetObject(ctx, "bigform", "one.bin", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	n, err := io.Copy(got, o)
	o.Close()
	if err != nil || n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatalf("GET returned %d bytes (%v), or other bytes than were posted", n, err)
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("server peak RSS %d MiB for a %d MiB form upload", peak>>20, size>>20)
	if peak > 256<<20 {
		t.Errorf("server peak RSS %d MiB: the form's file is not streamed", peak>>20)
	}
	s.stop(t)
}
