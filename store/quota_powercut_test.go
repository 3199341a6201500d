package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The quota power-cut test: a seeded random workload of PUTs (of declared
// and undeclared size), overwrites, DELETEs, copies between buckets and
// multipart uploads runs against buckets with small hard limits (blocks,
// and objects for one), so that writes keep being refused, on a device
// with a volatile write cache (dev.Fault). Each seed is cut at several
// writes, spread over the run; the disk keeps a random part of what was
// not flushed. Then our recovery opens the image and:
//
//   - every acknowledged object reads back, and the operation in flight is
//     all there or not at all;
//   - every bucket's usage equals the blocks and inodes of its tree
//     (uploads in progress included) and passes no hard limit, and the
//     limits are as set: the dquot records the log replayed are exact,
//     since a volume whose counts are trusted is not recounted at open;
//   - xfs_repair -n is clean (it recounts every project).
//
// Every few cases the quota-enabled kernel of user-mode Linux replays a
// copy of the same crash image itself (mount -o prjquota, which trusts
// the replayed counts): xfs_quota then reports exactly the usage and
// limits our recovery produced, the kernel runs no quotacheck, and
// xfs_repair -n is clean after it.
//
// XFS3_QUOTA_POWERCUT_SEEDS (default 2) seeds of XFS3_QUOTA_POWERCUT_OPS
// (default 60) operations, each cut at XFS3_QUOTA_POWERCUT_CUTS (default 3)
// writes, starting at seed XFS3_QUOTA_POWERCUT_SEED (default 1); the kernel
// replays every XFS3_QUOTA_POWERCUT_KERNEL_EVERY-th case (default 3, 0:
// never).

// quotaCutLimits are the buckets of the workload and their limits; every
// limit is a whole number of 4 KiB blocks, so it reads back as set.
var quotaCutLimits = map[string]BucketQuota{
	"qaa":  {HardBytes: 768 << 10},
	"qbb":  {HardBytes: 512 << 10, HardObjects: 12},
	"qcc":  {HardBytes: 1 << 20, SoftBytes: 512 << 10},
	"free": {},
}

var quotaCutBuckets = []string{"free", "qaa", "qbb", "qcc"}

func TestQuotaPowerCut(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair)
	seeds := envInt(t, "XFS3_QUOTA_POWERCUT_SEEDS", 2)
	cuts := max(envInt(t, "XFS3_QUOTA_POWERCUT_CUTS", 3), 1)
	ops := envInt(t, "XFS3_QUOTA_POWERCUT_OPS", 60)
	seed0 := int64(envInt(t, "XFS3_QUOTA_POWERCUT_SEED", 1))
	kernelEvery := envInt(t, "XFS3_QUOTA_POWERCUT_KERNEL_EVERY", 3)
	if kernelEvery > 0 && !oracle.Optional(t, "no kernel replays", oracle.ToolUML) {
		kernelEvery = 0
	}
	base := quotaCutBase(t)
	refused, n := 0, 0
	for i := 0; i < seeds; i++ {
		seed := seed0 + int64(i)
		dry := runQuotaCut(t, base, seed, ops, 0)
		writes, _ := dry.f.Stats()
		refused += dry.refused
		rng := rand.New(rand.NewSource(seed * 7907))
		for c := 0; c < cuts; c++ {
			// One cut in each of cuts equal stretches of the run.
			lo, hi := writes*c/cuts, writes*(c+1)/cuts
			cutAt := 1 + lo + rng.Intn(max(hi-lo, 1))
			kernel := kernelEvery > 0 && n%kernelEvery == 0
			n++
			t.Run(fmt.Sprintf("seed%d/cut%d", seed, cutAt), func(t *testing.T) {
				t.Logf("seed %d: %d writes in a full run, %d operations refused over a limit", seed, writes, dry.refused)
				quotaCutCase(t, base, seed, ops, cutAt, kernel)
			})
		}
	}
	if refused == 0 {
		t.Errorf("no write was refused in %d seeds: the workload never reaches a limit", seeds)
	}
}

// quotaCutBase makes the volume every run starts from: the buckets with
// their limits, cleanly closed.
func quotaCutBase(t *testing.T) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "base.img")
	if _, err := mkfs.Format(base, mkfs.Options{Size: 128 << 20}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range quotaCutBuckets {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		if q := quotaCutLimits[b]; q != (BucketQuota{}) {
			if err := s.quotas().Set(b, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, base)
	return base
}

// quotaCutRun is one run of the workload until the cut; its models are
// keyed "bucket/key".
type quotaCutRun struct {
	cutRun
	refused int // operations refused over a limit
}

// runQuotaCut runs the seeded workload over base on a Fault device,
// cutting the power at write cutAt (0: after the last operation). The gc
// mode goes by the seed.
func runQuotaCut(t *testing.T, base string, seed int64, ops, cutAt int) *quotaCutRun {
	t.Helper()
	f := openFault(t, base)
	r := &quotaCutRun{cutRun: cutRun{f: f, before: cutModel{}}}
	if cutAt > 0 {
		f.CutAt(cutAt)
	}
	r.after = r.before
	v, err := xfs.OpenDevice(f, xfs.Options{LazyCommits: true})
	if err != nil {
		if f.IsCut() {
			r.inFlight = "open"
			return r
		}
		t.Fatal(err)
	}
	defer v.Close() // fails after a cut; the image is built from the device
	mode := []gc.Mode{gc.PerCPU, gc.Sync, gc.Sweep}[seed%3]
	s, err := NewWith(v, Options{GC: gc.Options{Mode: mode}})
	if err != nil {
		if f.IsCut() {
			r.inFlight = "open"
			return r
		}
		t.Fatal(err)
	}
	defer s.Close()
	s.minPart = 1
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < ops; i++ {
		next := r.before.clone()
		name, err := quotaCutStep(s, rng, next)
		switch {
		case f.IsCut():
			// Whatever it returned, the operation may not be durable.
			if err == nil {
				r.before = next
			}
			r.after, r.inFlight = next, name
			return r
		case errors.Is(err, ErrQuotaExceeded):
			r.refused++ // and nothing changed
		case err != nil:
			t.Fatalf("op %d %s: %v", i, name, err)
		default:
			r.before = next
		}
		r.after = r.before
	}
	f.Cut()
	return r
}

// quotaCutStep runs one random operation, recording in m the state it
// makes when it succeeds.
func quotaCutStep(s *Store, rng *rand.Rand, m cutModel) (string, error) {
	bucket := quotaCutBuckets[rng.Intn(len(quotaCutBuckets))]
	key := fmt.Sprintf("d%d/k%d", rng.Intn(2), rng.Intn(8))
	sizes := []int{0, 1000, 4096, 40000, 150000, 300000, 500000, 900000}
	body := make([]byte, sizes[rng.Intn(len(sizes))])
	rng.Read(body)
	switch op := rng.Intn(10); {
	case op < 5:
		size := int64(len(body))
		if rng.Intn(4) == 0 {
			size = -1 // undeclared: refused only once written
		}
		m[bucket+"/"+key] = cutObject{etag: md5Hex(body)}
		_, err := s.PutObject(bucket, key, bytes.NewReader(body), size, Meta{})
		return fmt.Sprintf("put %s/%s (%d bytes, declared %d)", bucket, key, len(body), size), err
	case op < 7:
		delete(m, bucket+"/"+key)
		return "delete " + bucket + "/" + key, s.DeleteObject(bucket, key)
	case op < 8:
		src, ok := m[bucket+"/"+key]
		if !ok {
			return "no-op", nil
		}
		dst := quotaCutBuckets[rng.Intn(len(quotaCutBuckets))]
		dkey := fmt.Sprintf("c/k%d", rng.Intn(4))
		m[dst+"/"+dkey] = src
		_, err := s.CopyObject(bucket, key, dst, dkey, nil)
		return "copy " + bucket + "/" + key + " " + dst + "/" + dkey, err
	default:
		m[bucket+"/"+key] = cutObject{etag: md5Hex(body)}
		return fmt.Sprintf("multipart %s/%s (%d bytes)", bucket, key, len(body)), multipartPut(s, bucket, key, body)
	}
}

// quotaCutCase cuts the power at write cutAt of the seed's run and checks
// our recovery, and with kernel the kernel's, of what the disk keeps.
func quotaCutCase(t *testing.T, base string, seed int64, ops, cutAt int, kernel bool) {
	r := runQuotaCut(t, base, seed, ops, cutAt)
	rng := rand.New(rand.NewSource(seed*104729 + int64(cutAt)))
	crash := randomCrash(rng, r.f, seed+int64(cutAt))
	t.Logf("cut at write %d during %q; keeping %d of %d unflushed writes (subset %v), tear %v",
		cutAt, r.inFlight, crash.Keep, r.f.Pending(), crash.Subset != nil, crash.Tear)

	dir := t.TempDir()
	img := filepath.Join(dir, "crash.img")
	kimg := filepath.Join(dir, "kernel.img")
	oracle.CopySparse(t, base, img)
	if err := r.f.Image(img, crash); err != nil {
		t.Fatal(err)
	}
	if kernel {
		oracle.CopySparse(t, img, kimg)
	}

	v, err := xfs.Open(img, xfs.Options{LazyCommits: true}) // our recovery
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	st, recovered := v.Recovery()
	t.Logf("recovery: %v %+v", recovered, st)
	ours, err := v.Quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(v)
	if err != nil {
		t.Fatalf("store after recovery: %v", err)
	}
	defer s.Close()
	got := cutModel{}
	for _, b := range quotaCutBuckets {
		for k, o := range readBucketState(t, s, b, b+"/") {
			got[k] = o
		}
	}
	if !equalCut(got, r.before) && !equalCut(got, r.after) {
		t.Errorf("after recovery the buckets hold %v;\nacknowledged before %q: %v\nafter it: %v", got, r.inFlight, r.before, r.after)
	}
	checkUsage(t, s)
	us, err := s.quotas().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		if u.Quota != quotaCutLimits[u.Bucket] {
			t.Errorf("bucket %s has limits %+v after recovery, set %+v", u.Bucket, u.Quota, quotaCutLimits[u.Bucket])
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	oracle.Repair(t, img)
	if kernel {
		kernelReplaysQuota(t, kimg, recovered, ours, int64(v.Geometry().BlockSize))
	}
}

// kernelReplaysQuota lets the quota-enabled kernel of user-mode Linux
// replay img's log (a prjquota mount) and checks that it reports the
// projects' usage and limits exactly as ours, recovered from a copy of
// img, without a quotacheck; xfs_repair -n must be clean afterwards. The
// first mount replays the log and frees what sits on the unlinked lists;
// the report is taken on a second mount, once everything freed is
// counted.
func kernelReplaysQuota(t *testing.T, img string, dirty bool, ours []xfs.ProjectQuota, blockSize int64) {
	t.Helper()
	res := oracle.UMLConfig{}.Run(t, img, `
mount -t xfs -o prjquota "$DEV" "$MNT"
umount "$MNT"
mount -t xfs -o prjquota "$DEV" "$MNT"
echo REPORT
xfs_quota -x -c 'report -p -b -i -n' "$MNT"
umount "$MNT"
`)
	if res.Status != 0 {
		t.Fatalf("kernel replay exited %d:\n%s\nconsole:\n%s", res.Status, res.Output, res.Console)
	}
	if dirty && !strings.Contains(res.Console, "Starting recovery") {
		t.Errorf("our recovery replayed the log, the kernel did not:\n%s", res.Console)
	}
	if strings.Contains(res.Console, "Quotacheck needed") {
		t.Errorf("the kernel recounted the quotas instead of trusting the replayed records:\n%s", res.Console)
	}
	_, report, ok := strings.Cut(res.Output, "REPORT\n")
	if !ok {
		t.Fatalf("no report in:\n%s", res.Output)
	}
	rows, err := oracle.ParseQuotaReport(report)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Output)
	}
	kib := uint64(blockSize / 1024)
	seen := map[uint32]bool{}
	for _, q := range ours {
		seen[q.ID] = true
		want := oracle.QuotaReportRow{
			ID:        q.ID,
			BlocksKiB: uint64(q.Usage.Blocks) * kib, BlockSoftKiB: q.Limits.BlkSoft * kib, BlockHardKiB: q.Limits.BlkHard * kib,
			Inodes: uint64(q.Usage.Inodes), InodeSoft: q.Limits.InoSoft, InodeHard: q.Limits.InoHard,
		}
		got := rows[q.ID] // the report leaves out projects with nothing to show
		got.ID = q.ID
		// Warnings are not kept; of a timer, whether it runs (project
		// 0's fields are the grace periods).
		got.BlockWarns, got.InodeWarns = 0, 0
		if q.ID != 0 {
			if (got.BlockGrace != "") != (q.Usage.BTimer != 0) || (got.InodeGrace != "") != (q.Usage.ITimer != 0) {
				t.Errorf("project %d: the kernel's replay shows grace [%s] [%s], our recovery timers %d %d",
					q.ID, got.BlockGrace, got.InodeGrace, q.Usage.BTimer, q.Usage.ITimer)
			}
		}
		got.BlockGrace, got.InodeGrace = "", ""
		if got != want {
			t.Errorf("project %d: the kernel's replay reports %+v, our recovery %+v", q.ID, rows[q.ID], want)
		}
	}
	for id, row := range rows {
		if !seen[id] {
			t.Errorf("project %d: the kernel's replay reports %+v, our recovery nothing", id, row)
		}
	}
	if !t.Failed() {
		t.Logf("the kernel's replay agrees with ours on %d projects", len(ours))
	}
	oracle.Repair(t, img)
}
