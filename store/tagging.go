package store

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Tag is one object tag.
type Tag struct{ Key, Value string }

// Tag limits, as S3 sets them.
const (
	MaxTags        = 10
	MaxTagKeyLen   = 128 // Unicode characters
	MaxTagValueLen = 256
)

// checkTags applies the tag limits: at most MaxTags, unique keys of 1 to
// MaxTagKeyLen characters, values of at most MaxTagValueLen, all valid
// UTF-8.
func checkTags(tags []Tag) error {
	if len(tags) > MaxTags {
		return fmt.Errorf("%d tags (at most %d): %w", len(tags), MaxTags, ErrInvalidTag)
	}
	return checkTagValues(tags)
}

// checkTagValues applies the limits on each tag and the uniqueness of keys.
func checkTagValues(tags []Tag) error {
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if !utf8.ValidString(t.Key) || !utf8.ValidString(t.Value) {
			return fmt.Errorf("tag %q is not valid UTF-8: %w", t.Key, ErrInvalidTag)
		}
		if n := utf8.RuneCountInString(t.Key); n == 0 || n > MaxTagKeyLen {
			return fmt.Errorf("tag key of %d characters (1 to %d): %w", n, MaxTagKeyLen, ErrInvalidTag)
		}
		if n := utf8.RuneCountInString(t.Value); n > MaxTagValueLen {
			return fmt.Errorf("tag %q has a value of %d characters (at most %d): %w", t.Key, n, MaxTagValueLen, ErrInvalidTag)
		}
		if seen[t.Key] {
			return fmt.Errorf("tag key %q given twice: %w", t.Key, ErrInvalidTag)
		}
		seen[t.Key] = true
	}
	return nil
}

// sortedTags returns a copy of tags sorted by key (nil when empty).
func sortedTags(tags []Tag) []Tag {
	if len(tags) == 0 {
		return nil
	}
	out := slices.Clone(tags)
	slices.SortFunc(out, func(a, b Tag) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// encodeTags gives the query form stored in user.xfs3.tagging.
func encodeTags(tags []Tag) string {
	q := url.Values{}
	for _, t := range tags {
		q.Set(t.Key, t.Value)
	}
	return q.Encode() // sorted by key
}

// decodeTags parses the stored query form, sorted by key.
func decodeTags(enc string) ([]Tag, error) {
	q, err := url.ParseQuery(enc)
	if err != nil {
		return nil, fmt.Errorf("stored tags %q: %w", enc, err)
	}
	var tags []Tag
	for k, vals := range q {
		tags = append(tags, Tag{Key: k, Value: vals[0]})
	}
	return sortedTags(tags), nil
}

// GetObjectTagging returns the tags of an object, sorted by key.
func (s *Store) GetObjectTagging(bucket, key string) ([]Tag, error) {
	return s.getTagging(bucket, key, "")
}

func (s *store) getTagging(bucket, key, id string) ([]Tag, error) {
	info, err := s.headObject(bucket, key, id)
	if err != nil {
		return nil, err
	}
	return info.Meta.Tags, nil
}

// PutObjectTagging replaces the tags of an object (none: removes them).
func (s *Store) PutObjectTagging(bucket, key string, tags []Tag) error {
	_, err := s.putTagging(bucket, key, "", tags)
	return err
}

// putTagging sets the tags of version id of key ("" the current one)
// and returns the version's ID.
func (s *store) putTagging(bucket, key, id string, tags []Tag) (version string, err error) {
	defer s.settle(&err)
	if err := checkTags(tags); err != nil {
		return "", err
	}
	tags = sortedTags(tags)
	return s.withObject(bucket, key, id, func(v *xfs.Volume, ino format.Ino) error {
		if len(tags) == 0 {
			return removeXattr(v, ino, xattrTagging)
		}
		return v.Xattrs().Set(ino, xattrTagging, []byte(encodeTags(tags)), 0)
	})
}

// DeleteObjectTagging removes the tags of an object.
func (s *Store) DeleteObjectTagging(bucket, key string) error {
	_, err := s.deleteTagging(bucket, key, "")
	return err
}

// deleteTagging removes the tags of version id of key and returns the
// version's ID.
func (s *store) deleteTagging(bucket, key, id string) (version string, err error) {
	defer s.settle(&err)
	return s.withObject(bucket, key, id, func(v *xfs.Volume, ino format.Ino) error {
		return removeXattr(v, ino, xattrTagging)
	})
}

// withObject runs fn on the inode of an existing object (a folder
// marker's directory included) while holding a reference on it, so the
// inode stays that object's (an overwrite meanwhile replaces it: fn's
// change then came just before), and returns the object's version ID.
func (s *store) withObject(bucket, key, id string, fn func(v *xfs.Volume, ino format.Ino) error) (string, error) {
	info, h, _, err := s.head(bucket, key, id)
	if err != nil {
		return "", err
	}
	defer h.Close()
	return info.VersionID, fn(s.v, h.Ino())
}

// removeXattr removes an attribute, which may be absent.
func removeXattr(v *xfs.Volume, ino format.Ino, name string) error {
	if err := v.Xattrs().Remove(ino, name); err != nil && !errors.Is(err, xfs.ErrNoData) {
		return err
	}
	return nil
}
