package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestDamagedUnlinkedListsStayReadable is the README's promise about a
// volume whose unlinked lists are damaged, through the command line:
// serve and every changing vol command refuse it, naming the damage;
// vol ls and vol get still read every object; and the refusals changed
// nothing (with the damage undone, xfs_repair -n is clean).
func TestDamagedUnlinkedListsStayReadable(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	dir := t.TempDir()
	img := filepath.Join(dir, "v.img")
	if r := runCLI(t, "mkfs", "--size", "64M", img); r.code != 0 {
		t.Fatalf("mkfs: %+v", r)
	}
	content := bytes.Repeat([]byte("kept through the refusal\n"), 500)
	src := filepath.Join(dir, "object")
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "vol", "mkdir", img, "bucket"); r.code != 0 {
		t.Fatalf("vol mkdir: %+v", r)
	}
	if r := runCLI(t, "vol", "put", img, src, "bucket/object"); r.code != 0 {
		t.Fatalf("vol put: %+v", r)
	}
	restore := oracle.DamageUnlinkedBucket(t, img)

	r := runCLI(t, "serve", "--volume", img, "--addr", "127.0.0.1:0", "--log-level", "error")
	wantCLIFailure(t, r, 1, "unlinked")
	if strings.Count(r.stderr, img) != 1 {
		t.Errorf("serve's refusal should name the volume once: %q", r.stderr)
	}
	if !strings.Contains(r.stderr, "corrupt") {
		t.Errorf("serve's refusal does not call the volume corrupt: %q", r.stderr)
	}
	wantCLIFailure(t, runCLI(t, "vol", "mkdir", img, "other"), 1, "unlinked")

	if r := runCLI(t, "vol", "ls", "-R", img); r.code != 0 || r.stdout != "bucket\nbucket/object\n" {
		t.Errorf("vol ls -R of the refused volume: %+v", r)
	}
	if r := runCLI(t, "vol", "get", img, "bucket/object", "-"); r.code != 0 || r.stdout != string(content) {
		t.Errorf("vol get of the refused volume: status %d, %d bytes (want %d), stderr %q", r.code, len(r.stdout), len(content), r.stderr)
	}
	restore()
	oracle.Repair(t, img)
}
