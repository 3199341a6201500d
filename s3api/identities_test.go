package s3api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// app1Policy allows everything on bucket app1 and its objects.
const app1Policy = `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::app1","arn:aws:s3:::app1/*"]},
 {"Effect":"Allow","Action":["s3:GetBucketLocation"],"Resource":["arn:aws:s3:::*"]},
 {"Sid":"NoSecrets","Effect":"Deny","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::app1/secret/*"]}]}`

// downloadPolicy is what "mc anonymous set download BUCKET" sends.
func downloadPolicy(bucket string) string {
	return `{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetBucketLocation","s3:ListBucket"],"Resource":["arn:aws:s3:::` + bucket + `"]},
 {"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::` + bucket + `/*"]}]}`
}

func (ts *testServer) adminClient(ak, sk string) *admin.Client {
	return &admin.Client{Endpoint: ts.url, AccessKey: ak, SecretKey: sk}
}

func (ts *testServer) clientAs(t *testing.T, ak, sk string) *minio.Client {
	t.Helper()
	c, err := minio.New(strings.TrimPrefix(ts.url, "http://"), &minio.Options{Creds: credentials.NewStaticV4(ak, sk, ""), Region: testRegion})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantCode checks that err is an S3 (or admin) error with code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var ae *admin.Error
	switch {
	case err == nil:
		t.Errorf("%s: succeeded, want %s", what, code)
	case errors.As(err, &ae):
		if ae.Code != code {
			t.Errorf("%s: %v, want %s", what, err, code)
		}
	case minio.ToErrorResponse(err).Code != code:
		t.Errorf("%s: %v (code %q), want %s", what, err, minio.ToErrorResponse(err).Code, code)
	}
}

func putString(c *minio.Client, bucket, key, body string) error {
	_, err := c.PutObject(context.Background(), bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
	return err
}

func getString(c *minio.Client, bucket, key string) (string, error) {
	o, err := c.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	return string(b), err
}

func TestIdentitiesWire(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	root := ts.adminClient(testAccessKey, testSecretKey)
	for _, b := range []string{"app1", "app2"} {
		mustBucket(t, ts, b)
	}
	mustPut(t, ts, "app2", "private", "not for alice", store.Meta{})

	if err := root.AddPolicy(c, "app1rw", []byte(app1Policy)); err != nil {
		t.Fatal(err)
	}
	if err := root.AddUser(c, "alice", "alice-secret-1", true); err != nil {
		t.Fatal(err)
	}
	if res, err := root.AttachPolicies(c, "alice", "app1rw"); err != nil || !slices.Equal(res.PoliciesAttached, []string{"app1rw"}) {
		t.Fatalf("attach: %+v, %v", res, err)
	}
	_, err := root.AttachPolicies(c, "alice", "app1rw")
	wantCode(t, "attach again", err, "XMinioAdminPolicyChangeAlreadyApplied")

	alice := ts.clientAs(t, "alice", "alice-secret-1")
	t.Run("user limited to one bucket", func(t *testing.T) {
		if err := putString(alice, "app1", "a.txt", "hello"); err != nil {
			t.Fatal(err)
		}
		if got, err := getString(alice, "app1", "a.txt"); err != nil || got != "hello" {
			t.Fatalf("get: %q, %v", got, err)
		}
		wantCode(t, "put elsewhere", putString(alice, "app2", "x", "y"), "AccessDenied")
		_, err := getString(alice, "app2", "private")
		wantCode(t, "get elsewhere", err, "AccessDenied")
		for o := range alice.ListObjects(c, "app2", minio.ListObjectsOptions{}) {
			wantCode(t, "list elsewhere", o.Err, "AccessDenied")
		}
		buckets, err := alice.ListBuckets(c)
		if err != nil || len(buckets) != 1 || buckets[0].Name != "app1" {
			t.Errorf("ListBuckets as alice: %v, %v; want only app1", buckets, err)
		}
		if err := putString(alice, "app1", "secret/k", "v"); err != nil {
			t.Fatal(err)
		}
		_, err = getString(alice, "app1", "secret/k")
		wantCode(t, "explicit deny", err, "AccessDenied")
		wantCode(t, "make bucket", alice.MakeBucket(c, "alice-new", minio.MakeBucketOptions{}), "AccessDenied")
		_, err = ts.adminClient("alice", "alice-secret-1").ListUsers(c)
		wantCode(t, "admin call", err, "AccessDenied")
		// A denied request changed nothing.
		if _, err := ts.store.HeadObject("app2", "x"); !errors.Is(err, store.ErrNoSuchKey) {
			t.Errorf("denied PUT left an object: %v", err)
		}
		if _, err := ts.store.HeadBucket("alice-new"); !errors.Is(err, store.ErrNoSuchBucket) {
			t.Errorf("denied CreateBucket made a bucket: %v", err)
		}
		// DeleteObjects: each key is decided on its own.
		mustPut(t, ts, "app1", "d1", "1", store.Meta{})
		errs := alice.RemoveObjects(c, "app2", objectsChan("private"), minio.RemoveObjectsOptions{})
		for e := range errs {
			wantCode(t, "batch delete elsewhere", e.Err, "AccessDenied")
		}
		if _, err := ts.store.HeadObject("app2", "private"); err != nil {
			t.Errorf("denied DeleteObjects removed an object: %v", err)
		}
	})

	t.Run("audit", func(t *testing.T) {
		log := ts.log.String()
		for _, want := range []string{`"access_key":"alice","user":"alice"`, `"decision":"Deny by \"app1rw\" statement 2 (\"NoSecrets\")"`, `"decision":"Deny: no statement applies"`, `"user":"root"`} {
			if !strings.Contains(log, want) {
				t.Errorf("the request log has no %s", want)
			}
		}
	})

	t.Run("admin listings", func(t *testing.T) {
		users, err := root.ListUsers(c)
		if err != nil || users["alice"].PolicyName != "app1rw" || users["alice"].Status != "enabled" {
			t.Fatalf("list-users: %+v, %v", users, err)
		}
		info, err := root.UserInfo(c, "alice")
		if err != nil || info.PolicyName != "app1rw" {
			t.Fatalf("user-info: %+v, %v", info, err)
		}
		pols, err := root.ListPolicies(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"readwrite", "readonly", "writeonly", "diagnostics", "consoleAdmin", "app1rw"} {
			if _, ok := pols[name]; !ok {
				t.Errorf("list-canned-policies has no %s", name)
			}
		}
		pi, err := root.PolicyInfo(c, "app1rw")
		if err != nil || pi.PolicyName != "app1rw" || !bytes.Contains(pi.Policy, []byte("NoSecrets")) || pi.CreateDate.IsZero() {
			t.Fatalf("info-canned-policy: %+v, %v", pi, err)
		}
		ents, err := root.PolicyEntities(c, []string{"alice"}, nil)
		if err != nil || len(ents.UserMappings) != 1 || !slices.Equal(ents.UserMappings[0].Policies, []string{"app1rw"}) {
			t.Fatalf("policy-entities: %+v, %v", ents, err)
		}
		_, err = root.UserInfo(c, "nobody")
		wantCode(t, "unknown user", err, "XMinioAdminNoSuchUser")
		wantCode(t, "canned policy", root.AddPolicy(c, "readwrite", []byte(app1Policy)), "XMinioAdminInvalidArgument")
		wantCode(t, "bad policy", root.AddPolicy(c, "bad", []byte(`{"Statement":[]}`)), "XMinioMalformedIAMPolicy")
		wantCode(t, "root's key", root.AddUser(c, testAccessKey, "whatever-123", true), "XMinioAdminInvalidArgument")
	})

	t.Run("service account narrowed by an inline policy", func(t *testing.T) {
		readOnly := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::*"]}]}`)
		creds, err := root.AddServiceAccount(c, admin.AddServiceAccountRequest{TargetUser: "alice", AccessKey: "alice-ro", SecretKey: "alice-ro-secret", Policy: readOnly})
		if err != nil || creds.AccessKey != "alice-ro" || creds.SecretKey != "alice-ro-secret" {
			t.Fatalf("add: %+v, %v", creds, err)
		}
		ro := ts.clientAs(t, "alice-ro", "alice-ro-secret")
		if got, err := getString(ro, "app1", "a.txt"); err != nil || got != "hello" {
			t.Errorf("read through the account: %q, %v", got, err)
		}
		wantCode(t, "write through a read-only account", putString(ro, "app1", "b", "x"), "AccessDenied")
		_, err = getString(ro, "app2", "private")
		wantCode(t, "read beyond the parent's rights", err, "AccessDenied")

		// An account alice makes for herself, without admin rights.
		self := ts.adminClient("alice", "alice-secret-1")
		gen, err := self.AddServiceAccount(c, admin.AddServiceAccountRequest{})
		if err != nil || len(gen.AccessKey) != 20 || len(gen.SecretKey) != 40 {
			t.Fatalf("self-service account: %+v, %v", gen, err)
		}
		if err := putString(ts.clientAs(t, gen.AccessKey, gen.SecretKey), "app1", "by-account", "x"); err != nil {
			t.Errorf("the account has alice's rights: %v", err)
		}
		_, err = self.AddServiceAccount(c, admin.AddServiceAccountRequest{TargetUser: "someone-else"})
		wantCode(t, "account for another user", err, "AccessDenied")

		list, err := root.ListServiceAccounts(c, "alice")
		if err != nil || len(list) != 2 {
			t.Fatalf("list: %+v, %v", list, err)
		}
		info, err := root.ServiceAccountInfo(c, "alice-ro")
		if err != nil || info.ParentUser != "alice" || info.ImpliedPolicy || !strings.Contains(info.Policy, "s3:GetObject") {
			t.Fatalf("info: %+v, %v", info, err)
		}
		implied, err := root.ServiceAccountInfo(c, gen.AccessKey)
		if err != nil || !implied.ImpliedPolicy || !strings.Contains(implied.Policy, "arn:aws:s3:::app1") {
			t.Fatalf("info of an account without a policy: %+v, %v", implied, err)
		}
		if err := root.UpdateServiceAccount(c, "alice-ro", admin.UpdateServiceAccountRequest{NewSecretKey: "alice-ro-secret-2"}); err != nil {
			t.Fatal(err)
		}
		_, err = getString(ro, "app1", "a.txt")
		wantCode(t, "old secret after edit", err, "SignatureDoesNotMatch")
		if _, err := getString(ts.clientAs(t, "alice-ro", "alice-ro-secret-2"), "app1", "a.txt"); err != nil {
			t.Errorf("new secret after edit: %v", err)
		}
		keys, err := root.ListAccessKeys(c)
		if err != nil || len(keys["alice"].ServiceAccounts) != 2 {
			t.Fatalf("list-access-keys-bulk: %+v, %v", keys, err)
		}
		if err := root.DeleteServiceAccount(c, "alice-ro"); err != nil {
			t.Fatal(err)
		}
		_, err = getString(ts.clientAs(t, "alice-ro", "alice-ro-secret-2"), "app1", "a.txt")
		wantCode(t, "removed account", err, "InvalidAccessKeyId")
	})

	t.Run("disabled at once", func(t *testing.T) {
		if err := root.SetUserStatus(c, "alice", false); err != nil {
			t.Fatal(err)
		}
		_, err := getString(alice, "app1", "a.txt")
		wantCode(t, "disabled user", err, "InvalidAccessKeyId")
		if err := root.SetUserStatus(c, "alice", true); err != nil {
			t.Fatal(err)
		}
		if _, err := getString(alice, "app1", "a.txt"); err != nil {
			t.Errorf("enabled again: %v", err)
		}
	})

	t.Run("detach", func(t *testing.T) {
		if _, err := root.DetachPolicies(c, "alice", "app1rw"); err != nil {
			t.Fatal(err)
		}
		_, err := getString(alice, "app1", "a.txt")
		wantCode(t, "without policies", err, "AccessDenied")
		if _, err := root.AttachPolicies(c, "alice", "readonly"); err != nil {
			t.Fatal(err)
		}
		if _, err := getString(alice, "app2", "private"); err != nil {
			t.Errorf("readonly: %v", err)
		}
	})
}

func objectsChan(keys ...string) <-chan minio.ObjectInfo {
	ch := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		ch <- minio.ObjectInfo{Key: k}
	}
	close(ch)
	return ch
}

// TestAnonymousAccess drives mc's "anonymous set download|none" calls and
// public access blocks with unsigned requests.
func TestAnonymousAccess(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "pub")
	mustPut(t, ts, "pub", "file.txt", "public bytes", store.Meta{})
	unsigned := func(method, path string, body string) int {
		req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := unsigned("GET", "/pub/file.txt", ""); got != 403 {
		t.Errorf("anonymous GET without a policy: %d", got)
	}
	_, err := ts.client.GetBucketPolicy(c, "pub")
	if err != nil {
		t.Errorf("GetBucketPolicy without one: minio-go answers \"\" and no error for NoSuchBucketPolicy, got %v", err)
	}
	if err := ts.client.SetBucketPolicy(c, "pub", downloadPolicy("pub")); err != nil {
		t.Fatal(err)
	}
	if got, err := ts.client.GetBucketPolicy(c, "pub"); err != nil || !strings.Contains(got, `"s3:GetObject"`) {
		t.Fatalf("GetBucketPolicy: %q, %v", got, err)
	}
	if got := unsigned("GET", "/pub/file.txt", ""); got != 200 {
		t.Errorf("anonymous GET with download: %d\n%s", got, ts.log.String())
	}
	if got := unsigned("GET", "/pub?list-type=2", ""); got != 200 {
		t.Errorf("anonymous list with download: %d", got)
	}
	if got := unsigned("PUT", "/pub/new", "x"); got != 403 {
		t.Errorf("anonymous PUT with download: %d", got)
	}
	if got := unsigned("GET", "/", ""); got != 403 {
		t.Errorf("anonymous ListBuckets: %d", got)
	}
	resp, body := ts.do(t, "GET", "/pub?policyStatus", nil, nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("<IsPublic>true</IsPublic>")) {
		t.Errorf("policy status: %d %s", resp.StatusCode, body)
	}

	// RestrictPublicBuckets ignores the public policy for anonymous
	// requests; BlockPublicPolicy refuses a new one.
	pab := `<PublicAccessBlockConfiguration><BlockPublicPolicy>true</BlockPublicPolicy><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>`
	if resp, body := ts.do(t, "PUT", "/pub?publicAccessBlock", []byte(pab), nil); resp.StatusCode != 200 {
		t.Fatalf("put block: %d %s", resp.StatusCode, body)
	}
	if got := unsigned("GET", "/pub/file.txt", ""); got != 403 {
		t.Errorf("anonymous GET under RestrictPublicBuckets: %d", got)
	}
	wantCode(t, "public policy under BlockPublicPolicy", ts.client.SetBucketPolicy(c, "pub", downloadPolicy("pub")), "AccessDenied")
	resp, body = ts.do(t, "GET", "/pub?publicAccessBlock", nil, nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("<RestrictPublicBuckets>true</RestrictPublicBuckets>")) || !bytes.Contains(body, []byte("<BlockPublicAcls>false</BlockPublicAcls>")) {
		t.Errorf("get block: %d %s", resp.StatusCode, body)
	}
	if resp, _ := ts.do(t, "DELETE", "/pub?publicAccessBlock", nil, nil); resp.StatusCode != 204 {
		t.Errorf("delete block: %d", resp.StatusCode)
	}
	if got := unsigned("GET", "/pub/file.txt", ""); got != 200 {
		t.Errorf("anonymous GET once the block is gone: %d", got)
	}
	resp, body = ts.do(t, "GET", "/pub?publicAccessBlock", nil, nil)
	wantError(t, resp, body, 404, "NoSuchPublicAccessBlockConfiguration")

	// mc anonymous set none.
	if err := ts.client.SetBucketPolicy(c, "pub", ""); err != nil {
		t.Fatal(err)
	}
	if got := unsigned("GET", "/pub/file.txt", ""); got != 403 {
		t.Errorf("anonymous GET after none: %d", got)
	}
	resp, body = ts.do(t, "GET", "/pub?policy", nil, nil)
	wantError(t, resp, body, 404, "NoSuchBucketPolicy")

	// A policy may only speak of its bucket.
	other := strings.ReplaceAll(downloadPolicy("pub"), "arn:aws:s3:::pub/*", "arn:aws:s3:::other/*")
	resp, body = ts.do(t, "PUT", "/pub?policy", []byte(other), nil)
	wantError(t, resp, body, 400, "MalformedPolicy")
	// An upload policy lets an unsigned PUT in.
	upload := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:PutObject"],"Resource":["arn:aws:s3:::pub/drop/*"]}]}`
	if err := ts.client.SetBucketPolicy(c, "pub", upload); err != nil {
		t.Fatal(err)
	}
	if got := unsigned("PUT", "/pub/drop/f", "dropped"); got != 200 {
		t.Errorf("anonymous PUT with upload: %d", got)
	}
	if got := unsigned("PUT", "/pub/elsewhere", "x"); got != 403 {
		t.Errorf("anonymous PUT outside the policy: %d", got)
	}
}

// TestIdentitiesPersist: users survive a restart; changed root
// credentials seal them until their secret is set again.
func TestIdentitiesPersist(t *testing.T) {
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 512 << 20}); err != nil {
		t.Fatal(err)
	}
	open := func(creds map[string]string) *testServer {
		st, err := store.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		return newTestServerOn(t, st, func(c *Config) { c.Credentials = creds })
	}
	rootCreds := map[string]string{testAccessKey: testSecretKey}
	ts := open(rootCreds)
	c := ctx(t)
	root := ts.adminClient(testAccessKey, testSecretKey)
	mustBucket(t, ts, "app1")
	if err := root.AddPolicy(c, "app1rw", []byte(app1Policy)); err != nil {
		t.Fatal(err)
	}
	if err := root.AddUser(c, "bob", "bob-secret-1", true); err != nil {
		t.Fatal(err)
	}
	if _, err := root.AttachPolicies(c, "bob", "app1rw"); err != nil {
		t.Fatal(err)
	}
	closeServer(t, ts)

	ts = open(rootCreds)
	if err := putString(ts.clientAs(t, "bob", "bob-secret-1"), "app1", "k", "v"); err != nil {
		t.Fatalf("bob after a restart: %v", err)
	}
	closeServer(t, ts)

	newRoot := map[string]string{"NEWROOTKEY": "new-root-secret-000"}
	ts = open(newRoot)
	wantCode(t, "sealed under the old root", putString(ts.clientAs(t, "bob", "bob-secret-1"), "app1", "k", "v"), "InvalidAccessKeyId")
	if !strings.Contains(ts.log.String(), "sealed under other root credentials") {
		t.Error("no warning about sealed access keys in the log")
	}
	if err := ts.adminClient("NEWROOTKEY", "new-root-secret-000").AddUser(c, "bob", "bob-secret-2", true); err != nil {
		t.Fatal(err)
	}
	if err := putString(ts.clientAs(t, "bob", "bob-secret-2"), "app1", "k", "v"); err != nil {
		t.Errorf("bob with a new secret keeps his policy: %v", err)
	}
}

// closeServer stops a test server early (its cleanup then finds it
// closed).
func closeServer(t *testing.T, ts *testServer) {
	t.Helper()
	if err := ts.store.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExistingObjectTagCondition: a policy may test the tags of the
// object a request reads.
func TestExistingObjectTagCondition(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	root := ts.adminClient(testAccessKey, testSecretKey)
	mustBucket(t, ts, "docs")
	mustPut(t, ts, "docs", "open", "o", store.Meta{Tags: []store.Tag{{Key: "class", Value: "public"}}})
	mustPut(t, ts, "docs", "closed", "c", store.Meta{Tags: []store.Tag{{Key: "class", Value: "internal"}}})
	mustPut(t, ts, "docs", "untagged", "u", store.Meta{})
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::docs/*",
		"Condition":{"StringEquals":{"s3:ExistingObjectTag/class":"public"}}}]}`
	if err := root.AddPolicy(c, "public-docs", []byte(policy)); err != nil {
		t.Fatal(err)
	}
	if err := root.AddUser(c, "reader", "reader-secret", true); err != nil {
		t.Fatal(err)
	}
	if _, err := root.AttachPolicies(c, "reader", "public-docs"); err != nil {
		t.Fatal(err)
	}
	reader := ts.clientAs(t, "reader", "reader-secret")
	if got, err := getString(reader, "docs", "open"); err != nil || got != "o" {
		t.Errorf("tagged public: %q, %v", got, err)
	}
	for _, key := range []string{"closed", "untagged"} {
		_, err := getString(reader, "docs", key)
		wantCode(t, key, err, "AccessDenied")
	}
}

// TestCopySourceBucketPolicy: the source of a copy is decided by the
// source bucket's policy, which may grant a user what its own policies
// do not.
func TestCopySourceBucketPolicy(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	root := ts.adminClient(testAccessKey, testSecretKey)
	for _, b := range []string{"app1", "shared"} {
		mustBucket(t, ts, b)
	}
	mustPut(t, ts, "shared", "doc", "shared bytes", store.Meta{})
	if err := root.AddPolicy(c, "app1only", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::app1","arn:aws:s3:::app1/*"]}]}`)); err != nil {
		t.Fatal(err)
	}
	if err := root.AddUser(c, "alice", "alice-secret-1", true); err != nil {
		t.Fatal(err)
	}
	if _, err := root.AttachPolicies(c, "alice", "app1only"); err != nil {
		t.Fatal(err)
	}
	alice := ts.clientAs(t, "alice", "alice-secret-1")
	copyDoc := func() error {
		_, err := alice.CopyObject(c, minio.CopyDestOptions{Bucket: "app1", Object: "copy"}, minio.CopySrcOptions{Bucket: "shared", Object: "doc"})
		return err
	}
	wantCode(t, "copy without a grant on the source", copyDoc(), "AccessDenied")
	grant := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam:::user/alice"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/*"}]}`
	if err := ts.client.SetBucketPolicy(c, "shared", grant); err != nil {
		t.Fatal(err)
	}
	if err := copyDoc(); err != nil {
		t.Fatalf("copy with the source bucket's grant: %v", err)
	}
	if got, err := getString(alice, "app1", "copy"); err != nil || got != "shared bytes" {
		t.Errorf("the copy: %q, %v", got, err)
	}
}
