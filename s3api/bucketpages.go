package s3api

import (
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/store"
)

// maxBucketsLimit is the largest max-buckets S3 accepts.
const maxBucketsLimit = 10000

// bucketSelection is ListBuckets' paging: prefix, max-buckets (0: all)
// and the continuation token, decoded to the last name of the previous
// page.
type bucketSelection struct {
	prefix   string
	max      int
	after    string
	hasAfter bool
}

func parseBucketSelection(q url.Values) (bucketSelection, error) {
	sel := bucketSelection{prefix: q.Get("prefix")}
	if v, ok := q["max-buckets"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > maxBucketsLimit {
			return bucketSelection{}, errorf("InvalidArgument", "max-buckets must be an integer between 1 and %d.", maxBucketsLimit)
		}
		sel.max = n
	}
	if v, ok := q["continuation-token"]; ok {
		after, err := decodeContinuationToken(v[0])
		if err != nil {
			return bucketSelection{}, err
		}
		sel.after, sel.hasAfter = after, true
	}
	return sel, nil
}

// page selects the buckets (sorted by name) of this page and returns the
// name to continue after, or "" when none follow.
func (sel bucketSelection) page(buckets []store.BucketInfo) ([]store.BucketInfo, string) {
	start := 0
	if sel.hasAfter {
		start = sort.Search(len(buckets), func(i int) bool { return buckets[i].Name > sel.after })
	}
	var out []store.BucketInfo
	for _, b := range buckets[start:] {
		if !strings.HasPrefix(b.Name, sel.prefix) {
			continue
		}
		if sel.max > 0 && len(out) == sel.max {
			return out, out[len(out)-1].Name
		}
		out = append(out, b)
	}
	return out, ""
}
