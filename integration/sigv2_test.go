package integration

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestSigV2Boto3: boto3 with signature version "s3" (V2) against the real
// binary: header-signed bucket and object requests, presigned URLs of
// bucket-level requests fetched with urllib (list_objects_v2, as boto3
// presigns it by default for such clients), a presigned POST form, and
// the regions boto3 reads back.
func TestSigV2Boto3(t *testing.T) {
	s := startServer(t, "1G")
	out := runBoto3(t, s, `
import urllib.request, urllib.error, urllib3
v2 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
    aws_access_key_id="`+accessKey+`", aws_secret_access_key="`+secretKey+`",
    config=botocore.config.Config(signature_version="s3", s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
def fetch(url, method="GET"):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method)) as r:
            return [r.status, r.read().decode()]
    except urllib.error.HTTPError as e:
        body = e.read().decode()
        return [e.code, body[body.find("<Code>")+6:body.find("</Code>")]]
got = {}
v2.create_bucket(Bucket="sigv2")
v2.put_object(Bucket="sigv2", Key="dir/a b.txt", Body=b"hello", Metadata={"spaced": "a  b"})
got["head_bucket"] = v2.head_bucket(Bucket="sigv2")["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"]
got["list"] = [o["Key"] for o in v2.list_objects_v2(Bucket="sigv2", Prefix="dir/")["Contents"]]
got["meta"] = v2.head_object(Bucket="sigv2", Key="dir/a b.txt")["Metadata"]
status, body = fetch(v2.generate_presigned_url("list_objects_v2", Params={"Bucket": "sigv2", "Prefix": "dir/"}))
got["presigned_list"] = [status, "<Key>dir/a%20b.txt</Key>" in body]
# boto3's own default (no signature version) presigns with V2 too.
default_url = s3.generate_presigned_url("list_objects_v2", Params={"Bucket": "sigv2", "Prefix": "dir/"})
got["default_presigned_list"] = ["AWSAccessKeyId=" in default_url, fetch(default_url)[0]]
got["presigned_location"] = fetch(v2.generate_presigned_url("get_bucket_location", Params={"Bucket": "sigv2"}))[0]
got["presigned_get"] = fetch(v2.generate_presigned_url("get_object", Params={"Bucket": "sigv2", "Key": "dir/a b.txt"}))
got["presigned_expired"] = fetch(v2.generate_presigned_url("list_objects_v2", Params={"Bucket": "sigv2"}, ExpiresIn=-10))
got["presigned_delete"] = fetch(v2.generate_presigned_url("delete_object", Params={"Bucket": "sigv2", "Key": "dir/a b.txt"}), "DELETE")[0]
post = v2.generate_presigned_post("sigv2", "form/${filename}", Fields={"acl": "private"},
    Conditions=[{"acl": "private"}, ["starts-with", "$key", "form/"], ["content-length-range", 1, 100]])
got["post_fields"] = sorted(post["fields"])
fields = dict(post["fields"])
fields["file"] = ("f.txt", b"posted", "text/plain")
r = urllib3.PoolManager().request("POST", post["url"], fields=fields)
got["post"] = r.status
got["posted"] = v2.get_object(Bucket="sigv2", Key="form/f.txt")["Body"].read().decode()
s3.create_bucket(Bucket="dublin", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
got["location"] = s3.get_bucket_location(Bucket="dublin")["LocationConstraint"]
got["plain_location"] = s3.get_bucket_location(Bucket="sigv2")["LocationConstraint"]
got["dublin_head"] = v2.head_bucket(Bucket="dublin")["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"]
got["regions"] = {b["Name"]: b.get("BucketRegion") for b in s3.list_buckets()["Buckets"]}
print(json.dumps(got, sort_keys=True))
`)
	var got struct {
		HeadBucket        string `json:"head_bucket"`
		List              []string
		Meta              map[string]string
		PresignedList     []any  `json:"presigned_list"`
		DefaultPresigned  []any  `json:"default_presigned_list"`
		PresignedLocation int    `json:"presigned_location"`
		PresignedGet      []any  `json:"presigned_get"`
		PresignedExpired  []any  `json:"presigned_expired"`
		PresignedDelete   int    `json:"presigned_delete"`
		PostFields        []any  `json:"post_fields"`
		Post              int    `json:"post"`
		Posted            string `json:"posted"`
		Location          string
		PlainLocation     any    `json:"plain_location"`
		DublinHead        string `json:"dublin_head"`
		Regions           map[string]string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: boto3 saw %s", what, out)
		}
	}
	check("head_bucket region", got.HeadBucket == region)
	check("V2 list", len(got.List) == 1 && got.List[0] == "dir/a b.txt")
	check("metadata with inner spaces", got.Meta["spaced"] == "a  b")
	check("presigned list_objects_v2", len(got.PresignedList) == 2 && got.PresignedList[0] == 200.0 && got.PresignedList[1] == true)
	check("boto3's default presigned list_objects_v2", len(got.DefaultPresigned) == 2 && got.DefaultPresigned[0] == true && got.DefaultPresigned[1] == 200.0)
	check("presigned location", got.PresignedLocation == 200)
	check("presigned get", len(got.PresignedGet) == 2 && got.PresignedGet[0] == 200.0 && got.PresignedGet[1] == "hello")
	check("expired presigned URL", len(got.PresignedExpired) == 2 && got.PresignedExpired[0] == 403.0 && got.PresignedExpired[1] == "AccessDenied")
	check("presigned delete", got.PresignedDelete == 204)
	check("a V2 form", len(got.PostFields) == 5 && got.Post == 204 && got.Posted == "posted")
	check("location", got.Location == "eu-west-1" && got.PlainLocation == nil && got.DublinHead == "eu-west-1")
	check("ListBuckets regions", got.Regions["dublin"] == "eu-west-1" && got.Regions["sigv2"] == region)
	s.stop(t)
}

// postV2Form posts a V2-signed form made by hand: the signature is the
// base64 HMAC-SHA1 of the base64 policy under the secret key.
func postV2Form(t *testing.T, s *server, bucket string, policyDoc, ak, secret string, fields [][2]string, file []byte) (int, []byte) {
	t.Helper()
	policy := base64.StdEncoding.EncodeToString([]byte(policyDoc))
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(policy))
	sig := base64.StdEncoding.EncodeToString(m.Sum(nil))
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	all := [][2]string{{"AWSAccessKeyId", ak}, {"policy", policy}, {"signature", sig}}
	for _, f := range fields { // a field named again replaces the first
		if i := slices.IndexFunc(all, func(a [2]string) bool { return a[0] == f[0] }); i >= 0 {
			all[i] = f
		} else {
			all = append(all, f)
		}
	}
	for _, f := range all {
		if f[1] != "-" { // "-" leaves the field out
			mw.WriteField(f[0], f[1])
		}
	}
	fw, _ := mw.CreateFormFile("file", "f.txt")
	fw.Write(file)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/"+bucket, &b)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	return resp.StatusCode, body.Bytes()
}

// TestSigV2FormRaw: a V2 form made with raw HTTP stores its file; each
// refusal answers S3's status and code, and stores nothing.
func TestSigV2FormRaw(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := startServer(t, "1G")
	c := s.client(t)
	if err := c.MakeBucket(ctx, "forms", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := func(exp time.Time) string {
		return `{"expiration": "` + exp.UTC().Format("2006-01-02T15:04:05Z") + `", "conditions": [{"bucket": "forms"}, ["starts-with", "$key", "foo"], {"acl": "private"}, ["starts-with", "$Content-Type", "text/plain"], ["content-length-range", 0, 1024]]}`
	}
	hour := time.Now().Add(time.Hour)
	fields := [][2]string{{"key", "foo.txt"}, {"acl", "private"}, {"Content-Type", "text/plain"}}
	for _, r := range []struct {
		name   string
		doc    string
		ak     string
		secret string
		extra  [][2]string
		status int
		code   string
	}{
		{"wrong secret", policy(hour), accessKey, "not-the-secret", nil, 403, "SignatureDoesNotMatch"},
		{"unknown key", policy(hour), "NOBODY", secretKey, nil, 403, "InvalidAccessKeyId"},
		{"expired", policy(time.Now().Add(-time.Minute)), accessKey, secretKey, nil, 403, "AccessDenied"},
		{"extra field", policy(hour), accessKey, secretKey, [][2]string{{"x-amz-meta-x", "y"}}, 403, "AccessDenied"},
		{"case of conditions", `{"expiration": "` + hour.UTC().Format("2006-01-02T15:04:05Z") + `", "CONDITIONS": []}`, accessKey, secretKey, nil, 400, "InvalidPolicyDocument"},
	} {
		code, body := postV2Form(t, s, "forms", r.doc, r.ak, r.secret, append(fields, r.extra...), []byte("bar"))
		if code != r.status || s3Code(body) != r.code {
			t.Errorf("%s: %d %s, want %d %s", r.name, code, body, r.status, r.code)
		}
	}
	// No signature field at all: 400 InvalidArgument.
	code, body := postV2Form(t, s, "forms", policy(hour), accessKey, secretKey, append(fields, [2]string{"signature", "-"}), []byte("bar"))
	if code != 400 || s3Code(body) != "InvalidArgument" {
		t.Errorf("no signature: %d %s", code, body)
	}
	if _, err := c.StatObject(ctx, "forms", "foo.txt", minio.StatObjectOptions{}); err == nil {
		t.Fatal("a refused form stored foo.txt")
	}
	code, body = postV2Form(t, s, "forms", policy(hour), accessKey, secretKey, fields, []byte("bar"))
	if code != http.StatusNoContent {
		t.Fatalf("V2 form: %d %s", code, body)
	}
	if got := mustGet(t, ctx, c, "forms", "foo.txt", minio.GetObjectOptions{}); string(got) != "bar" {
		t.Fatalf("stored %q", got)
	}
	s.stop(t)
}
