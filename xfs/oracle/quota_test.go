package oracle

import "testing"

func TestParseQuotaReport(t *testing.T) {
	report := `Project quota on $MNT (/dev/ubda)
                               Blocks                                          Inodes                     
Project ID       Used       Soft       Hard    Warn/Grace           Used       Soft       Hard    Warn/ Grace     
---------- -------------------------------------------------- -------------------------------------------------- 
#0                   0          0          0     00  [0 days]          3          0          0     00  [0 days]
#7                 268         64       1024     00  [3 days]          5          2        100     01  [2 days]
#70000               4          0     102400     00 [--------]          2          0          0     00 [--------]

`
	rows, err := ParseQuotaReport(report)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]QuotaReportRow{
		0: {ID: 0, BlockGrace: "0 days", Inodes: 3, InodeGrace: "0 days"},
		7: {ID: 7, BlocksKiB: 268, BlockSoftKiB: 64, BlockHardKiB: 1024, BlockGrace: "3 days",
			Inodes: 5, InodeSoft: 2, InodeHard: 100, InodeWarns: 1, InodeGrace: "2 days"},
		70000: {ID: 70000, BlocksKiB: 4, BlockHardKiB: 102400, Inodes: 2},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %v", rows)
	}
	for id, w := range want {
		if rows[id] != w {
			t.Errorf("project %d: %+v, want %+v", id, rows[id], w)
		}
	}

	for _, bad := range []string{
		"#7  268  64  1024  00  [3 days]  5  2  100",           // inode columns cut off
		"#4294967296  0 0 0 00 [--------] 0 0 0 00 [--------]", // ID over 32 bits
		"#1  0 0 0 00 [--------] 0 0 0 00 [--------]\n#1  0 0 0 00 [--------] 0 0 0 00 [--------]",
	} {
		if rows, err := ParseQuotaReport(bad); err == nil {
			t.Errorf("ParseQuotaReport(%q) = %v, want an error", bad, rows)
		}
	}
}
