package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// boto3 runs Python scripts that use boto3 against a server.
type boto3 struct {
	t   *testing.T
	dir string
	env []string
}

// boto3Client returns a runner for boto3 scripts pointed at s; it skips
// (or fails with XFS3_REQUIRE_ORACLES=1) when python3 or boto3 is missing.
func boto3Client(t *testing.T, s *server) *boto3 {
	t.Helper()
	oracle.Require(t, "python3")
	if out, err := exec.Command("python3", "-c", "import boto3").CombinedOutput(); err != nil {
		msg := fmt.Sprintf("boto3 is not importable: %v %s", err, bytes.TrimSpace(out))
		if os.Getenv(oracle.RequireEnv) == "1" {
			t.Fatalf("%s (%s=1 makes this fatal)", msg, oracle.RequireEnv)
		}
		t.Skip(msg)
	}
	home := t.TempDir()
	return &boto3{t: t, dir: home, env: []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XFS3_ENDPOINT=" + s.URL,
		"AWS_ACCESS_KEY_ID=" + accessKey, "AWS_SECRET_ACCESS_KEY=" + secretKey, "AWS_DEFAULT_REGION=" + region,
		"AWS_CONFIG_FILE=" + filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "credentials"),
	}}
}

// boto3Prelude makes s3 (client) and s3r (resource) for the server,
// path-style.
const boto3Prelude = `import os, sys, json, boto3
from botocore.config import Config
from botocore.exceptions import ClientError
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
s3 = boto3.client("s3", endpoint_url=os.environ["XFS3_ENDPOINT"], config=cfg)
s3r = boto3.resource("s3", endpoint_url=os.environ["XFS3_ENDPOINT"], config=cfg)
def code(fn, **kw):
    try:
        fn(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    return None, 200
`

// run runs script after the prelude with args as sys.argv[1:] and returns
// its output; a failing script fails the test.
func (b *boto3) run(script string, args ...string) string {
	b.t.Helper()
	path := filepath.Join(b.dir, "script.py")
	if err := os.WriteFile(path, []byte(boto3Prelude+script), 0o644); err != nil {
		b.t.Fatal(err)
	}
	cmd := exec.Command("python3", append([]string{path}, args...)...)
	cmd.Env = b.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("boto3 script: %v\n%s", err, out)
	}
	return string(out)
}

// fillBucket makes bucket with n small objects under a few prefixes, a
// folder marker, a multipart object and an upload left in progress: what
// a client must clear before DeleteBucket.
func fillBucket(t *testing.T, c *minio.Client, bucket string, n int) []string {
	t.Helper()
	ctx := context.Background()
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"folder/", "big/multipart"}
	for i := range n {
		keys = append(keys, fmt.Sprintf("p%d/q%d/k%04d", i%3, i%5, i))
	}
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 8 {
		wg.Go(func() {
			for k := range work {
				body := []byte(k)
				opts := minio.PutObjectOptions{}
				if k == "big/multipart" {
					body = bytes.Repeat([]byte("m"), 6<<20)
					opts.PartSize = 5 << 20
				} else if strings.HasSuffix(k, "/") {
					body = nil
				}
				if _, err := c.PutObject(ctx, bucket, k, bytes.NewReader(body), int64(len(body)), opts); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	core := minio.Core{Client: c}
	if _, err := core.NewMultipartUpload(ctx, bucket, "pending/upload", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestEmptyAndDeleteBuckets empties buckets the way client libraries do
// (list versions, delete them in batches, delete the bucket) with
// minio-go, the aws CLI and boto3; each bucket holds more objects than
// one listing page and an upload in progress, which DeleteBucket aborts.
func TestEmptyAndDeleteBuckets(t *testing.T) {
	s := startServer(t, "1G")
	c := s.client(t)
	ctx := context.Background()
	const n = 1050 // over one page of 1000

	t.Run("minio-go", func(t *testing.T) {
		keys := fillBucket(t, c, "mc-empty", n)
		versions := make(chan minio.ObjectInfo)
		listed := 0
		var listErr error
		go func() {
			defer close(versions)
			for o := range c.ListObjects(ctx, "mc-empty", minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
				if o.Err != nil {
					listErr = o.Err
					return
				}
				if o.VersionID != "null" || !o.IsLatest || o.IsDeleteMarker {
					listErr = fmt.Errorf("version %+v", o)
					return
				}
				listed++
				versions <- o
			}
		}()
		for e := range c.RemoveObjects(ctx, "mc-empty", versions, minio.RemoveObjectsOptions{}) {
			t.Errorf("RemoveObjects: %+v", e)
		}
		if listErr != nil || listed != len(keys) {
			t.Fatalf("listed %d versions of %d keys: %v", listed, len(keys), listErr)
		}
		if err := c.RemoveBucket(ctx, "mc-empty"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("aws CLI", func(t *testing.T) {
		aws, home := awsClient(t, s)
		fillBucket(t, c, "rb-force", n)
		aws.run("s3", "rb", "--force", "s3://rb-force")

		keys := fillBucket(t, c, "cli-versions", n)
		var listed struct {
			Versions []struct {
				Key, VersionId string
				IsLatest       bool
			}
		}
		// The CLI follows NextKeyMarker/NextVersionIdMarker by itself.
		decode(t, aws.run("s3api", "list-object-versions", "--bucket", "cli-versions", "--page-size", "300"), &listed)
		if len(listed.Versions) != len(keys) {
			t.Fatalf("list-object-versions: %d versions of %d keys", len(listed.Versions), len(keys))
		}
		type objectID struct{ Key, VersionId string }
		for start := 0; start < len(listed.Versions); start += 1000 {
			var batch []objectID
			for _, v := range listed.Versions[start:min(start+1000, len(listed.Versions))] {
				if v.VersionId != "null" || !v.IsLatest {
					t.Fatalf("version %+v", v)
				}
				batch = append(batch, objectID{v.Key, v.VersionId})
			}
			doc, _ := json.Marshal(map[string]any{"Objects": batch, "Quiet": true})
			file := filepath.Join(home, "delete.json")
			os.WriteFile(file, doc, 0o644)
			if out := aws.run("s3api", "delete-objects", "--bucket", "cli-versions", "--delete", "file://"+file); strings.Contains(out, "Errors") {
				t.Fatalf("delete-objects: %s", out)
			}
		}
		aws.run("s3api", "delete-bucket", "--bucket", "cli-versions")
		if out := aws.run("s3", "ls"); strings.Contains(out, "rb-force") || strings.Contains(out, "cli-versions") {
			t.Errorf("buckets left:\n%s", out)
		}
	})

	t.Run("boto3", func(t *testing.T) {
		py := boto3Client(t, s)
		keys := fillBucket(t, c, "boto-empty", n)
		out := py.run(`
b = s3r.Bucket(sys.argv[1])
vs = list(b.object_versions.all())
assert all(v.id == "null" and v.is_latest for v in vs), [(v.object_key, v.id) for v in vs if v.id != "null"]
print("versions", len(vs))
b.object_versions.delete()
b.delete()
assert code(s3.head_bucket, Bucket=sys.argv[1]) == ("404", 404)
`, "boto-empty")
		if !strings.Contains(out, fmt.Sprintf("versions %d\n", len(keys))) {
			t.Errorf("boto3 saw:\n%s", out)
		}
	})

	if buckets, err := c.ListBuckets(ctx); err != nil || len(buckets) != 0 {
		t.Errorf("buckets left: %v, %v", buckets, err)
	}
	s.stop(t)
}
