package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// client runs a command-line S3 client with a private home and config.
type client struct {
	t    *testing.T
	name string
	args []string // before the command's own
	env  []string
}

func (c *client) run(args ...string) string {
	c.t.Helper()
	out, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", c.name, strings.Join(args, " "), err, out)
	}
	return out
}

func (c *client) try(args ...string) (string, error) {
	cmd := exec.Command(c.name, append(append([]string{}, c.args...), args...)...)
	cmd.Env = c.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if d := time.Since(start); d > 5*time.Second {
		c.t.Logf("slow: %s %s took %v", c.name, strings.Join(args, " "), d.Round(time.Millisecond))
	}
	return out.String(), err
}

// awsClient returns the aws CLI pointed at s, with a private home (also
// returned) for its configuration and the test's files.
func awsClient(t *testing.T, s *server) (*client, string) {
	oracle.Require(t, "aws")
	home := t.TempDir()
	return &client{t: t, name: "aws", args: []string{"--endpoint-url", s.URL, "--output", "json"}, env: []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"AWS_ACCESS_KEY_ID=" + accessKey, "AWS_SECRET_ACCESS_KEY=" + secretKey, "AWS_DEFAULT_REGION=" + region,
		"AWS_CONFIG_FILE=" + filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "credentials"),
	}}, home
}

// writeTree fills dir with files of the given sizes under nested names and
// returns their relative paths.
func writeTree(t *testing.T, dir string, sizes map[string]int) {
	t.Helper()
	for name, size := range sizes {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, size)
		rand.Read(b)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sameTree fails unless dirs a and b hold the same files with the same bytes.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	read := func(root string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[filepath.ToSlash(rel)] = string(data)
			return nil
		})
		return m
	}
	ma, mb := read(a), read(b)
	if len(ma) != len(mb) {
		t.Errorf("%d files against %d", len(ma), len(mb))
	}
	for k, v := range ma {
		if mb[k] != v {
			t.Errorf("%s differs (%d against %d bytes)", k, len(v), len(mb[k]))
		}
	}
}

// countLines counts the lines starting with prefix in the output of an aws
// s3 command run with --no-progress.
func countLines(out, prefix string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

var treeSizes = map[string]int{
	"a.txt":                 10,
	"empty":                 0,
	"sub/b.bin":             100 << 10,
	"sub/deeper/c.bin":      1<<20 + 3,
	"with space & plus+.md": 77,
	"ünïcode/名前.txt":        12,
	"big/twelve.bin":        12 << 20, // above the CLIs' multipart thresholds
}

// awsTwoParts starts an upload of key with the aws CLI (createArgs added
// to create-multipart-upload) and uploads a random 5 MiB part 1 and tail
// as part 2 (both left in home as part1 and part2); it returns the upload
// ID and the parts for completion.
func awsTwoParts(t *testing.T, aws *client, home, bucket, key, tail string, createArgs ...string) (string, []map[string]any) {
	t.Helper()
	part1 := make([]byte, 5<<20)
	rand.Read(part1)
	p1, p2 := filepath.Join(home, "part1"), filepath.Join(home, "part2")
	os.WriteFile(p1, part1, 0o644)
	os.WriteFile(p2, []byte(tail), 0o644)
	var created struct{ UploadId string }
	decode(t, aws.run(append([]string{"s3api", "create-multipart-upload", "--bucket", bucket, "--key", key}, createArgs...)...), &created)
	var parts []map[string]any
	for i, p := range []string{p1, p2} {
		var up struct{ ETag string }
		decode(t, aws.run("s3api", "upload-part", "--bucket", bucket, "--key", key, "--upload-id", created.UploadId,
			"--part-number", fmt.Sprint(i+1), "--body", p), &up)
		parts = append(parts, map[string]any{"PartNumber": i + 1, "ETag": up.ETag})
	}
	return created.UploadId, parts
}

// TestAwsCLI drives the server with the aws CLI: s3 mb/cp/ls/sync/rm/rb and
// s3api multipart and range calls.
func TestAwsCLI(t *testing.T) {
	s := startServer(t, "2G")
	aws, home := awsClient(t, s)
	src, back := filepath.Join(home, "src"), filepath.Join(home, "back")
	writeTree(t, src, treeSizes)

	aws.run("s3", "mb", "s3://cli")
	aws.run("s3", "mb", "s3://cli-gone")
	// us-east-1: making a bucket you own again succeeds, as on S3.
	if out, err := aws.try("s3", "mb", "s3://cli"); err != nil {
		t.Errorf("second mb: %v %s", err, out)
	}
	if out := aws.run("s3", "ls"); !strings.Contains(out, " cli\n") || !strings.Contains(out, " cli-gone\n") {
		t.Errorf("s3 ls:\n%s", out)
	}

	aws.run("s3", "cp", filepath.Join(src, "big", "twelve.bin"), "s3://cli/single/twelve.bin")
	aws.run("s3", "cp", "s3://cli/single/twelve.bin", filepath.Join(home, "twelve.out"))
	want, _ := os.ReadFile(filepath.Join(src, "big", "twelve.bin"))
	if got, _ := os.ReadFile(filepath.Join(home, "twelve.out")); !bytes.Equal(got, want) {
		t.Error("aws s3 cp round trip differs")
	}

	out := aws.run("s3", "sync", "--no-progress", src, "s3://cli/tree/")
	if n := countLines(out, "upload:"); n != len(treeSizes) {
		t.Errorf("sync uploaded %d files, want %d:\n%s", n, len(treeSizes), out)
	}
	ls := aws.run("s3", "ls", "--recursive", "s3://cli/tree/")
	if n := strings.Count(strings.TrimSpace(ls), "\n") + 1; n != len(treeSizes) {
		t.Errorf("ls --recursive shows %d keys, want %d:\n%s", n, len(treeSizes), ls)
	}
	if out := aws.run("s3", "sync", "--no-progress", src, "s3://cli/tree/"); countLines(out, "upload:") != 0 {
		t.Errorf("a second sync uploaded again:\n%s", out)
	}
	aws.run("s3", "sync", "--no-progress", "s3://cli/tree/", back)
	sameTree(t, src, back)

	os.Remove(filepath.Join(src, "a.txt"))
	os.WriteFile(filepath.Join(src, "sub", "b.bin"), []byte("changed"), 0o644)
	out = aws.run("s3", "sync", "--no-progress", "--delete", src, "s3://cli/tree/")
	if countLines(out, "delete:") != 1 || countLines(out, "upload:") != 1 {
		t.Errorf("sync --delete after one removal and one change:\n%s", out)
	}
	aws.run("s3", "rm", "s3://cli/tree/empty")
	aws.run("s3", "rm", "--recursive", "s3://cli/tree/sub/")
	ls = aws.run("s3", "ls", "--recursive", "s3://cli/tree/")
	if strings.Contains(ls, "sub/") || strings.Contains(ls, "tree/empty") {
		t.Errorf("after rm:\n%s", ls)
	}

	// s3api: multipart by hand, then ranges.
	uploadID, parts := awsTwoParts(t, aws, home, "cli", "mp/object", "the last part", "--content-type", "text/x-mp", "--metadata", "origin=awscli")
	part1, _ := os.ReadFile(filepath.Join(home, "part1"))
	p2 := filepath.Join(home, "part2")
	var listed struct {
		Parts []struct{ PartNumber, Size int }
	}
	decode(t, aws.run("s3api", "list-parts", "--bucket", "cli", "--key", "mp/object", "--upload-id", uploadID), &listed)
	if len(listed.Parts) != 2 || listed.Parts[0].Size != 5<<20 || listed.Parts[1].Size != len("the last part") {
		t.Errorf("list-parts: %+v", listed)
	}
	spec, _ := json.Marshal(map[string]any{"Parts": parts})
	var done struct{ ETag string }
	decode(t, aws.run("s3api", "complete-multipart-upload", "--bucket", "cli", "--key", "mp/object", "--upload-id", uploadID,
		"--multipart-upload", string(spec)), &done)
	if !strings.HasSuffix(strings.Trim(done.ETag, `"`), "-2") {
		t.Errorf("multipart ETag %s", done.ETag)
	}
	var head struct {
		ContentLength int64
		ContentType   string
		Metadata      map[string]string
	}
	decode(t, aws.run("s3api", "head-object", "--bucket", "cli", "--key", "mp/object"), &head)
	if head.ContentLength != int64(len(part1)+len("the last part")) || head.ContentType != "text/x-mp" || head.Metadata["origin"] != "awscli" {
		t.Errorf("head-object: %+v", head)
	}
	rangeOut := filepath.Join(home, "range.out")
	var ranged struct{ ContentRange string }
	decode(t, aws.run("s3api", "get-object", "--bucket", "cli", "--key", "mp/object", "--range", fmt.Sprintf("bytes=%d-%d", 5<<20-4, 5<<20+2), rangeOut), &ranged)
	if got, _ := os.ReadFile(rangeOut); string(got) != string(part1[5<<20-4:])+"the" {
		t.Errorf("ranged get across the part boundary: %q", got)
	}
	if ranged.ContentRange != fmt.Sprintf("bytes %d-%d/%d", 5<<20-4, 5<<20+2, head.ContentLength) {
		t.Errorf("Content-Range %q", ranged.ContentRange)
	}
	// An aborted upload leaves nothing.
	var aborted struct{ UploadId string }
	decode(t, aws.run("s3api", "create-multipart-upload", "--bucket", "cli", "--key", "mp/aborted"), &aborted)
	aws.run("s3api", "upload-part", "--bucket", "cli", "--key", "mp/aborted", "--upload-id", aborted.UploadId, "--part-number", "1", "--body", p2)
	aws.run("s3api", "abort-multipart-upload", "--bucket", "cli", "--key", "mp/aborted", "--upload-id", aborted.UploadId)
	var uploads struct{ Uploads []any }
	decode(t, aws.run("s3api", "list-multipart-uploads", "--bucket", "cli"), &uploads)
	if len(uploads.Uploads) != 0 {
		t.Errorf("uploads left after abort: %v", uploads.Uploads)
	}

	// Upload from stdin (unknown size), presign, tagging, v1 listing and
	// a multi-object delete.
	stdinBody := strings.Repeat("from standard input\n", 50000)
	cmd := exec.Command("aws", append(append([]string{}, aws.args...), "s3", "cp", "-", "s3://cli/stdin.txt")...)
	cmd.Env, cmd.Stdin = aws.env, strings.NewReader(stdinBody)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aws s3 cp - : %v\n%s", err, out)
	}
	url := strings.TrimSpace(aws.run("s3", "presign", "s3://cli/stdin.txt", "--expires-in", "60"))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != stdinBody {
		t.Errorf("presigned GET of the stdin upload: %s, %d bytes", resp.Status, len(got))
	}
	aws.run("s3api", "put-object-tagging", "--bucket", "cli", "--key", "stdin.txt", "--tagging", `{"TagSet":[{"Key":"src","Value":"stdin"}]}`)
	var tagging struct{ TagSet []struct{ Key, Value string } }
	decode(t, aws.run("s3api", "get-object-tagging", "--bucket", "cli", "--key", "stdin.txt"), &tagging)
	if len(tagging.TagSet) != 1 || tagging.TagSet[0].Value != "stdin" {
		t.Errorf("get-object-tagging: %+v", tagging)
	}
	aws.run("s3", "cp", filepath.Join(home, "part2"), "s3://cli/del/one")
	aws.run("s3", "cp", filepath.Join(home, "part2"), "s3://cli/del/two")
	var v1 struct {
		Contents []struct{ Key string }
		Marker   string
	}
	decode(t, aws.run("s3api", "list-objects", "--bucket", "cli", "--prefix", "del/"), &v1)
	if len(v1.Contents) != 2 || v1.Contents[0].Key != "del/one" {
		t.Errorf("list-objects (v1): %+v", v1)
	}
	var deleted struct{ Deleted []struct{ Key string } }
	decode(t, aws.run("s3api", "delete-objects", "--bucket", "cli", "--delete",
		`{"Objects":[{"Key":"del/one"},{"Key":"del/two"},{"Key":"del/never"}]}`), &deleted)
	if len(deleted.Deleted) != 3 {
		t.Errorf("delete-objects: %+v", deleted)
	}

	aws.run("s3", "rb", "s3://cli-gone")
	aws.run("s3", "mb", "s3://cli-full")
	aws.run("s3", "cp", "--recursive", back, "s3://cli-full/")
	aws.run("s3", "rb", "--force", "s3://cli-full")
	if out := aws.run("s3", "ls"); strings.Contains(out, "cli-gone") || strings.Contains(out, "cli-full") {
		t.Errorf("removed buckets still listed:\n%s", out)
	}

	view := s.apiView(t)
	var keys []string
	for k := range view {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("objects left: %q", keys)
	s.checkKernelView(t, view)
}

// decode parses a JSON document printed by a client.
func decode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("parse %q: %v", out, err)
	}
}

// TestRclone drives the server with rclone: copy, sync and check, with
// multipart uploads.
func TestRclone(t *testing.T) {
	oracle.Require(t, "rclone")
	s := startServer(t, "2G")
	home := t.TempDir()
	conf := filepath.Join(home, "rclone.conf")
	os.WriteFile(conf, nil, 0o600)
	rc := &client{t: t, name: "rclone", args: []string{"--config", conf, "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M"},
		env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
			"RCLONE_CONFIG_X3_TYPE=s3", "RCLONE_CONFIG_X3_PROVIDER=Other", "RCLONE_CONFIG_X3_ENDPOINT=" + s.URL,
			"RCLONE_CONFIG_X3_ACCESS_KEY_ID=" + accessKey, "RCLONE_CONFIG_X3_SECRET_ACCESS_KEY=" + secretKey,
			"RCLONE_CONFIG_X3_REGION=" + region}}
	src, back := filepath.Join(home, "src"), filepath.Join(home, "back")
	writeTree(t, src, treeSizes)

	rc.run("mkdir", "x3:rcb")
	rc.run("copy", src, "x3:rcb/data")
	rc.run("check", src, "x3:rcb/data")
	if out := rc.run("lsf", "-R", "--files-only", "x3:rcb/data"); strings.Count(out, "\n") != len(treeSizes) {
		t.Errorf("lsf shows:\n%s", out)
	}
	os.Remove(filepath.Join(src, "a.txt"))
	writeTree(t, src, map[string]int{"sub/b.bin": 3000, "new/file.txt": 5})
	rc.run("sync", src, "x3:rcb/data")
	rc.run("check", src, "x3:rcb/data")
	rc.run("copy", "x3:rcb/data", back)
	sameTree(t, src, back)
	if out, err := rc.try("check", filepath.Join(home, "back", "sub"), "x3:rcb/data/ünïcode"); err == nil {
		t.Errorf("check of different trees passed:\n%s", out)
	}

	view := s.apiView(t)
	s.checkKernelView(t, view)
}
