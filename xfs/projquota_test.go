package xfs_test

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
	"github.com/xfs3/xfs3/xfs/quota"
)

// dquotFields returns what xfs_db prints for project id's dquot.
func dquotFields(t *testing.T, img string, id uint32) map[string]string {
	t.Helper()
	return oracle.ParseFields(oracle.DB(t, img, fmt.Sprintf("dquot -p %d", id), "print"))
}

// wantDquot requires xfs_db to show project id with the given usage and
// block hard limit.
func wantDquot(t *testing.T, img string, id uint32, blocks, inodes int64, bhard uint64) {
	t.Helper()
	f := dquotFields(t, img, id)
	for field, want := range map[string]string{
		"diskdq.bcount": strconv.FormatInt(blocks, 10), "diskdq.icount": strconv.FormatInt(inodes, 10),
		"diskdq.blk_hardlimit": strconv.FormatUint(bhard, 10), "diskdq.id": strconv.FormatUint(uint64(id), 10),
	} {
		if f[field] != want {
			t.Errorf("project %d: xfs_db %s = %q, want %s", id, field, f[field], want)
		}
	}
}

// TestProjectQuotaOracle: a fresh volume gains project quota at its first
// open; files under a project directory are charged to it exactly;
// writes past the hard limit fail with ErrQuota and leave nothing behind;
// deletes give the usage back. xfs_repair checks every count against the
// inodes, and xfs_db shows our limits and usage.
func TestProjectQuotaOracle(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	img := filepath.Join(t.TempDir(), "q.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := v.Names().Mkdir(v.Root(), "bucket", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	const id = 7
	if err := v.Quotas().SetProject(bucket, id); err != nil {
		t.Fatal(err)
	}
	const limit = 64 // blocks
	if err := v.Quotas().SetLimits(id, quota.Limits{BlkHard: limit, InoHard: 10}); err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	write := func(name string, blocks int) error {
		ino, err := v.Names().Create(bucket, name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			return err
		}
		_, err = v.Files().WriteAt(ino, make([]byte, blocks*bs), 0)
		return err
	}
	for i := 0; i < 4; i++ {
		if err := write(fmt.Sprintf("f%d", i), 10); err != nil {
			t.Fatalf("write f%d: %v", i, err)
		}
	}
	q, err := v.Quotas().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	if q.Usage.Blocks != 40 || q.Usage.Inodes != 5 {
		t.Fatalf("usage %+v, want 40 blocks and 5 inodes (the directory and 4 files)", q.Usage)
	}
	err = write("big", 30)
	if !errors.Is(err, xfs.ErrQuota) {
		t.Fatalf("write past the hard limit: %v, want ErrQuota", err)
	}
	q, _ = v.Quotas().Get(id)
	if q.Usage.Blocks > limit {
		t.Fatalf("usage %d blocks passed the hard limit %d", q.Usage.Blocks, limit)
	}
	if err := v.Names().Unlink(bucket, "big"); err != nil {
		t.Fatal(err)
	}
	if err := v.Names().Unlink(bucket, "f0"); err != nil {
		t.Fatal(err)
	}
	q, _ = v.Quotas().Get(id)
	if q.Usage.Blocks != 30 || q.Usage.Inodes != 4 {
		t.Fatalf("after deletes: usage %+v, want 30 blocks and 4 inodes", q.Usage)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	wantDquot(t, img, id, 30, 4, limit)
	sb := oracle.DBSuperblock(t, img)
	if sb["qflags"] != "0x608" {
		t.Errorf("sb qflags %s, want 0x608 (project quota accounted, enforced, checked)", sb["qflags"])
	}
}

// TestQuotacheck: counts on a volume whose flags say they cannot be
// trusted (here: cleared with xfs_db, as a kernel without quota does) are
// rebuilt at open, limits kept; xfs_repair agrees.
func TestQuotacheck(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolDB)
	img := filepath.Join(t.TempDir(), "qc.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	want := map[uint32][2]int64{}
	for p := uint32(1); p <= 40; p += 13 { // ids in two quota file blocks
		d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("p%d", p), xfs.Attrs{Mode: 0o755})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Quotas().SetProject(d, p); err != nil {
			t.Fatal(err)
		}
		if err := v.Quotas().SetLimits(p, quota.Limits{BlkHard: 1000 + uint64(p)}); err != nil {
			t.Fatal(err)
		}
		blocks, inodes := int64(0), int64(1)
		for i := 0; i < 1+rng.Intn(5); i++ {
			ino, err := v.Names().Create(d, fmt.Sprintf("f%d", i), xfs.Attrs{Mode: 0o644})
			if err != nil {
				t.Fatal(err)
			}
			n := rng.Intn(20)
			if _, err := v.Files().WriteAt(ino, make([]byte, n*v.Geometry().BlockSize), 0); err != nil {
				t.Fatal(err)
			}
			blocks += int64(n)
			inodes++
		}
		want[p] = [2]int64{blocks, inodes}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	// Spoil the counts and clear the checked flag.
	oracle.DBWrite(t, img, "dquot -p 1", "write diskdq.bcount 999")
	oracle.DBWrite(t, img, "sb 0", "write qflags 0")
	v, err = xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := v.Quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if w, ok := want[q.ID]; ok && (q.Usage.Blocks != w[0] || q.Usage.Inodes != w[1]) {
			t.Errorf("project %d after quotacheck: %+v, want %v", q.ID, q.Usage, w)
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	for p, w := range want {
		wantDquot(t, img, p, w[0], w[1], 1000+uint64(p))
	}
}

// TestQuotaGoldenDecode: the records of a volume whose quotas the kernel
// set up (limits, usage, running grace timers, a hole in the quota file,
// a project in a far block) read back as xfs_db prints them, on a
// read-only open and on a writable one (which trusts the counts).
func TestQuotaGoldenDecode(t *testing.T) {
	img, sections := oracle.LoadQuotaGolden(t)
	for _, ro := range []bool{true, false} {
		v, err := xfs.Open(img, xfs.Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		qs, err := v.Quotas().List()
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, q := range qs {
			f := oracle.QuotaGoldenDquot(sections, q.ID)
			if f == nil {
				continue
			}
			seen++
			num := func(field string) string { return f["diskdq."+field] }
			for field, got := range map[string]uint64{
				"bcount": uint64(q.Usage.Blocks), "icount": uint64(q.Usage.Inodes),
				"blk_hardlimit": q.Limits.BlkHard, "blk_softlimit": q.Limits.BlkSoft,
				"ino_hardlimit": q.Limits.InoHard, "ino_softlimit": q.Limits.InoSoft,
			} {
				if num(field) != strconv.FormatUint(got, 10) {
					t.Errorf("ro=%v project %d: %s = %d, xfs_db says %s", ro, q.ID, field, got, num(field))
				}
			}
			for field, got := range map[string]int64{"btimer": q.Usage.BTimer, "itimer": q.Usage.ITimer} {
				want := num(field)
				if q.ID != 0 && got != 0 {
					// xfs_db prints a running bigtime timer as a UTC date.
					if s := time.Unix(got, 0).UTC().Format(time.ANSIC); s != want {
						t.Errorf("ro=%v project %d: %s ends %s, xfs_db says %s", ro, q.ID, field, s, want)
					}
				} else if strconv.FormatInt(got, 10) != want {
					t.Errorf("ro=%v project %d: %s = %d, xfs_db says %s", ro, q.ID, field, got, want)
				}
			}
		}
		if seen < 7 {
			t.Errorf("ro=%v: only %d of the golden's projects were reported", ro, seen)
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
	}
	oracle.Repair(t, img)
}

// TestQuotaSoftLimitGrace: passing a soft limit is allowed and starts the
// grace timer; once the grace period is over, growth fails with ErrQuota;
// going back under the soft limit clears the timer and writes work again.
func TestQuotaSoftLimitGrace(t *testing.T) {
	v, d := newProjectDir(t, 3)
	if err := v.Quotas().SetLimits(3, quota.Limits{BlkSoft: 10, BlkHard: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := v.Quotas().SetGrace(time.Second, time.Second); err != nil {
		t.Fatal(err)
	}
	bs := v.Geometry().BlockSize
	write := func(name string, blocks int) error {
		ino, err := v.Names().Create(d, name, xfs.Attrs{Mode: 0o644})
		if err != nil {
			return err
		}
		_, err = v.Files().WriteAt(ino, make([]byte, blocks*bs), 0)
		return err
	}
	if err := write("over", 20); err != nil {
		t.Fatalf("passing the soft limit: %v", err)
	}
	q, _ := v.Quotas().Get(3)
	if q.Usage.BTimer == 0 {
		t.Fatalf("no grace timer after passing the soft limit: %+v", q.Usage)
	}
	for time.Now().Unix() <= q.Usage.BTimer {
		time.Sleep(200 * time.Millisecond)
	}
	if err := write("late", 1); !errors.Is(err, xfs.ErrQuota) {
		t.Fatalf("growth after the grace period: %v, want ErrQuota", err)
	}
	if err := v.Names().Unlink(d, "over"); err != nil {
		t.Fatal(err)
	}
	if q, _ := v.Quotas().Get(3); q.Usage.BTimer != 0 {
		t.Fatalf("timer still runs under the soft limit: %+v", q.Usage)
	}
	if err := write("again", 5); err != nil {
		t.Fatalf("write under the soft limit: %v", err)
	}
}

// TestApplyUncheckedPassesLimits: at a project's inode hard limit, Apply
// making inodes fails with ErrQuota and changes nothing; ApplyUnchecked
// makes them, and they are counted.
func TestApplyUncheckedPassesLimits(t *testing.T) {
	v, d := newProjectDir(t, 5)
	if err := v.Quotas().SetLimits(5, quota.Limits{InoHard: 1}); err != nil {
		t.Fatal(err)
	}
	ops := []xfs.NameOp{
		{ToDir: d, ToName: "k", New: &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o755, ProjID: 5}, Dir: true}},
		{ToDir: xfs.MadeDir, ToName: "m", New: &xfs.NewInode{Attrs: xfs.Attrs{Mode: 0o644, ProjID: 5}}},
	}
	if err := v.Names().Apply(ops); !errors.Is(err, xfs.ErrQuota) {
		t.Fatalf("Apply past the inode limit: %v, want ErrQuota", err)
	}
	if _, err := v.Names().Lookup(d, "k"); !errors.Is(err, xfs.ErrNotFound) {
		t.Fatalf("after the refused Apply: lookup k: %v", err)
	}
	if err := v.Names().ApplyUnchecked(ops); err != nil {
		t.Fatalf("ApplyUnchecked past the inode limit: %v", err)
	}
	k, err := v.Names().Lookup(d, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Names().Lookup(k, "m"); err != nil {
		t.Fatal(err)
	}
	if q, err := v.Quotas().Get(5); err != nil || q.Usage.Inodes != 3 {
		t.Fatalf("usage %+v, %v; want 3 inodes (p, k, m)", q.Usage, err)
	}
}

// newProjectDir opens a fresh 64 MiB volume, closed when the test ends,
// with the directory "p" of project id.
func newProjectDir(t *testing.T, id uint32) (*xfs.Volume, format.Ino) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "project.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	d, err := v.Names().Mkdir(v.Root(), "p", xfs.Attrs{Mode: 0o755, ProjID: id})
	if err != nil {
		t.Fatal(err)
	}
	return v, d
}
