package xfs_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/xlog"
)

// Open must refuse filesystems it cannot serve correctly, saying why:
// other format versions, unknown features, extra devices and logs that
// still hold changes.

// requireRefusal checks that opening img fails with kind and a message
// containing every one of words.
func requireRefusal(t *testing.T, img string, kind error, words ...string) {
	t.Helper()
	v, err := xfs.Open(img, xfs.Options{ReadOnly: true})
	if err == nil {
		v.Close()
		t.Fatalf("Open accepted %s", filepath.Base(img))
	}
	t.Logf("got: %v", err)
	if !errors.Is(err, kind) {
		t.Errorf("errors.Is(err, %v) is false", kind)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message does not say %q", w)
		}
	}
}

// patchSuperblock changes the primary superblock of img and recomputes
// its CRC over the whole sector.
func patchSuperblock(t *testing.T, img string, patch func(sb *format.Superblock)) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sector := make([]byte, 512)
	if _, err := f.ReadAt(sector, 0); err != nil {
		t.Fatal(err)
	}
	sb, err := format.DecodeSuperblock(sector)
	if err != nil {
		t.Fatal(err)
	}
	sector = make([]byte, sb.SectSize)
	if _, err := f.ReadAt(sector, 0); err != nil {
		t.Fatal(err)
	}
	patch(sb)
	sb.Encode(sector)
	format.SetCRC(sector, format.SbCRCOff)
	if _, err := f.WriteAt(sector, 0); err != nil {
		t.Fatal(err)
	}
}

func TestRefuseV4(t *testing.T) {
	img := filepath.Join(t.TempDir(), "v4.img")
	oracle.Mkfs(t, img, 64<<20, "-m", "crc=0")
	requireRefusal(t, img, xfs.ErrUnsupported, "v4", "only v5")
}

func TestRefuseUnknownIncompatFeature(t *testing.T) {
	img, _ := oracle.LoadGolden(t, "default")
	patchSuperblock(t, img, func(sb *format.Superblock) { sb.FeaturesIncompat |= 1 << 30 })
	requireRefusal(t, img, xfs.ErrUnsupported, "unknown incompatible features 0x40000000")
}

// TestRefuseNoFType: a v5 superblock without the ftype feature (which
// mkfs always sets) is refused at open, not at the first directory.
func TestRefuseNoFType(t *testing.T) {
	img, _ := oracle.LoadGolden(t, "default")
	patchSuperblock(t, img, func(sb *format.Superblock) { sb.FeaturesIncompat &^= format.IncompatFType })
	requireRefusal(t, img, xfs.ErrUnsupported, "no ftype feature")
}

// TestRefuseTinyLog: a log below the kernel's minimum is refused at open
// (the fuzzer found a writable open that failed only when its first
// transaction did not fit).
func TestRefuseTinyLog(t *testing.T) {
	img, _ := oracle.LoadGolden(t, "default")
	patchSuperblock(t, img, func(sb *format.Superblock) { sb.LogBlocks = format.MinLogBlocks - 1 })
	requireRefusal(t, img, xfs.ErrCorrupt, "log of 511 blocks is smaller than the minimum of 512")
}

func TestRefuseRealtime(t *testing.T) {
	t.Run("mkfs", func(t *testing.T) {
		dir := t.TempDir()
		rt := filepath.Join(dir, "rt.img")
		emptySparseFile(t, rt, 32<<20)
		img := filepath.Join(dir, "data.img")
		oracle.Mkfs(t, img, 64<<20, "-r", "rtdev="+rt+",size=16m")
		requireRefusal(t, img, xfs.ErrUnsupported, "realtime device")
	})
	t.Run("patched", func(t *testing.T) {
		img, _ := oracle.LoadGolden(t, "default")
		patchSuperblock(t, img, func(sb *format.Superblock) { sb.RBlocks, sb.RExtents = 4096, 4096 })
		requireRefusal(t, img, xfs.ErrUnsupported, "realtime device")
	})
}

func TestRefuseExternalLog(t *testing.T) {
	dir := t.TempDir()
	logdev := filepath.Join(dir, "log.img")
	emptySparseFile(t, logdev, 32<<20)
	img := filepath.Join(dir, "data.img")
	oracle.Mkfs(t, img, 64<<20, "-l", "logdev="+logdev+",size=10m")
	requireRefusal(t, img, xfs.ErrUnsupported, "external log")
}

// xfsIO runs xfs_io in expert mode with the given commands on path.
func xfsIO(t *testing.T, path string, cmds ...string) {
	t.Helper()
	oracle.Require(t, "xfs_io")
	bin, err := exec.LookPath("xfs_io")
	if err != nil {
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			if _, err := os.Stat(filepath.Join(dir, "xfs_io")); err == nil {
				bin = filepath.Join(dir, "xfs_io")
			}
		}
	}
	args := []string{"-x"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	if out, err := exec.Command(bin, append(args, path)...).CombinedOutput(); err != nil {
		t.Fatalf("xfs_io %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// writeDurable writes a file and fsyncs it.
func writeDurable(t *testing.T, name string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// kernelSnapshot mounts img read-only and describes what the kernel sees.
func kernelSnapshot(t *testing.T, img string) oracle.Snapshot {
	t.Helper()
	mnt := oracle.Mount(t, img, true)
	snap, err := oracle.SnapshotDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	oracle.Unmount(t, mnt)
	return snap
}

// TestRefuseDirtyLog shuts the filesystem down with its changes only in
// the log: Open must ask for recovery. Once the kernel has mounted it
// again (replaying the log) and unmounted it cleanly, Open succeeds and
// reads what the kernel sees.
func TestRefuseDirtyLog(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount, "xfs_io")
	img := filepath.Join(t.TempDir(), "dirty.img")
	oracle.Mkfs(t, img, 64<<20)
	mnt := oracle.Mount(t, img, false)
	if err := os.Mkdir(filepath.Join(mnt, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		writeDurable(t, filepath.Join(mnt, "dir", fmt.Sprintf("file-%d", i)), []byte(fmt.Sprintf("content %d\n", i)))
	}
	if err := syscall.Setxattr(filepath.Join(mnt, "dir", "file-0"), "user.color", []byte("blue"), 0); err != nil {
		t.Fatal(err)
	}
	xfsIO(t, mnt, "shutdown -f")
	oracle.Unmount(t, mnt)

	requireRefusal(t, img, xfs.ErrNeedsRecovery, "log needs recovery")

	// The kernel replays the log on mount and leaves it clean on unmount.
	oracle.Unmount(t, oracle.Mount(t, img, false))
	kernel := kernelSnapshot(t, img)
	if e, ok := kernel.Lookup("dir/file-0"); !ok || e.Xattrs["user.color"] != "blue" {
		t.Fatalf("the kernel did not replay the log: dir/file-0 is %+v", e)
	}
	requireSame(t, kernel, engineSnapshot(t, openRO(t, img)))
}

// TestWrappedLogIsClean wraps a minimum-size log several times with small
// synchronous transactions, unmounts cleanly, and requires Open to accept
// the log and read what the kernel sees.
func TestWrappedLogIsClean(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolMount)
	img := filepath.Join(t.TempDir(), "wrap.img")
	// At 64 MiB mkfs.xfs picks its minimum log size (1368 blocks of 4 KiB
	// with the defaults of xfsprogs 6.1).
	oracle.Mkfs(t, img, 64<<20)
	mnt := oracle.Mount(t, img, false)
	dir := filepath.Join(mnt, "churn")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Every fsync forces a small checkpoint into the log; half of the
	// files are removed again (with the directory synced), the rest stay.
	for i := 0; i < 2000; i++ {
		name := filepath.Join(dir, fmt.Sprintf("f%02d-%d", i%50, i))
		writeDurable(t, name, []byte(fmt.Sprintf("file %d\n", i)))
		if i%2 == 0 {
			if err := os.Remove(name); err != nil {
				t.Fatal(err)
			}
			if err := d.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		if i%100 == 1 {
			if err := syscall.Setxattr(name, "user.kept", []byte(fmt.Sprint(i)), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.Close()
	oracle.Unmount(t, mnt)

	v := openRO(t, img)
	sb, g := v.Superblock(), v.Geometry()
	log := &xlog.Log{R: mustOpen(t, img), Start: format.DaddrToByte(g.FsbToDaddr(sb.LogStart)),
		Blocks: sb.LogBlocks << (g.BlockLog - format.BBShift)}
	_, cycle, err := log.FindHead()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("log of %d blocks, head in cycle %d", sb.LogBlocks, cycle)
	if cycle < 4 {
		t.Fatalf("the log wrapped only %d times; the test wants several", cycle-1)
	}
	requireSame(t, kernelSnapshot(t, img), engineSnapshot(t, v))
}

func mustOpen(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
