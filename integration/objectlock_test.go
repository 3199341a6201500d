package integration

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestObjectLockAwsCLI drives object lock through the real binary with
// the aws CLI (create-bucket --object-lock-enabled-for-bucket,
// put-object-lock-configuration, put-object with lock headers,
// put/get-object-retention, put/get-object-legal-hold, delete-object
// refused and --bypass-governance-retention) and minio-go for the
// checks; then, with the server stopped, the kernel: xfs_repair -n is
// clean, a read-only mount shows lsattr's "i" on exactly the versions
// under COMPLIANCE retention or a legal hold, and a read-write mount
// refuses to remove, rename or write them.
func TestObjectLockAwsCLI(t *testing.T) {
	s := startServer(t, "1G")
	aws, home := awsClient(t, s)
	c := s.client(t)
	ctx := context.Background()
	body := filepath.Join(home, "body")
	if err := os.WriteFile(body, []byte("kept for a while"), 0o644); err != nil {
		t.Fatal(err)
	}
	const b = "worm"
	aws.run("s3api", "create-bucket", "--bucket", b, "--object-lock-enabled-for-bucket")
	var state struct{ Status string }
	decode(t, aws.run("s3api", "get-bucket-versioning", "--bucket", b), &state)
	if state.Status != "Enabled" {
		t.Fatalf("versioning of a bucket made with object lock: %+v", state)
	}
	aws.run("s3api", "put-object-lock-configuration", "--bucket", b, "--object-lock-configuration",
		`{"ObjectLockEnabled":"Enabled","Rule":{"DefaultRetention":{"Mode":"GOVERNANCE","Days":1}}}`)
	var cfg struct {
		ObjectLockConfiguration struct {
			ObjectLockEnabled string
			Rule              struct {
				DefaultRetention struct {
					Mode string
					Days int
				}
			}
		}
	}
	decode(t, aws.run("s3api", "get-object-lock-configuration", "--bucket", b), &cfg)
	if d := cfg.ObjectLockConfiguration.Rule.DefaultRetention; cfg.ObjectLockConfiguration.ObjectLockEnabled != "Enabled" || d.Mode != "GOVERNANCE" || d.Days != 1 {
		t.Fatalf("get-object-lock-configuration: %+v", cfg)
	}
	if out, err := aws.try("s3api", "put-bucket-versioning", "--bucket", b, "--versioning-configuration", "Status=Suspended"); err == nil || !strings.Contains(out, "InvalidBucketState") {
		t.Errorf("suspending a bucket with object lock: %v\n%s", err, out)
	}

	put := func(key string, args ...string) string {
		t.Helper()
		var r struct{ VersionId string }
		decode(t, aws.run(append([]string{"s3api", "put-object", "--bucket", b, "--key", key, "--body", body}, args...)...), &r)
		return r.VersionId
	}
	until := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	compliance := put("ledger.csv", "--object-lock-mode", "COMPLIANCE", "--object-lock-retain-until-date", until)
	held := put("evidence.bin", "--object-lock-legal-hold-status", "ON")
	governed := put("draft.txt") // the bucket's default: GOVERNANCE, one day
	current := put("ledger.csv") // the COMPLIANCE version becomes noncurrent
	var ret struct {
		Retention struct{ Mode, RetainUntilDate string }
	}
	decode(t, aws.run("s3api", "get-object-retention", "--bucket", b, "--key", "draft.txt", "--version-id", governed), &ret)
	if ret.Retention.Mode != "GOVERNANCE" {
		t.Errorf("default retention: %+v", ret)
	}
	var head struct{ ObjectLockMode, ObjectLockRetainUntilDate, ObjectLockLegalHoldStatus string }
	decode(t, aws.run("s3api", "head-object", "--bucket", b, "--key", "ledger.csv", "--version-id", compliance), &head)
	if head.ObjectLockMode != "COMPLIANCE" || head.ObjectLockRetainUntilDate == "" {
		t.Errorf("head-object of the COMPLIANCE version: %+v", head)
	}

	// Refused: deleting locked versions, shortening COMPLIANCE.
	for _, v := range []struct{ key, id string }{{"ledger.csv", compliance}, {"evidence.bin", held}, {"draft.txt", governed}} {
		if out, err := aws.try("s3api", "delete-object", "--bucket", b, "--key", v.key, "--version-id", v.id); err == nil || !strings.Contains(out, "AccessDenied") {
			t.Errorf("delete-object %s --version-id %s: %v\n%s", v.key, v.id, err, out)
		}
	}
	sooner := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if out, err := aws.try("s3api", "put-object-retention", "--bucket", b, "--key", "ledger.csv", "--version-id", compliance,
		"--retention", `{"Mode":"COMPLIANCE","RetainUntilDate":"`+sooner+`"}`, "--bypass-governance-retention"); err == nil || !strings.Contains(out, "AccessDenied") {
		t.Errorf("shortening COMPLIANCE retention: %v\n%s", err, out)
	}
	// Allowed: extending it, a GOVERNANCE delete with bypass, a legal
	// hold put on and taken off.
	later := time.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339)
	aws.run("s3api", "put-object-retention", "--bucket", b, "--key", "ledger.csv", "--version-id", compliance,
		"--retention", `{"Mode":"COMPLIANCE","RetainUntilDate":"`+later+`"}`)
	aws.run("s3api", "delete-object", "--bucket", b, "--key", "draft.txt", "--version-id", governed, "--bypass-governance-retention")
	aws.run("s3api", "put-object-legal-hold", "--bucket", b, "--key", "ledger.csv", "--version-id", current, "--legal-hold", "Status=ON")
	aws.run("s3api", "put-object-legal-hold", "--bucket", b, "--key", "ledger.csv", "--version-id", current, "--legal-hold", "Status=OFF")
	var hold struct{ LegalHold struct{ Status string } }
	decode(t, aws.run("s3api", "get-object-legal-hold", "--bucket", b, "--key", "evidence.bin", "--version-id", held), &hold)
	if hold.LegalHold.Status != "ON" {
		t.Errorf("get-object-legal-hold: %+v", hold)
	}
	// A delete marker is always allowed, even over a held version.
	aws.run("s3api", "delete-object", "--bucket", b, "--key", "evidence.bin")
	if _, err := c.StatObject(ctx, b, "evidence.bin", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Errorf("evidence.bin behind its delete marker: %v", err)
	}
	st, err := c.StatObject(ctx, b, "evidence.bin", minio.StatObjectOptions{VersionID: held})
	if err != nil || st.Size != int64(len("kept for a while")) {
		t.Errorf("the held version: %+v %v", st, err)
	}

	// The kernel. Locked: the COMPLIANCE version (noncurrent now) and the
	// held one; not the current ledger.csv (its GOVERNANCE default and a
	// legal hold taken off).
	s.stop(t)
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount, "lsattr")
	oracle.Repair(t, s.Volume)
	mnt := oracle.Mount(t, s.Volume, true)
	// A noncurrent version is a file of its key's directory in the
	// versions tree, or, when a delete marker hides the key's only one
	// (file form, store package doc), that file itself.
	versionPath := func(key, id string) string {
		held := filepath.Join(b, ".xfs3.versions", ".xfs3.o."+key)
		if fi, err := os.Stat(filepath.Join(mnt, held)); err == nil && fi.Mode().IsRegular() {
			return held
		}
		return filepath.Join(held, id)
	}
	flags := map[string]bool{
		versionPath("ledger.csv", compliance): true,
		versionPath("evidence.bin", held):     true,
		filepath.Join(b, "ledger.csv"):        false,
	}
	for p, want := range flags {
		out, err := exec.Command("lsattr", "-d", filepath.Join(mnt, p)).CombinedOutput()
		if err != nil {
			t.Fatalf("lsattr %s: %v: %s", p, err, out)
		}
		attrs, _, _ := strings.Cut(string(out), " ")
		if strings.Contains(attrs, "i") != want {
			t.Errorf("lsattr %s: %q, want immutable %v", p, attrs, want)
		}
	}
	oracle.Unmount(t, mnt)
	mnt = oracle.Mount(t, s.Volume, false)
	for p, locked := range flags {
		if !locked {
			continue
		}
		full := filepath.Join(mnt, p)
		if err := os.Remove(full); !errors.Is(err, syscall.EPERM) {
			t.Errorf("rm %s on a read-write kernel mount: %v, want EPERM", p, err)
		}
		if err := os.Rename(full, full+".moved"); !errors.Is(err, syscall.EPERM) {
			t.Errorf("mv %s: %v, want EPERM", p, err)
		}
		if f, err := os.OpenFile(full, os.O_WRONLY, 0); !errors.Is(err, syscall.EPERM) {
			if f != nil {
				f.Close()
			}
			t.Errorf("open %s for writing: %v, want EPERM", p, err)
		}
	}
	oracle.Unmount(t, mnt)
	oracle.Repair(t, s.Volume)
}

// TestObjectLockBoto3 runs testdata/objectlock.py against the binary:
// object lock as boto3 drives it, judged here.
func TestObjectLockBoto3(t *testing.T) {
	py := boto3Python(t)
	s := startServer(t, "1G")
	cmd := exec.Command(py, "testdata/objectlock.py", s.URL, accessKey, secretKey, region)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("boto3 script: %v\n%s", err, stderr.String())
	}
	var out struct {
		Versioning  string `json:"versioning"`
		DefaultRule struct {
			Mode  string
			Years int
		} `json:"default_rule"`
		DefaultHead struct {
			Mode      string `json:"mode"`
			UntilDays int    `json:"until_days"`
		} `json:"default_head"`
		HeldHead struct {
			Mode string `json:"mode"`
			Hold string `json:"hold"`
		} `json:"held_head"`
		ExtendGovernance  string `json:"extend_governance"`
		ShortenGovernance string `json:"shorten_governance"`
		PastDate          string `json:"past_date"`
		RetentionG        struct {
			Mode    string `json:"mode"`
			Minutes int    `json:"minutes"`
		} `json:"retention_g"`
		HoldH                   string `json:"hold_h"`
		DeleteGoverned          string `json:"delete_governed"`
		DeleteDefaultCompliance string `json:"delete_default_compliance"`
		DeleteObjects           struct {
			Deleted []string   `json:"deleted"`
			Errors  [][]string `json:"errors"`
		} `json:"delete_objects"`
		DeleteHAfterHoldOff string   `json:"delete_h_after_hold_off"`
		VersionsLeft        []string `json:"versions_left"`
	}
	decode(t, string(raw), &out)
	checks := []struct {
		what      string
		ok        bool
		got, want any
	}{
		{"versioning", out.Versioning == "Enabled", out.Versioning, "Enabled"},
		{"default rule", out.DefaultRule.Mode == "COMPLIANCE" && out.DefaultRule.Years == 1, out.DefaultRule, "COMPLIANCE 1 year"},
		{"default applied", out.DefaultHead.Mode == "COMPLIANCE" && out.DefaultHead.UntilDays >= 364, out.DefaultHead, "COMPLIANCE for a year"},
		{"held head", out.HeldHead.Mode == "GOVERNANCE" && out.HeldHead.Hold == "ON", out.HeldHead, "GOVERNANCE, ON"},
		{"extend governance", out.ExtendGovernance == "", out.ExtendGovernance, "success"},
		{"shorten governance", out.ShortenGovernance == "AccessDenied", out.ShortenGovernance, "AccessDenied"},
		{"past date", out.PastDate == "InvalidArgument", out.PastDate, "InvalidArgument"},
		{"retention", out.RetentionG.Mode == "GOVERNANCE" && out.RetentionG.Minutes >= 118, out.RetentionG, "GOVERNANCE, two hours"},
		{"legal hold", out.HoldH == "ON", out.HoldH, "ON"},
		{"delete governed", out.DeleteGoverned == "AccessDenied", out.DeleteGoverned, "AccessDenied"},
		{"delete compliance with bypass", out.DeleteDefaultCompliance == "AccessDenied", out.DeleteDefaultCompliance, "AccessDenied"},
		{"delete_objects", strings.Join(out.DeleteObjects.Deleted, ",") == "g" && len(out.DeleteObjects.Errors) == 1 &&
			strings.Join(out.DeleteObjects.Errors[0], " ") == "h AccessDenied", out.DeleteObjects, "g deleted, h AccessDenied"},
		{"delete after the hold", out.DeleteHAfterHoldOff == "", out.DeleteHAfterHoldOff, "success"},
		{"versions left", strings.Join(out.VersionsLeft, ",") == "d", out.VersionsLeft, "d"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %+v, want %v", c.what, c.got, c.want)
		}
	}
	s.stop(t)
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, s.Volume)
}

// TestObjectLockMinio: minio-go against the binary, with the calls mc
// makes for mb --with-lock, retention set|info|clear, legalhold
// set|info|clear and rm of a locked version.
func TestObjectLockMinio(t *testing.T) {
	s := startServer(t, "1G")
	c := s.client(t)
	ctx := context.Background()
	const b = "mworm"
	if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{ObjectLocking: true, Region: region}); err != nil {
		t.Fatal(err)
	}
	comp, gov, days, unit := minio.Compliance, minio.Governance, uint(1), minio.Days
	if err := c.SetObjectLockConfig(ctx, b, &comp, &days, &unit); err != nil {
		t.Fatal(err)
	}
	if on, mode, validity, u, err := c.GetObjectLockConfig(ctx, b); err != nil || on != "Enabled" || *mode != comp || *validity != 1 || *u != unit {
		t.Fatalf("GetObjectLockConfig: %q %v %v %v %v", on, mode, validity, u, err)
	}
	info := mustPut(t, ctx, c, b, "k", []byte("compliance by default"), minio.PutObjectOptions{})
	if err := c.RemoveObject(ctx, b, "k", minio.RemoveObjectOptions{VersionID: info.VersionID, GovernanceBypass: true}); minio.ToErrorResponse(err).Code != "AccessDenied" {
		t.Fatalf("rm of a COMPLIANCE version: %v", err)
	}
	// retention set GOVERNANCE on a new version, info, clear.
	g := mustPut(t, ctx, c, b, "g", []byte("governed"), minio.PutObjectOptions{Mode: gov, RetainUntilDate: time.Now().Add(time.Hour)})
	until := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	if err := c.PutObjectRetention(ctx, b, "g", minio.PutObjectRetentionOptions{VersionID: g.VersionID, Mode: &gov, RetainUntilDate: &until}); err != nil {
		t.Fatal(err)
	}
	if mode, got, err := c.GetObjectRetention(ctx, b, "g", g.VersionID); err != nil || *mode != gov || !got.Equal(until) {
		t.Fatalf("GetObjectRetention: %v %v %v", mode, got, err)
	}
	if err := c.PutObjectRetention(ctx, b, "g", minio.PutObjectRetentionOptions{VersionID: g.VersionID, GovernanceBypass: true}); err != nil {
		t.Fatalf("retention clear: %v", err)
	}
	// legalhold set, info, clear.
	on, off := minio.LegalHoldEnabled, minio.LegalHoldDisabled
	if err := c.PutObjectLegalHold(ctx, b, "g", minio.PutObjectLegalHoldOptions{VersionID: g.VersionID, Status: &on}); err != nil {
		t.Fatal(err)
	}
	if st, err := c.GetObjectLegalHold(ctx, b, "g", minio.GetObjectLegalHoldOptions{VersionID: g.VersionID}); err != nil || *st != on {
		t.Fatalf("GetObjectLegalHold: %v %v", st, err)
	}
	if err := c.RemoveObject(ctx, b, "g", minio.RemoveObjectOptions{VersionID: g.VersionID, GovernanceBypass: true}); minio.ToErrorResponse(err).Code != "AccessDenied" {
		t.Fatalf("rm of a held version: %v", err)
	}
	if err := c.PutObjectLegalHold(ctx, b, "g", minio.PutObjectLegalHoldOptions{VersionID: g.VersionID, Status: &off}); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveObject(ctx, b, "g", minio.RemoveObjectOptions{VersionID: g.VersionID}); err != nil {
		t.Fatalf("rm once retention and hold are cleared: %v", err)
	}
	st, err := c.StatObject(ctx, b, "k", minio.StatObjectOptions{VersionID: info.VersionID})
	if err != nil || st.Metadata.Get("X-Amz-Object-Lock-Mode") != "COMPLIANCE" {
		t.Fatalf("StatObject of the COMPLIANCE version: %v %v", st.Metadata, err)
	}
	s.stop(t)
	oracle.Require(t, oracle.ToolRepair)
	oracle.Repair(t, s.Volume)
}
