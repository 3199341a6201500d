package oracle

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// DamageUnlinkedBucket has xfs_db point an unlinked bucket of the last
// AG's AGI in the image file img at an inode number of that AG where no
// inode chunk lies (xfs_db recomputes the CRC, so only the list is wrong),
// and returns a function that puts the bucket back. A crash that logs
// nothing of that AG leaves the damage in place through a log replay.
func DamageUnlinkedBucket(tb testing.TB, img string) (restore func()) {
	tb.Helper()
	sb := DBSuperblock(tb, img)
	field := func(name string) uint64 {
		n, err := strconv.ParseUint(sb[name], 10, 64)
		if err != nil {
			tb.Fatalf("xfs_db superblock field %s = %q: %v", name, sb[name], err)
		}
		return n
	}
	ag := field("agcount") - 1
	lastBlock := field("dblocks") - ag*field("agblocks") - 1 // of the AG, which may be short
	lastAgino := lastBlock << field("inopblog")
	const bucket = 5
	agi := fmt.Sprintf("agi %d", ag)
	was := "0xffffffff" // xfs_db prints an empty bucket as nothing
	for _, e := range strings.Fields(ParseFields(DB(tb, img, agi, "print unlinked"))["unlinked[0-63]"]) {
		if i, v, _ := strings.Cut(e, ":"); i == strconv.Itoa(bucket) {
			was = v
		}
	}
	const buckets = 64
	DBWrite(tb, img, agi, fmt.Sprintf("write unlinked[%d] %d", bucket, lastAgino-lastAgino%buckets+bucket))
	return func() { DBWrite(tb, img, agi, fmt.Sprintf("write unlinked[%d] %s", bucket, was)) }
}
