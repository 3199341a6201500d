package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// rawClient sends requests exactly as built: no redirects followed, no
// path cleaning, no decompression.
var rawClient = &http.Client{
	Transport:     &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// do sends a SigV4-signed request (region as given; "" as mc signs admin
// requests) to the real server with the path and query exactly as given.
func (s *server) do(t *testing.T, method, pathQuery string, body []byte, header http.Header, signRegion string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+pathQuery, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	req = signer.SignV4(*req, accessKey, secretKey, "", signRegion)
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// s3Code is the Code of an S3 XML error body ("" if it is none).
func s3Code(body []byte) string {
	var e struct{ Code string }
	xml.Unmarshal(body, &e)
	return e.Code
}

// TestSafetyThroughBinary drives the real binary on a real listener with
// raw signed HTTP: requests stay inside their bucket, every path reaches
// the S3 router, /minio/ belongs to the server, versions and object lock
// are never silently ignored.
func TestSafetyThroughBinary(t *testing.T) {
	s := startServer(t, "1G")
	put := func(path, body string) {
		t.Helper()
		if code, b := s.do(t, "PUT", path, []byte(body), nil, region); code != 200 {
			t.Fatalf("PUT %s: %d %s", path, code, b)
		}
	}
	put("/alpha", "")
	put("/beta", "")
	put("/alpha/a/1", "alpha 1")
	put("/alpha/top", "alpha top")
	put("/beta/private/secret.txt", "beta secret")
	if code, b := s.do(t, "POST", "/beta/private/up?uploads", nil, nil, region); code != 200 {
		t.Fatalf("create upload: %d %s", code, b)
	}

	t.Run("listings stay in their bucket", func(t *testing.T) {
		hostile := []string{"..", "../", "../x", "../beta/", "../.xfs3/", "/", "//", "./", "%2e%2e/", "a/../../",
			"\x00", "a/\x00", strings.Repeat("z", 2048), "\xff\xfe/", "../../../"}
		lists := map[string][]string{
			"":                           {"prefix", "marker", "delimiter"},
			"list-type=2&":               {"prefix", "start-after", "continuation-token", "delimiter"},
			"uploads&":                   {"prefix", "key-marker", "upload-id-marker", "delimiter"},
			"uploadId=nothere&":          {"part-number-marker"},
			"list-type=2&delimiter=%2F&": {"prefix", "start-after"},
		}
		for base, params := range lists {
			target := "/alpha"
			if strings.HasPrefix(base, "uploadId") {
				target = "/alpha/a/1"
			}
			for _, p := range params {
				for _, v := range hostile {
					q := "?" + base + p + "=" + url.QueryEscape(v)
					code, body := s.do(t, "GET", target+q, nil, nil, region)
					if code >= 500 || code >= 300 && code < 400 {
						t.Errorf("GET %s%s: %d %s", target, q, code, body)
					}
					if strings.Contains(string(body), "secret") || strings.Contains(string(body), "private") {
						t.Errorf("GET %s%s answered with another bucket's keys: %s", target, q, body)
					}
				}
			}
		}
		for _, v := range hostile {
			code, body := s.do(t, "GET", "/alpha/a/1?uploadId="+url.QueryEscape(v), nil, nil, region)
			if code != 404 || s3Code(body) != "NoSuchUpload" {
				t.Errorf("ListParts with upload ID %q: %d %s", v, code, body)
			}
		}
	})

	t.Run("paths that are not clean are keys of their bucket", func(t *testing.T) {
		for _, p := range []string{"/alpha/a//b", "/alpha/a/./b", "/alpha//lead", "/alpha/x/../y", "/alpha/../beta/private/secret.txt"} {
			// Never a redirect from a mux in front of the router, never
			// another bucket's object: the key as sent, in alpha.
			if code, body := s.do(t, "GET", p, nil, nil, region); code != 404 || s3Code(body) != "NoSuchKey" {
				t.Errorf("GET %s before PUT: %d %s", p, code, body)
			}
			put(p, "alpha "+p)
			if code, body := s.do(t, "GET", p, nil, nil, region); code != 200 || string(body) != "alpha "+p {
				t.Errorf("GET %s: %d %s", p, code, body)
			}
			if code, body := s.do(t, "DELETE", p, nil, nil, region); code != 204 {
				t.Errorf("DELETE %s: %d %s", p, code, body)
			}
		}
		if code, body := s.do(t, "GET", "/beta/private/secret.txt", nil, nil, region); code != 200 || string(body) != "beta secret" {
			t.Errorf("beta's object changed: %d %s", code, body)
		}
	})

	t.Run("minio endpoints and reserved name", func(t *testing.T) {
		for _, p := range []string{"/minio/health/live", "/minio/health/ready"} {
			resp, err := http.Get(s.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET %s: %s", p, resp.Status)
			}
		}
		if code, body := s.do(t, "PUT", "/minio", nil, nil, region); code != 404 || !strings.Contains(string(body), `"Code":"XMinioUnknownAPIRequest"`) {
			t.Errorf("CreateBucket minio: %d %s", code, body)
		}
		put("/healthz", "")
		put("/healthz/k", "v")
		if code, body := s.do(t, "GET", "/healthz?list-type=2", nil, nil, region); code != 200 || !strings.Contains(string(body), "<Key>k</Key>") {
			t.Errorf("bucket healthz: %d %s", code, body)
		}
		code, body := s.do(t, "GET", "/minio/admin/v3/heal/", nil, nil, "")
		var e struct{ Code, Message string }
		if err := json.Unmarshal(body, &e); err != nil || code != 501 || e.Code != "NotImplemented" {
			t.Errorf("an admin call xfs3 lacks, signed as mc signs: %d %s", code, body)
		}
	})

	t.Run("versions and object lock", func(t *testing.T) {
		// An ID this server could not have made is malformed; one of its
		// form that no version has is missing.
		v, missing := "3HL4kqtJlcpXroDTDmJ%2BrmSpXd3dIbrHY", "00000000000000000000000000"
		if code, body := s.do(t, "DELETE", "/alpha/top?versionId="+v, nil, nil, region); code != 400 || s3Code(body) != "InvalidArgument" {
			t.Errorf("DELETE with a malformed version ID: %d %s", code, body)
		}
		if code, body := s.do(t, "GET", "/alpha/top?versionId="+missing, nil, nil, region); code != 404 || s3Code(body) != "NoSuchVersion" {
			t.Errorf("GET with a version ID: %d %s", code, body)
		}
		if code, body := s.do(t, "GET", "/alpha/top?versionId=null", nil, nil, region); code != 200 || string(body) != "alpha top" {
			t.Errorf("GET versionId=null: %d %s", code, body)
		}
		code, body := s.do(t, "PUT", "/worm", nil, http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"maybe"}}, region)
		if code != 400 || s3Code(body) != "InvalidArgument" {
			t.Errorf("object-lock bucket with a malformed header: %d %s", code, body)
		}
		if code, _ := s.do(t, "HEAD", "/worm", nil, nil, region); code != 404 {
			t.Errorf("the refused object-lock bucket exists: HEAD %d", code)
		}
	})
	s.stop(t)
}

// TestSafetyAwsCLI: the same guarantees as the aws CLI sees them.
func TestSafetyAwsCLI(t *testing.T) {
	s := startServer(t, "1G")
	aws, home := awsClient(t, s)
	file := filepath.Join(home, "f")
	os.WriteFile(file, []byte("payload"), 0o644)
	aws.run("s3", "mb", "s3://alpha")
	aws.run("s3", "mb", "s3://beta")
	aws.run("s3", "mb", "s3://healthz")
	aws.run("s3", "cp", file, "s3://alpha/a/1")
	aws.run("s3", "cp", file, "s3://beta/private/secret.txt")
	aws.run("s3", "cp", file, "s3://healthz/k")
	for _, prefix := range []string{"../", "../beta/", "/", "../.xfs3/"} {
		out := aws.run("s3api", "list-objects-v2", "--bucket", "alpha", "--prefix", prefix)
		if strings.Contains(out, "secret") || strings.Contains(out, `"Key"`) {
			t.Errorf("list-objects-v2 --prefix %q:\n%s", prefix, out)
		}
		out = aws.run("s3api", "list-objects", "--bucket", "alpha", "--prefix", prefix)
		if strings.Contains(out, "secret") || strings.Contains(out, `"Key"`) {
			t.Errorf("list-objects --prefix %q:\n%s", prefix, out)
		}
	}
	if out := aws.run("s3", "ls", "s3://healthz/"); !strings.Contains(out, " k\n") {
		t.Errorf("s3 ls s3://healthz/:\n%s", out)
	}
	if out, err := aws.try("s3", "mb", "s3://minio"); err == nil {
		t.Errorf("mb s3://minio succeeded:\n%s", out)
	}
	if out, err := aws.try("s3api", "delete-object", "--bucket", "alpha", "--key", "a/1", "--version-id", "3HL4kqtJlcpXroDTDmJ"); err == nil || !strings.Contains(out, "InvalidArgument") {
		t.Errorf("delete-object --version-id: %v\n%s", err, out)
	}
	if out, err := aws.try("s3api", "head-object", "--bucket", "alpha", "--key", "a/1", "--version-id", "null"); err != nil {
		t.Errorf("head-object --version-id null: %v\n%s", err, out)
	}
	if out, err := aws.try("s3", "cp", file, "s3://alpha/enc", "--sse", "AES256"); err == nil || !strings.Contains(out, "NotImplemented") {
		t.Errorf("cp --sse AES256 was accepted, yet nothing is encrypted: %v\n%s", err, out)
	}
	s.stop(t)
}

// TestConditionsThroughBoto3: the requests whose conditions this server
// once dropped, as boto3 sends them to the real binary. A conditional
// delete (IfMatch; an ETag per key of delete_objects) is refused and
// deletes nothing; rename_object (S3 Express) is refused and leaves the
// object; a completion whose MpuObjectSize the parts do not make is
// refused with its upload kept, and completes with the right size; the
// storage class stored is what list_object_versions and
// get_object_attributes report.
func TestConditionsThroughBoto3(t *testing.T) {
	s := startServer(t, "1G")
	out := runBoto3(t, s, `
def code(call):
    try:
        call()
        return "OK"
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
s3.create_bucket(Bucket="cond")
s3.put_object(Bucket="cond", Key="k", Body=b"hello", StorageClass="GLACIER")
got = [code(lambda: s3.delete_object(Bucket="cond", Key="k", IfMatch='"not-its-etag"'))]
r = s3.delete_objects(Bucket="cond", Delete={"Objects": [{"Key": "k", "ETag": '"not-its-etag"'}]})
got.append([e["Code"] for e in r.get("Errors", [])] + [d["Key"] for d in r.get("Deleted", [])])
got.append(code(lambda: s3.rename_object(Bucket="cond", Key="renamed", RenameSource="cond/k")))
got.append(s3.get_object(Bucket="cond", Key="k")["Body"].read().decode())
got.append(s3.list_object_versions(Bucket="cond")["Versions"][0]["StorageClass"])
got.append(s3.get_object_attributes(Bucket="cond", Key="k", ObjectAttributes=["StorageClass"])["StorageClass"])
up = s3.create_multipart_upload(Bucket="cond", Key="mp")["UploadId"]
part = s3.upload_part(Bucket="cond", Key="mp", UploadId=up, PartNumber=1, Body=b"hello")
parts = {"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]}
got.append(code(lambda: s3.complete_multipart_upload(Bucket="cond", Key="mp", UploadId=up, MultipartUpload=parts, MpuObjectSize=6)))
got.append(len(s3.list_parts(Bucket="cond", Key="mp", UploadId=up)["Parts"]))
got.append(code(lambda: s3.complete_multipart_upload(Bucket="cond", Key="mp", UploadId=up, MultipartUpload=parts, MpuObjectSize=5)))
got.append(s3.head_object(Bucket="cond", Key="mp")["ContentLength"])
print(json.dumps(got))
`)
	want := `["NotImplemented", ["NotImplemented"], "NotImplemented", "hello", "GLACIER", "GLACIER", "InvalidRequest", 1, "OK", 5]`
	if out != want {
		t.Errorf("boto3 saw\n%s\nwant\n%s", out, want)
	}
	s.stop(t)
}
