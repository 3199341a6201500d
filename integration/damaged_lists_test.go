package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestDamagedUnlinkedListsStayReadable is docs/operations.md's promise about a
// volume whose unlinked lists are damaged, through the real binary: serve
// and a changing vol command refuse it, naming the lists and the volume
// once; vol ls and vol get still read the object a client PUT; the
// refusals change nothing (with the damage undone, xfs_repair -n is
// clean), and the server then serves the object again.
func TestDamagedUnlinkedListsStayReadable(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	ctx := context.Background()
	body := bytes.Repeat([]byte("kept through the refusal\n"), 500)
	s := startServer(t, "256M")
	c := s.client(t)
	if err := c.MakeBucket(ctx, "bucket", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, "bucket", "dir/object", bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	s.stop(t)
	restore := oracle.DamageUnlinkedBucket(t, s.Volume)

	refused := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Env = binaryEnv()
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("xfs3 %s: %v, want exit status 1\n%s", args[0], err, out)
		}
		msg := string(out)
		if !strings.Contains(msg, "read the unlinked lists of AG") || !strings.Contains(msg, "corrupt") {
			t.Errorf("xfs3 %s does not name the damage: %q", args[0], msg)
		}
		return msg
	}
	msg := refused("serve", "--addr", "127.0.0.1:0", "--volume", s.Volume, "--log-level", "error")
	if strings.Count(msg, s.Volume) != 1 {
		t.Errorf("serve's refusal should name the volume once: %q", msg)
	}
	refused("vol", "mkdir", s.Volume, "other")

	if got := string(runCLI(t, "vol", "ls", "-R", s.Volume, "bucket")); !strings.Contains(got, "dir/object\n") {
		t.Errorf("vol ls -R of the refused volume:\n%s", got)
	}
	if got := runCLI(t, "vol", "get", s.Volume, "bucket/dir/object", "-"); !bytes.Equal(got, body) {
		t.Errorf("vol get of the refused volume: %d bytes, want the %d PUT", len(got), len(body))
	}

	restore()
	oracle.Repair(t, s.Volume)
	s = startServerOn(t, s.Volume, "256M")
	obj, err := s.client(t).GetObject(ctx, "bucket", "dir/object", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("GET after the repair: %d bytes, %v", len(got), err)
	}
	s.stop(t)
}
