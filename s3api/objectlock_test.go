package s3api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/xfs3/xfs3/store"
)

// TestObjectLockWire drives object lock as minio-go (and mc, which is
// built on it) sends it: a bucket made with object lock, its default
// retention, retention and legal holds per version, the lock headers of
// writes and reads, deletes refused and bypassed, and a user without
// s3:BypassGovernanceRetention whose bypass is ignored.
func TestObjectLockWire(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	cl := ts.client
	if err := cl.MakeBucket(c, "worm", minio.MakeBucketOptions{ObjectLocking: true, Region: testRegion}); err != nil {
		t.Fatal(err)
	}
	if v, err := cl.GetBucketVersioning(c, "worm"); err != nil || v.Status != "Enabled" {
		t.Fatalf("versioning of a bucket made with object lock: %+v %v", v, err)
	}
	if err := cl.SuspendVersioning(c, "worm"); err == nil || minio.ToErrorResponse(err).Code != "InvalidBucketState" {
		t.Fatalf("suspend: %v", err)
	}
	enabled, mode, validity, unit, err := cl.GetObjectLockConfig(c, "worm")
	if err != nil || enabled != "Enabled" || mode != nil || validity != nil || unit != nil {
		t.Fatalf("lock config: %q %v %v %v %v", enabled, mode, validity, unit, err)
	}
	gov, days := minio.Governance, uint(2)
	dayUnit := minio.Days
	if err := cl.SetObjectLockConfig(c, "worm", &gov, &days, &dayUnit); err != nil {
		t.Fatal(err)
	}
	if _, mode, validity, unit, err := cl.GetObjectLockConfig(c, "worm"); err != nil || *mode != gov || *validity != 2 || *unit != minio.Days {
		t.Fatalf("lock config with a default: %v %v %v %v", mode, validity, unit, err)
	}

	// The default applies to a write that names no lock.
	info, err := cl.PutObject(c, "worm", "default", strings.NewReader("d"), 1, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, until, err := cl.GetObjectRetention(c, "worm", "default", info.VersionID)
	if err != nil || *m != gov || until.Before(time.Now().Add(47*time.Hour)) {
		t.Fatalf("default retention: %v %v %v", m, until, err)
	}

	// A write's own lock, shown by HEAD.
	comp := minio.Compliance
	retainUntil := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	info, err = cl.PutObject(c, "worm", "k", strings.NewReader("v1"), 2, minio.PutObjectOptions{
		Mode: comp, RetainUntilDate: retainUntil, LegalHold: minio.LegalHoldEnabled})
	if err != nil {
		t.Fatal(err)
	}
	locked := info.VersionID
	resp, rb := ts.do(t, "HEAD", "/worm/k?versionId="+locked, nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get(hdrLockMode) != "COMPLIANCE" || resp.Header.Get(hdrLegalHold) != "ON" ||
		resp.Header.Get(hdrLockUntil) != isoTime(retainUntil) {
		t.Fatalf("HEAD of a locked version: %d %v %s", resp.StatusCode, resp.Header, rb)
	}
	status, err := cl.GetObjectLegalHold(c, "worm", "k", minio.GetObjectLegalHoldOptions{VersionID: locked})
	if err != nil || *status != minio.LegalHoldEnabled {
		t.Fatalf("legal hold: %v %v", status, err)
	}

	// Protected: no delete by ID, with or without bypass; a marker is fine.
	for _, bypass := range []bool{false, true} {
		err := cl.RemoveObject(c, "worm", "k", minio.RemoveObjectOptions{VersionID: locked, GovernanceBypass: bypass})
		if minio.ToErrorResponse(err).Code != "AccessDenied" || !strings.Contains(err.Error(), "object lock") {
			t.Fatalf("delete of a locked version (bypass %v): %v", bypass, err)
		}
	}
	if err := cl.RemoveObject(c, "worm", "k", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("delete marker over a locked version: %v", err)
	}
	errs := cl.RemoveObjects(c, "worm", objectsVersionChan(minio.ObjectInfo{Key: "k", VersionID: locked}), minio.RemoveObjectsOptions{GovernanceBypass: true})
	for e := range errs {
		if minio.ToErrorResponse(e.Err).Code != "AccessDenied" {
			t.Fatalf("DeleteObjects of a locked version: %+v", e)
		}
	}

	// COMPLIANCE can be extended, not shortened, by anyone.
	later, sooner := retainUntil.Add(time.Hour), retainUntil.Add(-time.Minute)
	if err := cl.PutObjectRetention(c, "worm", "k", minio.PutObjectRetentionOptions{VersionID: locked, Mode: &comp, RetainUntilDate: &later}); err != nil {
		t.Fatalf("extend: %v", err)
	}
	err = cl.PutObjectRetention(c, "worm", "k", minio.PutObjectRetentionOptions{VersionID: locked, Mode: &comp, RetainUntilDate: &sooner, GovernanceBypass: true})
	wantCode(t, "shorten COMPLIANCE", err, "AccessDenied")
	past := time.Now().Add(-time.Hour)
	err = cl.PutObjectRetention(c, "worm", "k", minio.PutObjectRetentionOptions{VersionID: locked, Mode: &comp, RetainUntilDate: &past})
	wantCode(t, "a date in the past", err, "InvalidArgument")

	// GOVERNANCE: a user without the bypass permission cannot remove it;
	// root can.
	govUntil := time.Now().Add(time.Hour)
	info, err = cl.PutObject(c, "worm", "g", strings.NewReader("g"), 1, minio.PutObjectOptions{Mode: gov, RetainUntilDate: govUntil})
	if err != nil {
		t.Fatal(err)
	}
	root := ts.adminClient(testAccessKey, testSecretKey)
	const noBypass = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::worm","arn:aws:s3:::worm/*"]},
 {"Effect":"Deny","Action":["s3:BypassGovernanceRetention"],"Resource":["arn:aws:s3:::worm/*"]}]}`
	if err := root.AddPolicy(c, "nobypass", []byte(noBypass)); err != nil {
		t.Fatal(err)
	}
	if err := root.AddUser(c, "bob", "bob-secret-12", true); err != nil {
		t.Fatal(err)
	}
	if _, err := root.AttachPolicies(c, "bob", "nobypass"); err != nil {
		t.Fatal(err)
	}
	bob := ts.clientAs(t, "bob", "bob-secret-12")
	err = bob.RemoveObject(c, "worm", "g", minio.RemoveObjectOptions{VersionID: info.VersionID, GovernanceBypass: true})
	wantCode(t, "bypass without the permission", err, "AccessDenied")
	if err := cl.RemoveObject(c, "worm", "g", minio.RemoveObjectOptions{VersionID: info.VersionID, GovernanceBypass: true}); err != nil {
		t.Fatalf("root's bypass: %v", err)
	}

	// mc retention clear: an empty Retention, with the bypass.
	info, err = cl.PutObject(c, "worm", "g2", strings.NewReader("g"), 1, minio.PutObjectOptions{Mode: gov, RetainUntilDate: govUntil})
	if err != nil {
		t.Fatal(err)
	}
	err = cl.PutObjectRetention(c, "worm", "g2", minio.PutObjectRetentionOptions{VersionID: info.VersionID})
	wantCode(t, "clear GOVERNANCE without the bypass", err, "AccessDenied")
	if err := cl.PutObjectRetention(c, "worm", "g2", minio.PutObjectRetentionOptions{VersionID: info.VersionID, GovernanceBypass: true}); err != nil {
		t.Fatalf("clear GOVERNANCE with the bypass: %v", err)
	}
	_, _, err = cl.GetObjectRetention(c, "worm", "g2", info.VersionID)
	wantCode(t, "retention after clear", err, "NoSuchObjectLockConfiguration")
	if err := cl.RemoveObject(c, "worm", "g2", minio.RemoveObjectOptions{VersionID: info.VersionID}); err != nil {
		t.Fatalf("delete after clear: %v", err)
	}

	// Legal hold off, retention still COMPLIANCE: still protected.
	off := minio.LegalHoldDisabled
	if err := cl.PutObjectLegalHold(c, "worm", "k", minio.PutObjectLegalHoldOptions{VersionID: locked, Status: &off}); err != nil {
		t.Fatal(err)
	}
	err = cl.RemoveObject(c, "worm", "k", minio.RemoveObjectOptions{VersionID: locked})
	wantCode(t, "delete under COMPLIANCE", err, "AccessDenied")

	// Raw requests: errors S3 gives.
	for _, c := range []struct {
		method, target, body string
		header               http.Header
		status               int
		code                 string
	}{
		{"PUT", "/worm?object-lock", `<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>`, nil, 400, "MalformedXML"},
		{"PUT", "/worm?object-lock", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, nil, 400, "InvalidArgument"},
		{"PUT", "/worm/k?retention", `<Retention><Mode>GOVERNANCE</Mode></Retention>`, nil, 400, "InvalidArgument"},
		{"PUT", "/worm/k?legal-hold", `<LegalHold><Status>MAYBE</Status></LegalHold>`, nil, 400, "MalformedXML"},
		{"PUT", "/worm/n", "x", http.Header{hdrLockMode: {"GOVERNANCE"}}, 400, "InvalidArgument"},
		{"PUT", "/worm/n", "x", http.Header{hdrLockMode: {"WORM"}, hdrLockUntil: {isoTime(govUntil)}}, 400, "InvalidArgument"},
		{"GET", "/worm/k?retention&versionId=" + locked[:10], "", nil, 400, "InvalidArgument"},
		{"GET", "/worm/k?retention", "", nil, 404, "NoSuchKey"}, // its latest version is the marker
		{"GET", "/worm/k?legal-hold&versionId=null", "", nil, 404, "NoSuchVersion"},
	} {
		resp, rb := ts.do(t, c.method, c.target, []byte(c.body), c.header)
		wantError(t, resp, rb, c.status, c.code)
	}
	mustBucket(t, ts, "plain")
	if err := cl.EnableVersioning(c, "plain"); err != nil {
		t.Fatal(err)
	}
	if err := cl.SetObjectLockConfig(c, "plain", nil, nil, nil); err != nil {
		t.Fatalf("object lock on an existing versioned bucket: %v", err)
	}
	if cfg, err := ts.store.Locks().Config("plain"); err != nil || !cfg.Enabled {
		t.Fatalf("plain: %+v %v", cfg, err)
	}
}

func objectsVersionChan(objs ...minio.ObjectInfo) <-chan minio.ObjectInfo {
	ch := make(chan minio.ObjectInfo, len(objs))
	for _, o := range objs {
		ch <- o
	}
	close(ch)
	return ch
}

// FuzzObjectLockInput: the bodies and headers of object lock are
// decoded or refused with an S3 error, never a panic, and what is
// accepted is valid for the store.
func FuzzObjectLockInput(f *testing.F) {
	f.Add(`<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></Retention>`, "ON")
	f.Add(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, "OFF")
	f.Add(`<LegalHold><Status>ON</Status></LegalHold>`, "maybe")
	f.Fuzz(func(t *testing.T, body, hold string) {
		var ret retentionXML
		if decodeXML([]byte(body), &ret) == nil {
			if r, err := parseRetention(ret.Mode, ret.RetainUntilDate, "Mode", "RetainUntilDate"); err == nil && r.Mode != "" {
				if err := store.CheckRetention(r, time.Now().Add(-time.Minute)); err != nil {
					t.Fatalf("accepted %+v: %v", r, err)
				}
			}
		}
		var cfg objectLockConfiguration
		_ = decodeXML([]byte(body), &cfg)
		var lh legalHoldXML
		if decodeXML([]byte(body), &lh) == nil {
			parseLegalHold(lh.Status)
		}
		h := http.Header{hdrLockMode: {ret.Mode}, hdrLockUntil: {ret.RetainUntilDate}, hdrLegalHold: {hold}}
		if lock, err := lockFromHeaders(h); err == nil && lock.Mode != "" && lock.Until.IsZero() {
			t.Fatalf("accepted a mode without a date: %+v", lock)
		}
	})
}

// TestObjectLockForm: a browser form's lock fields lock the upload.
func TestObjectLockForm(t *testing.T) {
	ts := newTestServer(t)
	if err := ts.store.CreateBucket("wormforms"); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Locks().Enable("wormforms"); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	conditions := []any{
		map[string]string{"bucket": "wormforms"},
		[]any{"eq", "$key", "signed.pdf"},
		[]any{"starts-with", "$x-amz-object-lock-mode", ""},
		[]any{"starts-with", "$x-amz-object-lock-retain-until-date", ""},
		[]any{"starts-with", "$x-amz-object-lock-legal-hold", ""},
	}
	fields := append(signedForm(t, time.Now().Add(time.Hour), conditions), formField{"key", "signed.pdf"},
		formField{"x-amz-object-lock-mode", "COMPLIANCE"}, formField{"x-amz-object-lock-retain-until-date", until.Format(time.RFC3339)},
		formField{"x-amz-object-lock-legal-hold", "ON"})
	resp, body := ts.postForm(t, "wormforms", fields, "signed.pdf", []byte("%PDF"))
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("form upload: %d %s", resp.StatusCode, body)
	}
	lock, _, err := ts.store.Locks().Get("wormforms", "signed.pdf", "")
	if err != nil || lock.Mode != "COMPLIANCE" || !lock.Until.Equal(until) || !lock.LegalHold {
		t.Fatalf("the form's lock: %+v %v", lock, err)
	}
}
