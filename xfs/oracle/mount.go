package oracle

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// mounted maps each mount point made by Mount to its absolute image path.
var mounted = struct {
	sync.Mutex
	m map[string]string
}{m: make(map[string]string)}

// Mount loop-mounts the XFS image img (read-only if readOnly) on a new
// directory under t.TempDir() and returns that directory. A cleanup
// registered with t unmounts it (retrying while busy, then lazily) and
// detaches any loop device still bound to img. On failure the test fails
// with mount's output and the tail of the kernel log.
func Mount(t testing.TB, img string, readOnly bool) (dir string) {
	t.Helper()
	Require(t, ToolMount)
	abs, err := filepath.Abs(img)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	dir = filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("mount: %v", err)
	}
	opts := "loop"
	if readOnly {
		opts += ",ro"
	}
	if out, err := run("mount", nil, "-t", "xfs", "-o", opts, abs, dir); err != nil {
		_ = detachLoops(abs)
		t.Fatalf("%v\n%s\nkernel log:\n%s", err, out, kernelLog(25))
	}
	mounted.Lock()
	mounted.m[dir] = abs
	mounted.Unlock()
	t.Cleanup(func() {
		if err := unmount(dir); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return dir
}

// CleanupMount is for a mount the test made itself (a command it runs
// mounts img on dir): a cleanup registered with t unmounts dir if it is
// still mounted then (retrying while busy, then lazily), and detaches any
// loop device still bound to img, whether or not the test unmounted it.
func CleanupMount(t testing.TB, dir, img string) {
	t.Cleanup(func() {
		var err error
		if isMountPoint(dir) {
			mounted.Lock()
			mounted.m[dir] = img
			mounted.Unlock()
			err = unmount(dir) // detaches img's loop devices too
		} else {
			err = detachLoops(img)
		}
		if err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// isMountPoint reports whether dir is a mount point of this process's
// mount namespace.
func isMountPoint(dir string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 4 && unescapeMountinfo(f[4]) == dir {
			return true
		}
	}
	return false
}

// unescapeMountinfo undoes the octal escapes of /proc/self/mountinfo.
func unescapeMountinfo(s string) string {
	return mountinfoEscape.ReplaceAllStringFunc(s, func(e string) string {
		var b byte
		fmt.Sscanf(e[1:], "%o", &b)
		return string([]byte{b})
	})
}

var mountinfoEscape = regexp.MustCompile(`\\[0-7]{3}`)

// Unmount unmounts a directory returned by Mount before the test ends and
// detaches its loop device. It is idempotent: calling it twice, or letting
// the cleanup run afterwards, is harmless.
func Unmount(t testing.TB, dir string) {
	t.Helper()
	if err := unmount(dir); err != nil {
		t.Fatal(err)
	}
}

// unmount unmounts dir if Mount mounted it and it is still mounted.
func unmount(dir string) error {
	mounted.Lock()
	img, ok := mounted.m[dir]
	delete(mounted.m, dir)
	mounted.Unlock()
	if !ok {
		return nil
	}
	var out string
	var err error
	for i := 0; i < 30; i++ {
		out, err = run("umount", nil, dir)
		if err == nil || !strings.Contains(strings.ToLower(out), "busy") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var errs []string
	if err != nil {
		errs = append(errs, fmt.Sprintf("%v: %s", err, strings.TrimSpace(out)))
		if out2, err2 := run("umount", nil, "-l", dir); err2 != nil {
			errs = append(errs, fmt.Sprintf("%v: %s", err2, strings.TrimSpace(out2)))
		}
	}
	if err := detachLoops(img); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("unmount %s: %s", dir, strings.Join(errs, "; "))
	}
	return nil
}

// detachLoops detaches every loop device whose backing file is img
// (mount -o loop normally sets autoclear, so usually there is none).
func detachLoops(img string) error {
	var devs []string
	for i := 0; i < 20; i++ {
		out, err := run("losetup", nil, "-j", img)
		if err != nil {
			return fmt.Errorf("losetup -j %s: %v", img, err)
		}
		devs = devs[:0]
		for _, line := range strings.Split(out, "\n") {
			if dev, _, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(dev, "/dev/") {
				devs = append(devs, dev)
			}
		}
		if len(devs) == 0 {
			return nil
		}
		for _, dev := range devs {
			_, _ = run("losetup", nil, "-d", dev)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("loop devices still attached to %s: %s", img, strings.Join(devs, " "))
}

// kernelLog returns the last n lines of the kernel log, or a note why not.
func kernelLog(n int) string {
	out, err := run("dmesg", nil)
	if err != nil {
		return "(dmesg unavailable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Loop attaches img to a free loop device and returns its path and a
// detach function, which a cleanup registered with t also calls (it is
// idempotent). The test must close the device before detaching.
func Loop(t testing.TB, img string) (dev string, detach func()) {
	t.Helper()
	Require(t, ToolMount)
	out, err := run("losetup", nil, "--find", "--show", img)
	if err != nil {
		t.Fatalf("losetup %s: %v\n%s", img, err, out)
	}
	dev = strings.TrimSpace(out)
	var once sync.Once
	detach = func() {
		once.Do(func() {
			if out, err := run("losetup", nil, "--detach", dev); err != nil {
				t.Errorf("losetup --detach %s: %v\n%s", dev, err, out)
			}
		})
	}
	t.Cleanup(detach)
	return dev, detach
}
