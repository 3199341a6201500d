package oracle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGenerateQuotaGolden rebuilds testdata/golden/prjquota.img.zst and
// prjquota.txt: mkfs.xfs makes a 64 MiB volume, the user-mode Linux
// kernel runs QuotaGoldenScript on it, and xfs_db records the quota
// metadata. It runs only with -update or XFS3_UPDATE_GOLDEN=1:
//
//	go test ./xfs/oracle -run TestGenerateQuotaGolden -update
func TestGenerateQuotaGolden(t *testing.T) {
	if !*update && os.Getenv("XFS3_UPDATE_GOLDEN") != "1" {
		t.Skip("golden images are regenerated only with -update or XFS3_UPDATE_GOLDEN=1")
	}
	Require(t, ToolMkfs, ToolUML, ToolRepair, ToolDB)
	img := filepath.Join(t.TempDir(), QuotaGolden+".img")
	Mkfs(t, img, 64<<20)
	out := UML(t, img, QuotaGoldenScript)
	kernel, err := ParseSections(out)
	if err != nil {
		t.Fatalf("kernel output: %v\n%s", err, out)
	}
	Repair(t, img)
	secs := append(quotaDB(t, img, sectionMap(kernel)), kernel...)
	checkQuotaGolden(t, sectionMap(secs))
	if t.Failed() {
		t.Fatal("not writing a golden image that fails its checks")
	}

	zst, text, err := QuotaGoldenPaths()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteGolden(zst, img); err != nil {
		t.Fatal(err)
	}
	header := []string{
		QuotaGolden + ".img.zst: a 64 MiB mkfs.xfs (xfsprogs 6.1) default volume whose project",
		"quotas the user-mode Linux 6.1 kernel set up (oracle.QuotaGoldenScript).",
		"\"== CMD1 | CMD2\" sections: what xfs_db -r -c CMD1 -c CMD2 printed for it, with TZ=UTC.",
		"\"== kernel: ...\" sections: what the kernel showed before unmounting it.",
		"Regenerate both files: go test ./xfs/oracle -run TestGenerateQuotaGolden -update",
	}
	if err := WriteSections(text, header, secs); err != nil {
		t.Fatal(err)
	}
	checkGoldenSize(t, zst, 256<<10)
}

// TestQuotaGolden checks the quota golden image against its record: it
// passes xfs_repair -n (whose phase 7 recounts every project's usage,
// since PQUOTA_CHKD is set), xfs_db prints exactly what prjquota.txt
// holds, and the quota metadata has the shapes the codec's tests need.
func TestQuotaGolden(t *testing.T) {
	Require(t, ToolRepair, ToolDB)
	img, want := LoadQuotaGolden(t)
	Repair(t, img)
	got := quotaDB(t, img, want)
	for _, s := range got {
		if w, ok := want[s.Name]; !ok {
			t.Errorf("prjquota.txt has no section %q", s.Name)
		} else if s.Text != w {
			t.Errorf("xfs_db %s:\n%s\nprjquota.txt has:\n%s", s.Name, s.Text, w)
		}
	}
	kernel := 0
	for name := range want {
		if strings.HasPrefix(name, "kernel: ") {
			kernel++
		}
	}
	if len(want) != len(got)+kernel || kernel != 4 {
		t.Errorf("prjquota.txt has %d sections, want %d from xfs_db and 4 from the kernel (found %d)", len(want), len(got), kernel)
	}
	checkQuotaGolden(t, want)
}

// quotaDB returns xfs_db's sections for the quota golden image, with the
// inodes the kernel listed.
func quotaDB(t *testing.T, img string, kernel map[string]string) []Section {
	t.Helper()
	inos, err := quotaGoldenInodes(kernel["kernel: inode path"])
	if err != nil {
		t.Fatal(err)
	}
	return QuotaDBSections(t, img, inos)
}

func sectionMap(secs []Section) map[string]string {
	m := make(map[string]string, len(secs))
	for _, s := range secs {
		m[s.Name] = s.Text
	}
	return m
}

// checkQuotaGolden checks that the recorded quota golden has what
// QuotaGoldenScript set out to make.
func checkQuotaGolden(t *testing.T, secs map[string]string) {
	t.Helper()
	checkFields(t, "superblock", ParseFields(secs["sb 0 | print qflags versionnum pquotino uquotino gquotino"]), map[string]string{
		"qflags": "0x608", "versionnum": "0xb4e5", "pquotino": "131", "uquotino": "null", "gquotino": "null",
	})

	// The project quota inode: a regular file of 4 blocks, one per
	// allocated chunk of 30 dquots; file block 2 is a hole.
	var qino string
	for name, text := range secs {
		if strings.HasPrefix(name, "inode 131 ") {
			qino = text
		}
	}
	checkFields(t, "quota inode", ParseFields(qino), map[string]string{
		"core.mode": "0100000", "core.format": "2 (extents)", "core.nblocks": "4", "core.nextents": "4",
		"core.projid_lo": "0", "core.projid_hi": "0",
	})
	for _, off := range []int{0, 1, 3, 2333} {
		if !strings.Contains(qino, fmt.Sprintf("data offset %d startblock ", off)) {
			t.Errorf("quota inode has no block at file offset %d:\n%s", off, qino)
		}
	}

	// Dquots by project: limits in 4 KiB blocks, usage, timers. Soft
	// limits exceeded (project 7) run timers, printed as UTC dates.
	const running = "<date>"
	zero := map[string]string{"diskdq.blk_hardlimit": "0", "diskdq.blk_softlimit": "0", "diskdq.ino_hardlimit": "0",
		"diskdq.ino_softlimit": "0", "diskdq.bcount": "0", "diskdq.icount": "0", "diskdq.btimer": "0", "diskdq.itimer": "0"}
	dquots := map[uint32]map[string]string{
		// ID 0: the defaults; its timers are the grace periods (3 and 2
		// days, in seconds) and it is never BIGTIME.
		0: {"diskdq.type": "0x2", "diskdq.icount": "3", "diskdq.btimer": "259200", "diskdq.itimer": "172800"},
		1: zero,
		5: {"diskdq.blk_hardlimit": "512", "diskdq.bcount": "0", "diskdq.icount": "1"},
		7: {"diskdq.blk_softlimit": "16", "diskdq.blk_hardlimit": "256", "diskdq.ino_softlimit": "2", "diskdq.ino_hardlimit": "100",
			"diskdq.bcount": "67", "diskdq.icount": "5", "diskdq.btimer": running, "diskdq.itimer": running},
		9:  {"diskdq.blk_hardlimit": "0", "diskdq.bcount": "3", "diskdq.icount": "4"},
		11: {"diskdq.blk_hardlimit": "128", "diskdq.ino_hardlimit": "5", "diskdq.bcount": "0", "diskdq.icount": "0"},
		42: {"diskdq.blk_hardlimit": "256", "diskdq.ino_hardlimit": "10", "diskdq.bcount": "128", "diskdq.icount": "2", "diskdq.btimer": "0"},
		100: {"diskdq.blk_softlimit": "1024", "diskdq.blk_hardlimit": "2048", "diskdq.ino_softlimit": "50", "diskdq.ino_hardlimit": "60",
			"diskdq.bcount": "256", "diskdq.icount": "2", "diskdq.btimer": "0", "diskdq.itimer": "0"},
		70000: {"diskdq.blk_hardlimit": "25600", "diskdq.bcount": "1", "diskdq.icount": "2"},
	}
	for _, id := range QuotaGoldenIDs {
		f := QuotaGoldenDquot(secs, id)
		w, ok := dquots[id]
		if !ok {
			if f != nil || !strings.Contains(secs[fmt.Sprintf("dquot -p %d", id)], fmt.Sprintf("no project quota data for id %d", id)) {
				t.Errorf("project %d should have no dquot: %v", id, f)
			}
			continue
		}
		what := fmt.Sprintf("dquot %d", id)
		if f == nil {
			t.Errorf("%s: not recorded", what)
			continue
		}
		typ := "0x82" // PROJ|BIGTIME, even on the unused slot of ID 1
		if id == 0 {
			typ = "0x2"
		}
		checkFields(t, what, f, map[string]string{"diskdq.magic": "0x4451", "diskdq.version": "0x1",
			"diskdq.type": typ, "diskdq.id": fmt.Sprint(id)})
		plain := make(map[string]string)
		for k, v := range w {
			if v == running {
				if _, err := time.Parse(time.ANSIC, f[k]); err != nil {
					t.Errorf("%s: %s = %s, want a running timer (a date)", what, k, f[k])
				}
				continue
			}
			plain[k] = v
		}
		checkFields(t, what, f, plain)
		if !strings.HasSuffix(f["crc"], "(correct)") {
			t.Errorf("%s: crc %s", what, f["crc"])
		}
	}

	// The kernel's report agrees with the dquots (KiB = 4 x blocks).
	rows, err := ParseQuotaReport(secs["kernel: xfs_quota report -p -b -i -n"])
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint32{0, 5, 7, 9, 11, 42, 100, 70000} {
		r, ok := rows[id]
		f := QuotaGoldenDquot(secs, id)
		if !ok || f == nil {
			t.Errorf("project %d: report row %v, dquot %v", id, ok, f != nil)
			continue
		}
		if got, want := fmt.Sprintf("%d %d %d %d", r.BlocksKiB/4, r.BlockHardKiB/4, r.Inodes, r.InodeHard),
			fmt.Sprintf("%s %s %s %s", f["diskdq.bcount"], f["diskdq.blk_hardlimit"], f["diskdq.icount"], f["diskdq.ino_hardlimit"]); got != want {
			t.Errorf("project %d: report %s, dquot %s (bcount, blk_hardlimit, icount, ino_hardlimit)", id, got, want)
		}
	}
	if r := rows[7]; r.BlockGrace == "" || r.InodeGrace == "" {
		t.Errorf("project 7 runs no grace timer in the report: %+v", r)
	}

	// Inodes carry their project: PROJINHERIT (0x200) on directories,
	// ID 70000 split as projid_hi 1, projid_lo 4464.
	paths := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(secs["kernel: inode path"]), "\n") {
		ino, path, _ := strings.Cut(line, " ")
		paths[path] = ino
	}
	for path, w := range map[string]map[string]string{
		"":         {"core.projid_lo": "0", "core.projid_hi": "0", "core.flags": "0"},
		"p7":       {"core.projid_lo": "7", "core.projid_hi": "0", "core.flags": "0x200"},
		"p7/a":     {"core.projid_lo": "7", "core.projid_hi": "0", "core.flags": "0", "core.nblocks": "64"},
		"p9/sub":   {"core.projid_lo": "9", "core.flags": "0x200"},
		"p9/sub/y": {"core.projid_lo": "9", "core.nblocks": "1"},
		"p70000":   {"core.projid_lo": "4464", "core.projid_hi": "1", "core.flags": "0x200"},
		"p70000/f": {"core.projid_lo": "4464", "core.projid_hi": "1", "core.nblocks": "1"},
	} {
		ino, ok := paths[path]
		if !ok {
			t.Errorf("the kernel listed no %q", path)
			continue
		}
		checkFields(t, "inode of /"+path, ParseFields(secs["inode "+ino+" | print core.mode core.nblocks core.projid_lo core.projid_hi core.flags"]), w)
	}
}
