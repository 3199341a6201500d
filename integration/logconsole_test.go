package integration

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/minio/minio-go/v7"
)

// TestConsoleRequestLog: the binary, logging as it does by default (the
// console format, to a pipe), writes each request as one console line:
// time, level, message, then the fields sorted by name, a value with a
// space quoted.
func TestConsoleRequestLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "volume.xfs")
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--volume", path, "--size", "256M")
	cmd.Env = binaryEnv()
	s := startCommand(t, path, cmd)
	c := s.client(t)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "logs", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	body := []byte("hello")
	if _, err := c.PutObject(ctx, "logs", "a key", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	s.stop(t) // flushes the batched lines
	line := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d) INF request access_key=\S+ bucket=logs bytes_in=\d+ bytes_out=0 key="a key" latency=\S+ method=PUT op=PutObject remote=127\.0\.0\.1:\d+ request_id=[0-9A-F]{16} status=200 user=root$`)
	if !line.MatchString(s.logs.String()) {
		t.Fatalf("no console line for the PUT in the server's log:\n%s", s.logs.tail(4<<10))
	}
}
