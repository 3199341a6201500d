package integration

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// boto3Python returns a Python interpreter that can import boto3: the
// first python3 on PATH, else Debian's (package python3-boto3). Missing,
// the test skips, or fails under XFS3_REQUIRE_ORACLES=1.
func boto3Python(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(py); err == nil && exec.Command(path, "-c", "import boto3").Run() == nil {
			return path
		}
	}
	msg := "boto3 unavailable: no python3 imports it (Debian package python3-boto3)"
	if os.Getenv(oracle.RequireEnv) == "1" {
		t.Fatalf("%s (%s=1 makes this fatal)", msg, oracle.RequireEnv)
	}
	t.Skip(msg)
	return ""
}

// runBoto3 runs a Python script with a boto3 client of s bound to the
// name s3, and returns what it prints; the script fails the test by
// raising.
func runBoto3(t *testing.T, s *server, script string) string {
	t.Helper()
	py := boto3Python(t)
	prelude := `import boto3, botocore.config, json, sys
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="` + region + `",
    aws_access_key_id="` + accessKey + `", aws_secret_access_key="` + secretKey + `",
    config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
`
	cmd := exec.Command(py, "-c", prelude+script, s.URL)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("boto3 script: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
