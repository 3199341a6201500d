package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/s3api/admin"
)

const photosReadPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::photos/*"]}]}`

// TestIdentityCommands: "xfs3 user", "xfs3 user svcacct" and "xfs3
// policy" drive a running server with its own settings (address and
// credentials file): users and policies they make show in the listings,
// and a service account's keys they print sign requests.
func TestIdentityCommands(t *testing.T) {
	for _, k := range []string{"XFS3_ACCESS_KEY", "XFS3_SECRET_KEY", "XFS3_CONFIG", "XFS3_VOLUME", "XFS3_ADDR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	cfg := testConfig(t)
	out, stop := startServe(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	addr := regexp.MustCompile(`serving S3 on http://(\S+)`).FindStringSubmatch(out)[1]
	creds, _, err := loadCredentials(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	root, err := minio.New(addr, &minio.Options{Creds: miniocreds.NewStaticV4(creds.AccessKey, creds.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := root.MakeBucket(bg, "photos", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.PutObject(bg, "photos", "a.jpg", strings.NewReader("jpeg"), 4, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XFS3_ADDR", addr)
	conn := []string{"--volume", cfg.Volume}
	cli := func(args ...string) cliResult { return runCLI(t, append(args, conn...)...) }
	silent := func(args ...string) {
		t.Helper()
		okSilent(t, append(args, conn...)...)
	}
	policyFile := filepath.Join(t.TempDir(), "photos-ro.json")
	if err := os.WriteFile(policyFile, []byte(photosReadPolicy), 0o644); err != nil {
		t.Fatal(err)
	}

	// Policies: one from a file, one from standard input.
	silent("policy", "create", "photos-ro", policyFile)
	if r := runCLIIn(t, strings.NewReader(photosReadPolicy), append([]string{"policy", "create", "other", "-"}, conn...)...); r.code != 0 || r.stdout != "" {
		t.Fatalf("policy create from stdin: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r := cli("policy", "ls")
	if r.code != 0 || !regexp.MustCompile(`^POLICY +TYPE +USERS\n`).MatchString(r.stdout) ||
		!regexp.MustCompile(`\nconsoleAdmin +canned +-\n`).MatchString(r.stdout) ||
		!regexp.MustCompile(`\nother +custom +-\n`).MatchString(r.stdout) ||
		!regexp.MustCompile(`\nphotos-ro +custom +-\n`).MatchString(r.stdout) ||
		!regexp.MustCompile(`\nreadwrite +canned +-\n`).MatchString(r.stdout) {
		t.Fatalf("policy ls: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli("policy", "info", "photos-ro")
	var doc map[string]any
	if r.code != 0 || !strings.Contains(r.stdout, "\n  \"Statement\": [") || json.Unmarshal([]byte(r.stdout), &doc) != nil ||
		!strings.Contains(r.stdout, `"s3:GetObject"`) {
		t.Fatalf("policy info: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var policies map[string]json.RawMessage
	identityJSON(t, &policies, append([]string{"policy", "ls"}, conn...)...)
	if _, ok := policies["photos-ro"]; !ok || policies["readonly"] == nil {
		t.Errorf("policy ls --json: %s", policies)
	}
	silent("policy", "rm", "other")

	// Users: add, attach, disable, enable.
	silent("user", "add", "alice", "alice-secret-1")
	silent("policy", "attach", "photos-ro", "readwrite", "--user", "alice")
	r = cli("user", "ls")
	if r.code != 0 || !regexp.MustCompile(`^USER +STATUS +POLICIES\nalice +enabled +(photos-ro,readwrite|readwrite,photos-ro)\n$`).MatchString(r.stdout) {
		t.Fatalf("user ls: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli("policy", "ls")
	if r.code != 0 || !regexp.MustCompile(`\nphotos-ro +custom +alice\n`).MatchString(r.stdout) {
		t.Fatalf("policy ls after attach: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	silent("user", "disable", "alice")
	r = cli("user", "info", "alice")
	if r.code != 0 || !regexp.MustCompile(`^User: +alice\nStatus: +disabled\nPolicies: +\S*photos-ro`).MatchString(r.stdout) {
		t.Fatalf("user info: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Flags before the command; an explicit endpoint.
	silent("user", "--endpoint", "http://"+addr, "enable", "alice")
	var info admin.UserInfo
	identityJSON(t, &info, append([]string{"user", "info", "alice"}, conn...)...)
	if info.Status != "enabled" {
		t.Errorf("user info --json after enable: %+v", info)
	}

	// Service accounts: the keys printed sign requests, with the account's
	// own policy.
	r = cli("user", "svcacct", "add", "alice", "--policy", policyFile)
	m := regexp.MustCompile(`^Access key: (\S+)\nSecret key: (\S+)\nExpiration: never\n$`).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("svcacct add: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	key := m[1]
	account, err := minio.New(addr, &minio.Options{Creds: miniocreds.NewStaticV4(m[1], m[2], ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	get := func() error {
		o, err := account.GetObject(bg, "photos", "a.jpg", minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer o.Close()
		b, err := io.ReadAll(o)
		if err == nil && string(b) != "jpeg" {
			t.Errorf("GET with the account's keys: %q", b)
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("GET with the keys svcacct add printed: %v", err)
	}
	if _, err := account.PutObject(bg, "photos", "b.jpg", strings.NewReader("x"), 1, minio.PutObjectOptions{}); minio.ToErrorResponse(err).Code != "AccessDenied" {
		t.Errorf("PUT outside the account's own policy: %v", err)
	}
	r = cli("user", "svcacct", "ls", "alice")
	if r.code != 0 || !regexp.MustCompile(`^ACCESS KEY +STATUS +POLICY +EXPIRATION\n`+regexp.QuoteMeta(key)+` +enabled +own +never\n$`).MatchString(r.stdout) {
		t.Fatalf("svcacct ls: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli("user", "svcacct", "info", key)
	if r.code != 0 || !regexp.MustCompile(`^Access key: +`+regexp.QuoteMeta(key)+`\nUser: +alice\nStatus: +enabled\nExpiration: +never\nPolicy: +own\n\{\n  "`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "s3:GetObject") {
		t.Fatalf("svcacct info: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	silent("user", "svcacct", "edit", key, "--disable")
	if err := get(); err == nil {
		t.Errorf("GET with a disabled account's keys succeeded")
	}
	var ai admin.ServiceAccountInfo
	identityJSON(t, &ai, append([]string{"user", "svcacct", "info", key}, conn...)...)
	if ai.AccountStatus != "off" || ai.ParentUser != "alice" || ai.ImpliedPolicy {
		t.Errorf("svcacct info --json after --disable: %+v", ai)
	}
	silent("user", "svcacct", "edit", key, "--enable", "--secret-key", "a-new-secret-key")
	if err := get(); err == nil {
		t.Errorf("GET with the old secret key succeeded")
	}
	// Chosen keys, an expiry, the user's own rights.
	r = cli("user", "svcacct", "add", "alice", "--access-key", "alice-backup", "--secret-key", "alice-backup-secret", "--expiry", "1d12h")
	if r.code != 0 || !regexp.MustCompile(`^Access key: alice-backup\nSecret key: alice-backup-secret\nExpiration: \d{4}-\d\d-\d\dT`).MatchString(r.stdout) {
		t.Fatalf("svcacct add with keys: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli("user", "svcacct", "ls", "alice")
	if r.code != 0 || !regexp.MustCompile(`\nalice-backup +enabled +inherited +\d{4}-`).MatchString(r.stdout) {
		t.Fatalf("svcacct ls: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	silent("user", "svcacct", "rm", "alice-backup")
	r = cli("user", "svcacct", "ls", "alice")
	if r.code != 0 || strings.Contains(r.stdout, "alice-backup") || !strings.Contains(r.stdout, key) {
		t.Fatalf("svcacct ls after rm: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Detach, then remove the user.
	silent("policy", "detach", "photos-ro", "--user", "alice")
	r = cli("user", "ls")
	if r.code != 0 || !regexp.MustCompile(`\nalice +enabled +readwrite\n$`).MatchString(r.stdout) {
		t.Fatalf("user ls after detach: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	silent("user", "rm", "alice")
	if r := cli("user", "ls"); r.code != 0 || r.stdout != "USER  STATUS  POLICIES\n" {
		t.Errorf("user ls after rm: %d %q %s", r.code, r.stdout, r.stderr)
	}

	notJSON := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(notJSON, []byte(`{"Version": "2012-10-17",`), 0o644); err != nil {
		t.Fatal(err)
	}
	badEffect := filepath.Join(t.TempDir(), "effect.json")
	if err := os.WriteFile(badEffect, []byte(strings.Replace(photosReadPolicy, `"Allow"`, `"Maybe"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"user"}, 2, "missing command"},
		{[]string{"user", "frob"}, 2, `unknown command "frob"`},
		{[]string{"user", "svcacct"}, 2, "missing command"},
		{[]string{"policy", "frob"}, 2, `unknown command "frob"`},
		{[]string{"user", "add", "bob"}, 2, "want USER SECRET"},
		{[]string{"user", "ls", "bob"}, 2, "want no arguments"},
		{[]string{"policy", "attach", "readwrite"}, 2, "missing --user"},
		{[]string{"user", "svcacct", "edit", "somekey"}, 2, "nothing to change"},
		{[]string{"user", "svcacct", "edit", "somekey", "--enable", "--disable"}, 2, "give one"},
		{[]string{"user", "svcacct", "add", "bob", "--expiry", "soon"}, 2, "--expiry"},
		{[]string{"user", "info", "nobody"}, 1, "XMinioAdminNoSuchUser"},
		{[]string{"user", "disable", "nobody"}, 1, "XMinioAdminNoSuchUser"},
		{[]string{"policy", "info", "nothere"}, 1, "XMinioAdminNoSuchPolicy"},
		{[]string{"policy", "attach", "nothere", "--user", "nobody"}, 1, "XMinioAdmin"},
		{[]string{"policy", "rm", "readwrite"}, 1, "XMinioAdminInvalidArgument"},
		{[]string{"policy", "create", "bad", notJSON}, 1, "policy in " + notJSON + " is not JSON"},
		{[]string{"policy", "create", "bad", badEffect}, 1, "XMinioMalformedIAMPolicy: "},
		{[]string{"policy", "create", "bad", filepath.Join(t.TempDir(), "missing.json")}, 1, "missing.json: no such file"},
		{[]string{"user", "svcacct", "add", "nobody"}, 1, "XMinioAdmin"},
		{[]string{"user", "svcacct", "info", "nosuchkey"}, 1, "XMinioAdminServiceAccountNotFound"},
	} {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			wantCLIFailure(t, cli(c.args...), c.code, c.want)
		})
	}
	t.Run("wrong secret", func(t *testing.T) {
		t.Setenv("XFS3_ACCESS_KEY", creds.AccessKey)
		t.Setenv("XFS3_SECRET_KEY", "wrong-secret")
		wantCLIFailure(t, runCLI(t, "user", "ls"), 1, "SignatureDoesNotMatch")
	})
}

// identityJSON runs a command with --json and decodes its output.
func identityJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	r := runCLI(t, append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("xfs3 %s: %d %s", strings.Join(args, " "), r.code, r.stderr)
	}
	if err := json.NewDecoder(bytes.NewReader([]byte(r.stdout))).Decode(v); err != nil {
		t.Fatalf("xfs3 %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
}

// TestIdentityHelp: each command's help is its usage.
func TestIdentityHelp(t *testing.T) {
	for _, c := range []struct {
		args  []string
		usage string
	}{
		{[]string{"user", "-h"}, userUsage},
		{[]string{"help", "user"}, userUsage},
		{[]string{"user", "add", "-h"}, userUsage},
		{[]string{"user", "svcacct", "-h"}, svcacctUsage},
		{[]string{"help", "user", "svcacct"}, svcacctUsage},
		{[]string{"user", "svcacct", "add", "--help"}, svcacctUsage},
		{[]string{"policy", "--help"}, policyUsage},
		{[]string{"help", "policy"}, policyUsage},
		{[]string{"policy", "--endpoint", "http://x", "attach", "-h"}, policyUsage},
	} {
		if r := runCLI(t, c.args...); r.code != 0 || r.stdout != c.usage || r.stderr != "" {
			t.Errorf("xfs3 %s: %d %.60q %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if r := runCLI(t, "help"); !strings.Contains(r.stdout, "\n  user ") || !strings.Contains(r.stdout, "\n  policy ") {
		t.Errorf("xfs3 help does not list user and policy:\n%s", r.stdout)
	}
}
