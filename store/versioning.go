package store

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Versioning states of a bucket, as S3 names them. A bucket that was
// never versioned has the state "".
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// NullVersion is the ID of the version a bucket's objects have when they
// were written while versioning was off or suspended.
const NullVersion = "null"

// Xattrs and names of versioning (package doc, "Versions").
const (
	// xattrVersioning on a bucket's directory holds its state.
	xattrVersioning = xattrPrefix + "versioning"
	// xattrVersion on an object holds its version's name: the sequence,
	// with nullSuffix for the null version. An object without it is the
	// null version of a write from before versioning.
	xattrVersion = xattrPrefix + "version"
	// xattrDeleteMarker marks a delete marker (an empty file).
	xattrDeleteMarker = xattrPrefix + "delete-marker"
	// xattrNoncurrent is when a version stopped being current (RFC 3339
	// with nanoseconds), set as it moves into the versions tree.
	xattrNoncurrent = xattrPrefix + "noncurrent-since"
	// xattrDeletedBy on a key's versions in file form (the one version,
	// a file in the versions tree) names the delete marker that hid it;
	// the marker's time is the version's xattrNoncurrent. It means
	// nothing on a file elsewhere.
	xattrDeletedBy = xattrPrefix + "deleted-by"
	// expandingPrefix starts the name a file-form key's version has for
	// a moment inside the transaction that gives the key its directory.
	expandingPrefix = reservedPrefix + "expanding."
	// versionsDir, in a bucket's directory, holds the versions tree.
	versionsDir = reservedPrefix + "versions"
	nullSuffix  = ".null"
)

// ErrInvalidVersion: a version ID no version of this store can have.
var ErrInvalidVersion = errors.New("invalid version id")

// ErrInvalidVersioning: a versioning state other than Enabled or
// Suspended, or a bucket asked to go back to unversioned.
var ErrInvalidVersioning = errors.New("invalid versioning state")

// MarkerError is the answer for a key or version that is a delete
// marker: with Latest (a read without a version ID) the key reads as
// missing (ErrNoSuchKey); for a marker asked for by its version ID, the
// marker is no object to read (ErrMethodNotAllowed).
type MarkerError struct {
	Key       string
	VersionID string
	Latest    bool
}

// ErrMethodNotAllowed: the version named is a delete marker, which has no
// content, metadata or tags.
var ErrMethodNotAllowed = errors.New("the version is a delete marker")

func (e *MarkerError) Error() string {
	if e.Latest {
		return fmt.Sprintf("key %q: its latest version %s is a delete marker", e.Key, e.VersionID)
	}
	return fmt.Sprintf("key %q version %s is a delete marker", e.Key, e.VersionID)
}

func (e *MarkerError) Unwrap() error {
	if e.Latest {
		return ErrNoSuchKey
	}
	return ErrMethodNotAllowed
}

// version names one version of a key: its sequence (26 characters of
// base32hex, lowercase: 8 bytes of Unix nanoseconds and 8 random bytes,
// so names sort by age) and whether it is the null version. A version
// other than null has its sequence as its ID.
type version struct {
	seq  string
	null bool
}

// ID is the version ID S3 clients see.
func (v version) ID() string {
	if v.null {
		return NullVersion
	}
	return v.seq
}

// name is the version's file name in its key's versions directory, and
// the value of xattrVersion.
func (v version) name() string {
	if v.null {
		return v.seq + nullSuffix
	}
	return v.seq
}

var seqEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

const seqLen = 26

// parseVersionName reads a version's name; ok is false for other names.
func parseVersionName(name string) (version, bool) {
	seq, null := strings.CutSuffix(name, nullSuffix)
	if !validSeq(seq) {
		return version{}, false
	}
	return version{seq: seq, null: null}, true
}

// validSeq tells whether seq is a sequence as newSeq writes them: 26
// digits of lowercase base32hex whose last holds the last 3 bits of 128
// (its low 2 bits are 0), so that it decodes to 16 bytes and encodes
// back the same.
func validSeq(seq string) bool {
	if len(seq) != seqLen {
		return false
	}
	var last byte
	for i := 0; i < len(seq); i++ {
		c := seq[i]
		switch {
		case c >= '0' && c <= '9':
			last = c - '0'
		case c >= 'a' && c <= 'v':
			last = c - 'a' + 10
		default:
			return false
		}
	}
	return last&3 == 0
}

// CheckVersionID checks a version ID from a client: "null" or an ID this
// store makes. Anything else gives ErrInvalidVersion.
func CheckVersionID(id string) error { return checkVersionID(id) }

// checkVersionID checks a version ID from a client: "null" or a
// sequence. Anything else names no version (and never a path).
func checkVersionID(id string) error {
	if id == NullVersion || validSeq(id) {
		return nil
	}
	return fmt.Errorf("%q: %w", id, ErrInvalidVersion)
}

func seqString(b []byte) string { return strings.ToLower(seqEncoding.EncodeToString(b)) }

// lastSeqNano keeps the sequences this process makes strictly
// increasing, whatever the clock does.
var lastSeqNano atomic.Int64

// newSeq returns a sequence newer than floor ("" or a sequence) and than
// every sequence this process made before.
func newSeq(floor string) string {
	t := time.Now().UnixNano()
	if f := seqNano(floor); f >= t {
		t = f + 1
	}
	for {
		last := lastSeqNano.Load()
		if t <= last {
			t = last + 1
		}
		if lastSeqNano.CompareAndSwap(last, t) {
			break
		}
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t))
	rand.Read(b[8:])
	return seqString(b[:])
}

// seqAt is the sequence of an object written at t before versioning:
// it sorts by its mtime, before any sequence made later.
func seqAt(t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixNano()))
	return seqString(b[:])
}

// seqNano is the time part of a sequence (0 for "").
func seqNano(seq string) int64 {
	if seq == "" {
		return 0
	}
	b, err := seqEncoding.DecodeString(strings.ToUpper(seq))
	if err != nil || len(b) < 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b[:8]))
}

// versionOfFile reads the version of an object file: its xattrVersion,
// or for a file written before versioning the null version of its mtime.
func (s *store) versionOfFile(ino format.Ino, mtime time.Time) (version, error) {
	v, _, err := s.storedVersionOf(ino, mtime)
	return v, err
}

// storedVersionOf is versionOfFile, and whether the file holds its
// version in xattrVersion.
func (s *store) storedVersionOf(ino format.Ino, mtime time.Time) (version, bool, error) {
	val, err := s.v.Xattrs().Get(ino, xattrVersion)
	if errors.Is(err, xfs.ErrNoData) {
		return version{seq: seqAt(mtime), null: true}, false, nil
	}
	if err != nil {
		return version{}, false, err
	}
	if v, ok := parseVersionName(string(val)); ok {
		return v, true, nil
	}
	return version{seq: seqAt(mtime), null: true}, false, nil
}

// bucketStates caches one kind of state of buckets (versioning, object
// lock) by directory inode: every write reads them. load reads a
// bucket's state from its directory when it is not cached.
type bucketStates[T any] struct {
	mu sync.RWMutex
	m  map[format.Ino]T
}

func (c *bucketStates[T]) get(b format.Ino, load func() (T, error)) (T, error) {
	c.mu.RLock()
	v, ok := c.m[b]
	c.mu.RUnlock()
	if ok {
		return v, nil
	}
	v, err := load()
	if err == nil {
		c.put(b, v)
	}
	return v, err
}

func (c *bucketStates[T]) put(b format.Ino, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[format.Ino]T{}
	}
	c.m[b] = v
}

func (c *bucketStates[T]) forget(b format.Ino) {
	c.mu.Lock()
	delete(c.m, b)
	c.mu.Unlock()
}

// bucketXattr reads a bucket directory's state attribute ("" when
// absent).
func (s *store) bucketXattr(b format.Ino, name string) (string, error) {
	val, err := s.v.Xattrs().Get(b, name)
	if errors.Is(err, xfs.ErrNoData) {
		return "", nil
	}
	return string(val), err
}

// versioning returns the versioning state of the bucket whose directory
// is b (held by the caller).
func (s *store) versioning(b format.Ino) (string, error) {
	return s.vstates.get(b, func() (string, error) { return s.bucketXattr(b, xattrVersioning) })
}

// bucketVersioning returns the versioning state of a bucket by name.
func (s *store) bucketVersioning(bucket string) (string, error) {
	b, err := s.openBucket(bucket)
	if err != nil {
		return "", err
	}
	defer b.Close()
	return s.versioning(b.Ino())
}

// forgetVersioning drops a deleted bucket's cached states (versioning
// and object lock): its inode number may come back as another bucket.
func (s *store) forgetVersioning(b format.Ino) {
	s.vstates.forget(b)
	s.locksCfg.forget(b)
}

// keyLocks serialise the changes of one key's versions (a new version,
// a delete marker, removing a version and promoting the next): each
// reads the key's versions and then changes them in one transaction.
// Keys share the locks by hash; nobody holds two.
type keyLocks struct {
	locks [keyLockShards]sync.RWMutex
}

const keyLockShards = 256

func (k *keyLocks) of(bucket format.Ino, key string) *sync.RWMutex {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(bucket))
	h.Write(b[:])
	h.Write([]byte(key))
	return &k.locks[h.Sum64()%keyLockShards]
}

// lockKey takes a key's lock and returns its unlock.
func (s *store) lockKey(bucket format.Ino, key string) func() {
	l := s.keys.of(bucket, key)
	l.Lock()
	return l.Unlock
}

// rlockKey takes a key's lock shared and returns its unlock.
func (s *store) rlockKey(bucket format.Ino, key string) func() {
	l := s.keys.of(bucket, key)
	l.RLock()
	return l.RUnlock
}
