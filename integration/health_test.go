package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestSickPrefixThroughBinary is docs/operations.md's "Damaged metadata"
// through the real binary: a directory block of one bucket's prefix is
// damaged on the stopped volume; the server then refuses what needs it
// (500 XFS3NeedsRepair, nothing changed), serves the rest of that
// bucket and the other bucket, reports the damage with its bucket and
// prefix (info, health endpoint, metrics, ready header) and logs it
// once; xfs_repair then brings the volume back healthy, the other bucket
// intact, and the kernel mounts it.
func TestSickPrefixThroughBinary(t *testing.T) {
	oracle.Require(t, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	ctx := context.Background()
	key := func(i int) string { return fmt.Sprintf("p/object-with-a-rather-long-name-for-a-full-block-%03d", i) }
	const keys = 64
	s := startServer(t, "256M")
	c := s.client(t)
	for _, b := range []string{"hurt", "fine"} {
		if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			if _, err := c.PutObject(ctx, b, key(i), strings.NewReader(key(i)), int64(len(key(i))), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.PutObject(ctx, b, "top", strings.NewReader("top of "+b), int64(len("top of "+b)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.stop(t)
	var dir struct {
		Ino       uint64 `json:"ino"`
		BlockSize int64  `json:"block_size"`
	}
	if err := json.Unmarshal(runCLI(t, "vol", "stat", "--json", s.Volume, "hurt/p"), &dir); err != nil {
		t.Fatal(err)
	}
	damageFirstDirBlock(t, s.Volume, dir.Ino, dir.BlockSize)

	s = startServerOn(t, s.Volume, "256M")
	c, err := minio.New(s.Host, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Region: region, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	adm := &admin.Client{Endpoint: s.URL, AccessKey: accessKey, SecretKey: secretKey, HTTP: rawClient}
	bucketUsage := func(name string) admin.Bucket {
		t.Helper()
		in, err := adm.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range in.Buckets {
			if b.Bucket == name {
				return b
			}
		}
		t.Fatalf("no bucket %s in the info document", name)
		return admin.Bucket{}
	}
	needsRepair := func(what string, err error) {
		t.Helper()
		r := minio.ToErrorResponse(err)
		if r.StatusCode != 500 || r.Code != "XFS3NeedsRepair" || !strings.Contains(r.Message, `"hurt"`) || !strings.Contains(r.Message, `prefix "p/"`) {
			t.Errorf("%s: %v (status %d, code %s), want 500 XFS3NeedsRepair naming bucket hurt and prefix p/", what, err, r.StatusCode, r.Code)
		}
	}
	list := func(bucket, prefix string) (int, error) {
		n := 0
		for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if o.Err != nil {
				return n, o.Err
			}
			n++
		}
		return n, nil
	}

	// Listing the prefix meets the damage; changes to it are refused.
	before := bucketUsage("hurt")
	for range 3 {
		_, err := list("hurt", "p/")
		needsRepair("listing hurt/p/", err)
		_, err = c.PutObject(ctx, "hurt", "p/new", strings.NewReader("new"), 3, minio.PutObjectOptions{})
		needsRepair("PUT hurt/p/new", err)
		big := bytes.Repeat([]byte("b"), 1<<20)
		_, err = c.PutObject(ctx, "hurt", "p/big", bytes.NewReader(big), int64(len(big)), minio.PutObjectOptions{})
		needsRepair("PUT hurt/p/big", err)
		needsRepair("DELETE hurt/p/…-001", c.RemoveObject(ctx, "hurt", key(1), minio.RemoveObjectOptions{}))
	}
	if after := bucketUsage("hurt"); after.Bytes != before.Bytes || after.Objects != before.Objects {
		t.Errorf("refused changes changed the bucket's usage: %+v, was %+v", after.BucketQuota, before.BucketQuota)
	}

	// The rest of the bucket and the other bucket serve as before.
	get := func(bucket, k, want string) {
		t.Helper()
		o, err := c.GetObject(ctx, bucket, k, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(o)
		o.Close()
		if err != nil || string(got) != want {
			t.Errorf("GET %s/%s: %q, %v", bucket, k, got, err)
		}
	}
	get("hurt", "top", "top of hurt")
	get("fine", "top", "top of fine")
	get("fine", key(7), key(7))
	for _, target := range [][2]string{{"hurt", "elsewhere/new"}, {"fine", "p/new"}, {"fine", "q/new"}} {
		if _, err := c.PutObject(ctx, target[0], target[1], strings.NewReader("new"), 3, minio.PutObjectOptions{}); err != nil {
			t.Errorf("PUT %s/%s: %v", target[0], target[1], err)
		}
	}
	if n, err := list("fine", "p/"); err != nil || n != keys+1 {
		t.Errorf("listing fine/p/: %d objects, %v", n, err)
	}

	// Reported everywhere, with its bucket and prefix.
	wantSick := func(where string, h admin.Health) {
		t.Helper()
		if h.State != "degraded" || len(h.Sick) != 1 {
			t.Fatalf("%s: %+v, want one sick structure", where, h)
		}
		x := h.Sick[0]
		if x.Kind != "inode" || x.Ino != dir.Ino || x.Bucket != "hurt" || x.Prefix != "p/" || x.Place != "prefix" ||
			x.Path != "/hurt/p" || x.Structure == "" || x.Where == "" || x.Reason == "" || x.Since.IsZero() {
			t.Errorf("%s: %+v", where, x)
		}
	}
	h, err := adm.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSick("health endpoint", h)
	var in admin.Info
	if err := json.Unmarshal(runCLI(t, "info", "--endpoint", s.URL), &in); err != nil {
		t.Fatal(err)
	}
	wantSick("xfs3 info", in.Health)
	fams := s.scrapeMetrics(t)
	if v, ok := series(fams, "xfs3_sick_structures", "kind", "inode"); !ok || v != 1 {
		t.Errorf(`xfs3_sick_structures{kind="inode"}: %v (present %v), want 1`, v, ok)
	}
	if v, ok := series(fams, "xfs3_sick_structures", "kind", "ag"); !ok || v != 0 {
		t.Errorf(`xfs3_sick_structures{kind="ag"}: %v (present %v), want 0`, v, ok)
	}
	resp, err := rawClient.Get(s.URL + "/minio/health/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Xfs3-Health") != "degraded" {
		t.Errorf("ready: %d, X-Xfs3-Health %q; want 200 and degraded", resp.StatusCode, resp.Header.Get("X-Xfs3-Health"))
	}
	s.stop(t)
	var warnings []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, "marked sick") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"bucket":"hurt"`) || !strings.Contains(warnings[0], `"prefix":"p/"`) ||
		!strings.Contains(warnings[0], fmt.Sprintf(`"ino":%d`, dir.Ino)) {
		t.Errorf("want one warning naming hurt/p/ and inode %d, got %d:\n%s", dir.Ino, len(warnings), strings.Join(warnings, "\n"))
	}

	// The repair path: xfs_repair, then a healthy server and a volume the
	// kernel mounts.
	if out, err := oracle.RepairOutput(s.Volume); err == nil {
		t.Fatalf("xfs_repair -n found nothing wrong:\n%s", out)
	}
	oracle.RepairFix(t, s.Volume)
	oracle.Repair(t, s.Volume)
	s = startServerOn(t, s.Volume, "256M")
	c = s.client(t)
	adm.Endpoint = s.URL
	if h, err := adm.Health(ctx); err != nil || h.State != "ok" || len(h.Sick) != 0 {
		t.Errorf("health after xfs_repair: %+v, %v", h, err)
	}
	if n, err := list("fine", ""); err != nil || n != keys+3 {
		t.Errorf("listing fine after xfs_repair: %d objects, %v", n, err)
	}
	get("fine", key(7), key(7))
	get("hurt", "top", "top of hurt")
	if _, err := c.PutObject(ctx, "hurt", "p/after-repair", strings.NewReader("new"), 3, minio.PutObjectOptions{}); err != nil {
		t.Errorf("PUT into the repaired prefix: %v", err)
	}
	s.stop(t)
	oracle.Repair(t, s.Volume)
	mnt := oracle.Mount(t, s.Volume, true)
	if got, err := os.ReadFile(filepath.Join(mnt, "fine", key(7))); err != nil || string(got) != key(7) {
		t.Errorf("kernel read of fine/%s: %q, %v", key(7), got, err)
	}
}

// damageFirstDirBlock overwrites bytes of the first block of directory
// ino on the stopped volume img, found with xfs_db's bmap.
func damageFirstDirBlock(t *testing.T, img string, ino uint64, blockSize int64) {
	t.Helper()
	var agblocks int64
	fmt.Sscan(oracle.DBSuperblock(t, img)["agblocks"], &agblocks)
	for _, line := range strings.Split(oracle.DB(t, img, fmt.Sprintf("inode %d", ino), "bmap"), "\n") {
		var off, start, ag, agbno, count, flag int64
		if _, err := fmt.Sscanf(line, "data offset %d startblock %d (%d/%d) count %d flag %d", &off, &start, &ag, &agbno, &count, &flag); err != nil {
			continue
		}
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte("damaged!"), (ag*agblocks+agbno)*blockSize+200); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("directory %d maps no blocks", ino)
}
