package store

import (
	"errors"
	"fmt"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// ConfigKind is a kind of bucket configuration document: the xattr of
// the bucket's directory that holds it, user.xfs3.<name>, and its size
// limit. The kinds are the values declared below; the zero ConfigKind is
// none.
type ConfigKind struct {
	name string
	max  int // bytes
}

// The kinds of bucket configuration, one line each.
var (
	// ConfigPolicy is the bucket policy: S3 limits it to 20 KiB.
	ConfigPolicy = ConfigKind{"policy", 20 << 10}
	// ConfigPublicAccessBlock is the public access block configuration.
	ConfigPublicAccessBlock = ConfigKind{"public-access-block", 4 << 10}
	// ConfigCORS is the CORS configuration: S3 limits it to 64 KiB.
	ConfigCORS = ConfigKind{"cors", 64 << 10}
	// ConfigLocation is the region a bucket was made for (its LocationConstraint).
	ConfigLocation = ConfigKind{"location", 64}
	// LifecycleConfig is the lifecycle configuration, in the canonical
	// form of lifecycle.Config.Encode. S3 bounds it by rules (1000), not
	// bytes; 64 KiB is the largest value an XFS attribute holds.
	LifecycleConfig = ConfigKind{"lifecycle", 64 << 10}
)

// String names the kind as its xattr does.
func (k ConfigKind) String() string { return k.name }

// MaxSize is the largest document of the kind, in bytes.
func (k ConfigKind) MaxSize() int { return k.max }

func (k ConfigKind) xattr() string { return xattrPrefix + k.name }

// check refuses a kind that is none of the values above, and a
// document of size bytes over its limit (size < 0: no document).
func (k ConfigKind) check(size int) error {
	if k.name == "" {
		return ErrInvalidConfigKind
	}
	if size > k.max {
		return fmt.Errorf("bucket %s of %d bytes (at most %d): %w", k.name, size, k.max, ErrConfigTooLarge)
	}
	return nil
}

var (
	// ErrNoSuchConfig: the bucket has no document of that kind.
	ErrNoSuchConfig = errors.New("no such bucket configuration")
	// ErrConfigTooLarge: a document over its kind's MaxSize.
	ErrConfigTooLarge = errors.New("bucket configuration too large")
	// ErrInvalidConfigKind: a ConfigKind that is none of the values
	// declared above.
	ErrInvalidConfigKind = errors.New("invalid bucket configuration kind")
)

// BucketConfigs is the role of a Store for bucket configuration
// documents (policies, public access blocks, CORS and lifecycle rules):
// opaque bytes to the store, which the S3 layer validates and parses.
// Each is an xattr of the bucket's directory, so it goes with the bucket
// and a kernel mount shows it (getfattr). Generation tells a cache of parsed documents when to
// drop them.
type BucketConfigs struct{ *store }

// BucketConfigs returns the store's bucket configuration role.
func (s *Store) BucketConfigs() BucketConfigs { return BucketConfigs{s.store} }

// Get returns a bucket's document of kind, or ErrNoSuchConfig when it
// has none.
func (c BucketConfigs) Get(bucket string, kind ConfigKind) ([]byte, error) {
	if err := kind.check(-1); err != nil {
		return nil, err
	}
	var doc []byte
	err := c.withBucket(bucket, func(ino format.Ino) (err error) {
		doc, err = c.v.Xattrs().Get(ino, kind.xattr())
		return err
	})
	if errors.Is(err, xfs.ErrNoData) {
		return nil, fmt.Errorf("bucket %q: %s: %w", bucket, kind, ErrNoSuchConfig)
	}
	if err != nil {
		return nil, err
	}
	if doc == nil {
		doc = []byte{}
	}
	return doc, nil
}

// Put sets a bucket's document of kind, replacing the one it had: one
// attribute set, one engine transaction. The document's blocks are
// charged to the bucket's project, as its objects are.
func (c BucketConfigs) Put(bucket string, kind ConfigKind, doc []byte) (err error) {
	defer c.noteSick(bucket, "", &err)
	defer c.settle(&err)
	if err := kind.check(len(doc)); err != nil {
		return err
	}
	return c.withBucket(bucket, func(ino format.Ino) error {
		defer c.configsChanged()
		return c.v.Xattrs().Set(ino, kind.xattr(), doc, 0)
	})
}

// Delete removes a bucket's document of kind; a bucket without one is
// not an error.
func (c BucketConfigs) Delete(bucket string, kind ConfigKind) (err error) {
	defer c.noteSick(bucket, "", &err)
	defer c.settle(&err)
	if err := kind.check(-1); err != nil {
		return err
	}
	return c.withBucket(bucket, func(ino format.Ino) error {
		defer c.configsChanged()
		return removeXattr(c.v, ino, kind.xattr())
	})
}

// Generation grows after every Put and Delete that reached a bucket and
// every bucket made or removed (CreateBucket, DeleteBucket), even when
// the call then fails: each time once the change is visible, so that a
// cache of parsed documents that records Generation before it reads
// them is stale once Generation differs. It costs an atomic load.
func (c BucketConfigs) Generation() uint64 { return c.cfgGen.Load() }

// configsChanged ends a change of bucket configurations, or of the
// buckets they belong to.
func (s *store) configsChanged() { s.cfgGen.Add(1) }
