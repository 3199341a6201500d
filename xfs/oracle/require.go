package oracle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Names accepted by Require. ToolMount is a pseudo-tool: it stands for
// "running as root with working loop mounts". ToolUML is the user-mode
// Linux kernel (Debian package user-mode-linux), whose XFS has quota
// support; see UML.
const (
	ToolMkfs   = "mkfs.xfs"
	ToolRepair = "xfs_repair"
	ToolDB     = "xfs_db"
	ToolMount  = "mount"
	ToolUML    = "linux.uml"
)

// toolHints name what provides a tool, for the message of a missing one.
var toolHints = map[string]string{
	ToolMkfs:   "Debian package xfsprogs",
	ToolRepair: "Debian package xfsprogs",
	ToolDB:     "Debian package xfsprogs",
	ToolUML:    "user-mode Linux: Debian package user-mode-linux",
}

// RequireEnv is the environment variable that turns a missing oracle from a
// skipped test into a failed one when set to "1".
const RequireEnv = "XFS3_REQUIRE_ORACLES"

// Require skips the test when one of the named tools is unavailable, with a
// message naming what is missing. Tools are looked up in PATH and in /sbin
// and /usr/sbin. The pseudo-tool "mount" (ToolMount) requires root, the
// mount, umount and losetup commands and a loop-control device.
//
// When XFS3_REQUIRE_ORACLES=1 the test fails instead of being skipped.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	var missing []string
	for _, tool := range tools {
		if reason := unavailable(tool); reason != "" {
			missing = append(missing, reason)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "xfs oracle unavailable: " + strings.Join(missing, "; ")
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s (%s=1 makes this fatal)", msg, RequireEnv)
		return
	}
	t.Skip(msg)
}

// Optional reports whether every named tool is available, for a test
// that can do part of its work without them: when one is missing it logs
// what the test leaves out and returns false, unless XFS3_REQUIRE_ORACLES=1
// makes that a failure.
func Optional(t testing.TB, without string, tools ...string) bool {
	t.Helper()
	for _, tool := range tools {
		if reason := unavailable(tool); reason != "" {
			if os.Getenv(RequireEnv) == "1" {
				t.Fatalf("xfs oracle unavailable: %s (%s=1 makes this fatal)", reason, RequireEnv)
			}
			t.Logf("xfs oracle unavailable: %s; %s", reason, without)
			return false
		}
	}
	return true
}

// unavailable returns "" when tool can be used, or why it cannot.
func unavailable(tool string) string {
	if tool != ToolMount {
		if _, err := lookTool(tool); err != nil {
			if hint := toolHints[tool]; hint != "" {
				return fmt.Sprintf("%s not found (%s)", tool, hint)
			}
			return fmt.Sprintf("%s not found", tool)
		}
		return ""
	}
	if os.Geteuid() != 0 {
		return "not root (needed for loop mounts)"
	}
	for _, cmd := range []string{"mount", "umount", "losetup"} {
		if _, err := lookTool(cmd); err != nil {
			return fmt.Sprintf("loop mount unavailable: %s not found", cmd)
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return "loop mount unavailable: no /dev/loop-control"
	}
	return ""
}

// lookTool finds an executable in PATH, /sbin or /usr/sbin.
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable not found", name)
}
