package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

func duOf(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestTrimVolume: "xfs3 trim VOLUME" on a stopped volume whose objects
// were deleted every other one gives the freed bytes back to the host,
// prints the pass, and leaves the volume clean.
func TestTrimVolume(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	const n, size = 200, 32 << 10
	for i := range n {
		if _, err := s.PutObject("bkt", fmt.Sprint(i), bytes.NewReader(make([]byte, size)), size, store.Meta{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < n; i += 2 {
		if err := s.DeleteObject("bkt", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, freed := duOf(t, img), int64(n/2*size)

	r := runCLI(t, "trim", "--json", img)
	if r.code != 0 {
		t.Fatalf("trim: %d %s", r.code, r.stderr)
	}
	var p admin.TrimPass
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	after := duOf(t, img)
	t.Logf("du %d KiB -> %d KiB, %d KiB freed; pass %+v", before>>10, after>>10, freed>>10, p)
	if p.Running || p.Canceled || p.Error != "" || p.Next != 256<<20 || p.DiscardedBytes < freed {
		t.Fatalf("pass %+v", p)
	}
	if before-after < freed*99/100 {
		t.Fatalf("du dropped by %d, want 99%% of %d", before-after, freed)
	}
	oracle.Repair(t, img)

	// A range, as text.
	r = runCLI(t, "trim", "--offset", "64M", "--length", "64M", "--minlen", "8K", img)
	if r.code != 0 || !bytes.Contains([]byte(r.stdout), []byte("trim pass 1 done")) {
		t.Fatalf("ranged trim: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestTrimUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trim"}, "want VOLUME"},
		{[]string{"trim", "--offset", "x", "v"}, "--offset"},
		{[]string{"trim", "--status", "v"}, "--endpoint"},
		{[]string{"trim", "--endpoint", "http://127.0.0.1:1", "v"}, "no VOLUME"},
	} {
		wantCLIFailure(t, runCLI(t, c.args...), exitUsage, c.want)
	}
	img := filepath.Join(t.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	wantCLIFailure(t, runCLI(t, "trim", "--offset", "1G", img), exitError, "trim")
}
