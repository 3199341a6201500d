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
	configDir  = "config" // system files (sysfiles.go)
	// oldTrashDir held extra links keeping deleted objects readable
	// before the engine had references; New removes it.
	oldTrashDir = "trash"
)

var (
	dirAttrs  = xfs.Attrs{Mode: 0o755}
	fileAttrs = xfs.Attrs{Mode: 0o644}
	sysAttrs  = xfs.Attrs{Mode: 0o700}
)

// Store maps buckets and objects onto one open volume: the handle a
// program opens and closes, with buckets, objects, tagging and listings.
// Multipart uploads are reached through Uploads, bucket quotas through
// Quotas, versions by ID through Versions, bucket policies and the like
// through BucketConfigs and the server's own files through SystemFiles,
// each a small value over the state they share. A Store and its
// roles are safe for concurrent use.
//
// Lock order: an upload's mu, then a key's lock, then directory locks,
// then upMu, then the engine's own locks (package doc, "Locking").
type Store struct{ *store }

// store is the state every role of a Store shares, with the glue they
// all use (paths, directory locks, staging, settling changes).
type store struct {
	v   *xfs.Volume
	own bool // Close closes v
	tmp format.Ino
	// staging are the directories under tmp that staged files and
	// directories are made in, spread by name so that concurrent PUTs do
	// not all wait for one directory's lock.
	staging [stagingDirs]format.Ino
	upl     format.Ino // .xfs3/uploads

	// minPart is MinPartSize; tests lower it to run many small parts.
	minPart int64

	upMu sync.Mutex
	// uploads indexes the uploads in progress by ID (loaded from
	// .xfs3/uploads by New); guarded by upMu.
	uploads map[string]*upload

	// locks are the per-directory locks of changes that span several
	// engine calls on one directory's names (package doc, "Locking").
	locks dirLocks

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

	// vstates caches the buckets' versioning states; keys serialises
	// the changes of each key's versions (versioning.go).
	vstates bucketStates[string]
	keys    keyLocks
	// locksCfg caches the buckets' object-lock configurations
	// (objectlock.go); now is the clock retention is judged by.
	locksCfg bucketStates[LockConfig]
	now      func() time.Time
	// lifecycleDay is Options.LifecycleDay; expirer runs lifecycle
	// passes (lifecycle_scan.go).
	lifecycleDay time.Duration
	expirer      *gc.Lifecycle
	// scrubber runs scrub passes; rot holds the objects they found
	// rotten (scrub.go).
	scrubber *gc.Scrubber
	rot      rotState

	// projects hands out the project IDs of new buckets (quotas.go).
	projects projects
	// quotaMu orders Quotas.Update's read-modify-writes of limits.
	quotaMu sync.Mutex

	// cfgGen is BucketConfigs.Generation; sysConfig is .xfs3/config
	// once found or made (0 before: sysfiles.go).
	cfgGen    atomic.Uint64
	sysConfig atomic.Uint64

	// health records where sick structures lie (health.go).
	health healthState

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
	// Clock is the time object-lock retention and lifecycle rules are
	// judged by (nil: time.Now). Tests move it.
	Clock func() time.Time
	// Lifecycle tunes the lifecycle scanner (no scheduled passes when
	// Interval is 0; passes on demand always). Busy defaults to the
	// store's count of finished changes, Now to Clock.
	Lifecycle gc.LifecycleOptions
	// LifecycleDay is the length of a lifecycle rule's day
	// (DefaultLifecycleDay when 0); shorter only for tests and demos.
	LifecycleDay time.Duration
	// Scrub tunes the scrubber (no scheduled passes when Interval is 0;
	// passes on demand always). Busy defaults to the store's count of
	// finished changes.
	Scrub gc.ScrubOptions
	// OnSick, when set, is called once for each structure newly marked
	// sick, with its place (health.go), from a goroutine of its own or
	// of the operation that met it. With NewWith it learns of them only
	// as operations fail on them; OpenWith also hears the engine.
	OnSick func(SickStructure)
}

// AckBeforeDurableWindow is how often a store with AckBeforeDurable makes
// its changes durable.
const AckBeforeDurableWindow = time.Second

// Open opens (read-write) the volume file at path and returns a store over
// it; Close closes the volume. Every change is durable when it returns.
func Open(path string) (*Store, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options. Its errors name the volume's path.
func OpenWith(path string, o Options) (*Store, error) {
	// The engine's commits are lazy: a store operation makes several,
	// and forcing the log once at its end (settle) makes them all
	// durable, sharing one log write with concurrent operations.
	var opened atomic.Pointer[store] // the engine may report before the store exists
	onSick := func(x xfs.SickStructure) {
		if s := opened.Load(); s != nil {
			s.engineSick(x)
		}
	}
	v, err := xfs.Open(path, xfs.Options{LazyCommits: true, NoQuota: o.NoQuota, CacheBytes: o.CacheBytes, OnSick: onSick})
	if err != nil {
		return nil, err
	}
	s, err := NewWith(v, o)
	if err != nil {
		v.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	opened.Store(s.store)
	if len(v.Sick()) > 0 {
		s.engineSick(xfs.SickStructure{}) // found while opening
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
func (s *store) settle(err *error) {
	s.changes.Add(1)
	s.settleQuietly(err)
}

// settleQuietly is settle for the store's own background work (the
// lifecycle scanner): it does not count as a change, since the change
// count tells background work that clients are busy.
func (s *store) settleQuietly(err *error) {
	if s.ackEarly {
		return
	}
	if ferr := s.v.Force(); *err == nil {
		*err = ferr
	}
}

// flushEvery makes changes durable every period, for AckBeforeDurable.
func (s *store) flushEvery(period time.Duration) {
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
	s := &store{v: v, dirs: newDirCache(), uploads: map[string]*upload{}, minPart: MinPartSize, now: o.Clock}
	s.health.onSick = o.OnSick
	if s.now == nil {
		s.now = time.Now
	}
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
	s.lifecycleDay = o.LifecycleDay
	if o.Lifecycle.Busy == nil {
		o.Lifecycle.Busy = s.changes.Load
	}
	if o.Lifecycle.Now == nil {
		o.Lifecycle.Now = s.now
	}
	s.expirer = gc.NewLifecycle(Lifecycle{s}, o.Lifecycle)
	if o.Scrub.Busy == nil {
		o.Scrub.Busy = s.changes.Load
	}
	s.scrubber = gc.NewScrubber(Scrub{s}, o.Scrub)
	return &Store{s}, nil
}

// prepare makes the system directories and clears what a crash left in
// them, then indexes the uploads in progress.
func (s *store) prepare() error {
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
	for i := range s.staging {
		if s.staging[i], err = s.ensureDir(s.tmp, fmt.Sprintf("%02x", i), sysAttrs); err != nil {
			return err
		}
	}
	if trash, err := v.Names().Lookup(sys, oldTrashDir); err == nil {
		if err := s.clearDir(trash); err != nil {
			return err
		}
		if err := v.Names().Rmdir(sys, oldTrashDir); err != nil {
			return err
		}
	} else if !errors.Is(err, xfs.ErrNotFound) {
		return err
	}
	if err := s.multipart().loadUploads(); err != nil {
		return err
	}
	return s.quotas().assignProjects()
}

// clearDir removes everything in the system directory d.
func (s *store) clearDir(d format.Ino) error {
	ents, err := s.v.Names().ReadDir(d)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := s.removeTree(d, e.Name); err != nil {
			if errors.Is(err, ErrSick) {
				// What freeing it needs is sick (its inode, its AG):
				// a leftover costs only its space, and refusing to
				// open would stop every bucket for one damaged AG.
				// The health report lists the damage; xfs_repair
				// mends it, and a later open removes the entry.
				continue
			}
			return fmt.Errorf("remove leftover staging entry %s: %w", e.Name, err)
		}
	}
	return nil
}

// closeGC drains the inode gc and detaches it from the volume.
func (s *store) closeGC() error {
	err := s.gc.Close()
	s.v.Space().SetInactiveQueue(nil)
	return err
}

// Trimmer is the store's trim scheduler: its status, and passes on
// demand.
func (s *Store) Trimmer() *gc.Trimmer { return s.trim }

// GCStats reports the inode garbage collector's counters.
func (s *Store) GCStats() gc.Stats { return s.gc.Stats() }

// removeTree removes name from dir, with everything below it when it is
// a directory (staged upload directories, aborted uploads).
func (s *store) removeTree(dir format.Ino, name string) error {
	ino, err := s.v.Names().Lookup(dir, name)
	if err != nil {
		return err
	}
	st, err := s.v.Stat(ino)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return s.v.Names().Unlink(dir, name)
	}
	ents, err := s.v.Names().ReadDir(ino)
	if err != nil {
		return err
	}
	// Regular files (an upload's parts, up to 10,000) leave together;
	// anything else, or a file UnlinkFiles leaves, is removed on its own.
	var files []string
	var rest []xfs.DirEntry
	for _, e := range ents {
		if e.Type == format.FTReg {
			files = append(files, e.Name)
		} else {
			rest = append(rest, e)
		}
	}
	for i, err := range s.v.Names().UnlinkFiles(ino, files) {
		if err != nil {
			rest = append(rest, xfs.DirEntry{Name: files[i]})
		}
	}
	for _, e := range rest {
		if err := s.removeTree(ino, e.Name); err != nil {
			return err
		}
	}
	return s.v.Names().Rmdir(dir, name)
}

// removeEmptyDirs removes the directory name of dir if it holds nothing
// but directories that hold nothing else, and tells whether it did.
// Unlike removeTree it never removes a file, so a concurrent change that
// puts one below keeps it (the directory then stays).
func (s *store) removeEmptyDirs(dir format.Ino, name string) (bool, error) {
	ino, err := s.v.Names().Lookup(dir, name)
	if err != nil {
		return false, err
	}
	ents, err := s.v.Names().ReadDir(ino)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if e.Type != format.FTDir {
			return false, nil
		}
		if gone, err := s.removeEmptyDirs(ino, e.Name); err != nil || !gone {
			return false, err
		}
	}
	err = s.v.Names().Rmdir(dir, name)
	if errors.Is(err, xfs.ErrNotEmpty) {
		return false, nil
	}
	return err == nil, err
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
	s.expirer.Close() // a pass must be over before the volume closes
	s.scrubber.Close()
	s.trim.Close()
	s.closeHealth()
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
func (s *store) ensureDir(dir format.Ino, name string, a xfs.Attrs) (format.Ino, error) {
	ino, err := s.v.Names().Mkdir(dir, name, a)
	if errors.Is(err, xfs.ErrExist) {
		ino, err = s.v.Names().Lookup(dir, name)
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

// stagingDirs is how many directories staged entries are spread over.
const stagingDirs = 16

// stagingDir is the directory under .xfs3/tmp for a staged entry named by
// randomName: its first hex digit picks it.
func (s *store) stagingDir(name string) format.Ino {
	d := name[0] - '0'
	if name[0] >= 'a' {
		d = name[0] - 'a' + 10
	}
	return s.staging[d%stagingDirs]
}

// BucketInfo describes a bucket.
type BucketInfo struct {
	Name    string
	Created time.Time // the directory's creation time (crtime)
}

// bucket resolves a bucket name to its directory, for a caller that only
// needs to know it exists: the number may be reused once it is deleted.
func (s *store) bucket(name string) (format.Ino, error) {
	h, err := s.openBucket(name)
	if err != nil {
		return 0, err
	}
	defer h.Close()
	return h.Ino(), nil
}

// openBucket resolves a bucket name to its directory and holds it: the
// inode stays that bucket's directory (possibly deleted) until the handle
// is closed.
func (s *store) openBucket(name string) (*xfs.Handle, error) {
	if err := checkBucketName(name); err != nil {
		return nil, err
	}
	h, err := s.v.Files().OpenAt(s.v.Root(), name)
	if errors.Is(err, xfs.ErrNotFound) {
		return nil, fmt.Errorf("bucket %q: %w", name, ErrNoSuchBucket)
	}
	return h, err
}

// withBucket runs fn on the bucket's directory, held.
func (s *store) withBucket(name string, fn func(ino format.Ino) error) error {
	h, err := s.openBucket(name)
	if err != nil {
		return err
	}
	defer h.Close()
	return fn(h.Ino())
}

// CreateBucket makes an empty bucket. The engine's Mkdir is atomic: of
// racing creates exactly one succeeds.
func (s *Store) CreateBucket(name string) (err error) {
	defer s.noteSick(name, "", &err)
	defer s.settle(&err)
	if err := CheckBucketName(name); err != nil {
		return err
	}
	a := dirAttrs
	a.ProjID = s.projects.last.Add(1)
	_, err = s.v.Names().Mkdir(s.v.Root(), name, a)
	if errors.Is(err, xfs.ErrExist) {
		return fmt.Errorf("bucket %q: %w", name, ErrBucketExists)
	}
	s.configsChanged()
	return err
}

// DeleteBucket removes a bucket that holds no object, aborting the
// uploads in progress into it (as S3 does). With objects it gives
// ErrBucketNotEmpty and leaves the uploads alone.
func (s *Store) DeleteBucket(name string) (err error) {
	defer s.noteSick(name, "", &err)
	defer s.settle(&err)
	pending := s.multipart().lockBucketUploads(name)
	defer unlockUploads(pending)
	h, err := s.openBucket(name)
	if err != nil {
		return err
	}
	defer h.Close()
	ino := h.Ino()
	// Exclusive: a new upload (shared) sees either the bucket or its
	// removal, a second DeleteBucket waits here, and the bucket found
	// empty stays so until the Rmdir (a name appears in it only under
	// this lock), so uploads are never aborted for a bucket that stays.
	defer s.locks.lock(ino)()
	if gone, err := s.removed(ino); err != nil || gone {
		if gone {
			err = fmt.Errorf("bucket %q: %w", name, ErrNoSuchBucket)
		}
		return err
	}
	ents, err := s.v.Names().ReadDir(ino)
	if err != nil {
		return err
	}
	if len(ents) == 1 && ents[0].Name == versionsDir {
		// Every version is gone; the versions tree goes with the bucket.
		// Directories a failed or interrupted change left empty go too.
		if _, err := s.removeEmptyDirs(ino, versionsDir); err != nil {
			return err
		}
		if ents, err = s.v.Names().ReadDir(ino); err != nil {
			return err
		}
	}
	if len(ents) > 0 {
		return fmt.Errorf("bucket %q: %w", name, ErrBucketNotEmpty)
	}
	if n := s.multipart().countUploads(name); n != len(pending) {
		return fmt.Errorf("bucket %q got an upload while being deleted: %w", name, ErrBucketNotEmpty)
	}
	for _, u := range pending {
		if err := s.multipart().dropUpload(u); err != nil {
			return err
		}
	}
	project, err := s.quotas().project(ino)
	if err != nil {
		return err
	}
	err = s.v.Names().Rmdir(s.v.Root(), name)
	s.forgetVersioning(ino)
	s.configsChanged()
	if errors.Is(err, xfs.ErrNotEmpty) {
		return fmt.Errorf("bucket %q: %w", name, ErrBucketNotEmpty)
	}
	if err != nil || project == 0 || !s.v.Quotas().Enabled() {
		return err
	}
	// The project is gone with its bucket: its limits go too.
	return s.v.Quotas().SetLimits(project, quota.Limits{})
}

// HeadBucket returns the bucket's information, or ErrNoSuchBucket.
func (s *Store) HeadBucket(name string) (BucketInfo, error) {
	h, err := s.openBucket(name)
	if err != nil {
		return BucketInfo{}, err
	}
	defer h.Close()
	st, err := s.v.Stat(h.Ino())
	if err != nil {
		return BucketInfo{}, err
	}
	return BucketInfo{Name: name, Created: st.Crtime}, nil
}

// ListBuckets returns every bucket sorted by name. Root directories whose
// names are not valid bucket names (the system directory, lost+found) are
// left out.
func (s *Store) ListBuckets() ([]BucketInfo, error) {
	ents, err := s.v.Names().ReadDir(s.v.Root())
	if err != nil {
		return nil, err
	}
	var out []BucketInfo
	for _, e := range ents {
		if e.Type != format.FTDir || checkBucketName(e.Name) != nil {
			continue
		}
		st, found, err := s.openStat(s.v.Root(), e.Name)
		if err != nil {
			return nil, err
		}
		if !found || !st.IsDir() {
			continue // deleted since the directory was read
		}
		out = append(out, BucketInfo{Name: e.Name, Created: st.Crtime})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// dirPath holds the directories of a key, the bucket first, each by a
// reference (xfs.Handle): a directory removed meanwhile keeps its number
// until close, so a stale number never names another inode, and the
// engine refuses to add names to it (ErrNotFound).
type dirPath []*xfs.Handle

func (p dirPath) ino(i int) format.Ino { return p[i].Ino() }

func (p dirPath) last() format.Ino { return p[len(p)-1].Ino() }

func (p dirPath) close() {
	for _, h := range p {
		h.Close()
	}
}

// errRetry marks a change that found a directory of its path removed
// under it (a concurrent prune or DeleteBucket): it starts again from the
// bucket, which it may then find missing.
var errRetry = errors.New("a directory of the path was removed meanwhile")

// maxAttempts bounds the restarts of one change.
const maxAttempts = 64

// retryable marks an engine's ErrNotFound, from a change into a directory
// that was removed, as errRetry.
func retryable(err error) error {
	if errors.Is(err, xfs.ErrNotFound) && !errors.Is(err, errRetry) {
		return fmt.Errorf("%w: %w", errRetry, err)
	}
	return err
}

// retry runs a change until it no longer meets a removed directory.
func retry[T any](change func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := change()
		if !errors.Is(err, errRetry) || attempt == maxAttempts {
			return v, err
		}
	}
}

// removed tells whether the held directory ino lost its name.
func (s *store) removed(ino format.Ino) (bool, error) {
	st, err := s.v.Stat(ino)
	return err == nil && st.Nlink == 0, err
}

// resolveDirs looks up the directories of a key below the bucket (b,
// which the path takes over) and returns them held, the bucket first; the
// caller closes the path, also on error. With create, missing ones are
// made, and an object standing where a directory is needed moves beside
// it (promote), each under its parent's lock; a parent removed meanwhile
// gives errRetry. Without create, a missing directory gives ErrNoSuchKey.
// A directory that exists is looked up without any store lock.
func (s *store) resolveDirs(b *xfs.Handle, kp keyPath, create bool) (dirPath, error) {
	path := dirPath{b}
	for _, c := range kp.dirs {
		cur := path.last()
		h, st, err := s.openEntry(cur, entryName(c))
		switch {
		case err != nil:
			return path, err
		case h != nil && st.IsDir():
			path = append(path, h)
			continue
		case h != nil:
			h.Close()
		}
		if !create {
			return path, fmt.Errorf("key %q: %w", kp.key, ErrNoSuchKey)
		}
		if h, err = s.makeDirLocked(b.Ino(), cur, c, kp); err != nil {
			return path, retryable(err)
		}
		path = append(path, h)
	}
	return path, nil
}

// makeDirLocked returns the directory of component c in dir, held, under
// dir's lock: found again there, made, or made after moving the object
// file of that name beside it.
func (s *store) makeDirLocked(bucket, dir format.Ino, c string, kp keyPath) (*xfs.Handle, error) {
	defer s.locks.lock(dir)()
	name := entryName(c)
	h, st, err := s.openEntry(dir, name)
	if err != nil {
		return nil, err
	}
	if h != nil && st.IsDir() {
		return h, nil
	}
	if h != nil {
		// The name keeps the inode linked while dir's lock is held.
		h.Close()
	}
	switch {
	case h != nil && isFile(&st):
		err = s.promote(bucket, dir, c, st.Ino)
	case h != nil:
		return nil, fmt.Errorf("key %q: %q is neither object nor prefix: %w", kp.key, name, ErrKeyConflict)
	default:
		err = s.makeDir(bucket, dir, c)
	}
	if err != nil {
		return nil, err
	}
	return s.v.Files().OpenAt(dir, name)
}

// openEntry looks name up in dir and holds what it names; h is nil (and
// err nil) when there is no such name. The caller closes h.
func (s *store) openEntry(dir format.Ino, name string) (h *xfs.Handle, st xfs.Stat, err error) {
	h, err = s.v.Files().OpenAt(dir, name)
	if errors.Is(err, xfs.ErrNotFound) {
		return nil, xfs.Stat{}, nil
	}
	if err != nil {
		return nil, xfs.Stat{}, err
	}
	if st, err = s.v.Stat(h.Ino()); err != nil {
		h.Close()
		return nil, xfs.Stat{}, err
	}
	return h, st, nil
}

// openStat stats what name in dir names, through a reference, so that
// the result is of the inode the name held; found is false when there is
// none.
func (s *store) openStat(dir format.Ino, name string) (xfs.Stat, bool, error) {
	h, st, err := s.openEntry(dir, name)
	if h == nil {
		return xfs.Stat{}, false, err
	}
	h.Close()
	return st, true, nil
}

// makeDir makes the directory of component c in dir. A hashed name gets
// its component before it appears: the directory is made and labelled in
// .xfs3/tmp (charged to the bucket's project) and renamed into place.
// Callers hold dir's lock.
func (s *store) makeDir(bucket, dir format.Ino, c string) error {
	return s.makeDirNamed(bucket, dir, entryName(c), c)
}

// makeDirNamed makes the directory name of component c in dir, as
// makeDir does.
func (s *store) makeDirNamed(bucket, dir format.Ino, name, c string) error {
	if !hashedName(name) {
		_, err := s.v.Names().Mkdir(dir, name, dirAttrs)
		return err
	}
	project, err := s.quotas().project(bucket)
	if err != nil {
		return err
	}
	a := dirAttrs
	a.ProjID = project
	tmp := randomName()
	sd := s.stagingDir(tmp)
	ino, err := s.v.Names().Mkdir(sd, tmp, a)
	if err != nil {
		return err
	}
	if err = s.v.Xattrs().Set(ino, xattrName, []byte(c), 0); err == nil {
		err = s.v.Names().Rename(sd, tmp, dir, name)
	}
	if err != nil {
		s.v.Names().Rmdir(sd, tmp)
	}
	return err
}

// promote turns the object file of component c in dir into a prefix: the
// file moves to its name beside the directory, then the directory is
// made. Each step is one transaction and every state between them reads
// as the same keys, so a crash loses nothing. Callers hold dir's lock.
func (s *store) promote(bucket, dir format.Ino, c string, file format.Ino) error {
	if err := s.moveObject(dir, entryName(c), besideName(c), c, file); err != nil {
		return err
	}
	return s.makeDir(bucket, dir, c)
}

// moveObject moves the object file (its inode) of component c from name
// to toName in dir, in one transaction; a locked version keeps its
// immutable flag. The caller holds dir's lock.
func (s *store) moveObject(dir format.Ino, name, toName, c string, file format.Ino) error {
	st, err := s.v.Stat(file)
	if err != nil {
		return err
	}
	op := xfs.NameOp{Dir: dir, Name: name, ToDir: dir, ToName: toName, Immutable: isImmutable(&st)}
	if hashedName(toName) {
		op.Attrs = []xfs.Xattr{xattrOf(xattrName, c)}
	}
	return s.v.Names().Apply([]xfs.NameOp{op})
}

// prune removes empty directories of a key path from the deepest up,
// stopping at the bucket, at a folder marker or at a non-empty directory.
// An object that lay beside a removed directory takes its plain place
// again. path is resolveDirs' result.
func (s *store) prune(kp keyPath, path dirPath) error { return s.pruneTree(kp, path, false) }

// pruneVersionsTree is prune in a bucket's versions tree, whose name
// beside a prefix directory holds that key's own versions (versions.go):
// it stays where it is.
func (s *store) pruneVersionsTree(kp keyPath, path dirPath) error {
	return s.pruneTree(kp, path, true)
}

func (s *store) pruneTree(kp keyPath, path dirPath, versions bool) error {
	if len(path) < 2 {
		return nil
	}
	// Most deletes leave keys beside them. A look at the key's own
	// directory without locks spares them pruneDir's two locks and its
	// lookup, and cannot leave an empty directory behind: whoever removes
	// an entry looks afterwards, so the remover of the last one sees it
	// empty. Anything but a clear "not empty" (the directory gone meanwhile,
	// an error) goes the locked way, which sorts it out.
	if empty, err := s.v.Names().IsEmptyDir(path.last()); err == nil && !empty {
		return nil
	}
	for i := len(path) - 1; i >= 1; i-- {
		more, err := s.pruneDir(path.ino(i-1), path.ino(i), kp.dirs[i-1], versions)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// pruneDir removes dir, the directory of component c in parent, if it is
// still there, empty and no folder marker, and tells whether it did (so
// the parent may be empty now). It holds parent's lock, then dir's: no
// name of parent changes meanwhile (the object beside dir stays where it
// is until moved back) and no marker is set on dir (putFolder holds dir's
// lock). Entries added to dir without its lock make the engine's Rmdir
// fail, and those that come after it find dir removed and start again.
// In the versions tree (versions) nothing moves back.
func (s *store) pruneDir(parent, dir format.Ino, c string, versions bool) (bool, error) {
	defer s.locks.lock(parent)()
	defer s.locks.lock(dir)()
	name := entryName(c)
	if ino, err := s.v.Names().Lookup(parent, name); errors.Is(err, xfs.ErrNotFound) || (err == nil && ino != dir) {
		return false, nil // pruned (and maybe made again) by another change
	} else if err != nil {
		return false, err
	}
	// Only emptiness matters: reading the whole directory made every
	// delete in a prefix of n keys O(n). It comes first, since most
	// deletes leave keys beside them and need look no further.
	empty, err := s.v.Names().IsEmptyDir(dir)
	if err != nil || !empty {
		return false, err
	}
	if _, err := s.v.Xattrs().Get(dir, xattrFolder); err == nil {
		return false, nil
	} else if !errors.Is(err, xfs.ErrNoData) {
		return false, err
	}
	if err := s.v.Names().Rmdir(parent, name); errors.Is(err, xfs.ErrNotEmpty) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if versions {
		return true, nil
	}
	st, found, err := s.lookupStat(parent, besideName(c))
	if err != nil {
		return false, err
	}
	if found && isFile(&st) {
		// parent holds the object now: it is not empty.
		return false, s.moveObject(parent, besideName(c), name, c, st.Ino)
	}
	return true, nil
}
