package store

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// ErrPreconditionFailed: a conditional write found the key in a state its
// Precondition refuses (an object where none was wanted, another ETag).
// Nothing was stored.
var ErrPreconditionFailed = errors.New("precondition failed")

// Precondition makes a write conditional on the object it would replace.
// It is checked under the namespace lock in the same step that renames the
// new object into place, so of concurrent writers with IfNoneMatch exactly
// one can succeed. The zero value is no condition.
type Precondition struct {
	// IfNoneMatch: only when no object has the key.
	IfNoneMatch bool
	// IfMatch: only when the key's object has this ETag (quoted or not);
	// "" is no condition. Without an object the write fails with
	// ErrNoSuchKey.
	IfMatch string
}

func (c Precondition) none() bool { return !c.IfNoneMatch && c.IfMatch == "" }

// check applies c to the object at ino (exists false: no object).
func (c Precondition) check(v *xfs.Volume, key string, ino format.Ino, exists bool) error {
	if c.IfNoneMatch && exists {
		return fmt.Errorf("key %q exists: %w", key, ErrPreconditionFailed)
	}
	if c.IfMatch == "" {
		return nil
	}
	if !exists {
		return fmt.Errorf("key %q: %w", key, ErrNoSuchKey)
	}
	etag, err := v.Xattrs().Get(ino, xattrETag)
	if err != nil && !errors.Is(err, xfs.ErrNoData) {
		return err
	}
	if want := strings.Trim(c.IfMatch, `"`); want != "*" && want != string(etag) {
		return fmt.Errorf("key %q has ETag %q, not %q: %w", key, etag, want, ErrPreconditionFailed)
	}
	return nil
}

// PutObjectIf is PutObject made conditional on cond. A plain failure is
// ErrPreconditionFailed (or ErrNoSuchKey for IfMatch without an object),
// found after the body was read, when the object is put in place.
func (s *Store) PutObjectIf(bucket, key string, r io.Reader, size int64, meta Meta, cond Precondition) (ObjectInfo, error) {
	return s.putObject(bucket, key, r, size, meta, cond)
}

// CheckPrecondition tests cond against the key's object now, without
// writing: callers use it to refuse before reading a body that could not
// be stored. The write itself checks again when it places the object.
func (s *Store) CheckPrecondition(bucket, key string, cond Precondition) error {
	return s.checkPrecondition(bucket, key, cond)
}

func (s *store) checkPrecondition(bucket, key string, cond Precondition) error {
	if cond.none() {
		return nil
	}
	_, h, _, err := s.head(bucket, key, "")
	if errors.Is(err, ErrNoSuchKey) {
		return cond.check(s.v, key, 0, false)
	}
	if err != nil {
		return err
	}
	defer h.Close()
	return cond.check(s.v, key, h.Ino(), true)
}
