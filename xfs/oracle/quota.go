package oracle

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// QuotaReportRow is one line of "xfs_quota -x -c 'report -p -b -i -n'":
// a project's usage, limits, warning counts and grace state. Block
// figures are in KiB, as xfs_quota prints them.
type QuotaReportRow struct {
	ID uint32

	BlocksKiB, BlockSoftKiB, BlockHardKiB uint64
	BlockWarns                            int
	// BlockGrace is what the report shows between the brackets when a
	// timer runs ("2 days"; ID 0 shows "0 days"), "" for "[--------]".
	BlockGrace string

	Inodes, InodeSoft, InodeHard uint64
	InodeWarns                   int
	InodeGrace                   string
}

// quotaReportLine matches a row of a -b -i -n report: "#ID", then for
// blocks and for inodes: used, soft, hard, warnings, [grace].
var quotaReportLine = regexp.MustCompile(`^#(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\[([^\]]*)\]\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\[([^\]]*)\]\s*$`)

// ParseQuotaReport parses the output of xfs_quota's
// "report -p -b -i -n" (numeric IDs, blocks and inodes) into rows by
// project ID. Lines other than rows (titles, rulers) are skipped; a line
// that starts with '#' but is no row is an error.
func ParseQuotaReport(out string) (map[uint32]QuotaReportRow, error) {
	rows := make(map[uint32]QuotaReportRow)
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "#") {
			continue
		}
		m := quotaReportLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("quota report: cannot parse %q", line)
		}
		var nums [9]uint64
		for i, idx := range []int{1, 2, 3, 4, 5, 7, 8, 9, 10} {
			bits := 64
			if idx == 1 {
				bits = 32 // a project ID
			}
			n, err := strconv.ParseUint(m[idx], 10, bits)
			if err != nil {
				return nil, fmt.Errorf("quota report: %q: %v", line, err)
			}
			nums[i] = n
		}
		grace := func(s string) string {
			if strings.Trim(s, "-") == "" {
				return ""
			}
			return strings.TrimSpace(s)
		}
		r := QuotaReportRow{
			ID:        uint32(nums[0]),
			BlocksKiB: nums[1], BlockSoftKiB: nums[2], BlockHardKiB: nums[3],
			BlockWarns: int(nums[4]), BlockGrace: grace(m[6]),
			Inodes: nums[5], InodeSoft: nums[6], InodeHard: nums[7],
			InodeWarns: int(nums[8]), InodeGrace: grace(m[11]),
		}
		if _, dup := rows[r.ID]; dup {
			return nil, fmt.Errorf("quota report: project %d twice", r.ID)
		}
		rows[r.ID] = r
	}
	return rows, nil
}
