package store

import (
	"fmt"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Locks is the role of a Store for object lock: a bucket's
// configuration, and the retention and legal hold of versions. The rules
// hold in the store, for every path: deletes by version ID
// (Versions.DeleteWith) refuse protected versions, and writes take the
// lock their Meta asks for or the bucket's default.
type Locks struct{ *store }

// Locks returns the store's object-lock role.
func (s *Store) Locks() Locks { return Locks{s.store} }

// Enable turns object lock on for a new bucket, with versioning Enabled,
// in one transaction (S3's CreateBucket with object lock).
func (l Locks) Enable(bucket string) (err error) {
	defer l.settle(&err)
	b, err := l.openBucket(bucket)
	if err != nil {
		return err
	}
	defer b.Close()
	defer l.locks.lock(b.Ino())()
	cfg := LockConfig{Enabled: true}
	if err := l.v.Xattrs().SetMany(b.Ino(), []xfs.Xattr{
		xattrOf(xattrVersioning, VersioningEnabled),
		xattrOf(xattrObjectLock, cfg.String()),
	}); err != nil {
		return err
	}
	l.vstates.put(b.Ino(), VersioningEnabled)
	l.locksCfg.put(b.Ino(), cfg)
	return nil
}

// SetConfig sets a bucket's object-lock configuration: it turns object
// lock on for a bucket whose versioning is Enabled (else
// ErrInvalidBucketState), or changes its default retention. Object lock
// is never turned off.
func (l Locks) SetConfig(bucket string, cfg LockConfig) (err error) {
	defer l.settle(&err)
	if err := cfg.check(); err != nil {
		return err
	}
	b, err := l.openBucket(bucket)
	if err != nil {
		return err
	}
	defer b.Close()
	defer l.locks.lock(b.Ino())()
	if state, err := l.versioning(b.Ino()); err != nil {
		return err
	} else if state != VersioningEnabled {
		return fmt.Errorf("bucket %q: object lock needs versioning Enabled: %w", bucket, ErrInvalidBucketState)
	}
	if err := l.v.Xattrs().Set(b.Ino(), xattrObjectLock, []byte(cfg.String()), 0); err != nil {
		return err
	}
	l.locksCfg.put(b.Ino(), cfg)
	return nil
}

// Config returns a bucket's object-lock configuration, ErrNoLockConfig
// when it has none.
func (l Locks) Config(bucket string) (LockConfig, error) {
	b, err := l.openBucket(bucket)
	if err != nil {
		return LockConfig{}, err
	}
	defer b.Close()
	cfg, err := l.lockConfig(b.Ino())
	if err == nil && !cfg.Enabled {
		err = fmt.Errorf("bucket %q: %w", bucket, ErrNoLockConfig)
	}
	return cfg, err
}

// Get returns the lock of version id of key ("" the current version)
// and the version's ID.
func (l Locks) Get(bucket, key, id string) (ObjectLock, string, error) {
	if err := l.needLock(bucket); err != nil {
		return ObjectLock{}, "", err
	}
	info, err := l.headObject(bucket, key, id)
	return info.Meta.Lock, info.VersionID, err
}

// SetRetention sets the retention of version id of key ("" the current
// version) and returns the version's ID. A Retention with no Mode
// removes it. S3's rules apply (checkRetentionChange): ErrObjectLocked
// for a change they forbid, ErrInvalidRetention for a date not in the
// future.
func (l Locks) SetRetention(bucket, key, id string, r Retention, bypass bool) (string, error) {
	return l.changeLock(bucket, key, id, func(old ObjectLock, now time.Time) (ObjectLock, error) {
		if err := CheckRetention(r, now); err != nil {
			return old, err
		}
		if err := checkRetentionChange(old.Retention, r, now, bypass); err != nil {
			return old, err
		}
		old.Retention = r
		return old, nil
	})
}

// SetLegalHold puts a legal hold on version id of key ("" the current
// version), or takes it off, and returns the version's ID.
func (l Locks) SetLegalHold(bucket, key, id string, on bool) (string, error) {
	return l.changeLock(bucket, key, id, func(old ObjectLock, _ time.Time) (ObjectLock, error) {
		old.LegalHold = on
		return old, nil
	})
}

// needLock gives ErrNoLockConfig for a bucket without object lock.
func (s *store) needLock(bucket string) error {
	b, err := s.openBucket(bucket)
	if err != nil {
		return err
	}
	defer b.Close()
	cfg, err := s.lockConfig(b.Ino())
	if err == nil && !cfg.Enabled {
		err = fmt.Errorf("bucket %q: %w", bucket, ErrNoLockConfig)
	}
	return err
}

// changeLock changes the lock of a version: fn gets the lock read under
// the key's lock and returns the new one, which is written with the
// inode's immutable flag in one transaction, so the two always agree.
func (s *store) changeLock(bucket, key, id string, fn func(old ObjectLock, now time.Time) (ObjectLock, error)) (version string, err error) {
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	if err := s.needLock(bucket); err != nil {
		return "", err
	}
	return s.withObject(bucket, key, id, func(ino format.Ino) error {
		old, err := s.lockOf(ino)
		if err != nil {
			return err
		}
		now := s.now()
		lock, err := fn(old, now)
		if err != nil {
			return err
		}
		set, remove := lock.xattrs()
		return s.v.Files().SetImmutable(ino, lock.immutableAt(now), set, remove)
	})
}

// lockOf reads the lock of the version whose inode is ino.
func (s *store) lockOf(ino format.Ino) (ObjectLock, error) {
	list, err := s.v.Xattrs().List(ino)
	if err != nil {
		return ObjectLock{}, err
	}
	byName := make(map[string]string, 3)
	for _, x := range list {
		switch full := x.FullName(); full {
		case xattrLockMode, xattrLockUntil, xattrLegalHold:
			byName[full] = string(x.Value)
		}
	}
	return readLock(byName), nil
}

// releaseForDelete checks that object lock lets the version whose inode
// is ino go now, and clears the immutable flag that COMPLIANCE retention
// which has ended leaves, so that the engine lets it go. The caller
// holds the key's lock. In a bucket without object lock it does nothing
// (an immutable file there, made by other tools, is the engine's
// refusal to give).
func (s *store) releaseForDelete(bucket, ino format.Ino, bypass bool) error {
	cfg, err := s.lockConfig(bucket)
	if err != nil || !cfg.Enabled {
		return err
	}
	lock, err := s.lockOf(ino)
	if err != nil {
		return err
	}
	now := s.now()
	if lock.protects(now, bypass) {
		return fmt.Errorf("inode %d: %w", ino, ErrObjectLocked)
	}
	st, err := s.v.Stat(ino)
	if err != nil || !isImmutable(&st) {
		return err
	}
	return s.v.Files().SetImmutable(ino, false, nil, nil)
}
