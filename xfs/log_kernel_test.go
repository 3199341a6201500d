package xfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// logOnlyImage runs ops random model operations on a fresh volume whose
// commits reach only the log (nothing is written back in place, file data
// is), then abandons it. It returns the image and what it must show.
func logOnlyImage(t *testing.T, o mkfs.Options, seed int64, ops int) (string, oracle.Snapshot) {
	return logOnlyImageWith(t, o, xfs.Options{}, seed, ops)
}

// logOnlyImageWith is logOnlyImage with the engine opened with vo. With
// lazy commits, many transactions share each checkpoint; the log is
// forced before the volume is abandoned, so it holds every change.
func logOnlyImageWith(t *testing.T, o mkfs.Options, vo xfs.Options, seed int64, ops int) (string, oracle.Snapshot) {
	img := filepath.Join(t.TempDir(), "log.img")
	if o.Size == 0 {
		o.Size = 256 << 20
	}
	if _, err := mkfs.Format(img, o); err != nil {
		t.Fatal(err)
	}
	v, err := xfs.Open(img, vo)
	if err != nil {
		t.Fatal(err)
	}
	xfs.SkipWriteback(v)
	m := &model{rng: rand.New(rand.NewSource(seed)), t: t, v: v}
	m.root = &mnode{ino: v.Root(), dir: map[string]*mnode{}, mode: 0o755, nlink: 2}
	for m.op = 0; m.op < ops; m.op++ {
		m.step()
	}
	// No checkEngine: some read paths go to the device, which holds
	// none of this.
	if err := xfs.ForceLog(v); err != nil {
		t.Fatal(err)
	}
	st := v.LogStats()
	t.Logf("%d commits in %d checkpoints, %d records, %d log writes, %d flushes, %d bytes", st.Commits, st.Checkpoints, st.Records, st.Writes, st.Flushes, st.Bytes)
	if vo.LazyCommits && st.Checkpoints*2 > st.Commits {
		t.Fatalf("lazy commits: %d commits in %d checkpoints, want many commits a checkpoint", st.Commits, st.Checkpoints)
	}
	if err := xfs.Abandon(v); err != nil {
		t.Fatal(err)
	}
	return img, m.expected()
}

// TestKernelReplaysOurLog: the kernel replays a log written by the engine
// (with every change only in the log), xfs_repair is clean afterwards and
// the kernel shows what the engine showed.
func TestKernelReplaysOurLog(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	for _, o := range []mkfs.Options{{}, {BlockSize: 1024}} {
		t.Run(map[bool]string{true: "bs4096", false: "bs1024"}[o.BlockSize == 0], func(t *testing.T) {
			img, want := logOnlyImage(t, o, 7, 400)
			logprintClean(t, img)
			if keep := os.Getenv("XFS3_LOG_KEEP"); keep != "" {
				exec.Command("cp", "--sparse=always", img, keep+"."+t.Name()[len(t.Name())-6:]).Run()
			}
			if out, err := oracle.RepairOutput(img); err == nil || !strings.Contains(out, "log") {
				t.Fatalf("xfs_repair -n should see a dirty log:\n%s", out)
			}
			checkSnapshot(t, "the kernel's replay", want, kernelReplay(t, img))
		})
	}
}

// TestKernelReplaysOurCheckpoints is TestKernelReplaysOurLog with lazy
// commits: many transactions a checkpoint, each block logged once in it
// with the chunks they all changed, and blocks logged again across
// checkpoints. The kernel replays it, xfs_repair is clean, and the
// kernel shows what the engine showed.
func TestKernelReplaysOurCheckpoints(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	for _, seed := range []int64{11, 12} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			// Every change stays in the log: its write-back backlog (an
			// eighth of the log, at most 1 MiB) must hold all 600 of
			// them, whose log bytes depend on how many share a
			// checkpoint. A 1 GiB volume's log leaves room; 256 MiB's
			// did not always under -race.
			img, want := logOnlyImageWith(t, mkfs.Options{Size: 1 << 30}, xfs.Options{LazyCommits: true}, seed, 600)
			logprintClean(t, img)
			checkSnapshot(t, "the kernel's replay", want, kernelReplay(t, img))
		})
	}
}

// logprintClean runs xfs_logprint over the whole log and fails on any
// complaint about a record.
func logprintClean(t *testing.T, img string) {
	t.Helper()
	out, err := exec.Command("xfs_logprint", "-t", img).CombinedOutput()
	if err != nil {
		t.Fatalf("xfs_logprint: %v\n%s", err, tail(string(out), 40))
	}
	if m := oracle.LogprintComplaint(string(out)); m != "" {
		t.Fatalf("xfs_logprint complains (%q):\n%s", m, tail(string(out), 60))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestEngineReplaysOurLog: the engine recovers a log holding every change
// (nothing written back): read-only open refuses, read-write open replays,
// then xfs_repair is clean and both the engine and the kernel show the
// model.
func TestEngineReplaysOurLog(t *testing.T) {
	for _, o := range []mkfs.Options{{}, {BlockSize: 1024}} {
		t.Run(map[bool]string{true: "bs4096", false: "bs1024"}[o.BlockSize == 0], func(t *testing.T) {
			img, want := logOnlyImage(t, o, 11, 400)
			if _, err := xfs.Open(img, xfs.Options{ReadOnly: true}); !errors.Is(err, xfs.ErrNeedsRecovery) {
				t.Fatalf("read-only open of a dirty log: %v", err)
			}
			v, err := xfs.Open(img, xfs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st, ok := v.Recovery()
			if !ok || st.Replayed == 0 {
				t.Fatalf("no recovery reported: %+v", st)
			}
			t.Logf("recovery: %+v", st)
			checkSnapshot(t, "engine after recovery", want, engineSnapshot(t, v))
			if err := v.Close(); err != nil {
				t.Fatal(err)
			}
			checkRecovered(t, img, want)
		})
	}
}

// kernelReplay has the kernel replay img's log (a read-write mount and
// unmount), requires xfs_repair -n to be clean but for dquot CRCs (the
// kernel, mounted without quotas, does not replay dquot items; see
// oracle.RepairAfterQuotalessReplay) and returns what a read-only mount
// then shows.
func kernelReplay(t *testing.T, img string) oracle.Snapshot {
	t.Helper()
	mnt := oracle.Mount(t, img, false)
	oracle.Unmount(t, mnt)
	oracle.RepairAfterQuotalessReplay(t, img)
	mnt = oracle.Mount(t, img, true)
	snap, err := oracle.SnapshotDir(mnt)
	oracle.Unmount(t, mnt)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkRecovered checks a volume after recovery and a clean close:
// xfs_logprint sees a clean log, xfs_repair -n is clean, and the kernel
// shows want.
func checkRecovered(t *testing.T, img string, want oracle.Snapshot) {
	t.Helper()
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	if out, err := exec.Command("xfs_logprint", "-t", img).CombinedOutput(); err != nil || !strings.Contains(string(out), "state: <CLEAN>") {
		t.Fatalf("xfs_logprint does not see a clean log (%v):\n%s", err, tail(string(out), 20))
	}
	oracle.Repair(t, img)
	mnt := oracle.Mount(t, img, true)
	got, err := oracle.SnapshotDir(mnt)
	oracle.Unmount(t, mnt)
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshot(t, "kernel after recovery", want, got)
}

func checkSnapshot(t *testing.T, what string, want, got oracle.Snapshot) {
	t.Helper()
	if d := want.DiffWith(got, oracle.DiffOptions{IgnoreDirSize: true}); len(d) > 0 {
		for _, l := range d {
			t.Error(l)
		}
		t.Fatalf("%s differs from the model", what)
	}
}

// TestEngineRecoversKernelLog: the kernel leaves a dirty log (changes of
// every kind, some written back by a sync and some not, an unlinked file
// still open, then a shutdown that flushes the log only); the engine's
// recovery of one copy and the kernel's recovery of another must give the
// same tree, both clean for xfs_repair -n, and the open unlinked inode
// must be freed.
func TestEngineRecoversKernelLog(t *testing.T) {
	oracle.Require(t, oracle.ToolRepair, oracle.ToolMount)
	if _, err := exec.LookPath("xfs_io"); err != nil {
		t.Skip("xfs_io not found")
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "kernel.img")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	mnt := oracle.Mount(t, img, false)
	sh := func(script string) {
		t.Helper()
		if out, err := exec.Command("sh", "-ec", script).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	sh(`cd ` + mnt + `
		mkdir -p a/b big
		for i in $(seq 1 600); do : > big/entry-with-a-long-name-$i; done
		head -c 30000 /dev/urandom > a/f1
		head -c 70000 /dev/urandom > a/f2
		setfattr -n user.small -v hello a/f1
		head -c 9000 /dev/urandom | base64 -w0 > /tmp/xfs3-bigattr-$$ && setfattr -n user.big -v "$(cat /tmp/xfs3-bigattr-$$)" a/f1 && rm /tmp/xfs3-bigattr-$$
		ln -s /some/where/far/away a/link
		ln a/f2 a/b/hard
		args=""; for i in $(seq 0 80); do args="$args -c \"pwrite -q $((i*8192)) 4096\""; done
		eval xfs_io -f $args sparse
		sync
		mv a/f2 a/b/g2
		rm a/b/hard
		for i in $(seq 1 300); do rm big/entry-with-a-long-name-$i; done
		eval xfs_io $(for i in $(seq 81 160); do printf -- '-c "pwrite -q %d 4096" ' $((i*8192)); done) sparse
		head -c 5000 /dev/urandom > doomed
		setfattr -x user.small a/f1
	`)
	held, err := os.Open(filepath.Join(mnt, "doomed"))
	if err != nil {
		t.Fatal(err)
	}
	sh(`cd ` + mnt + ` && rm doomed && xfs_io -x -c 'shutdown -f' .`)
	held.Close()
	oracle.Unmount(t, mnt)

	kimg := filepath.Join(dir, "kernel-replay.img")
	oracle.CopySparse(t, img, kimg)
	want := kernelReplay(t, kimg)

	v, err := xfs.Open(img, xfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := v.Recovery()
	t.Logf("recovery: %+v", st)
	if !ok || st.Replayed == 0 || st.Unlinked == 0 {
		t.Errorf("recovery replayed %d items and freed %d unlinked inodes", st.Replayed, st.Unlinked)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	checkRecovered(t, img, want)
}

// TestKernelReplaysAfterCutRecovery: a crashed log holds two records that
// each change a block-form directory, a node-form directory and an
// attribute leaf (a create, then removals), and our recovery loses power
// at each of its writes in turn. The kernel then
// replays the log over blocks our recovery may already have written at the
// final state, submitting them through their verifiers at the record
// boundary in between: it must mount and show what our own recovery of
// the same image shows. Before directory and attribute blocks were logged
// whole, the first record's chunks over the final block made blocks the
// kernel refused (every cut after the in-place writes; TestPowerCut seed
// 95192 found it): directory blocks, data blocks, leafn blocks and
// attribute leaves, each when it alone was logged in chunks.
func TestKernelReplaysAfterCutRecovery(t *testing.T) {
	oracle.Require(t, oracle.ToolMount, oracle.ToolRepair)
	crash := twoRecordDirImage(t)
	writes, _ := recoverCutAt(t, crash, 0).Stats()
	if writes < 2 {
		t.Fatalf("recovery made %d writes", writes)
	}
	for cut := 1; cut <= writes; cut++ {
		t.Run(fmt.Sprintf("cut%d", cut), func(t *testing.T) {
			f := recoverCutAt(t, crash, cut)
			img := filepath.Join(t.TempDir(), "cut.img")
			oracle.CopySparse(t, crash, img)
			if err := f.Image(img, dev.Crash{Keep: f.Pending()}); err != nil {
				t.Fatal(err)
			}
			kimg := filepath.Join(t.TempDir(), "kernel.img")
			oracle.CopySparse(t, img, kimg)
			v, err := xfs.Open(img, xfs.Options{})
			if err != nil {
				t.Fatalf("recovery after the cut: %v", err)
			}
			ours := engineSnapshot(t, v)
			if err := v.Close(); err != nil {
				t.Fatal(err)
			}
			checkSnapshot(t, "kernel replay vs engine replay", ours, kernelReplay(t, kimg))
		})
	}
}

// twoRecordDirImage returns a crashed image whose log holds, past its
// tail, a record with a create in a block-form directory and in a
// node-form one (data, leaf, free-index and node blocks) and an attribute
// set on a file whose attributes are in leaf form, then a record with six
// removals of each; nothing of either is written in place.
func twoRecordDirImage(t *testing.T) string {
	t.Helper()
	img := formatImage(t, mkfs.Options{Size: 256 << 20})
	v, err := xfs.Open(img, xfs.Options{LazyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	name := func(i int) string { return fmt.Sprintf("entry-%02d-with-a-longer-name", i) }
	d, err := v.Names().Mkdir(v.Root(), "d", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ { // one directory block, well filled
		if _, err := v.Names().Create(d, name(i), xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	big, err := v.Names().Mkdir(v.Root(), "big", xfs.Attrs{Mode: 0o755})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 700; i++ { // more than one leaf block holds: node form
		if _, err := v.Names().Create(big, name(i), xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := v.Names().Create(v.Root(), "f", xfs.Attrs{Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 40)
	for i := 0; i < 30; i++ { // past short form: one attribute leaf block
		if err := v.Xattrs().Set(f, "user."+name(i), value, xfs.XattrCreate); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []format.Ino{d, big} {
		if _, err := v.Names().Create(dir, "new", xfs.Attrs{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Xattrs().Set(f, "user.new", value, xfs.XattrCreate); err != nil {
		t.Fatal(err)
	}
	if err := v.Force(); err != nil { // the first record
		t.Fatal(err)
	}
	for i := 10; i < 16; i++ {
		for _, dir := range []format.Ino{d, big} {
			if err := v.Names().Unlink(dir, name(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := v.Xattrs().Remove(f, "user."+name(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Force(); err != nil { // the second
		t.Fatal(err)
	}
	crash := filepath.Join(t.TempDir(), "crash.img")
	oracle.CopySparse(t, img, crash)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	return crash
}
