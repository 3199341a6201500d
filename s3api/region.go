package s3api

import (
	"errors"
	"sync"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

// Regions. S3 keeps a bucket in the region its CreateBucket named (the
// LocationConstraint), and clients ask where a bucket is
// (GetBucketLocation, HeadBucket's x-amz-bucket-region, ListBuckets'
// BucketRegion) before they sign for it. Here every bucket is on the one
// volume, and its region is a label:
//
//	Config.Region empty   the server is in us-east-1; CreateBucket takes any
//	                      valid LocationConstraint and records it
//	Config.Region set     the server is in that region; CreateBucket takes
//	                      no other (IllegalLocationConstraintException)
//
// A recorded region is the bucket's store.ConfigLocation document (the
// region's name), written right after the bucket is made; a bucket
// without one is in the server's region. Requests may be signed for any
// region: sigv4 checks a signature against the region its credential
// names.

// bucketRegions caches the recorded regions by bucket, as bucketAuths
// caches policies: until the store's configuration generation moves.
type bucketRegions struct {
	mu  sync.RWMutex      // guards gen and m
	gen uint64            // the generation m was read at
	m   map[string]string // bucket -> region
}

// bucketRegion returns a bucket's region: the one it was made for, else
// the server's. A bucket that cannot be read is in the server's region;
// the handler reports the error its own calls meet.
func (s *server) bucketRegion(bucket string) string {
	cfg := s.store.BucketConfigs()
	gen := cfg.Generation()
	c := &s.regions
	c.mu.RLock()
	region, ok := c.m[bucket]
	fresh := c.gen == gen
	c.mu.RUnlock()
	if ok && fresh {
		return region
	}
	doc, err := cfg.Get(bucket, store.ConfigLocation)
	switch {
	case err == nil && sigv4.ValidRegion(string(doc)):
		region = string(doc)
	case err == nil || errors.Is(err, store.ErrNoSuchConfig):
		// Only valid names are recorded; one that is not (damage) is
		// ignored rather than sent to clients.
		region = s.region
	default:
		return s.region // not cached: the next request reads again
	}
	c.mu.Lock()
	if c.gen != gen || c.m == nil {
		c.gen, c.m = gen, map[string]string{}
	}
	c.m[bucket] = region
	c.mu.Unlock()
	return region
}

// newBucketRegion decides the region of a bucket CreateBucket makes from
// its LocationConstraint ("" when there is none).
func (s *server) newBucketRegion(constraint string) (string, error) {
	switch {
	case constraint == "":
		return s.region, nil
	case !sigv4.ValidRegion(constraint):
		return "", errorf("InvalidLocationConstraint", "The specified location-constraint is not valid: %q.", constraint)
	case s.anyRegion || constraint == s.region:
		return constraint, nil
	}
	return "", errorf("IllegalLocationConstraintException",
		"The %s location constraint is incompatible with the region %s of this server.", constraint, s.region)
}

// recordRegion keeps the region a bucket was just made for. When it
// cannot, the new bucket is removed, so that a bucket is never made in
// the wrong region: the client sees the error and may try again.
func (s *server) recordRegion(bucket, region string) error {
	err := s.store.BucketConfigs().Put(bucket, store.ConfigLocation, []byte(region))
	if err == nil {
		return nil
	}
	if derr := s.store.DeleteBucket(bucket); derr != nil {
		s.log.Error().Str("bucket", bucket).Err(derr).Msg("a bucket whose region could not be recorded could not be removed: it is in the server's region")
	}
	return err
}
