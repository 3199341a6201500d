package xfs_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/quota"
)

// kernelQuotaReport mounts img with -o prjquota under user-mode Linux,
// runs script there (after the mount, with $MNT the mount point) and
// returns xfs_quota's report, taken after the script.
func kernelQuotaReport(t *testing.T, img, script string) map[uint32]oracle.QuotaReportRow {
	t.Helper()
	out := oracle.UML(t, img, `
mount -t xfs -o prjquota "$DEV" "$MNT"
`+script+`
sync
echo REPORT
xfs_quota -x -c 'report -p -b -i -n' "$MNT"
umount "$MNT"
`)
	_, report, ok := strings.Cut(out, "REPORT\n")
	if !ok {
		t.Fatalf("no report in:\n%s", out)
	}
	rows, err := oracle.ParseQuotaReport(report)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rows
}

// TestKernelEnforcesOurQuota: limits and usage the engine wrote are what a
// quota-enabled kernel reports, the kernel enforces our limit (ENOSPC, as
// XFS reports project quota), and our engine then trusts and keeps the
// counts the kernel maintained.
func TestKernelEnforcesOurQuota(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolUML)
	img := filepath.Join(t.TempDir(), "ours.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	d, err := v.Names().Mkdir(v.Root(), "bucket", xfs.Attrs{Mode: 0o777, ProjID: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Quotas().SetLimits(5, quota.Limits{BlkHard: 256, BlkSoft: 128, InoHard: 20}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		ino, err := v.Names().Create(d, fmt.Sprintf("f%d", i), xfs.Attrs{Mode: 0o666})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Files().WriteAt(ino, make([]byte, 20*bs), 0); err != nil {
			t.Fatal(err)
		}
	}
	ours, err := v.Quotas().Get(5)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)

	rows := kernelQuotaReport(t, img, "")
	kib := uint64(bs / 1024)
	got := rows[5]
	if got.BlocksKiB != uint64(ours.Usage.Blocks)*kib || got.Inodes != uint64(ours.Usage.Inodes) ||
		got.BlockHardKiB != 256*kib || got.BlockSoftKiB != 128*kib || got.InodeHard != 20 {
		t.Fatalf("kernel reports %+v; we have %+v", got, ours)
	}
	// Writing past our limit there fails with ENOSPC at the limit.
	rows = kernelQuotaReport(t, img, `
if dd if=/dev/zero of="$MNT/bucket/big" bs=4096 count=1000 conv=fsync 2>"$WORK/dd.err"; then
	echo "dd past the limit succeeded"; exit 1
fi
grep -q 'No space left on device' "$WORK/dd.err" || { cat "$WORK/dd.err"; exit 1; }
`)
	if got := rows[5]; got.BlocksKiB > 256*kib || got.BlocksKiB < 250*kib {
		t.Fatalf("after writing past the limit the kernel reports %d KiB used, want the %d KiB limit", got.BlocksKiB, 256*kib)
	}
	oracle.Repair(t, img)

	// The kernel kept the counts checked: we load them as they are.
	v, err = xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := v.Quotas().Get(5)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(q.Usage.Blocks)*kib != rows[5].BlocksKiB || uint64(q.Usage.Inodes) != rows[5].Inodes {
		t.Fatalf("we read %+v after the kernel, it reported %+v", q.Usage, rows[5])
	}
	ino, err := v.Names().Create(d, "more", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Files().WriteAt(ino, make([]byte, 16*bs), 0); !errors.Is(err, xfs.ErrQuota) {
		t.Fatalf("write past the limit after the kernel: %v, want ErrQuota", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
}

// TestWeEnforceKernelQuota: a project and limits set with xfs_quota under
// a quota-enabled kernel are enforced by the engine, exactly at the
// limit, for blocks and for inodes.
func TestWeEnforceKernelQuota(t *testing.T) {
	oracle.Require(t, oracle.ToolMkfs, oracle.ToolRepair, oracle.ToolUML)
	img := filepath.Join(t.TempDir(), "kernel.img")
	oracle.Mkfs(t, img, 64<<20)
	kernelQuotaReport(t, img, `
mkdir "$MNT/b"
xfs_quota -x -c 'project -s -p '"$MNT"'/b 9' "$MNT" >/dev/null
xfs_quota -x -c 'limit -p bhard=256k ihard=5 9' "$MNT"
`)
	oracle.Repair(t, img)
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := v.Names().LookupPath("/b", false)
	if err != nil {
		t.Fatal(err)
	}
	q, err := v.Quotas().Get(9)
	if err != nil {
		t.Fatal(err)
	}
	bs := int64(v.Geometry().BlockSize)
	if q.Limits.BlkHard != uint64(256<<10/bs) || q.Limits.InoHard != 5 || q.Usage.Inodes != 1 {
		t.Fatalf("project 9 as we read it: %+v", q)
	}
	// Blocks: fill to the limit, then one block more fails.
	ino, err := v.Names().Create(d, "data", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	room := int64(q.Limits.BlkHard) - q.Usage.Blocks
	if _, err := v.Files().WriteAt(ino, make([]byte, room*bs), 0); err != nil {
		t.Fatalf("write up to the limit: %v", err)
	}
	if _, err := v.Files().WriteAt(ino, make([]byte, bs), room*bs); !errors.Is(err, xfs.ErrQuota) {
		t.Fatalf("one block past the limit: %v, want ErrQuota", err)
	}
	// Inodes: the directory and "data" are 2 of 5.
	for i := 0; i < 3; i++ {
		if _, err := v.Names().Create(d, "e"+strconv.Itoa(i), xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Names().Create(d, "one-too-many", xfs.Attrs{Mode: 0o644}); !errors.Is(err, xfs.ErrQuota) {
		t.Fatalf("inode past the limit: %v, want ErrQuota", err)
	}
	if _, err := v.Names().Lookup(d, "one-too-many"); !errors.Is(err, xfs.ErrNotFound) {
		t.Fatalf("the refused create left a name: %v", err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	rows := kernelQuotaReport(t, img, "")
	if got := rows[9]; got.BlocksKiB != uint64(q.Limits.BlkHard)*uint64(bs)/1024 || got.Inodes != 5 {
		t.Fatalf("kernel reports %+v after our writes", got)
	}
}
