package store

import (
	"errors"
	"fmt"
	"time"
)

// Versions is the role of a Store for bucket versioning: a bucket's
// state, and reads, deletes and listings of versions by ID. Writes need
// no role: PutObject, CopyObject, Uploads().Complete and the rest make
// a new version in a bucket with versioning, and DeleteObject a delete
// marker.
type Versions struct{ *store }

// Versions returns the store's versioning role.
func (s *Store) Versions() Versions { return Versions{s.store} }

// SetState sets a bucket's versioning state: VersioningEnabled or
// VersioningSuspended. A bucket never goes back to unversioned.
func (v Versions) SetState(bucket, state string) (err error) {
	defer v.settle(&err)
	if state != VersioningEnabled && state != VersioningSuspended {
		return fmt.Errorf("%q: %w", state, ErrInvalidVersioning)
	}
	b, err := v.openBucket(bucket)
	if err != nil {
		return err
	}
	defer b.Close()
	// The bucket's lock orders this against turning object lock on.
	defer v.locks.lock(b.Ino())()
	if state != VersioningEnabled {
		if cfg, err := v.lockConfig(b.Ino()); err != nil {
			return err
		} else if cfg.Enabled {
			return fmt.Errorf("bucket %q has object lock: versioning stays Enabled: %w", bucket, ErrInvalidBucketState)
		}
	}
	if err := v.v.Xattrs().Set(b.Ino(), xattrVersioning, []byte(state), 0); err != nil {
		return err
	}
	v.vstates.put(b.Ino(), state)
	return nil
}

// State returns a bucket's versioning state: "" when it never had
// versioning.
func (v Versions) State(bucket string) (string, error) { return v.bucketVersioning(bucket) }

// Get opens version id of key ("" the current version). A delete marker
// gives a *MarkerError; an ID the key does not have, ErrNoSuchVersion.
func (v Versions) Get(bucket, key, id string) (*Object, error) { return v.getObject(bucket, key, id) }

// Head returns the information of version id of key, as Get.
func (v Versions) Head(bucket, key, id string) (ObjectInfo, error) {
	return v.headObject(bucket, key, id)
}

// Delete deletes version id of key for good (its space comes back
// through inode GC); when it was the latest, the next newest becomes the
// latest. With id "" it deletes the key: in a bucket with versioning a
// delete marker becomes its latest version. An ID the key does not have
// is no error.
func (v Versions) Delete(bucket, key, id string) (res DeleteResult, err error) {
	return v.DeleteWith(bucket, key, id, DeleteOptions{})
}

// DeleteOptions tune a delete of versions.
type DeleteOptions struct {
	// BypassGovernance lets the delete remove a version under GOVERNANCE
	// retention (S3's x-amz-bypass-governance-retention). Nothing lets
	// it remove one under COMPLIANCE retention or a legal hold.
	BypassGovernance bool

	// Conditions of lifecycle's deletes (lifecycle_scan.go): the delete
	// happens only if what the scanner judged still holds, else
	// errChanged and nothing changes. ifCurrent (a delete without an ID):
	// the latest version is still that one. ifModified (no versioning):
	// the object's mtime is still that. ifNoncurrent (by ID): the version
	// is not the latest. ifSoleMarker (by ID): it is a delete marker and
	// its key's only version.
	ifCurrent    string
	ifModified   time.Time
	ifNoncurrent bool
	ifSoleMarker bool
}

// errChanged: a lifecycle delete found the object changed since it was
// judged.
var errChanged = errors.New("store: the object changed since lifecycle judged it")

// DeleteWith is Delete with options. Removing a version by ID that
// object lock protects gives ErrObjectLocked; a delete marker is always
// allowed.
func (v Versions) DeleteWith(bucket, key, id string, opt DeleteOptions) (res DeleteResult, err error) {
	defer v.settle(&err)
	return v.deleteKey(bucket, key, id, opt)
}

// ObjectVersion names a key, or one of its versions (VersionID not "").
type ObjectVersion struct {
	Key       string
	VersionID string
}

// DeleteMany deletes each of objs as Delete would, and returns what each
// did, with its error. They are made durable together.
func (v Versions) DeleteMany(bucket string, objs []ObjectVersion) ([]DeleteResult, []error) {
	return v.DeleteManyWith(bucket, objs, DeleteOptions{})
}

// DeleteManyWith is DeleteMany with options, as DeleteWith.
func (v Versions) DeleteManyWith(bucket string, objs []ObjectVersion, opt DeleteOptions) ([]DeleteResult, []error) {
	res := make([]DeleteResult, len(objs))
	errs := make([]error, len(objs))
	state, err := v.bucketVersioning(bucket)
	if err == nil && state == "" && !anyVersion(objs) {
		keys := make([]string, len(objs))
		for i, o := range objs {
			keys[i] = o.Key
		}
		return res, (&Store{v.store}).DeleteObjects(bucket, keys)
	}
	for i, o := range objs {
		res[i], errs[i] = v.deleteKey(bucket, o.Key, o.VersionID, opt)
	}
	v.settle(&err)
	return res, errorsOr(errs, err)
}

// Copy copies version srcID of an object ("" its current version) as
// Store.CopyObject copies the current one.
func (v Versions) Copy(srcBucket, srcKey, srcID, dstBucket, dstKey string, meta *Meta) (ObjectInfo, error) {
	return v.copyObject(srcBucket, srcKey, srcID, dstBucket, dstKey, meta)
}

func anyVersion(objs []ObjectVersion) bool {
	for _, o := range objs {
		if o.VersionID != "" {
			return true
		}
	}
	return false
}

// List returns a page of the versions of a bucket's keys and its delete
// markers, in key order and each key's newest first, with S3's prefix,
// delimiter and marker semantics. A bucket without versioning lists each
// object once, as its null version.
func (v Versions) List(bucket string, opt VersionListOptions) (res VersionListResult, err error) {
	defer v.noteSick(bucket, opt.Prefix, &err)
	return v.listVersions(bucket, opt)
}

// Tagging returns the tags of version id of key.
func (v Versions) Tagging(bucket, key, id string) ([]Tag, error) {
	return v.getTagging(bucket, key, id)
}

// PutTagging replaces the tags of version id of key ("" the current
// version) and returns the version's ID.
func (v Versions) PutTagging(bucket, key, id string, tags []Tag) (string, error) {
	return v.putTagging(bucket, key, id, tags)
}

// DeleteTagging removes the tags of version id of key and returns the
// version's ID.
func (v Versions) DeleteTagging(bucket, key, id string) (string, error) {
	return v.deleteTagging(bucket, key, id)
}

// Parts returns a page of the parts of version id of key, as
// Store.ObjectParts.
func (v Versions) Parts(bucket, key, id string, opt ListPartsOptions) (ObjectPartsResult, error) {
	return v.objectParts(bucket, key, id, opt)
}
