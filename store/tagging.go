package store

// Tag is one object tag.
type Tag struct{ Key, Value string }

// Tag limits, as S3 sets them.
const (
	MaxTags        = 10
	MaxTagKeyLen   = 128 // Unicode characters
	MaxTagValueLen = 256
)

// Checksums holds the additional checksums of an object or part, each the
// base64 of the big-endian digest as S3 sends it in x-amz-checksum-*; empty
// when not sent.
type Checksums struct {
	CRC32, CRC32C, SHA1, SHA256 string
}

// GetObjectTagging returns the tags of an object, sorted by key.
func (s *Store) GetObjectTagging(bucket, key string) ([]Tag, error) {
	return nil, ErrNotImplemented
}

// PutObjectTagging replaces the tags of an object.
func (s *Store) PutObjectTagging(bucket, key string, tags []Tag) error {
	return ErrNotImplemented
}

// DeleteObjectTagging removes the tags of an object.
func (s *Store) DeleteObjectTagging(bucket, key string) error {
	return ErrNotImplemented
}
