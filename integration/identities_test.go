package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The identities the tests below make as root, the way `mc admin user
// add` and `mc admin policy create|attach` would.
const (
	aliceSecret = "alice-secret-key-0123"
	// idApp1Policy allows everything on bucket app1 and its objects, and
	// nothing else: no s3:ListAllMyBuckets, so ListBuckets is filtered.
	idApp1Policy = `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::app1","arn:aws:s3:::app1/*"]}]}`
	// idReadOnlyPolicy is a service account's inline policy: reads only.
	idReadOnlyPolicy = `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::*"]}]}`
	// idPrivate is app2's object, which alice may not read.
	idPrivate = "not for alice\n"
)

// idDownloadPolicy is the policy "mc anonymous set download BUCKET" puts
// (admin-wire.md, "Anonymous access").
func idDownloadPolicy(bucket string) string {
	return `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetBucketLocation","s3:ListBucket"],"Resource":["arn:aws:s3:::` + bucket + `"]},
 {"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::` + bucket + `/*"]}]}`
}

// idSecureOnlyPolicy lets anyone GET the bucket's objects over HTTPS only.
func idSecureOnlyPolicy(bucket string) string {
	return `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::` + bucket + `/*"],
  "Condition":{"Bool":{"aws:SecureTransport":"true"}}}]}`
}

// idAdmin is an admin client of s signing as ak (over HTTPS trusting
// pool alone when pool is not nil): our stand-in for `mc admin`.
func idAdmin(s *server, ak, sk string, pool *x509.CertPool) *admin.Client {
	hc := &http.Client{Timeout: 30 * time.Second}
	if pool != nil {
		hc.Transport = tlsTransport(pool)
	}
	return &admin.Client{Endpoint: s.URL, AccessKey: ak, SecretKey: sk, HTTP: hc}
}

// idMinio is a minio-go client of s signing as ak, over HTTPS trusting
// pool when pool is not nil, with no retries.
func idMinio(t *testing.T, s *server, ak, sk string, pool *x509.CertPool) *minio.Client {
	t.Helper()
	opts := &minio.Options{Creds: credentials.NewStaticV4(ak, sk, ""), Region: region, MaxRetries: 1}
	if pool != nil {
		opts.Secure, opts.Transport = true, tlsTransport(pool)
	}
	c, err := minio.New(s.Host, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// idAws is the aws CLI pointed at s signing as ak, without retries, and
// its private home.
func idAws(t *testing.T, s *server, ak, sk string) (*client, string) {
	t.Helper()
	c, home := awsClient(t, s)
	var env []string
	for _, kv := range c.env {
		if !strings.HasPrefix(kv, "AWS_ACCESS_KEY_ID=") && !strings.HasPrefix(kv, "AWS_SECRET_ACCESS_KEY=") {
			env = append(env, kv)
		}
	}
	c.env = append(env, "AWS_ACCESS_KEY_ID="+ak, "AWS_SECRET_ACCESS_KEY="+sk, "AWS_MAX_ATTEMPTS=1")
	return c, home
}

// awsRefused runs an aws command that must fail with code on its
// standard error.
func awsRefused(t *testing.T, c *client, code string, args ...string) {
	t.Helper()
	cmd := exec.Command(c.name, append(append([]string{}, c.args...), args...)...)
	cmd.Env = c.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		t.Errorf("aws %s as alice succeeded, want %s:\n%s", strings.Join(args, " "), code, stdout.Bytes())
	} else if !strings.Contains(stderr.String(), "("+code+")") {
		t.Errorf("aws %s as alice: %v, want %s on stderr:\n%s%s", strings.Join(args, " "), err, code, stdout.Bytes(), stderr.Bytes())
	}
}

// idGet reads an object whole (minio-go reports a refused GET on the
// first read).
func idGet(ctx context.Context, c *minio.Client, bucket, key string) ([]byte, error) {
	o, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return io.ReadAll(o)
}

func idPut(ctx context.Context, c *minio.Client, bucket, key string, body []byte) error {
	_, err := c.PutObject(ctx, bucket, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
	return err
}

// wantGet requires the object's bytes to be want.
func wantGet(t *testing.T, who string, ctx context.Context, c *minio.Client, bucket, key string, want []byte) {
	t.Helper()
	if got, err := idGet(ctx, c, bucket, key); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s: GET %s/%s: %d bytes, %v; want the %d put", who, bucket, key, len(got), err, len(want))
	}
}

// wantAdminCode requires err to be an admin error with code.
func wantAdminCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var ae *admin.Error
	switch {
	case err == nil:
		t.Errorf("%s: succeeded, want %s", what, code)
	case !errors.As(err, &ae):
		t.Errorf("%s: %v, not an admin error; want %s", what, err, code)
	case ae.Code != code:
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// wantS3Code is wantCode saying what was refused.
func wantS3Code(t *testing.T, what string, err error, code string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want %s", what, code)
	} else if got := errCode(err); got != code {
		t.Errorf("%s: %v (code %q), want %s", what, err, got, code)
	}
}

// curlGet fetches url with curl, unsigned (trusting the CA in caFile when
// not empty; extra curl arguments before the URL), and returns the HTTP
// status and the body.
func curlGet(t *testing.T, caFile, url string, extra ...string) (int, []byte) {
	t.Helper()
	oracle.Require(t, "curl")
	args := []string{"-q", "-s", "-o", "-", "-w", "%{http_code}"}
	if caFile != "" {
		args = append(args, "--cacert", caFile)
	}
	cmd := exec.Command("curl", append(append(args, extra...), url)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()} // no proxy settings
	out, err := cmd.Output()
	if err != nil || len(out) < 3 {
		t.Fatalf("curl %s: %v\n%s", url, err, out)
	}
	code, err := strconv.Atoi(string(out[len(out)-3:]))
	if err != nil {
		t.Fatalf("curl %s: no status at the end of %q", url, out)
	}
	return code, out[:len(out)-3]
}

// wantCurl requires an unsigned GET of url to answer status, with body
// want when 200 and an S3 error of code AccessDenied when 403.
func wantCurl(t *testing.T, what, caFile, url string, status int, want []byte) {
	t.Helper()
	code, body := curlGet(t, caFile, url)
	switch {
	case code != status:
		t.Errorf("%s: curl %s: %d %.300q, want %d", what, url, code, body, status)
	case status == http.StatusOK && want != nil && !bytes.Equal(body, want):
		t.Errorf("%s: curl %s: %d bytes, want the %d put", what, url, len(body), len(want))
	case status == http.StatusForbidden && s3Code(body) != "AccessDenied":
		t.Errorf("%s: curl %s: 403 %.300q, want an AccessDenied error", what, url, body)
	}
}

// waitLogLine waits up to 5 s for a server log line holding every part.
func waitLogLine(s *server, parts ...string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, line := range strings.Split(s.logs.String(), "\n") {
			if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
				return true
			}
		}
	}
	return false
}

// setupApps makes, as root, buckets app1 and app2 (with app2/private.txt),
// the policy app1rw and the user alice with app1rw attached; root's
// admin client is returned.
func setupApps(t *testing.T, s *server, pool *x509.CertPool) *admin.Client {
	t.Helper()
	ctx := context.Background()
	rootS3 := idMinio(t, s, accessKey, secretKey, pool)
	for _, b := range []string{"app1", "app2"} {
		if err := rootS3.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatalf("MakeBucket %s as root: %v", b, err)
		}
	}
	if err := idPut(ctx, rootS3, "app2", "private.txt", []byte(idPrivate)); err != nil {
		t.Fatal(err)
	}
	root := idAdmin(s, accessKey, secretKey, pool)
	if err := root.AddPolicy(ctx, "app1rw", []byte(idApp1Policy)); err != nil {
		t.Fatalf("add-canned-policy app1rw: %v", err)
	}
	if err := root.AddUser(ctx, "alice", aliceSecret, true); err != nil {
		t.Fatalf("add-user alice: %v", err)
	}
	res, err := root.AttachPolicies(ctx, "alice", "app1rw")
	if err != nil || !slices.Equal(res.PoliciesAttached, []string{"app1rw"}) || res.UpdatedAt.IsZero() {
		t.Fatalf("attach app1rw to alice: %+v, %v", res, err)
	}
	info, err := root.UserInfo(ctx, "alice")
	if err != nil || info.PolicyName != "app1rw" || info.Status != "enabled" {
		t.Fatalf("user-info alice: %+v, %v", info, err)
	}
	return root
}

// TestIdentitiesThroughBinary drives users, service accounts, named and
// bucket policies, anonymous access and public access blocks through the
// real binary: root makes the user alice limited to bucket app1 with
// admin.Client (our stand-in for mc admin), and the aws CLI, minio-go
// and curl see exactly her rights; a service account narrowed to reads,
// a user disabled and enabled, a bucket made public and private again,
// a public access block overriding a public policy. Identities survive a
// graceful restart and a SIGKILL right after an acknowledged change, and
// the volume is clean for xfs_repair at the end.
func TestIdentitiesThroughBinary(t *testing.T) {
	start := time.Now()
	s := startServer(t, "1G")
	ctx := context.Background()
	root := setupApps(t, s, nil)
	rootS3 := s.client(t)
	alice := idMinio(t, s, "alice", aliceSecret, nil)

	t.Run("aws", func(t *testing.T) {
		aws, home := idAws(t, s, "alice", aliceSecret)
		up, down := filepath.Join(home, "up.bin"), filepath.Join(home, "down.bin")
		want := randomFile(t, up, 9<<20) // above the CLI's 8 MiB multipart threshold
		aws.run("s3", "cp", "--no-progress", up, "s3://app1/cli/nine-mib.bin")
		aws.run("s3", "cp", "--no-progress", "s3://app1/cli/nine-mib.bin", down)
		if got, _ := os.ReadFile(down); !bytes.Equal(got, want) {
			t.Errorf("aws s3 cp as alice: %d bytes back, want the %d sent", len(got), len(want))
		}
		if out := aws.run("s3", "ls", "--recursive", "s3://app1"); !strings.Contains(out, " "+strconv.Itoa(len(want))+" cli/nine-mib.bin\n") {
			t.Errorf("aws s3 ls s3://app1 as alice:\n%s", out)
		}
		wantGet(t, "root reading what alice uploaded", ctx, rootS3, "app1", "cli/nine-mib.bin", want)

		awsRefused(t, aws, "AccessDenied", "s3", "cp", "--no-progress", up, "s3://app2/cli/nine-mib.bin")
		awsRefused(t, aws, "AccessDenied", "s3", "ls", "s3://app2")
		// The CLI first HEADs what it downloads: a HEAD error has no body, so no code but the status.
		awsRefused(t, aws, "403", "s3", "cp", "--no-progress", "s3://app2/private.txt", filepath.Join(home, "private.txt"))
		if _, err := os.Stat(filepath.Join(home, "private.txt")); err == nil {
			t.Error("a refused aws s3 cp left app2/private.txt in alice's home")
		}
		var listed struct{ Buckets []struct{ Name string } }
		decode(t, aws.run("s3api", "list-buckets"), &listed)
		if len(listed.Buckets) != 1 || listed.Buckets[0].Name != "app1" {
			t.Errorf("aws s3api list-buckets as alice: %+v, want app1 alone", listed.Buckets)
		}
		_, err := rootS3.StatObject(ctx, "app2", "cli/nine-mib.bin", minio.StatObjectOptions{})
		wantS3Code(t, "the object of alice's refused upload to app2", err, "NoSuchKey")
	})

	t.Run("minio-go", func(t *testing.T) {
		body := []byte("alice's bytes through minio-go\n")
		if err := idPut(ctx, alice, "app1", "mc/a.txt", body); err != nil {
			t.Fatalf("PUT app1/mc/a.txt as alice: %v", err)
		}
		wantGet(t, "alice", ctx, alice, "app1", "mc/a.txt", body)
		wantS3Code(t, "PUT app2/x as alice", idPut(ctx, alice, "app2", "x", body), "AccessDenied")
		_, err := idGet(ctx, alice, "app2", "private.txt")
		wantS3Code(t, "GET app2/private.txt as alice", err, "AccessDenied")
		wantS3Code(t, "MakeBucket as alice", alice.MakeBucket(ctx, "alice-new", minio.MakeBucketOptions{}), "AccessDenied")
		buckets, err := alice.ListBuckets(ctx)
		if err != nil || len(buckets) != 1 || buckets[0].Name != "app1" {
			t.Errorf("ListBuckets as alice: %v, %v; want app1 alone", buckets, err)
		}
		// Nothing the refusals touched changed.
		wantGet(t, "root", ctx, rootS3, "app2", "private.txt", []byte(idPrivate))
		_, err = rootS3.StatObject(ctx, "app2", "x", minio.StatObjectOptions{})
		wantS3Code(t, "the object of a refused PUT", err, "NoSuchKey")
		if ok, err := rootS3.BucketExists(ctx, "alice-new"); ok || err != nil {
			t.Errorf("a refused MakeBucket: bucket exists %v, %v", ok, err)
		}
		if !waitLogLine(s, `"op":"PutObject"`, `"bucket":"app2"`, `"access_key":"alice"`, `"user":"alice"`, `"error_code":"AccessDenied"`, `"decision":`) {
			t.Error("no request log line of alice's refused PutObject with her identity and the decision")
		}
	})

	t.Run("admin by alice", func(t *testing.T) {
		self := idAdmin(s, "alice", aliceSecret, nil)
		_, err := self.ListUsers(ctx)
		wantAdminCode(t, "list-users as alice", err, "AccessDenied")
		wantAdminCode(t, "add-user as alice", self.AddUser(ctx, "mallory", "mallory-secret-123", true), "AccessDenied")
		_, err = self.AttachPolicies(ctx, "alice", "consoleAdmin")
		wantAdminCode(t, "alice attaching consoleAdmin to herself", err, "AccessDenied")
		users, err := root.ListUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := users["mallory"]; ok || len(users) != 1 || users["alice"].PolicyName != "app1rw" {
			t.Errorf("list-users as root after alice's refused calls: %+v", users)
		}
	})

	t.Run("service account", func(t *testing.T) {
		creds, err := root.AddServiceAccount(ctx, admin.AddServiceAccountRequest{
			TargetUser: "alice", AccessKey: "alice-ro", SecretKey: "alice-ro-secret-key-01", Policy: json.RawMessage(idReadOnlyPolicy)})
		if err != nil || creds.AccessKey != "alice-ro" || creds.SecretKey != "alice-ro-secret-key-01" {
			t.Fatalf("add-service-account for alice: %+v, %v", creds, err)
		}
		accounts, err := root.ListServiceAccounts(ctx, "alice")
		if err != nil || len(accounts) != 1 || accounts[0].AccessKey != "alice-ro" || accounts[0].ParentUser != "alice" || accounts[0].ImpliedPolicy {
			t.Errorf("list-service-accounts alice: %+v, %v", accounts, err)
		}
		ro := idMinio(t, s, "alice-ro", "alice-ro-secret-key-01", nil)
		wantGet(t, "alice-ro", ctx, ro, "app1", "mc/a.txt", []byte("alice's bytes through minio-go\n"))
		wantS3Code(t, "PUT app1 through the read-only account", idPut(ctx, ro, "app1", "mc/ro.txt", []byte("x")), "AccessDenied")
		_, err = idGet(ctx, ro, "app2", "private.txt")
		wantS3Code(t, "GET app2 through the account (beyond alice's rights)", err, "AccessDenied")
	})

	t.Run("disable", func(t *testing.T) {
		ro := idMinio(t, s, "alice-ro", "alice-ro-secret-key-01", nil)
		if err := root.SetUserStatus(ctx, "alice", false); err != nil {
			t.Fatalf("disable alice: %v", err)
		}
		_, err := idGet(ctx, alice, "app1", "mc/a.txt")
		wantS3Code(t, "GET as alice disabled", err, "InvalidAccessKeyId")
		_, err = idGet(ctx, ro, "app1", "mc/a.txt")
		wantS3Code(t, "GET through the account of alice disabled", err, "InvalidAccessKeyId")
		if info, err := root.UserInfo(ctx, "alice"); err != nil || info.Status != "disabled" {
			t.Errorf("user-info alice disabled: %+v, %v", info, err)
		}
		if err := root.SetUserStatus(ctx, "alice", true); err != nil {
			t.Fatalf("enable alice: %v", err)
		}
		wantGet(t, "alice enabled again", ctx, alice, "app1", "mc/a.txt", []byte("alice's bytes through minio-go\n"))
		wantGet(t, "alice-ro with alice enabled again", ctx, ro, "app1", "mc/a.txt", []byte("alice's bytes through minio-go\n"))
	})

	pubBody := make([]byte, 100<<10)
	rand.Read(pubBody)
	if err := rootS3.MakeBucket(ctx, "pub", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := idPut(ctx, rootS3, "pub", "file.bin", pubBody); err != nil {
		t.Fatal(err)
	}
	fileURL := s.URL + "/pub/file.bin"

	t.Run("anonymous", func(t *testing.T) {
		wantCurl(t, "no policy", "", fileURL, http.StatusForbidden, nil)
		if err := rootS3.SetBucketPolicy(ctx, "pub", idDownloadPolicy("pub")); err != nil {
			t.Fatalf("mc anonymous set download (PUT ?policy): %v", err)
		}
		if got, err := rootS3.GetBucketPolicy(ctx, "pub"); err != nil || !strings.Contains(got, `"s3:GetObject"`) {
			t.Errorf("GetBucketPolicy pub: %q, %v", got, err)
		}
		wantCurl(t, "download", "", fileURL, http.StatusOK, pubBody)
		if code, body := curlGet(t, "", s.URL+"/pub?list-type=2"); code != http.StatusOK || !bytes.Contains(body, []byte("<Key>file.bin</Key>")) {
			t.Errorf("anonymous ListObjectsV2 with download: %d %.300q", code, body)
		}
		if code, body := curlGet(t, "", s.URL+"/pub/dropped", "-X", "PUT", "--data-binary", "x"); code != http.StatusForbidden || s3Code(body) != "AccessDenied" {
			t.Errorf("anonymous PUT with download: %d %.300q, want 403 AccessDenied", code, body)
		}
		wantCurl(t, "anonymous GET in app1 (no bucket policy)", "", s.URL+"/app1/mc/a.txt", http.StatusForbidden, nil)
		if err := rootS3.SetBucketPolicy(ctx, "pub", ""); err != nil {
			t.Fatalf("mc anonymous set none (DELETE ?policy): %v", err)
		}
		if got, err := rootS3.GetBucketPolicy(ctx, "pub"); err != nil || got != "" {
			t.Errorf("GetBucketPolicy after set none: %q, %v; want none", got, err)
		}
		wantCurl(t, "none", "", fileURL, http.StatusForbidden, nil)
		if !waitLogLine(s, `"op":"GetObject"`, `"bucket":"pub"`, `"anonymous":true`, `"status":403`) {
			t.Error("no request log line of the refused anonymous GET")
		}
	})

	t.Run("public access block", func(t *testing.T) {
		if err := rootS3.SetBucketPolicy(ctx, "pub", idDownloadPolicy("pub")); err != nil {
			t.Fatal(err)
		}
		wantCurl(t, "download again", "", fileURL, http.StatusOK, pubBody)
		pab := `<PublicAccessBlockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>`
		if code, body := s.do(t, http.MethodPut, "/pub?publicAccessBlock", []byte(pab), nil, region); code != http.StatusOK {
			t.Fatalf("PUT ?publicAccessBlock: %d %s", code, body)
		}
		if code, body := s.do(t, http.MethodGet, "/pub?publicAccessBlock", nil, nil, region); code != http.StatusOK ||
			!bytes.Contains(body, []byte("<RestrictPublicBuckets>true</RestrictPublicBuckets>")) || !bytes.Contains(body, []byte("<BlockPublicPolicy>false</BlockPublicPolicy>")) {
			t.Errorf("GET ?publicAccessBlock: %d %s", code, body)
		}
		// The public policy is still there, and public, but no longer serves anyone anonymous.
		if got, err := rootS3.GetBucketPolicy(ctx, "pub"); err != nil || !strings.Contains(got, `"s3:GetObject"`) {
			t.Errorf("GetBucketPolicy under the block: %q, %v", got, err)
		}
		if code, body := s.do(t, http.MethodGet, "/pub?policyStatus", nil, nil, region); code != http.StatusOK || !bytes.Contains(body, []byte("<IsPublic>true</IsPublic>")) {
			t.Errorf("GET ?policyStatus under the block: %d %s", code, body)
		}
		wantCurl(t, "RestrictPublicBuckets over a public policy", "", fileURL, http.StatusForbidden, nil)
		wantCurl(t, "anonymous list under RestrictPublicBuckets", "", s.URL+"/pub?list-type=2", http.StatusForbidden, nil)
		wantGet(t, "root under the block", ctx, rootS3, "pub", "file.bin", pubBody)
		if code, body := s.do(t, http.MethodDelete, "/pub?publicAccessBlock", nil, nil, region); code != http.StatusNoContent {
			t.Fatalf("DELETE ?publicAccessBlock: %d %s", code, body)
		}
		wantCurl(t, "the block removed", "", fileURL, http.StatusOK, pubBody)
	})
	if t.Failed() {
		t.FailNow()
	}

	// A graceful restart on the same volume: alice, her account and her
	// policy are there, and pub is still public.
	s.stop(t)
	s2 := startServerOn(t, s.Volume, "1G")
	root2 := idAdmin(s2, accessKey, secretKey, nil)
	alice2 := idMinio(t, s2, "alice", aliceSecret, nil)
	wantGet(t, "alice after a restart", ctx, alice2, "app1", "mc/a.txt", []byte("alice's bytes through minio-go\n"))
	_, err := idGet(ctx, alice2, "app2", "private.txt")
	wantS3Code(t, "alice in app2 after a restart", err, "AccessDenied")
	ro2 := idMinio(t, s2, "alice-ro", "alice-ro-secret-key-01", nil)
	wantGet(t, "alice-ro after a restart", ctx, ro2, "app1", "mc/a.txt", []byte("alice's bytes through minio-go\n"))
	wantS3Code(t, "PUT through alice-ro after a restart", idPut(ctx, ro2, "app1", "mc/ro.txt", []byte("x")), "AccessDenied")
	wantCurl(t, "download after a restart", "", s2.URL+"/pub/file.bin", http.StatusOK, pubBody)

	// A SIGKILL right after an acknowledged change: the change is there
	// once the server reopened the volume.
	if err := root2.AddUser(ctx, "carol", "carol-secret-key-0123", true); err != nil {
		t.Fatalf("add-user carol: %v", err)
	}
	if _, err := root2.AttachPolicies(ctx, "carol", "app1rw"); err != nil {
		t.Fatalf("attach app1rw to carol: %v", err)
	}
	s2.cmd.Process.Kill()
	<-s2.done
	if oracle.Optional(t, "whether the kill left a log to replay is not reported", oracle.ToolRepair) {
		out, _ := oracle.RepairOutput(s.Volume) // -n: reads only
		t.Logf("after the SIGKILL the log holds changes the restart replays: %v", strings.Contains(out, "metadata changes in a log"))
	}
	s3 := startServerOn(t, s.Volume, "1G")
	carol := idMinio(t, s3, "carol", "carol-secret-key-0123", nil)
	if err := idPut(ctx, carol, "app1", "carol.txt", []byte("carol after the crash")); err != nil {
		t.Errorf("PUT as carol after the crash: %v", err)
	}
	wantGet(t, "carol after the crash", ctx, carol, "app1", "carol.txt", []byte("carol after the crash"))
	wantGet(t, "alice after the crash", ctx, idMinio(t, s3, "alice", aliceSecret, nil), "app1", "mc/a.txt", []byte("alice's bytes through minio-go\n"))
	users, err := idAdmin(s3, accessKey, secretKey, nil).ListUsers(ctx)
	if err != nil || len(users) != 2 || users["carol"].PolicyName != "app1rw" || users["alice"].Status != "enabled" {
		t.Errorf("list-users after the crash: %+v, %v", users, err)
	}
	s3.stop(t)
	if oracle.Optional(t, "the volume is not checked with xfs_repair", oracle.ToolRepair) {
		oracle.Repair(t, s.Volume)
	}
	t.Logf("TestIdentitiesThroughBinary took %v", time.Since(start).Round(time.Millisecond))
}

// idBoto3Script, as alice, puts and gets in app1 and is refused in app2;
// it prints what it saw as JSON.
const idBoto3Script = `
import json, sys
import boto3, botocore.config, botocore.exceptions
url, access, secret, region = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=url, region_name=region,
    aws_access_key_id=access, aws_secret_access_key=secret,
    config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

def refused(call, **kw):
    try:
        call(**kw)
    except botocore.exceptions.ClientError as e:
        return {"code": e.response["Error"]["Code"], "status": e.response["ResponseMetadata"]["HTTPStatusCode"]}
    return None

body = b"boto3 as alice\n" * 4096
s3.put_object(Bucket="app1", Key="boto/one.txt", Body=body)
out = {
    "get_equal": s3.get_object(Bucket="app1", Key="boto/one.txt")["Body"].read() == body,
    "list_app1": [o["Key"] for o in s3.list_objects_v2(Bucket="app1").get("Contents", [])],
    "buckets": [b["Name"] for b in s3.list_buckets()["Buckets"]],
    "put_app2": refused(s3.put_object, Bucket="app2", Key="boto/x", Body=b"x"),
    "get_app2": refused(s3.get_object, Bucket="app2", Key="private.txt"),
    "list_app2": refused(s3.list_objects_v2, Bucket="app2"),
    "delete_app2": refused(s3.delete_object, Bucket="app2", Key="private.txt"),
    "create_bucket": refused(s3.create_bucket, Bucket="boto-new"),
}
print(json.dumps(out))
`

// TestIdentitiesBoto3: boto3 signing as alice puts and gets in app1 and
// gets ClientError AccessDenied for every call in app2 and for a new
// bucket; none of the refused calls changed anything.
func TestIdentitiesBoto3(t *testing.T) {
	py := boto3Python(t)
	s := startServer(t, "1G")
	setupApps(t, s, nil)
	cmd := exec.Command(py, "-c", idBoto3Script, s.URL, "alice", aliceSecret, region)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("boto3 script: %v\n%s%s", err, raw, stderr.String())
	}
	type refusal struct {
		Code   string
		Status int
	}
	var out struct {
		GetEqual     bool     `json:"get_equal"`
		ListApp1     []string `json:"list_app1"`
		Buckets      []string
		PutApp2      *refusal `json:"put_app2"`
		GetApp2      *refusal `json:"get_app2"`
		ListApp2     *refusal `json:"list_app2"`
		DeleteApp2   *refusal `json:"delete_app2"`
		CreateBucket *refusal `json:"create_bucket"`
	}
	decode(t, string(raw), &out)
	if !out.GetEqual || !slices.Equal(out.ListApp1, []string{"boto/one.txt"}) {
		t.Errorf("boto3 as alice in app1: get equal %v, listed %q", out.GetEqual, out.ListApp1)
	}
	if !slices.Equal(out.Buckets, []string{"app1"}) {
		t.Errorf("boto3 list_buckets as alice: %q, want app1 alone", out.Buckets)
	}
	for name, r := range map[string]*refusal{"put_object app2": out.PutApp2, "get_object app2": out.GetApp2,
		"list_objects_v2 app2": out.ListApp2, "delete_object app2": out.DeleteApp2, "create_bucket": out.CreateBucket} {
		if r == nil || r.Code != "AccessDenied" || r.Status != http.StatusForbidden {
			t.Errorf("boto3 %s as alice: %+v, want ClientError AccessDenied (403)", name, r)
		}
	}
	ctx := context.Background()
	rootS3 := s.client(t)
	wantGet(t, "root after alice's refused delete", ctx, rootS3, "app2", "private.txt", []byte(idPrivate))
	_, err = rootS3.StatObject(ctx, "app2", "boto/x", minio.StatObjectOptions{})
	wantS3Code(t, "the object of alice's refused put", err, "NoSuchKey")
	s.stop(t)
}

// TestIdentitiesTLS: over HTTPS (a CA made here, as in TestTLSClients)
// alice's minio-go and aws CLI have her rights, the admin API works as
// root, and a bucket policy letting anyone GET only under
// aws:SecureTransport serves curl over HTTPS. xfs3 serves one scheme per
// process, so the same volume is then served over plain HTTP: the same
// anonymous GET is refused there while an unconditional download policy
// still serves, and alice still works. A 4 MiB upload alice may not make
// is refused with AccessDenied over both schemes (the aws CLI sends
// "Expect: 100-continue").
func TestIdentitiesTLS(t *testing.T) {
	work := t.TempDir()
	certsDir := filepath.Join(work, "certs")
	if err := os.Mkdir(certsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca := newTLSCA(t, "xfs3-identities-ca", work)
	ca.installServer(t, certsDir)
	volume := filepath.Join(work, "data", "volume.xfs")
	s := startTLSServer(t, volume, certsDir, false)
	ctx := context.Background()
	root := setupApps(t, s, ca.pool)
	rootS3 := idMinio(t, s, accessKey, secretKey, ca.pool)
	alice := idMinio(t, s, "alice", aliceSecret, ca.pool)

	t.Run("minio-go", func(t *testing.T) {
		body := []byte("alice over https\n")
		if err := idPut(ctx, alice, "app1", "tls/a.txt", body); err != nil {
			t.Fatalf("PUT as alice over https: %v", err)
		}
		wantGet(t, "alice over https", ctx, alice, "app1", "tls/a.txt", body)
		wantS3Code(t, "PUT app2 as alice over https", idPut(ctx, alice, "app2", "x", body), "AccessDenied")
		_, err := idGet(ctx, alice, "app2", "private.txt")
		wantS3Code(t, "GET app2 as alice over https", err, "AccessDenied")
		_, err = idAdmin(s, "alice", aliceSecret, ca.pool).ListUsers(ctx)
		wantAdminCode(t, "list-users as alice over https", err, "AccessDenied")
		if users, err := root.ListUsers(ctx); err != nil || users["alice"].PolicyName != "app1rw" {
			t.Errorf("list-users as root over https: %+v, %v", users, err)
		}
	})

	t.Run("aws", func(t *testing.T) {
		plain, home := idAws(t, s, "alice", aliceSecret) // s.URL is https://
		aws := &client{t: t, name: plain.name, args: append(append([]string{}, plain.args...), "--ca-bundle", ca.file), env: plain.env}
		up, down := filepath.Join(home, "up.bin"), filepath.Join(home, "down.bin")
		want := randomFile(t, up, 1<<20)
		aws.run("s3", "cp", "--no-progress", up, "s3://app1/tls/one-mib.bin")
		aws.run("s3", "cp", "--no-progress", "s3://app1/tls/one-mib.bin", down)
		if got, _ := os.ReadFile(down); !bytes.Equal(got, want) {
			t.Errorf("aws s3 cp as alice over https: %d bytes back, want the %d sent", len(got), len(want))
		}
		awsRefused(t, aws, "AccessDenied", "s3", "ls", "s3://app2")
		var listed struct{ Buckets []struct{ Name string } }
		decode(t, aws.run("s3api", "list-buckets"), &listed)
		if len(listed.Buckets) != 1 || listed.Buckets[0].Name != "app1" {
			t.Errorf("aws s3api list-buckets as alice over https: %+v, want app1 alone", listed.Buckets)
		}
		wantGet(t, "root over https", ctx, rootS3, "app1", "tls/one-mib.bin", want)
	})

	secure := []byte("served over TLS alone\n")
	open := []byte("served to anyone\n")
	for bucket, body := range map[string][]byte{"sec": secure, "open": open} {
		if err := rootS3.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := idPut(ctx, rootS3, bucket, "file.txt", body); err != nil {
			t.Fatal(err)
		}
	}
	if err := rootS3.SetBucketPolicy(ctx, "sec", idSecureOnlyPolicy("sec")); err != nil {
		t.Fatalf("PUT ?policy with aws:SecureTransport: %v", err)
	}
	if err := rootS3.SetBucketPolicy(ctx, "open", idDownloadPolicy("open")); err != nil {
		t.Fatal(err)
	}
	wantCurl(t, "aws:SecureTransport over https", ca.file, s.URL+"/sec/file.txt", http.StatusOK, secure)
	wantCurl(t, "download over https", ca.file, s.URL+"/open/file.txt", http.StatusOK, open)
	if code, _ := curlGet(t, ca.file, s.URL+"/sec/dropped", "-X", "PUT", "--data-binary", "x"); code != http.StatusForbidden {
		t.Errorf("anonymous PUT over https under a GET-only policy: %d, want 403", code)
	}
	if t.Failed() {
		t.FailNow()
	}

	// A refused upload with a body: the CLI must see AccessDenied, as it
	// does over plain HTTP (below), not a broken connection.
	refusedBody := filepath.Join(t.TempDir(), "four-mib.bin")
	randomFile(t, refusedBody, 4<<20)
	t.Run("aws refused upload", func(t *testing.T) {
		plain, _ := idAws(t, s, "alice", aliceSecret)
		aws := &client{t: t, name: plain.name, args: append(append([]string{}, plain.args...), "--ca-bundle", ca.file), env: plain.env}
		awsRefused(t, aws, "AccessDenied", "s3api", "put-object", "--bucket", "app2", "--key", "four-mib.bin", "--body", refusedBody)
	})

	s.stop(t)
	p := startServerOn(t, volume, "1G")
	if !strings.HasPrefix(p.URL, "http://") {
		t.Fatalf("xfs3 serve without a certs directory announced %q", p.URL)
	}
	wantCurl(t, "aws:SecureTransport over plain http", "", p.URL+"/sec/file.txt", http.StatusForbidden, nil)
	wantCurl(t, "download over plain http", "", p.URL+"/open/file.txt", http.StatusOK, open)
	if got, err := p.client(t).GetBucketPolicy(ctx, "sec"); err != nil || !strings.Contains(got, "aws:SecureTransport") {
		t.Errorf("GetBucketPolicy sec over plain http: %q, %v", got, err)
	}
	wantGet(t, "alice over plain http", ctx, idMinio(t, p, "alice", aliceSecret, nil), "app1", "tls/a.txt", []byte("alice over https\n"))
	t.Run("aws refused upload over plain http", func(t *testing.T) {
		aws, _ := idAws(t, p, "alice", aliceSecret)
		awsRefused(t, aws, "AccessDenied", "s3api", "put-object", "--bucket", "app2", "--key", "four-mib.bin", "--body", refusedBody)
	})
	if !waitLogLine(p, `"op":"GetObject"`, `"bucket":"sec"`, `"anonymous":true`, `"status":403`) {
		t.Error("no request log line of the refused anonymous GET over plain http")
	}
	p.stop(t)
	if oracle.Optional(t, "the volume is not checked with xfs_repair", oracle.ToolRepair) {
		oracle.Repair(t, volume)
	}
}
