package mkfs

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
)

// attachLoop binds img to a loop device with the given logical sector size.
// detach releases it; it is safe to call more than once and also runs when
// the test ends, so the device is never left attached (and a number some
// other test has taken since is never detached).
func attachLoop(t *testing.T, img string, sectorSize int) (loop string, detach func()) {
	t.Helper()
	out, err := exec.Command("losetup", "--find", "--show", "--sector-size", strconv.Itoa(sectorSize), img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v\n%s", err, out)
	}
	loop = strings.TrimSpace(string(out))
	var once sync.Once
	detach = func() {
		once.Do(func() {
			if out, err := exec.Command("losetup", "-d", loop).CombinedOutput(); err != nil {
				t.Errorf("losetup -d %s: %v\n%s", loop, err, out)
			}
		})
	}
	t.Cleanup(detach)
	return loop, detach
}

// TestFormatBlockDevice formats loop devices with 512-byte and 4 KiB
// logical sectors, with and without reflink: the size and the sector size
// come from the device, and the result matches what mkfs.xfs makes on the
// same device.
func TestFormatBlockDevice(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolDB, oracle.ToolRepair, oracle.ToolMount)
	for _, c := range []struct {
		ss int
		o  Options
	}{{512, Options{}}, {4096, Options{}}, {512, Options{NoReflink: true}}, {4096, Options{NoReflink: true}}} {
		ss, o := c.ss, c.o
		name := "sector" + strconv.Itoa(ss)
		if o.NoReflink {
			name += "-noreflink"
		}
		t.Run(name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "disk.img")
			junk := make([]byte, 1<<20)
			rand.Read(junk)
			if err := os.WriteFile(img, junk, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(img, 200<<20); err != nil {
				t.Fatal(err)
			}
			loop, detach := attachLoop(t, img, ss)

			mkfsXFS, err := exec.LookPath("mkfs.xfs")
			if err != nil {
				mkfsXFS = "/usr/sbin/mkfs.xfs"
			}
			mkfsArgs := append(append([]string{"-q", "-f"}, reflinkArgs(o)...), loop)
			cmd := exec.Command(mkfsXFS, mkfsArgs...)
			cmd.Env = append(os.Environ(), "TEST_DIR=1", "TEST_DEV=1", "QA_CHECK_FS=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("mkfs.xfs: %v\n%s", err, out)
			}
			res, err := Format(loop, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.SectorSize != ss || res.DBlocks != 200<<20/4096 {
				t.Errorf("sector size %d, %d blocks; want %d, %d", res.SectorSize, res.DBlocks, ss, 200<<20/4096)
			}
			// Our format went over mkfs.xfs's: compare with a fresh one.
			ours := dumpMetadata(t, loop, res)
			cmd = exec.Command(mkfsXFS, mkfsArgs...)
			cmd.Env = append(os.Environ(), "TEST_DIR=1", "TEST_DEV=1", "QA_CHECK_FS=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("mkfs.xfs: %v\n%s", err, out)
			}
			ref := dumpMetadata(t, loop, res)
			if d := diffDumps(ref, ours); len(d) > 0 {
				t.Errorf("differences from mkfs.xfs on %s:\n%s", loop, strings.Join(d, "\n"))
			}
			if _, err := Format(loop, o); err != nil {
				t.Fatal(err)
			}
			oracle.Repair(t, loop)
			detach()
			oracle.Repair(t, img)
			kernelRoundTrip(t, img)
		})
	}
}
