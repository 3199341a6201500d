package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xfs3/xfs3/s3api/admin"
)

// printQuotaTable prints buckets' usage and limits, one line each:
//
//	BUCKET  PROJECT  BYTES  SOFT  HARD  GRACE  OBJECTS  SOFT  HARD  GRACE
//	photos  3        4.1M   -     8.0M  -      3        -     -     -
//
// Sizes are human-readable (powers of 1024, rounded up like df -h) unless
// exact; a limit of 0 (none) and a grace period that is not running are
// "-"; a running one shows when it ends (RFC 3339, UTC).
func printQuotaTable(w io.Writer, qs []admin.BucketQuota, exact bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUCKET\tPROJECT\tBYTES\tSOFT\tHARD\tGRACE\tOBJECTS\tSOFT\tHARD\tGRACE")
	size := func(n uint64) string {
		if exact {
			return strconv.FormatUint(n, 10)
		}
		return humanSize(n)
	}
	limit := func(n uint64, format func(uint64) string) string {
		if n == 0 {
			return "-"
		}
		return format(n)
	}
	count := func(n uint64) string { return strconv.FormatUint(n, 10) }
	ends := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", displayName(q.Bucket), q.Project,
			size(q.Bytes), limit(q.SoftBytes, size), limit(q.HardBytes, size), ends(q.BytesGraceEnds),
			q.Objects, limit(q.SoftObjects, count), limit(q.HardObjects, count), ends(q.ObjectsGraceEnds))
	}
	tw.Flush()
}

// formatGrace writes a grace period in days, hours, minutes and seconds,
// leaving out the zero ones: "7d", "1h30m", "90d", "45s".
func formatGrace(seconds int64) string {
	if seconds <= 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		n    int64
		unit string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}} {
		if q := seconds / u.n; q > 0 {
			fmt.Fprintf(&b, "%d%s", q, u.unit)
			seconds -= q * u.n
		}
	}
	return b.String()
}

// parseGrace reads a grace period as formatGrace writes it, or as Go
// durations are written ("36h", "1h30m"), with days allowed in front
// ("7d", "1d12h"). It must be whole seconds, from 1s to the largest a
// volume keeps (about 136 years).
func parseGrace(s string) (int64, error) {
	rest := strings.TrimSpace(s)
	var days int64
	if d, after, ok := strings.Cut(rest, "d"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 || n > admin.MaxGraceSeconds/86400 {
			return 0, fmt.Errorf("grace period %q: want a duration such as 7d, 36h or 1h30m", s)
		}
		days, rest = n, after
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			return 0, fmt.Errorf("grace period %q: want a duration such as 7d, 36h or 1h30m", s)
		}
	}
	if d%time.Second != 0 {
		return 0, fmt.Errorf("grace period %q is not a whole number of seconds", s)
	}
	total := days*86400 + int64(d/time.Second)
	if total < 1 || total > admin.MaxGraceSeconds {
		return 0, fmt.Errorf("grace period %q is outside 1s to %s", s, formatGrace(admin.MaxGraceSeconds))
	}
	return total, nil
}
