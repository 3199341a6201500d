package oracle

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// umlImage makes a 64 MiB XFS image with the mkfs.xfs defaults (v5,
// crc, finobt, bigtime, inobtcount, reflink, projid32bit...), the size the
// golden images use.
func umlImage(t *testing.T) string {
	t.Helper()
	Require(t, ToolMkfs, ToolUML)
	img := filepath.Join(t.TempDir(), "vol.img")
	Mkfs(t, img, 64<<20)
	return img
}

// TestUMLHarness checks what a script sees and what comes back: the
// environment, the block device, interleaved output, the exit status and
// that "sh -e" stops at the first failing command.
func TestUMLHarness(t *testing.T) {
	img := umlImage(t)
	r := UMLConfig{MemoryMiB: 128}.Run(t, img, `
echo "dev=$DEV mnt=$MNT work=$WORK pwd=$(pwd) home=$HOME tz=$TZ lc=$LC_ALL"
echo to-stderr >&2
echo "size=$(blockdev --getsize64 "$DEV")"
test -b /dev/ubda && echo blockdev-ok
test -d "$MNT" && test -z "$(ls -A "$MNT")" && echo mnt-empty
grep -q ' /proc proc ' /proc/mounts && grep -q ' /sys sysfs ' /proc/mounts && echo proc-sys-ok
uname -r
grep MemTotal /proc/meminfo
false
echo not-reached
`)
	t.Logf("boot to power-off in %v", r.Elapsed.Round(time.Millisecond))
	if r.Status != 1 {
		t.Errorf("status = %d, want 1 (from false under sh -e)", r.Status)
	}
	lines := strings.Split(strings.TrimSpace(r.Output), "\n")
	env := parseKV(lines[0])
	if env["dev"] != "/dev/ubda" || env["mnt"] == "" || env["work"] == "" || env["pwd"] != env["work"] ||
		env["home"] != env["work"] || env["tz"] != "UTC" || env["lc"] != "C" {
		t.Errorf("environment line %q", lines[0])
	}
	if !strings.HasSuffix(env["mnt"], "/mnt") {
		t.Errorf("MNT = %q", env["mnt"])
	}
	want := []string{"to-stderr", "size=67108864", "blockdev-ok", "mnt-empty", "proc-sys-ok"}
	if len(lines) < len(want)+1 || strings.Join(lines[1:len(want)+1], "|") != strings.Join(want, "|") {
		t.Errorf("output lines %q, want %q after the environment", lines, want)
	}
	if !strings.HasPrefix(lines[len(want)+1], "6.") {
		t.Errorf("kernel release %q, want 6.x", lines[len(want)+1])
	}
	if strings.Contains(r.Output, "not-reached") {
		t.Error("the script went on after a failing command")
	}
	for _, s := range []string{"SGI XFS with ACLs, security attributes, realtime, quota", "Run ", "reboot: Power down"} {
		if !strings.Contains(r.Console, s) {
			t.Errorf("console lacks %q", s)
		}
	}

	// A read-only image: the guest sees a read-only device, can mount
	// it read-only, and the image does not change. An exit status other
	// than 1 comes back too.
	before, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	r = UMLConfig{ReadOnly: true}.Run(t, img, `
echo "ro=$(blockdev --getro "$DEV")"
mount -o ro "$DEV" "$MNT"
ls -A "$MNT"
umount "$MNT"
exit 7`)
	if r.Status != 7 || strings.TrimSpace(r.Output) != "ro=1" {
		t.Errorf("read-only run: status %d, output %q; want 7 and ro=1", r.Status, r.Output)
	}
	if after, err := os.ReadFile(img); err != nil || !bytes.Equal(before, after) {
		t.Errorf("a read-only run changed the image (%v)", err)
	}
}

// parseKV splits "a=1 b=2" into a map.
func parseKV(s string) map[string]string {
	m := make(map[string]string)
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// TestUMLTimeout checks that a run past its timeout is reported as such,
// with the console, and that no process of it survives.
func TestUMLTimeout(t *testing.T) {
	img := umlImage(t)
	dir := t.TempDir()
	start := time.Now()
	r, err := UMLConfig{}.run(dir, img, "echo started; sleep 600", 8*time.Second)
	if err == nil || !strings.Contains(err.Error(), "timed out after 8s") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("timed-out run took %v", d)
	}
	if !strings.Contains(r.Console, "Run "+filepath.Join(dir, "init")) {
		t.Errorf("console of the timed-out run lacks the init line:\n%s", lastLines(r.Console, 10))
	}
	if strings.TrimSpace(r.Output) != "started" {
		t.Errorf("output %q, want started", r.Output)
	}
	if pids := processesMentioning(t, dir); len(pids) > 0 {
		t.Errorf("processes of the run still alive: %v", pids)
	}
}

// processesMentioning lists the host processes whose command line holds s.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	var pids []string
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie holds nothing
		}
		pids = append(pids, e.Name())
	}
	return pids
}

// TestUMLProjectQuota records how the quota-enabled kernel enforces and
// stores project quotas, the facts the engine's quota code relies on:
// the first prjquota mount runs a quotacheck and allocates the project
// quota inode; block limits are stored in filesystem blocks; a write past
// a hard block limit and a create past a hard inode limit both fail with
// ENOSPC (not EDQUOT) for project quotas; usage counts the directory.
func TestUMLProjectQuota(t *testing.T) {
	img := umlImage(t)
	Require(t, ToolRepair, ToolDB)
	r := UMLConfig{}.Run(t, img, `
mount -t xfs -o prjquota "$DEV" "$MNT"
grep " $MNT " /proc/mounts
q() { xfs_quota -x -c "$1" "$MNT"; }
mkdir "$MNT/b42" "$MNT/b43"
q "project -s -p $MNT/b42 42" >/dev/null
q "project -s -p $MNT/b43 43" >/dev/null
q 'limit -p bhard=1m ihard=10 42'
q 'limit -p ihard=3 43'
xfs_io -c lsproj -c stat "$MNT/b42" | grep -E '^(projid|fsxattr.xflags) '
if dd if=/dev/zero of="$MNT/b42/f" bs=64k count=100 2>dd.err; then echo "dd: no error"; fi
grep -o 'error writing.*' dd.err | sed "s|$MNT|\$MNT|"
echo "size=$(stat -c %s "$MNT/b42/f")"
for i in 1 2 3 4; do touch "$MNT/b43/f$i" 2>&1 || true; done
echo "created=$(ls "$MNT/b43" | tr '\n' ' ')"
echo "== report"
q 'report -p -b -i -n'
echo "== state"
q 'state -p'
umount "$MNT"
`)
	t.Logf("ran in %v", r.Elapsed.Round(time.Millisecond))
	out := r.Output
	for _, s := range []string{
		"prjquota",                 // the mount has the option
		"projid = 42",              // project -s set the directory's ID...
		"fsxattr.xflags = 0x200 [", // ...and PROJINHERIT (XFS_DIFLAG_PROJINHERIT)
		"error writing '$MNT/b42/f': No space left on device", // ENOSPC, not EDQUOT
		"size=1048576",   // exactly the 1 MiB hard limit was written
		"created=f1 f2 ", // directory + 2 files = ihard 3: f3 and f4 got ENOSPC
		"Accounting: ON", "Enforcement: ON",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "Disk quota exceeded") {
		t.Errorf("a project quota failure reported EDQUOT:\n%s", out)
	}
	if strings.Count(out, "No space left on device") != 3 {
		t.Errorf("want 3 ENOSPC (dd, touch f3, touch f4):\n%s", out)
	}
	// The first quota mount checks the quotas (the superblock had no
	// quota flags) and allocates the project quota inode.
	for _, s := range []string{"Quotacheck needed: Please wait.", "Quotacheck: Done."} {
		if !strings.Contains(r.Console, s) {
			t.Errorf("console lacks %q", s)
		}
	}

	report, section, _ := strings.Cut(out[strings.Index(out, "== report"):], "== state")
	rows, err := ParseQuotaReport(report)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]QuotaReportRow{
		// Project 0 holds every inode with no project: the root and,
		// as quotacheck counts every inode but the quota inodes, the
		// realtime bitmap and summary inodes (129, 130) too.
		0:  {ID: 0, Inodes: 3},
		42: {ID: 42, BlocksKiB: 1024, BlockHardKiB: 1024, Inodes: 2, InodeHard: 10},
		43: {ID: 43, Inodes: 3, InodeHard: 3},
	}
	if len(rows) != len(want) {
		t.Errorf("report rows %v, want %v", rows, want)
	}
	for id, w := range want {
		if rows[id] != w {
			t.Errorf("report for project %d: %+v, want %+v", id, rows[id], w)
		}
	}
	pquotino := ""
	for _, line := range strings.Split(section, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Inode: #"); ok {
			pquotino, _, _ = strings.Cut(rest, " ")
		}
	}

	// Back on the host: the kernel left a clean filesystem whose
	// superblock says "project quota accounted, enforced and checked".
	Repair(t, img)
	sb := DBSuperblock(t, img)
	if sb["qflags"] != "0x608" {
		t.Errorf("qflags = %s, want 0x608 (PQUOTA_ACCT|PQUOTA_ENFD|PQUOTA_CHKD)", sb["qflags"])
	}
	if v, err := parseHex(sb["versionnum"]); err != nil || v&0x40 == 0 {
		t.Errorf("versionnum = %s, want the QUOTA bit 0x40", sb["versionnum"])
	}
	if sb["pquotino"] != pquotino || pquotino != "131" {
		t.Errorf("pquotino = %s, xfs_quota state says %s; want 131 (the first inode after the root, rbmino and rsumino)", sb["pquotino"], pquotino)
	}
	if sb["uquotino"] != "null" || sb["gquotino"] != "null" {
		t.Errorf("uquotino = %s, gquotino = %s, want null", sb["uquotino"], sb["gquotino"])
	}
	dq := func(id string) map[string]string { return ParseFields(DB(t, img, "dquot -p "+id, "print")) }
	checkFields(t, "dquot 42", dq("42"), map[string]string{
		"diskdq.magic": "0x4451", "diskdq.version": "0x1",
		"diskdq.type":          "0x82", // XFS_DQTYPE_PROJ | XFS_DQTYPE_BIGTIME
		"diskdq.id":            "42",
		"diskdq.blk_hardlimit": "256", // 1 MiB in 4 KiB blocks
		"diskdq.blk_softlimit": "0",
		"diskdq.ino_hardlimit": "10",
		"diskdq.bcount":        "256",
		"diskdq.icount":        "2",
		"diskdq.btimer":        "0",
		"diskdq.itimer":        "0",
		"crc":                  "", // checked below
	})
	checkFields(t, "dquot 43", dq("43"), map[string]string{
		"diskdq.type": "0x82", "diskdq.id": "43", "diskdq.blk_hardlimit": "0",
		"diskdq.ino_hardlimit": "3", "diskdq.bcount": "0", "diskdq.icount": "3",
	})
	checkFields(t, "dquot 0", dq("0"), map[string]string{
		"diskdq.type": "0x2", // never BIGTIME on the default record
		"diskdq.id":   "0", "diskdq.icount": "3",
	})
	if crc := dq("42")["crc"]; !strings.HasSuffix(crc, "(correct)") {
		t.Errorf("dquot 42 crc = %q", crc)
	}
}

// checkFields reports every field of want that m lacks or holds another
// value of; an empty wanted value only asks that the field exists.
func checkFields(t *testing.T, what string, m, want map[string]string) {
	t.Helper()
	for k, w := range want {
		v, ok := m[k]
		if !ok {
			t.Errorf("%s: no field %s", what, k)
		} else if w != "" && v != w {
			t.Errorf("%s: %s = %s, want %s", what, k, v, w)
		}
	}
}

func parseHex(s string) (uint64, error) {
	return strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
}

// TestUMLQuotaMounts records what mounts with and without quota options
// do to a volume whose quotas are on, in the quota-enabled kernel and in
// the host's kernel (which has no quota support):
//
//   - a prjquota mount of a volume with PQUOTA_CHKD trusts its counts
//     (no quotacheck);
//   - a mount without quota options says "resetting quota flags" and
//     clears sb_qflags (0), in both kernels; versionnum's QUOTA bit,
//     sb_pquotino and the dquots with their limits stay, so the next
//     prjquota mount runs a quotacheck and finds the old limits;
//   - a read-only mount without quota options does the same in 6.1 (UML):
//     it writes the superblock. The host's kernel says "resetting quota
//     flags" too, but writes nothing: qflags stay 0x608;
//   - pqnoenforce leaves 0x408 (accounting and checked, not enforced),
//     and a prjquota mount after it needs no quotacheck.
func TestUMLQuotaMounts(t *testing.T) {
	img := umlImage(t)
	Require(t, ToolRepair, ToolDB)
	out := UML(t, img, `
step() {
	echo "== $1"
	dmesg | grep -o 'XFS (ubda): .*' | grep -v -e 'Mounting V5' -e 'Ending clean mount' -e 'Unmounting Filesystem' || true
	xfs_db -r -c 'sb 0' -c 'print qflags pquotino' -c 'dquot -p 42' -c 'print diskdq.blk_hardlimit diskdq.bcount' "$DEV"
	dmesg -C
}
dmesg -C
mount -o prjquota "$DEV" "$MNT"
mkdir "$MNT/b"
xfs_quota -x -c "project -s -p $MNT/b 42" -c 'limit -p bhard=1m 42' "$MNT" >/dev/null
head -c 65536 /dev/zero >"$MNT/b/f"
umount "$MNT"
step first-prjquota
mount -o prjquota "$DEV" "$MNT"; umount "$MNT"
step prjquota-again
mount -o ro "$DEV" "$MNT"; umount "$MNT"
step plain-ro
mount -o prjquota "$DEV" "$MNT"; umount "$MNT"
step prjquota-after-plain-ro
mount "$DEV" "$MNT"; umount "$MNT"
step plain-rw
mount -o prjquota "$DEV" "$MNT"; umount "$MNT"
step prjquota-after-plain-rw
mount -o pqnoenforce "$DEV" "$MNT"; umount "$MNT"
step pqnoenforce
mount -o prjquota "$DEV" "$MNT"; umount "$MNT"
step prjquota-after-pqnoenforce
`)
	secs, err := ParseSections(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	steps := sectionMap(secs)
	type want struct {
		qflags     string
		quotacheck bool
		reset      bool
	}
	for _, c := range []struct {
		step string
		want
	}{
		{"first-prjquota", want{"0x608", true, false}},
		{"prjquota-again", want{"0x608", false, false}},
		{"plain-ro", want{"0", false, true}}, // 6.1 writes the reset even read-only
		{"prjquota-after-plain-ro", want{"0x608", true, false}},
		{"plain-rw", want{"0", false, true}},
		{"prjquota-after-plain-rw", want{"0x608", true, false}},
		{"pqnoenforce", want{"0x408", false, false}},
		{"prjquota-after-pqnoenforce", want{"0x608", false, false}},
	} {
		s, ok := steps[c.step]
		if !ok {
			t.Errorf("no step %s in output:\n%s", c.step, out)
			continue
		}
		f := ParseFields(s)
		got := want{
			qflags:     f["qflags"],
			quotacheck: strings.Contains(s, "Quotacheck needed: Please wait."),
			reset:      strings.Contains(s, "resetting quota flags"),
		}
		if got != c.want {
			t.Errorf("after %s: %+v, want %+v\n%s", c.step, got, c.want, s)
		}
		// The quota inode, the limit and the usage survive every mount.
		if f["pquotino"] != "131" || f["diskdq.blk_hardlimit"] != "256" || f["diskdq.bcount"] != "16" {
			t.Errorf("after %s: pquotino %s, dquot 42 hard limit %s, count %s; want 131, 256, 16",
				c.step, f["pquotino"], f["diskdq.blk_hardlimit"], f["diskdq.bcount"])
		}
	}
	Repair(t, img)

	// The host's kernel has no quota support, yet acts the same on mounts
	// without quota options.
	Require(t, ToolMount)
	Unmount(t, Mount(t, img, true))
	if q := DBSuperblock(t, img)["qflags"]; q != "0x608" {
		t.Errorf("host read-only mount: qflags = %s, want 0x608", q)
	}
	Unmount(t, Mount(t, img, false))
	if q := DBSuperblock(t, img)["qflags"]; q != "0" {
		t.Errorf("host read-write mount: qflags = %s, want 0 (reset)", q)
	}
	Repair(t, img)
}

// TestRequireUML checks the message for a missing linux.uml: a skip that
// names the package, or a failure with XFS3_REQUIRE_ORACLES=1.
func TestRequireUML(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // linux.uml lives in /usr/bin
	const want = "linux.uml not found (user-mode Linux: Debian package user-mode-linux)"
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	Require(r, ToolUML)
	if !strings.Contains(r.skipped, want) || r.failed != "" {
		t.Errorf("skipped %q, failed %q; want a skip saying %q", r.skipped, r.failed, want)
	}
	t.Setenv(RequireEnv, "1")
	r = &recorder{TB: t}
	Require(r, ToolUML)
	if !strings.Contains(r.failed, want) || r.skipped != "" {
		t.Errorf("with %s=1: skipped %q, failed %q; want a failure", RequireEnv, r.skipped, r.failed)
	}
}

// TestUMLLingeringAfterPowerOff: a kernel process that stays after its
// console showed the power-off (a stand-in for linux.uml on PATH) is
// killed after the grace period and counts as a clean exit, not a
// two-minute timeout.
func TestUMLLingeringAfterPowerOff(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'reboot: Power down'\nexec sleep 600\n"
	if err := os.WriteFile(filepath.Join(bin, ToolUML), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	console := filepath.Join(t.TempDir(), "console")
	start := time.Now()
	exit, err := startUML(nil, console, time.Minute)
	took := time.Since(start)
	if err != nil || exit.err != nil {
		t.Fatalf("startUML: %v, exit %v", err, exit.err)
	}
	if took < umlPowerOffGrace || took > umlPowerOffGrace+10*time.Second {
		t.Errorf("returned after %v, want the grace period %v and a little", took, umlPowerOffGrace)
	}
}
