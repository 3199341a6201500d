package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// TestVolReplay: a copy of a volume taken while it is open for writing has
// a dirty log; read-only commands refuse it, replay recovers it (and says
// so), after which they work and see every change; a second replay finds a
// clean log.
func TestVolReplay(t *testing.T) {
	dir := t.TempDir()
	img, crash := filepath.Join(dir, "vol.img"), filepath.Join(dir, "crash.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := v.Names().Mkdir(v.Root(), "dir", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Create(d, "file", xfs.Attrs{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	// Every commit is durable on return: a copy now is a crash image.
	oracle.CopySparse(t, img, crash)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := xfs.Open(crash, xfs.Options{ReadOnly: true}); !errors.Is(err, xfs.ErrNeedsRecovery) {
		t.Fatalf("read-only open of the crash image: %v", err)
	}
	if r := runCLI(t, "vol", "ls", crash, "dir"); r.code == 0 || !strings.Contains(r.stderr, "replay") {
		t.Fatalf("ls of a dirty volume: status %d, stderr %q", r.code, r.stderr)
	}
	r := runCLI(t, "vol", "replay", crash)
	if r.code != 0 || !strings.Contains(r.stdout, "replayed") {
		t.Fatalf("replay: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "vol", "ls", crash, "dir"); r.code != 0 || !strings.Contains(r.stdout, "file") {
		t.Fatalf("ls after replay: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "vol", "replay", crash); r.code != 0 || !strings.Contains(r.stdout, "clean") {
		t.Fatalf("second replay: status %d, stdout %q", r.code, r.stdout)
	}
}
