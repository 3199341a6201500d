package s3api

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// awsCLI runs the aws CLI against the test server; without the CLI it
// skips, or fails under XFS3_REQUIRE_ORACLES=1.
func (ts *testServer) awsCLI(t *testing.T, args ...string) string {
	t.Helper()
	oracle.Require(t, "aws")
	path, err := exec.LookPath("aws")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte("[default]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, path, append([]string{"--endpoint-url", ts.url, "--region", testRegion}, args...)...)
	cmd.Env = append(os.Environ(),
		"AWS_ACCESS_KEY_ID="+testAccessKey, "AWS_SECRET_ACCESS_KEY="+testSecretKey,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=",
		"AWS_CONFIG_FILE="+filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "credentials"),
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestAWSCLI: the aws CLI's high-level commands (which use multipart
// above 8 MiB, ListObjectsV2 with encoding-type=url, DeleteObjects) and a
// few s3api calls.
func TestAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the aws CLI a dozen times")
	}
	ts := newTestServer(t)
	dir := t.TempDir()
	small := filepath.Join(dir, "small file.txt")
	big := filepath.Join(dir, "big.bin")
	os.WriteFile(small, []byte("small"), 0o600)
	os.WriteFile(big, pattern(9<<20, 3), 0o600)

	ts.awsCLI(t, "s3", "mb", "s3://cli")
	ts.awsCLI(t, "s3", "cp", small, "s3://cli/dir/small file+1.txt")
	ts.awsCLI(t, "s3", "cp", big, "s3://cli/big.bin")
	out := ts.awsCLI(t, "s3", "ls", "--recursive", "s3://cli")
	if !strings.Contains(out, "dir/small file+1.txt") || !strings.Contains(out, "big.bin") {
		t.Errorf("ls:\n%s", out)
	}
	back := filepath.Join(dir, "back.bin")
	ts.awsCLI(t, "s3", "cp", "s3://cli/big.bin", back)
	if got, _ := os.ReadFile(back); !bytes.Equal(got, pattern(9<<20, 3)) {
		t.Errorf("big.bin came back different (%d bytes)", len(got))
	}
	out = ts.awsCLI(t, "s3api", "head-object", "--bucket", "cli", "--key", "big.bin")
	if !strings.Contains(out, `-2\"`) {
		t.Errorf("head-object of a 2-part upload:\n%s", out)
	}
	ts.awsCLI(t, "s3api", "put-object-tagging", "--bucket", "cli", "--key", "big.bin", "--tagging", "TagSet=[{Key=a,Value=b}]")
	if out = ts.awsCLI(t, "s3api", "get-object-tagging", "--bucket", "cli", "--key", "big.bin"); !strings.Contains(out, `"Key": "a"`) {
		t.Errorf("get-object-tagging:\n%s", out)
	}
	ts.awsCLI(t, "s3api", "get-bucket-location", "--bucket", "cli")
	ts.awsCLI(t, "s3api", "get-object-acl", "--bucket", "cli", "--key", "big.bin")
	ts.awsCLI(t, "s3", "rm", "--recursive", "s3://cli")
	ts.awsCLI(t, "s3", "rb", "s3://cli")
	if _, err := ts.store.HeadBucket("cli"); err == nil {
		t.Errorf("bucket still there")
	}
}
