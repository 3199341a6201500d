package store

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// MaxBucketTags is S3's limit on a bucket's tags; their keys and values
// have the limits of object tags.
const MaxBucketTags = 50

// ErrNoSuchTagSet: the bucket has no tags.
var ErrNoSuchTagSet = errors.New("no tag set")

// GetBucketTagging returns a bucket's tags sorted by key, or
// ErrNoSuchTagSet when it has none. They are the xattr user.xfs3.tagging
// of the bucket's directory, in the form object tags take.
func (s *Store) GetBucketTagging(bucket string) ([]Tag, error) {
	var enc []byte
	err := s.withBucket(bucket, func(ino format.Ino) (err error) {
		enc, err = s.v.Xattrs().Get(ino, xattrTagging)
		return err
	})
	if errors.Is(err, xfs.ErrNoData) {
		return nil, fmt.Errorf("bucket %q: %w", bucket, ErrNoSuchTagSet)
	}
	if err != nil {
		return nil, err
	}
	return decodeTags(string(enc))
}

// PutBucketTagging replaces a bucket's tags (none: removes them).
func (s *Store) PutBucketTagging(bucket string, tags []Tag) (err error) {
	defer s.settle(&err)
	if len(tags) > MaxBucketTags {
		return fmt.Errorf("%d bucket tags (at most %d): %w", len(tags), MaxBucketTags, ErrInvalidTag)
	}
	if err := checkTagValues(tags); err != nil {
		return err
	}
	return s.withBucket(bucket, func(ino format.Ino) error {
		if len(tags) == 0 {
			return removeXattr(s.v, ino, xattrTagging)
		}
		return s.v.Xattrs().Set(ino, xattrTagging, []byte(encodeTags(sortedTags(tags))), 0)
	})
}

// DeleteBucketTagging removes a bucket's tags; a bucket without any is
// not an error.
func (s *Store) DeleteBucketTagging(bucket string) (err error) {
	defer s.settle(&err)
	return s.withBucket(bucket, func(ino format.Ino) error {
		return removeXattr(s.v, ino, xattrTagging)
	})
}
