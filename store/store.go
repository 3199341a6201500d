package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/quota"
)

// System directory layout (see the package doc).
const (
	SysDir     = ".xfs3" // never a valid bucket name: it starts with '.'
	tmpDir     = "tmp"
	uploadsDir = "uploads"
	// oldTrashDir held extra links keeping deleted objects readable
	// before the engine had references; New removes it.
	oldTrashDir = "trash"
)

var (
	dirAttrs  = xfs.Attrs{Mode: 0o755}
	fileAttrs = xfs.Attrs{Mode: 0o644}
	sysAttrs  = xfs.Attrs{Mode: 0o700}
)

// Store maps buckets and objects onto one open volume. It is safe for
// concurrent use.
//
// Lock order: an upload's mu, then ns, then upMu, then the engine's own
// locks.
type Store struct {
	v   *xfs.Volume
	own bool // Close closes v
	tmp format.Ino
	upl format.Ino // .xfs3/uploads

	// minPart is MinPartSize; tests lower it to run many small parts.
	minPart int64

	upMu sync.Mutex
	// uploads indexes the uploads in progress by ID (loaded from
	// .xfs3/uploads by New); guarded by upMu.
	uploads map[string]*upload

	// ns guards the namespace: writers (creating parent directories,
	// renaming into place, unlinking, pruning empty directories, bucket
	// changes) hold it exclusively; readers that resolve a key and then
	// use its inode (Get, Head, List) hold it shared, so an inode is never
	// freed under them. Object data is streamed without it.
	ns sync.RWMutex

	// gc frees the inodes of deleted and replaced objects once their
	// last reader is done (in the background in gc.PerCPU mode).
	gc *gc.InodeGC
	// trim gives freed space back to the storage under the volume:
	// periodically when Options.Trim.Interval is set, and on demand.
	trim *gc.Trimmer
	// changes counts finished changes; the trimmer backs off while it
	// moves.
	changes atomic.Uint64

	// dirs caches sorted large directories for listings.
	dirs *dirCache

	// projects hands out the project IDs of new buckets (quota.go).
	projects projects
	// quotaMu orders UpdateBucketQuota's read-modify-writes of limits.
	quotaMu sync.Mutex

	// ackEarly: Options.AckBeforeDurable; the flusher goroutine then
	// makes changes durable periodically until stopFlusher is closed.
	ackEarly                 bool
	stopFlusher, flusherDone chan struct{}
}

// Options tune a store opened by OpenWith.
type Options struct {
	// AckBeforeDurable makes changes return before they are durable:
	// faster, but a crash loses the changes of up to the last
	// AckBeforeDurableWindow that were already reported as done (the
	// volume stays consistent). By default every change that returns
	// success is durable.
	AckBeforeDurable bool
	// GC tunes inode garbage collection: when deleted and replaced
	// objects' inodes and extents are freed (gc.PerCPU when Mode is
	// empty).
	GC gc.Options
	// Trim tunes the trim scheduler (no periodic passes when Interval is
	// 0; passes on demand always). Busy defaults to the store's count of
	// finished changes.
	Trim gc.TrimOptions
	// NoQuota runs without bucket quotas (xfs.Options.NoQuota): for
	// measuring what they cost. The next open with quotas recounts.
	NoQuota bool
	// CacheBytes is the memory budget of the volume's metadata caches
	// (xfs.Options.CacheBytes; 0: xfs.DefaultCacheBytes).
	CacheBytes int
}

// AckBeforeDurableWindow is how often a store with AckBeforeDurable makes
// its changes durable.
const AckBeforeDurableWindow = time.Second

// Open opens (read-write) the volume file at path and returns a store over
// it; Close closes the volume. Every change is durable when it returns.
func Open(path string) (*Store, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options.
func OpenWith(path string, o Options) (*Store, error) {
	// The engine's commits are lazy: a store operation makes several,
	// and forcing the log once at its end (settle) makes them all
	// durable, sharing one log write with concurrent operations.
	v, err := xfs.Open(path, xfs.Options{LazyCommits: true, NoQuota: o.NoQuota, CacheBytes: o.CacheBytes})
	if err != nil {
		return nil, err
	}
	s, err := NewWith(v, o)
	if err != nil {
		v.Close()
		return nil, err
	}
	s.own = true
	if o.AckBeforeDurable {
		s.ackEarly = true
		s.stopFlusher = make(chan struct{})
		s.flusherDone = make(chan struct{})
		go s.flushEvery(AckBeforeDurableWindow)
	}
	return s, nil
}

// settle ends a change: it returns once what the change did is durable
// (even when it failed part-way), unless the store acknowledges before
// that. The change's own error comes first.
func (s *Store) settle(err *error) {
	s.changes.Add(1)
	if s.ackEarly {
		return
	}
	if ferr := s.v.Force(); *err == nil {
		*err = ferr
	}
}

// flushEvery makes changes durable every period, for AckBeforeDurable.
func (s *Store) flushEvery(period time.Duration) {
	defer close(s.flusherDone)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-s.stopFlusher:
			return
		case <-tick.C:
			s.v.Force() // a failure shuts the volume down; operations report it
		}
	}
}

// New returns a store over an open, writable volume, creating the system
// directory when missing and removing staging files left by a crash.
// Uploads in progress survive: New indexes them. The caller keeps
// ownership of v. Every change is durable when it returns, whatever
// the volume's commit mode.
func New(v *xfs.Volume) (*Store, error) { return NewWith(v, Options{}) }

// NewWith is New with options; AckBeforeDurable is for OpenWith only.
func NewWith(v *xfs.Volume, o Options) (*Store, error) {
	s := &Store{v: v, dirs: newDirCache(), uploads: map[string]*upload{}, minPart: MinPartSize}
	var err error
	if s.gc, err = gc.Start(v, o.GC); err != nil {
		return nil, err
	}
	if err := s.prepare(); err != nil {
		s.closeGC()
		return nil, err
	}
	if o.Trim.Busy == nil {
		o.Trim.Busy = s.changes.Load
	}
	s.trim = gc.StartTrimmer(v, o.Trim)
	return s, nil
}

// prepare makes the system directories and clears what a crash left in
// them, then indexes the uploads in progress.
func (s *Store) prepare() error {
	v := s.v
	sys, err := s.ensureDir(v.Root(), SysDir, sysAttrs)
	if err != nil {
		return err
	}
	if s.tmp, err = s.ensureDir(sys, tmpDir, sysAttrs); err != nil {
		return err
	}
	if s.upl, err = s.ensureDir(sys, uploadsDir, sysAttrs); err != nil {
		return err
	}
	if err := s.clearDir(s.tmp); err != nil {
		return err
	}
	if trash, err := v.Lookup(sys, oldTrashDir); err == nil {
		if err := s.clearDir(trash); err != nil {
			return err
		}
		if err := v.Rmdir(sys, oldTrashDir); err != nil {
			return err
		}
	} else if !errors.Is(err, xfs.ErrNotFound) {
		return err
	}
	if err := s.loadUploads(); err != nil {
		return err
	}
	return s.assignProjects()
}

// clearDir removes everything in the system directory d.
func (s *Store) clearDir(d format.Ino) error {
	ents, err := s.v.ReadDir(d)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := s.removeTree(d, e.Name); err != nil {
			return fmt.Errorf("remove leftover staging entry %s: %w", e.Name, err)
		}
	}
	return nil
}

// closeGC drains the inode gc and detaches it from the volume.
func (s *Store) closeGC() error {
	err := s.gc.Close()
	s.v.SetInactiveQueue(nil)
	return err
}

// Trimmer is the store's trim scheduler: its status, and passes on
// demand.
func (s *Store) Trimmer() *gc.Trimmer { return s.trim }

// GCStats reports the inode garbage collector's counters.
func (s *Store) GCStats() gc.Stats { return s.gc.Stats() }

// removeTree removes name from dir, with everything below it when it is
// a directory (staged upload directories, aborted uploads).
func (s *Store) removeTree(dir format.Ino, name string) error {
	ino, err := s.v.Lookup(dir, name)
	if err != nil {
		return err
	}
	st, err := s.v.Stat(ino)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return s.v.Unlink(dir, name)
	}
	ents, err := s.v.ReadDir(ino)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := s.removeTree(ino, e.Name); err != nil {
			return err
		}
	}
	return s.v.Rmdir(dir, name)
}

// Volume returns the underlying volume.
func (s *Store) Volume() *xfs.Volume { return s.v }

// Err is nil while the store accepts changes, and the cause once a failed
// write has shut its volume down (readiness probes report it).
func (s *Store) Err() error { return s.v.Err() }

// Close closes the volume if Open opened it. Open Objects must be closed
// first.
func (s *Store) Close() error {
	if s.stopFlusher != nil {
		close(s.stopFlusher)
		<-s.flusherDone
		s.stopFlusher = nil
	}
	s.trim.Close() // a pass must be over before the volume closes
	err := s.closeGC()
	if s.own {
		if cerr := s.v.Close(); err == nil {
			err = cerr
		}
	} else if ferr := s.v.Force(); err == nil {
		err = ferr // what the drain freed is durable, as every change is
	}
	return err
}

// ensureDir returns the directory name in dir, making it when missing.
func (s *Store) ensureDir(dir format.Ino, name string, a xfs.Attrs) (format.Ino, error) {
	ino, err := s.v.Mkdir(dir, name, a)
	if errors.Is(err, xfs.ErrExist) {
		ino, err = s.v.Lookup(dir, name)
		if err == nil {
			if st, serr := s.v.Stat(ino); serr != nil {
				return 0, serr
			} else if !st.IsDir() {
				return 0, fmt.Errorf("%s is not a directory: %w", name, ErrKeyConflict)
			}
		}
	}
	return ino, err
}

func randomName() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// BucketInfo describes a bucket.
type BucketInfo struct {
	Name    string
	Created time.Time // the directory's creation time (crtime)
}

// bucket resolves a bucket name to its directory.
func (s *Store) bucket(name string) (format.Ino, error) {
	if err := CheckBucketName(name); err != nil {
		return 0, err
	}
	ino, err := s.v.Lookup(s.v.Root(), name)
	if errors.Is(err, xfs.ErrNotFound) {
		return 0, fmt.Errorf("bucket %q: %w", name, ErrNoSuchBucket)
	}
	if err != nil {
		return 0, err
	}
	return ino, nil
}

// CreateBucket makes an empty bucket.
func (s *Store) CreateBucket(name string) (err error) {
	defer s.settle(&err)
	if err := CheckBucketName(name); err != nil {
		return err
	}
	s.ns.Lock()
	defer s.ns.Unlock()
	a := dirAttrs
	a.ProjID = s.projects.last.Add(1)
	_, err = s.v.Mkdir(s.v.Root(), name, a)
	if errors.Is(err, xfs.ErrExist) {
		return fmt.Errorf("bucket %q: %w", name, ErrBucketExists)
	}
	return err
}

// DeleteBucket removes a bucket that holds no object, aborting the
// uploads in progress into it (as S3 does). With objects it gives
// ErrBucketNotEmpty and leaves the uploads alone.
func (s *Store) DeleteBucket(name string) (err error) {
	defer s.settle(&err)
	pending := s.lockBucketUploads(name)
	defer unlockUploads(pending)
	s.ns.Lock()
	defer s.ns.Unlock()
	ino, err := s.bucket(name)
	if err != nil {
		return err
	}
	ents, err := s.v.ReadDir(ino)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("bucket %q: %w", name, ErrBucketNotEmpty)
	}
	if n := s.countUploads(name); n != len(pending) {
		return fmt.Errorf("bucket %q got an upload while being deleted: %w", name, ErrBucketNotEmpty)
	}
	for _, u := range pending {
		if err := s.dropUpload(u); err != nil {
			return err
		}
	}
	project, err := s.project(ino)
	if err != nil {
		return err
	}
	err = s.v.Rmdir(s.v.Root(), name)
	if errors.Is(err, xfs.ErrNotEmpty) {
		return fmt.Errorf("bucket %q: %w", name, ErrBucketNotEmpty)
	}
	if err != nil || project == 0 || !s.v.QuotaOn() {
		return err
	}
	// The project is gone with its bucket: its limits go too.
	return s.v.SetQuotaLimits(project, quota.Limits{})
}

// HeadBucket returns the bucket's information, or ErrNoSuchBucket.
func (s *Store) HeadBucket(name string) (BucketInfo, error) {
	s.ns.RLock()
	defer s.ns.RUnlock()
	ino, err := s.bucket(name)
	if err != nil {
		return BucketInfo{}, err
	}
	st, err := s.v.Stat(ino)
	if err != nil {
		return BucketInfo{}, err
	}
	return BucketInfo{Name: name, Created: st.Crtime}, nil
}

// ListBuckets returns every bucket sorted by name. Root directories whose
// names are not valid bucket names (the system directory, lost+found) are
// left out.
func (s *Store) ListBuckets() ([]BucketInfo, error) {
	s.ns.RLock()
	defer s.ns.RUnlock()
	ents, err := s.v.ReadDir(s.v.Root())
	if err != nil {
		return nil, err
	}
	var out []BucketInfo
	for _, e := range ents {
		if e.Type != format.FTDir || CheckBucketName(e.Name) != nil {
			continue
		}
		st, err := s.v.Stat(e.Ino)
		if err != nil {
			return nil, err
		}
		out = append(out, BucketInfo{Name: e.Name, Created: st.Crtime})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// resolveDirs looks up the directories of a key below the bucket and
// returns their inodes, the bucket first. With create, missing ones are
// made, and an object standing where a directory is needed moves beside
// it (promote). Without create, a missing directory gives ErrNoSuchKey.
// Callers hold ns (exclusively when creating).
func (s *Store) resolveDirs(bucket format.Ino, kp keyPath, create bool) ([]format.Ino, error) {
	inos := []format.Ino{bucket}
	cur := bucket
	for _, c := range kp.dirs {
		name := entryName(c)
		st, found, err := s.lookupStat(cur, name)
		if err != nil {
			return inos, err
		}
		var ino format.Ino
		switch {
		case found && st.IsDir():
			ino = st.Ino
		case !create:
			return inos, fmt.Errorf("key %q: %w", kp.key, ErrNoSuchKey)
		case found && isFile(&st):
			ino, err = s.promote(bucket, cur, c, st.Ino)
		case found:
			return inos, fmt.Errorf("key %q: %q is neither object nor prefix: %w", kp.key, name, ErrKeyConflict)
		default:
			ino, err = s.makeDir(bucket, cur, c)
		}
		if err != nil {
			return inos, err
		}
		inos = append(inos, ino)
		cur = ino
	}
	return inos, nil
}

// makeDir makes the directory of component c in dir. A hashed name gets
// its component before it appears: the directory is made and labelled in
// .xfs3/tmp (charged to the bucket's project) and renamed into place.
func (s *Store) makeDir(bucket, dir format.Ino, c string) (format.Ino, error) {
	name := entryName(c)
	if !hashedName(name) {
		return s.v.Mkdir(dir, name, dirAttrs)
	}
	project, err := s.project(bucket)
	if err != nil {
		return 0, err
	}
	a := dirAttrs
	a.ProjID = project
	tmp := randomName()
	ino, err := s.v.Mkdir(s.tmp, tmp, a)
	if err != nil {
		return 0, err
	}
	if err = s.v.SetXattr(ino, xattrName, []byte(c), 0); err == nil {
		err = s.v.Rename(s.tmp, tmp, dir, name)
	}
	if err != nil {
		s.v.Rmdir(s.tmp, tmp)
		return 0, err
	}
	return ino, nil
}

// promote turns the object file of component c in dir into a prefix: the
// file moves to its name beside the directory, then the directory is
// made. Each step is one transaction and every state between them reads
// as the same keys, so a crash loses nothing.
func (s *Store) promote(bucket, dir format.Ino, c string, file format.Ino) (format.Ino, error) {
	beside := besideName(c)
	if hashedName(beside) {
		if err := s.v.SetXattr(file, xattrName, []byte(c), 0); err != nil {
			return 0, err
		}
	}
	if err := s.v.Rename(dir, entryName(c), dir, beside); err != nil {
		return 0, err
	}
	return s.makeDir(bucket, dir, c)
}

// prune removes empty directories of a key path from the deepest up,
// stopping at the bucket, at a folder marker or at a non-empty directory.
// An object that lay beside a removed directory takes its plain place
// again. inos is resolveDirs' result. Callers hold ns exclusively.
func (s *Store) prune(kp keyPath, inos []format.Ino) error {
	for i := len(inos) - 1; i >= 1; i-- {
		if _, err := s.v.GetXattr(inos[i], xattrFolder); err == nil {
			return nil
		} else if !errors.Is(err, xfs.ErrNoData) {
			return err
		}
		// Only emptiness matters: reading the whole directory under the
		// namespace lock made every delete in a prefix of n keys O(n).
		empty, err := s.v.IsEmptyDir(inos[i])
		if err != nil || !empty {
			return err
		}
		parent, c := inos[i-1], kp.dirs[i-1]
		if err := s.v.Rmdir(parent, entryName(c)); err != nil {
			return err
		}
		st, found, err := s.lookupStat(parent, besideName(c))
		if err != nil {
			return err
		}
		if found && isFile(&st) {
			return s.v.Rename(parent, besideName(c), parent, entryName(c))
		}
	}
	return nil
}
