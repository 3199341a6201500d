package sigv4

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// The aws CLI is a second, independent signer. These tests run it against
// a loopback server that only authenticates and checks the payload;
// without the CLI they skip, or fail under XFS3_REQUIRE_ORACLES=1.

// awsCLI runs the CLI with a config file holding sigVersion as the S3
// signature_version ("" for the CLI's defaults).
func awsCLI(t *testing.T, sigVersion, endpoint string, args ...string) ([]byte, error) {
	t.Helper()
	oracle.Require(t, "aws")
	path, err := exec.LookPath("aws")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := "[default]\n"
	if sigVersion != "" {
		conf += "s3 =\n    signature_version = " + sigVersion + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"--endpoint-url", endpoint, "--region", testRegion}, args...)...)
	cmd.Env = append(os.Environ(),
		"AWS_ACCESS_KEY_ID="+testAK, "AWS_SECRET_ACCESS_KEY="+testSK,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "credentials"),
		"AWS_PAGER=",
	)
	return cmd.CombinedOutput()
}

// authServer verifies every request and records what it saw.
type authServer struct {
	mu     sync.Mutex // guards the fields below
	bodies map[string][]byte
	kinds  []string
	errs   []error
}

func (s *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth, err := testVerifier(time.Now()).Verify(r)
	var body []byte
	if err == nil {
		var br io.Reader
		if br, err = auth.Body(r.Body); err == nil {
			body, err = io.ReadAll(br)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("%s %s: %w", r.Method, r.URL, err))
		w.WriteHeader(http.StatusForbidden)
		return
	}
	s.kinds = append(s.kinds, auth.Kind.String()+" "+auth.PayloadHash)
	sum := md5.Sum(body)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
	if r.Method == http.MethodPut {
		s.bodies[r.URL.Path] = body
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(s.bodies[r.URL.Path])))
	w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
	w.Write(s.bodies[r.URL.Path])
}

func TestAWSCLI(t *testing.T) {
	oracle.Require(t, "aws")
	srv := &authServer{bodies: map[string][]byte{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	data := payload(300<<10+3, 11)
	file := filepath.Join(dir, "data")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// The default signs requests with V4 and presigns with V2 (CLI v1);
	// "s3v4" presigns with V4.
	for _, sv := range []string{"", "s3v4"} {
		srv.mu.Lock()
		srv.kinds = nil
		srv.mu.Unlock()
		for _, key := range []string{"plain", "dir/with space+plus~tilde", "unicode/日本語 é", "a//double/slash", "pct%20literal"} {
			awsRoundTrip(t, srv, ts.URL, sv, key, file, data)
		}
		if out, err := awsCLI(t, sv, ts.URL, "s3api", "list-objects-v2", "--bucket", "bkt", "--prefix", "a b+c", "--start-after", "x y"); err != nil && len(srv.errs) > 0 {
			t.Fatalf("list: %v\n%s\n%v", err, out, srv.errs)
		}
		srv.mu.Lock()
		if len(srv.errs) > 0 {
			t.Fatalf("signature_version %q: server errors: %v", sv, srv.errs)
		}
		t.Logf("signature_version %q: auth kinds seen: %q", sv, srv.kinds)
		srv.mu.Unlock()
	}
}

func awsRoundTrip(t *testing.T, srv *authServer, endpoint, sv, key, file string, data []byte) {
	ts := struct{ URL string }{endpoint}
	dir := t.TempDir()
	{
		if out, err := awsCLI(t, sv, ts.URL, "s3api", "put-object", "--bucket", "bkt", "--key", key, "--body", file); err != nil {
			t.Fatalf("put-object %q: %v\n%s\nserver errors: %v", key, err, out, srv.errs)
		}
		if out, err := awsCLI(t, sv, ts.URL, "s3api", "get-object", "--bucket", "bkt", "--key", key, filepath.Join(dir, "out")); err != nil {
			t.Fatalf("get-object %q: %v\n%s\nserver errors: %v", key, err, out, srv.errs)
		}
		// A presigned URL made by the CLI, fetched by Go's client.
		out, err := awsCLI(t, sv, ts.URL, "s3", "presign", "s3://bkt/"+key, "--expires-in", "300")
		if err != nil {
			t.Fatalf("presign: %v\n%s", err, out)
		}
		resp, err := http.Get(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
			t.Fatalf("presigned GET %q: %s, %d bytes; server errors %v", key, resp.Status, len(got), srv.errs)
		}
	}
}
