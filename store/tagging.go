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
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	if err := checkTags(tags); err != nil {
		return "", err
	}
	tags = sortedTags(tags)
	return s.withObject(bucket, key, id, func(ino format.Ino) error {
		if len(tags) == 0 {
			return s.changeXattrs(ino, nil, []string{xattrTagging})
		}
		return s.changeXattrs(ino, []xfs.Xattr{xattrOf(xattrTagging, encodeTags(tags))}, nil)
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
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	return s.withObject(bucket, key, id, func(ino format.Ino) error {
		return s.changeXattrs(ino, nil, []string{xattrTagging})
	})
}

// withObject runs fn on the inode of an existing object (a folder
// marker's directory included) while holding a reference on it, so the
// inode stays that object's (an overwrite meanwhile replaces it: fn's
// change then came just before), and returns the object's version ID.
// In a bucket with versioning fn runs under the key's lock, while the
// version still has its name: no change of the key's versions (a delete
// that checks the version's lock) runs beside it.
func (s *store) withObject(bucket, key, id string, fn func(ino format.Ino) error) (string, error) {
	kp, err := parseKey(key)
	if err != nil {
		return "", err
	}
	for attempt := 1; ; attempt++ {
		info, h, _, err := s.head(bucket, key, id)
		if err != nil {
			return "", err
		}
		done, err := s.whileNamed(bucket, kp, h, fn)
		h.Close()
		if done || attempt == maxAttempts {
			return info.VersionID, err
		}
	}
}

// whileNamed runs fn on h's inode under the key's lock when the bucket
// has versioning, if the inode still has a name then (done false: it was
// deleted after it was found; look again).
func (s *store) whileNamed(bucket string, kp keyPath, h *xfs.Handle, fn func(ino format.Ino) error) (done bool, err error) {
	b, err := s.openBucket(bucket)
	if err != nil {
		return true, err
	}
	defer b.Close()
	state, err := s.versioning(b.Ino())
	if err != nil || state == "" {
		return true, errors.Join(err, fn(h.Ino()))
	}
	defer s.lockKey(b.Ino(), kp.key)()
	st, err := s.v.Stat(h.Ino())
	if err != nil {
		return true, err
	}
	if st.Nlink == 0 {
		return false, fmt.Errorf("key %q: %w", kp.key, ErrNoSuchKey)
	}
	return true, fn(h.Ino())
}

// changeXattrs sets and removes attributes of an object's inode. On a
// locked version (immutable) it keeps the flag, in one transaction; the
// caller holds the key's lock, so the flag does not change meanwhile.
func (s *store) changeXattrs(ino format.Ino, set []xfs.Xattr, remove []string) error {
	st, err := s.v.Stat(ino)
	if err != nil {
		return err
	}
	if isImmutable(&st) {
		return s.v.Files().SetImmutable(ino, true, set, remove)
	}
	if len(set) > 0 {
		if err := s.v.Xattrs().SetMany(ino, set); err != nil {
			return err
		}
	}
	for _, name := range remove {
		if err := removeXattr(s.v, ino, name); err != nil {
			return err
		}
	}
	return nil
}

// removeXattr removes an attribute, which may be absent.
func removeXattr(v *xfs.Volume, ino format.Ino, name string) error {
	if err := v.Xattrs().Remove(ino, name); err != nil && !errors.Is(err, xfs.ErrNoData) {
		return err
	}
	return nil
}
