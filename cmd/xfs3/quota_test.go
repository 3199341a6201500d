package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// quotaVolume makes a volume holding buckets photos (two objects) and
// logs (empty), closed.
func quotaVolume(t *testing.T) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"photos", "logs"} {
		if err := st.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"2024/a.jpg", "b.jpg"} {
		body := strings.Repeat("p", 10000)
		if _, err := st.PutObject("photos", k, strings.NewReader(body), int64(len(body)), store.Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return img
}

// quotaJSON runs a quota command with --json and decodes its output.
func quotaJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	r := runCLI(t, append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("xfs3 %s: %d %s", strings.Join(args, " "), r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("xfs3 %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
}

// TestVolQuota: "xfs3 vol quota" lists, sets and clears limits on a
// stopped volume; xfs_db shows them in the bucket's dquot, xfs_repair
// agrees with the counts, and a store opened afterwards enforces them.
func TestVolQuota(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	img := quotaVolume(t)
	r := runCLI(t, "vol", "quota", "ls", img)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 4 || !regexp.MustCompile(`^BUCKET +PROJECT +BYTES +SOFT +HARD +GRACE +OBJECTS +SOFT +HARD +GRACE$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^logs +\d+ +0B +- +- +- +1 +- +- +-$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^photos +\d+ +\d+(\.\d)?K +- +- +- +4 +- +- +-$`).MatchString(lines[2]) ||
		lines[3] != "grace periods: bytes 7d, objects 7d" {
		t.Fatalf("vol quota ls: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var before admin.QuotaReport
	quotaJSON(t, &before, "vol", "quota", "get", img, "photos")
	p := before.Buckets[0]
	if len(before.Buckets) != 1 || p.Bucket != "photos" || p.Objects != 4 || p.Bytes < 20000 || p.Project == 0 {
		t.Fatalf("vol quota get: %+v", before)
	}

	// Set two limits, then two more: the first stay. Sizes take suffixes
	// and are kept in blocks, rounded up.
	r = runCLI(t, "vol", "quota", "set", img, "photos", "--hard-bytes", "64K", "--soft-objects", "5")
	if r.code != 0 || !regexp.MustCompile(`\nphotos +\d+ +\S+ +- +64K +- +4 +5 +- +-\n$`).MatchString(r.stdout) {
		t.Fatalf("vol quota set: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var q admin.BucketQuota
	quotaJSON(t, &q, "vol", "quota", "set", "--soft-bytes", "50000", "--hard-objects=6", img, "photos")
	want := admin.BucketQuota{Bucket: "photos", Project: p.Project, Bytes: p.Bytes, Objects: 4,
		HardBytes: 64 << 10, SoftBytes: 53248, HardObjects: 6, SoftObjects: 5}
	if q != want {
		t.Fatalf("after two sets: %+v, want %+v", q, want)
	}
	r = runCLI(t, "vol", "quota", "set", img, "--bytes-grace", "1d12h", "--objects-grace", "90m")
	if r.code != 0 || r.stdout != "grace periods: bytes 1d12h, objects 1h30m\n" {
		t.Fatalf("vol quota set grace: %d %q %s", r.code, r.stdout, r.stderr)
	}
	// The kernel's tools see the limits in the project's dquot (blocks).
	f := oracle.ParseFields(oracle.DB(t, img, fmt.Sprintf("dquot -p %d", p.Project), "print"))
	for field, v := range map[string]string{"diskdq.blk_hardlimit": "16", "diskdq.blk_softlimit": "13",
		"diskdq.ino_hardlimit": "6", "diskdq.ino_softlimit": "5", "diskdq.icount": "4"} {
		if f[field] != v {
			t.Errorf("xfs_db %s = %q, want %s", field, f[field], v)
		}
	}
	// The grace periods are project 0's timers, in seconds.
	f = oracle.ParseFields(oracle.DB(t, img, "dquot -p 0", "print"))
	if f["diskdq.btimer"] != "129600" || f["diskdq.itimer"] != "5400" {
		t.Errorf("xfs_db project 0 timers (the grace periods) = %q, %q", f["diskdq.btimer"], f["diskdq.itimer"])
	}
	oracle.Repair(t, img)

	// A store enforces what was set offline: 64 KiB hard.
	st, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("b", 64<<10)
	if _, err := st.PutObject("photos", "big", strings.NewReader(big), int64(len(big)), store.Meta{}); !errors.Is(err, store.ErrQuotaExceeded) {
		t.Errorf("PUT over the limit set offline: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// The read-only view and the report agree; clear removes every limit.
	var after admin.QuotaReport
	quotaJSON(t, &after, "vol", "quota", "ls", img)
	if after.BytesSeconds != 129600 || after.ObjectsSeconds != 5400 || len(after.Buckets) != 2 || after.Buckets[1] != want {
		t.Errorf("vol quota ls after set: %+v", after)
	}
	r = runCLI(t, "vol", "quota", "clear", "--bytes", img, "photos")
	if r.code != 0 || !regexp.MustCompile(fmt.Sprintf(`\nphotos +%d +%d +- +- +- +4 +- +- +-\n$`, p.Project, p.Bytes)).MatchString(r.stdout) {
		t.Fatalf("vol quota clear: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	oracle.Repair(t, img)

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"vol", "quota"}, 2, "missing command"},
		{[]string{"vol", "quota", "frob", img}, 2, `unknown command "frob"`},
		{[]string{"vol", "quota", "ls"}, 2, "missing VOLUME"},
		{[]string{"vol", "quota", "get", img}, 2, "want BUCKET"},
		{[]string{"vol", "quota", "ls", img, "photos"}, 2, "get shows one"},
		{[]string{"vol", "quota", "set", img, "photos"}, 2, "nothing to set"},
		{[]string{"vol", "quota", "set", img, "--hard-bytes", "1M"}, 2, "limits need a BUCKET"},
		{[]string{"vol", "quota", "set", img, "photos", "--bytes-grace", "1h"}, 2, "grace periods are the volume's"},
		{[]string{"vol", "quota", "set", img, "photos", "--hard-bytes", "lots"}, 2, "--hard-bytes"},
		{[]string{"vol", "quota", "set", img, "photos", "--hard-objects", "-1"}, 2, "not a number of objects"},
		{[]string{"vol", "quota", "set", img, "--bytes-grace", "0"}, 2, "outside 1s"},
		{[]string{"vol", "quota", "set", img, "--bytes-grace", "1.5s"}, 2, "whole number of seconds"},
		{[]string{"vol", "quota", "set", img, "--objects-grace", "soon"}, 2, "want a duration"},
		{[]string{"vol", "quota", "get", img, "nothere"}, 1, "no such bucket"},
		{[]string{"vol", "quota", "set", img, "nothere", "--hard-bytes", "1M"}, 1, "no such bucket"},
		{[]string{"vol", "quota", "ls", filepath.Join(t.TempDir(), "missing.xfs")}, 1, "no such file"},
	} {
		t.Run(strings.Join(c.args[2:], "_"), func(t *testing.T) {
			wantCLIFailure(t, runCLI(t, c.args...), c.code, c.want)
		})
	}
	// Help is the command's usage.
	for _, args := range [][]string{{"vol", "quota", "-h"}, {"vol", "help", "quota"}, {"vol", "quota", "set", "-h"}} {
		if r := runCLI(t, args...); r.code != 0 || r.stdout != volQuotaUsage {
			t.Errorf("xfs3 %s: %d %.60q", strings.Join(args, " "), r.code, r.stdout)
		}
	}
}

// TestVolQuotaBeforeQuotas: a volume whose quota counts are not kept yet
// has none to show, and says how to turn them on.
func TestVolQuotaBeforeQuotas(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs)
	img := filepath.Join(t.TempDir(), "kernel.img")
	oracle.Mkfs(t, img, 128<<20)
	wantCLIFailure(t, runCLI(t, "vol", "quota", "ls", img), 1, "turns it on")
	r := runCLI(t, "vol", "quota", "set", img, "--objects-grace", "1h")
	if r.code != 0 {
		t.Fatalf("set on a volume made by mkfs.xfs: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "vol", "quota", "ls", img); r.code != 0 || !strings.Contains(r.stdout, "objects 1h\n") {
		t.Errorf("ls after set: %d %q %s", r.code, r.stdout, r.stderr)
	}
}

// TestQuotaCommand: "xfs3 quota" drives a running server with the
// server's own settings (address and credentials file), sets limits that
// writes then meet, and reads what "xfs3 vol quota" reads once it stops.
func TestQuotaCommand(t *testing.T) {
	for _, k := range []string{"XFS3_ACCESS_KEY", "XFS3_SECRET_KEY", "XFS3_CONFIG", "XFS3_VOLUME", "XFS3_ADDR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	cfg := testConfig(t)
	out, stop := startServe(t, cfg)
	addr := regexp.MustCompile(`serving S3 on http://(\S+)`).FindStringSubmatch(out)[1]
	creds, _, err := loadCredentials(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(addr, &minio.Options{Creds: miniocreds.NewStaticV4(creds.AccessKey, creds.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	if err := c.MakeBucket(bg, "photos", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	put := func(key string, n int) error {
		_, err := c.PutObject(bg, "photos", key, bytes.NewReader(bytes.Repeat([]byte("x"), n)), int64(n), minio.PutObjectOptions{})
		return err
	}
	if err := put("a", 1000); err != nil {
		t.Fatal(err)
	}
	// The address comes from the server's settings (XFS3_ADDR here), the
	// keys from the credentials file beside --volume.
	t.Setenv("XFS3_ADDR", addr)
	conn := []string{"--volume", cfg.Volume}
	r := runCLI(t, append([]string{"quota", "ls"}, conn...)...)
	if r.code != 0 || !regexp.MustCompile(`\nphotos +\d+ +4\.0K +- +- +- +2 +- +- +-\ngrace periods: bytes 7d, objects 7d\n$`).MatchString(r.stdout) {
		t.Fatalf("quota ls: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Flags before the command; an explicit endpoint.
	r = runCLI(t, append(append([]string{"quota", "--endpoint", "http://" + addr}, conn...), "set", "photos", "--hard-bytes", "16K")...)
	if r.code != 0 || !regexp.MustCompile(`\nphotos +\d+ +4\.0K +- +16K +- +2 +- +- +-\n$`).MatchString(r.stdout) {
		t.Fatalf("quota set: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := put("big", 16<<10); minio.ToErrorResponse(err).Code != "XMinioAdminBucketQuotaExceeded" {
		t.Errorf("PUT over the limit set by xfs3 quota: %v", err)
	}
	r = runCLI(t, append([]string{"quota", "set", "--objects-grace", "2h"}, conn...)...)
	if r.code != 0 || r.stdout != "grace periods: bytes 7d, objects 2h\n" {
		t.Errorf("quota set grace: %d %q %s", r.code, r.stdout, r.stderr)
	}
	var online admin.QuotaReport
	quotaJSON(t, &online, append([]string{"quota", "get", "photos"}, conn...)...)
	if len(online.Buckets) != 1 || online.Buckets[0].HardBytes != 16<<10 || online.ObjectsSeconds != 7200 {
		t.Errorf("quota get: %+v", online)
	}

	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no such bucket", []string{"quota", "get", "nothere", "--volume", cfg.Volume}, nil, "NoSuchBucket"},
		{"wrong secret", []string{"quota", "ls"}, map[string]string{"XFS3_ACCESS_KEY": creds.AccessKey, "XFS3_SECRET_KEY": "wrong-secret"}, "SignatureDoesNotMatch"},
		{"no credentials", []string{"quota", "ls", "--volume", filepath.Join(t.TempDir(), "volume.xfs")}, nil, "no credentials"},
		{"nobody listening", []string{"quota", "ls", "--volume", cfg.Volume, "--endpoint", "http://127.0.0.1:1"}, nil, "127.0.0.1:1"},
		{"port 0", []string{"quota", "ls", "--volume", cfg.Volume}, map[string]string{"XFS3_ADDR": "127.0.0.1:0"}, "give --endpoint"},
		{"bad endpoint", []string{"quota", "ls", "--volume", cfg.Volume, "--endpoint", "ftp://x"}, nil, "want http://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			r := runCLI(t, c.args...)
			if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
				t.Errorf("%d %q %q, want a failure mentioning %q", r.code, r.stdout, r.stderr, c.want)
			}
			noStackTrace(t, r.stderr)
		})
	}

	r = runCLI(t, append([]string{"quota", "clear", "photos"}, conn...)...)
	if r.code != 0 || !regexp.MustCompile(`\nphotos +\d+ +4\.0K +- +- +- +2 +- +- +-\n$`).MatchString(r.stdout) {
		t.Fatalf("quota clear: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := put("big", 16<<10); err != nil {
		t.Errorf("PUT after clear: %v", err)
	}
	quotaJSON(t, &online, append([]string{"quota", "ls"}, conn...)...)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Stopped, the volume shows what the server showed.
	var offline admin.QuotaReport
	quotaJSON(t, &offline, "vol", "quota", "ls", cfg.Volume)
	if fmt.Sprint(offline) != fmt.Sprint(online) {
		t.Errorf("offline %+v\nonline  %+v", offline, online)
	}
}

// TestServeLogsQuotas: the start of the log has every bucket's usage and
// limits, and a summary.
func TestServeLogsQuotas(t *testing.T) {
	cfg := testConfig(t)
	cfg.AccessKey, cfg.SecretKey = "quota-test", "quota-test-secret"
	img := quotaVolume(t)
	if err := os.MkdirAll(filepath.Dir(cfg.Volume), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(img, cfg.Volume); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "vol", "quota", "set", cfg.Volume, "photos", "--hard-bytes", "1M")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	var logs syncBuffer
	e := &env{stdout: bufio.NewWriter(io.Discard), stderr: &logs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, e) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), `"message":"bucket quotas"`) {
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s", err, logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no quota summary in 30 s:\n%s", logs.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := map[string]map[string]any{}
	for _, l := range strings.Split(logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch m["message"] {
		case "bucket quota":
			lines[m["bucket"].(string)] = m
		case "bucket quotas":
			lines[""] = m
		}
	}
	if p := lines["photos"]; p == nil || p["hard_bytes"] != float64(1<<20) || p["objects"] != float64(4) || p["bytes"].(float64) < 20000 {
		t.Errorf("photos: %v", p)
	}
	if l := lines["logs"]; l == nil || l["hard_bytes"] != float64(0) || l["objects"] != float64(1) {
		t.Errorf("logs: %v", l)
	}
	if s := lines[""]; s == nil || s["buckets"] != float64(2) || s["with_limits"] != float64(1) || s["bytes_grace_seconds"] != float64(7*24*3600) {
		t.Errorf("summary: %v", s)
	}
}
