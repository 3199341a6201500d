package oracle

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// smallFSEnv lets mkfs.xfs 6.x create filesystems below its 300 MB floor.
var smallFSEnv = []string{"TEST_DIR=1", "TEST_DEV=1", "QA_CHECK_FS=1"}

// run executes tool with args and returns its combined output. The error is
// non-nil when the tool is missing or exits with a non-zero status.
func run(tool string, env []string, args ...string) (string, error) {
	path, err := lookTool(tool)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w", tool, strings.Join(args, " "), err)
	}
	return string(out), nil
}

// RepairOutput runs "xfs_repair -n img" (check only, never modifies the
// image) and returns its output. err is non-nil when xfs_repair exits with
// a non-zero status, which means it found a problem (or could not run).
// On image files xfs_repair prints "Cannot get host filesystem geometry"
// even for clean filesystems; only the exit status matters.
func RepairOutput(img string) (out string, err error) {
	return run(ToolRepair, nil, "-n", img)
}

// Repair fails the test, showing the full xfs_repair output, unless
// "xfs_repair -n img" exits with status 0.
func Repair(t testing.TB, img string) {
	t.Helper()
	Require(t, ToolRepair)
	if out, err := RepairOutput(img); err != nil {
		t.Fatalf("xfs_repair -n %s: %v\n%s", img, err, out)
	}
}

// RepairFix runs "xfs_repair img", which mends what it finds (as an
// operator does on a stopped volume), and fails the test when it cannot
// finish; its output is returned.
func RepairFix(t testing.TB, img string) string {
	t.Helper()
	Require(t, ToolRepair)
	out, err := run(ToolRepair, nil, img)
	if err != nil {
		t.Fatalf("xfs_repair %s: %v\n%s", img, err, out)
	}
	return out
}

// RepairAfterQuotalessReplay is Repair for an image that the kernel
// mounted without quota options to replay its log. The kernel then skips
// the log's dquot items and resets the superblock's quota flags
// ("resetting quota flags"); only a mount with quotas on replays them. So
// a dquot record whose newest state only the log held (one a cut
// recovery tore, say) keeps a bad CRC, and xfs_repair reports it. Those
// reports alone pass, logged, and only while the superblock's quota flags
// are 0 (the mount did run without quotas); any other finding fails the
// test as Repair does.
func RepairAfterQuotalessReplay(t testing.TB, img string) {
	t.Helper()
	Require(t, ToolRepair, ToolDB)
	out, err := RepairOutput(img)
	if err == nil {
		return
	}
	quota, only := dquotCRCFindings(out)
	if !only {
		t.Fatalf("xfs_repair -n %s: %v\n%s", img, err, out)
	}
	// Only a replay without quotas leaves them: that mount reset the flags.
	if flags := ParseFields(DB(t, img, "sb 0", "print qflags"))["qflags"]; flags != "0" {
		t.Fatalf("xfs_repair -n %s finds bad dquot CRCs, yet the quota flags are %s: the kernel ran with quotas and replayed them\n%s", img, flags, out)
	}
	t.Logf("xfs_repair -n after a replay without quotas reports only dquot CRCs (the kernel skipped the log's dquot items):\n%s", strings.Join(quota, "\n"))
}

// dquotCRCFindings returns the findings in xfs_repair output that are bad
// dquot CRCs, and whether there are no others.
func dquotCRCFindings(out string) (quota []string, only bool) {
	for _, line := range strings.Split(out, "\n") {
		switch {
		case benignRepairLine(line):
		case strings.Contains(line, "xfs_dquot block") || strings.Contains(line, "quota: bad CRC for id"):
			quota = append(quota, line)
		case strings.TrimSpace(line) == "Would correct." && len(quota) > 0:
			// The end of a dquot finding whose line another of
			// xfs_repair's threads broke with its progress ("Project
			// quota: bad CRC for id 31.   - agno = 1", then this).
		default:
			return quota, false
		}
	}
	return quota, len(quota) > 0
}

// benignRepairLine tells whether a line of "xfs_repair -n" output is
// progress or the notice it prints for every image file, not a finding.
func benignRepairLine(line string) bool {
	line = strings.TrimSpace(line)
	for _, p := range []string{"Phase ", "- ", "Cannot get host filesystem geometry", "Repair may fail if there is a sector size mismatch", "the image and the host filesystem", "No modify flag set"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return line == ""
}

// Mkfs creates img as a sparse file of size bytes (replacing any existing
// file) and formats it with "mkfs.xfs -f -q opts... img". The environment
// variables that allow small filesystems are set, so sizes down to 64 MiB
// (and a little below) work.
func Mkfs(t testing.TB, img string, size int64, opts ...string) {
	t.Helper()
	Require(t, ToolMkfs)
	if err := makeSparse(img, size); err != nil {
		t.Fatalf("mkfs: %v", err)
	}
	args := append([]string{"-f", "-q"}, opts...)
	args = append(args, img)
	if out, err := run(ToolMkfs, smallFSEnv, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// makeSparse creates (or truncates) path and gives it size bytes of holes.
func makeSparse(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DBOutput runs "xfs_db -r -c cmd1 -c cmd2 ... img" and returns the combined
// output. Note that xfs_db often exits 0 even when a command fails; check
// the output.
func DBOutput(img string, cmds ...string) (string, error) {
	args := []string{"-r"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	args = append(args, img)
	return run(ToolDB, nil, args...)
}

// DB runs xfs_db read-only with the given commands and returns its output,
// failing the test if xfs_db cannot run or exits non-zero.
func DB(t testing.TB, img string, cmds ...string) string {
	t.Helper()
	Require(t, ToolDB)
	out, err := DBOutput(img, cmds...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// DBWrite runs xfs_db in expert (-x) mode to change an image, for tests
// that need a state the kernel here cannot produce (it has no quota
// support, so no project IDs). The image must not be mounted.
func DBWrite(t testing.TB, img string, cmds ...string) string {
	t.Helper()
	Require(t, ToolDB)
	args := []string{"-x"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	out, err := run(ToolDB, nil, append(args, img)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// DBSuperblock prints the primary superblock with xfs_db and returns its
// fields, e.g. m["blocksize"] == "4096", m["uuid"], m["features2"].
func DBSuperblock(t testing.TB, img string) map[string]string {
	t.Helper()
	m := ParseFields(DB(t, img, "sb 0", "print"))
	if len(m) == 0 {
		t.Fatalf("xfs_db printed no superblock fields for %s", img)
	}
	return m
}

// ParseFields parses xfs_db "field = value" lines into a map. Lines without
// " = " are ignored; a repeated field keeps its last value.
func ParseFields(out string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m
}

// CopySparse copies the image file from to to, keeping its holes (a
// volume file is mostly holes): tests copy crash images so that the
// kernel, xfs_repair and the engine each get one of their own.
func CopySparse(tb testing.TB, from, to string) {
	tb.Helper()
	if out, err := exec.Command("cp", "--sparse=always", from, to).CombinedOutput(); err != nil {
		tb.Fatalf("cp %s %s: %v\n%s", from, to, err, out)
	}
}

// LogprintComplaint returns the first complaint in xfs_logprint's output
// ("bad", "error", "corrupt", "invalid" as whole words, with the rest of
// the line), or "" when it has none. Whole words only: the pointer values
// it prints (0x...bad...) are no complaint.
func LogprintComplaint(out string) string {
	return logprintComplaint.FindString(out)
}

var logprintComplaint = regexp.MustCompile(`(?i)\b(bad|error|corrupt|invalid)\b.*`)
