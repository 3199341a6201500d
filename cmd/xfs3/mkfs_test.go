package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

func TestMkfsCreatesVolume(t *testing.T) {
	img := filepath.Join(t.TempDir(), "v.img")
	r := runCLI(t, "mkfs", "--size", "64MiB", img)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("status %d, stderr %q", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, img+": ") || !strings.Contains(r.stdout, "agcount=4") ||
		strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("summary %q", r.stdout)
	}
	if st, err := os.Stat(img); err != nil || st.Size() != 64<<20 {
		t.Fatalf("volume file: %v", err)
	}
	if !strings.Contains(r.stdout, "reflink=1") {
		t.Errorf("summary %q does not say reflink=1", r.stdout)
	}
	oracle.Repair(t, img)
	if sb := oracle.DBSuperblock(t, img); sb["features_ro_compat"] != "0xd" {
		t.Errorf("features_ro_compat %s, want 0xd (finobt, reflink, inobtcount)", sb["features_ro_compat"])
	}

	// Reformat the existing file with other options; its size stays.
	r = runCLI(t, "mkfs", img, "--agcount", "3", "--block-size=2K", "--inode-size", "1024", "--label", "objects")
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "agcount=3") || !strings.Contains(r.stdout, "bsize=2048") {
		t.Fatalf("reformat: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if st, err := os.Stat(img); err != nil || st.Size() != 64<<20 {
		t.Fatalf("volume file after reformat: %v", err)
	}
	oracle.Repair(t, img)
	if sb := oracle.DBSuperblock(t, img); sb["agcount"] != "3" || !strings.HasPrefix(sb["fname"], `"objects`) {
		t.Errorf("superblock agcount %s fname %s", sb["agcount"], sb["fname"])
	}

	// --reflink=false: what mkfs.xfs -m reflink=0 makes.
	r = runCLI(t, "mkfs", "--reflink=false", img)
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "reflink=0") {
		t.Fatalf("mkfs --reflink=false: status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	oracle.Repair(t, img)
	if sb := oracle.DBSuperblock(t, img); sb["features_ro_compat"] != "0x9" {
		t.Errorf("--reflink=false: features_ro_compat %s, want 0x9 (finobt, inobtcount)", sb["features_ro_compat"])
	}
}

func TestMkfsHelp(t *testing.T) {
	for _, args := range [][]string{{"mkfs", "-h"}, {"mkfs", "--help"}, {"help", "mkfs"}} {
		r := runCLI(t, args...)
		if r.code != 0 || r.stdout != mkfsUsage || r.stderr != "" {
			t.Errorf("%v: status %d, stdout %.40q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestMkfsErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.img")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mkfs"}, 2, "want exactly one PATH"},
		{[]string{"mkfs", "a", "b"}, 2, "want exactly one PATH"},
		{[]string{"mkfs", missing}, 2, "give --size"},
		{[]string{"mkfs", "--size", "12X", missing}, 2, `unknown suffix "X"`},
		{[]string{"mkfs", "--size", "-5", missing}, 2, "invalid value"},
		{[]string{"mkfs", "--agcount", "many", missing}, 2, "invalid value"},
		{[]string{"mkfs", "--bogus", missing}, 2, "flag provided but not defined"},
		{[]string{"mkfs", "--size", "1G", "--reflink=maybe", missing}, 2, "invalid boolean value"},
		{[]string{"mkfs", "--size", "1M", missing}, 1, "too small"},
		{[]string{"mkfs", "--size", "1G", "--block-size", "3000", missing}, 1, "block size 3000"},
		{[]string{"mkfs", "--size", "1G", "--inode-size", "256", missing}, 1, "inode size 256"},
		{[]string{"mkfs", "--size", "1G", "--agcount", "1", missing}, 1, "AG count 1"},
		{[]string{"mkfs", "--size", "1G", "--label", "much-too-long-label", missing}, 1, "label"},
		{[]string{"mkfs", "--size", "1G", dir}, 1, "neither a regular file nor a block device"},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			wantCLIFailure(t, runCLI(t, tc.args...), tc.code, tc.want)
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("failed runs left %s behind: %v", missing, err)
	}
}
