package oracle

import "testing"

// TestDquotCRCFindings: after a replay without quotas, bad dquot CRCs are
// the only findings that pass; a clean run has none to pass, and any other
// finding beside them fails.
func TestDquotCRCFindings(t *testing.T) {
	const head = `Cannot get host filesystem geometry.
Repair may fail if there is a sector size mismatch between
the image and the host filesystem.
Phase 1 - find and verify superblock...
Phase 2 - using internal log
        - zero log...
        - scan filesystem freespace and inode maps...
Phase 3 - for each AG...
        - agno = 0
`
	const dquot = `Metadata CRC error detected at 0x55faecca9bf6, xfs_dquot block 0xcc/0x400
Project quota: bad CRC for id 31. Would correct.
`
	const tail = `No modify flag set, skipping phase 5
Phase 6 - check inode connectivity...
No modify flag set, skipping filesystem flush and exiting.
`
	for _, tc := range []struct {
		out        string
		found      int
		onlyDquots bool
	}{
		{head + dquot + tail, 2, true},
		// Another thread's progress breaks the finding's line.
		{head + dquot + "Project quota: bad CRC for id 31.         - agno = 1\n        Would correct.\n" + tail, 3, true},
		{head + "        Would correct.\n" + tail, 0, false},
		{head + tail, 0, false},
		{head + dquot + "agi unlinked bucket 3 is 77 in ag 0 (inode=77)\n" + tail, 2, false},
		{head + "bad magic number 0x0 on inode 131\n" + tail, 0, false},
	} {
		quota, only := dquotCRCFindings(tc.out)
		if len(quota) != tc.found || only != tc.onlyDquots {
			t.Errorf("%d dquot findings, only them %v; want %d, %v in:\n%s", len(quota), only, tc.found, tc.onlyDquots, tc.out)
		}
	}
}

// TestLogprintComplaint: a complaint is a whole word; the pointers
// xfs_logprint prints (a:0x55f94acbad40) hold none.
func TestLogprintComplaint(t *testing.T) {
	for out, want := range map[string]string{
		"BUF: cnt:2 total:2 a:0x55f94acbad40 len:24 a:0x55f94acbb150 len:128\n": "",
		"LOG REC AT LSN cycle 1 block 21\nbad clientid 0x12\n":                  "bad clientid 0x12",
		"xlog_recover: error: 5\n":                                              "error: 5",
		"state: <CLEAN>\n":                                                      "",
	} {
		if got := LogprintComplaint(out); got != want {
			t.Errorf("%q: complaint %q, want %q", out, got, want)
		}
	}
}
