package store

import (
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/quota"
)

// Quotas is the store's bucket quotas. Each bucket directory is an XFS
// project (its ID kept with the bucket, inherited by everything made
// under it), so a bucket's limits are that project's quota, enforced by
// the engine in the transaction of every write. Quotas comes from
// Store.Quotas.
type Quotas struct{ *store }

// Quotas returns the store's bucket quotas.
func (s *Store) Quotas() Quotas { return Quotas{s.store} }

func (s *store) quotas() Quotas { return Quotas{s} }

// ErrQuotaExceeded is the engine's: a write would pass its bucket's hard
// limit (or its soft limit after the grace period). Writes that meet it
// leave nothing behind.
var ErrQuotaExceeded = xfs.ErrQuota

// ErrNoQuota: the bucket has no limit set.
var ErrNoQuota = errors.New("no quota configuration")

// BucketQuota is a bucket's limits: bytes and objects (counted as inodes:
// objects, prefix directories and the uploads in progress), each with a
// hard limit and a soft limit that may be passed for the grace period.
// Zero is no limit.
type BucketQuota struct {
	HardBytes, SoftBytes     uint64
	HardObjects, SoftObjects uint64
}

// BucketUsage is a bucket's quota with its exact usage, as the engine
// charges it in every transaction.
type BucketUsage struct {
	Bucket  string
	Project uint32 // the XFS project ID of the bucket's directory
	Quota   BucketQuota
	Bytes   uint64 // blocks in use, in bytes
	Objects uint64 // inodes in use
	// BytesGraceEnds and ObjectsGraceEnds are when a passed soft limit
	// starts refusing writes (zero: not running).
	BytesGraceEnds, ObjectsGraceEnds time.Time
}

// projects hands out project IDs to new buckets: one past the highest in
// use, found at open.
type projects struct{ last atomic.Uint32 }

// assignProjects gives every bucket its own project ID at open: buckets
// made before quotas (or by another program) get the next free one,
// with every inode below them, and so does a bucket sharing its ID with
// another. Uploads in progress are charged to their bucket.
func (s Quotas) assignProjects() error {
	bs, err := bucketDirs(s.v)
	if err != nil {
		return err
	}
	used := map[uint32]bool{0: true}
	// IDs of deleted buckets that kept limits are never handed out again:
	// a new bucket must not inherit them.
	if qs, err := s.v.Quotas().List(); err == nil {
		for _, q := range qs {
			s.projects.last.Store(max(s.projects.last.Load(), q.ID))
		}
	}
	var todo []bucketDir
	for _, b := range bs {
		if used[b.project] {
			todo = append(todo, b)
			continue
		}
		used[b.project] = true
		s.projects.last.Store(max(s.projects.last.Load(), b.project))
	}
	for _, b := range todo {
		id := s.projects.last.Add(1)
		if err := s.setProjectTree(b.ino, id); err != nil {
			return fmt.Errorf("bucket %q: give it project %d: %w", b.name, id, err)
		}
	}
	return nil
}

type bucketDir struct {
	name    string
	ino     format.Ino
	project uint32
}

// bucketDirs lists the bucket directories of v with their project IDs.
func bucketDirs(v *xfs.Volume) ([]bucketDir, error) {
	ents, err := v.Names().ReadDir(v.Root())
	if err != nil {
		return nil, err
	}
	var out []bucketDir
	for _, e := range ents {
		if e.Type != format.FTDir || checkBucketName(e.Name) != nil {
			continue
		}
		// By name and held: a bucket deleted since the read is skipped,
		// never mistaken for the inode that reuses its number.
		h, err := v.Files().OpenAt(v.Root(), e.Name)
		if errors.Is(err, xfs.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st, err := v.Stat(h.Ino())
		h.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, bucketDir{name: e.Name, ino: st.Ino, project: st.ProjID})
	}
	return out, nil
}

// setProjectTree charges dir and everything below it to project id.
func (s Quotas) setProjectTree(dir format.Ino, id uint32) error {
	if err := s.v.Quotas().SetProject(dir, id); err != nil {
		return err
	}
	ents, err := s.v.Names().ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type == format.FTDir {
			err = s.setProjectTree(e.Ino, id)
		} else {
			err = s.v.Quotas().SetProject(e.Ino, id)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// project returns the project ID of a bucket directory.
func (s Quotas) project(bucketIno format.Ino) (uint32, error) {
	st, err := s.v.Stat(bucketIno)
	if err != nil {
		return 0, err
	}
	return st.ProjID, nil
}

// bucketProject resolves a bucket to its project ID.
func (s Quotas) bucketProject(bucket string) (id uint32, err error) {
	err = s.withBucket(bucket, func(ino format.Ino) error {
		id, err = s.project(ino)
		return err
	})
	return id, err
}

// checkRoom fails at once when size more bytes and one more object do
// not fit the project's limits, before anything is written. Every
// transaction checks again, exactly; this check only spares the work.
func (s Quotas) checkRoom(project uint32, size int64) error {
	if project == 0 || size < 0 {
		return nil
	}
	bs := int64(s.v.Geometry().BlockSize)
	if err := s.v.Quotas().Check(project, (size+bs-1)/bs, 1); err != nil {
		return fmt.Errorf("%d bytes: %w", size, err)
	}
	return nil
}

// Set sets a bucket's limits; a zero BucketQuota clears them.
// Byte limits are kept in filesystem blocks, rounded up.
func (s Quotas) Set(bucket string, q BucketQuota) (err error) {
	defer s.settle(&err)
	id, err := s.bucketProject(bucket)
	if err != nil {
		return err
	}
	bs := uint64(s.v.Geometry().BlockSize)
	blocks := func(n uint64) uint64 { return (n + bs - 1) / bs }
	return s.v.Quotas().SetLimits(id, quota.Limits{
		BlkHard: blocks(q.HardBytes), BlkSoft: blocks(q.SoftBytes),
		InoHard: q.HardObjects, InoSoft: q.SoftObjects,
	})
}

// Update changes a bucket's limits to what change makes of the
// current ones (zero when none are set), one update after another, and
// returns the bucket's limits and usage after it.
func (s Quotas) Update(bucket string, change func(BucketQuota) BucketQuota) (BucketUsage, error) {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	u, err := s.Get(bucket)
	if err != nil && !errors.Is(err, ErrNoQuota) {
		return u, err
	}
	if err := s.Set(bucket, change(u.Quota)); err != nil {
		return u, err
	}
	u, err = s.Get(bucket)
	if errors.Is(err, ErrNoQuota) {
		err = nil
	}
	return u, err
}

// Get returns a bucket's limits and usage. With no limit set it
// still reports the usage, together with ErrNoQuota.
func (s Quotas) Get(bucket string) (BucketUsage, error) {
	id, err := s.bucketProject(bucket)
	if err != nil {
		return BucketUsage{}, err
	}
	q, err := s.v.Quotas().Get(id)
	if err != nil {
		return BucketUsage{}, err
	}
	u := usage(s.v, bucket, q)
	if u.Quota == (BucketQuota{}) {
		return u, fmt.Errorf("bucket %q: %w", bucket, ErrNoQuota)
	}
	return u, nil
}

// List returns the limits and usage of every bucket, by name.
func (s Quotas) List() ([]BucketUsage, error) {
	bs, err := bucketDirs(s.v)
	if err != nil {
		return nil, err
	}
	qs, err := s.v.Quotas().List()
	if err != nil {
		return nil, err
	}
	return bucketUsages(s.v, bs, qs), nil
}

// ReadQuotas returns the limits and usage of every bucket of a volume no
// store has open, read-only ones included (tools working offline), and
// the grace periods. A volume whose quota counts are not kept (made
// before quotas and never opened for writing since) gives an error of
// kind xfs.ErrUnsupported. A bucket no store has given a project yet
// reports project 0 and no usage.
func ReadQuotas(v *xfs.Volume) ([]BucketUsage, QuotaGrace, error) {
	bs, err := bucketDirs(v)
	if err != nil {
		return nil, QuotaGrace{}, err
	}
	qs, err := v.Quotas().List()
	if err != nil {
		return nil, QuotaGrace{}, err
	}
	return bucketUsages(v, bs, qs), graceOf(qs), nil
}

// bucketUsages pairs the buckets with their projects' quotas.
func bucketUsages(v *xfs.Volume, bs []bucketDir, qs []xfs.ProjectQuota) []BucketUsage {
	byID := map[uint32]xfs.ProjectQuota{}
	for _, q := range qs {
		byID[q.ID] = q
	}
	out := make([]BucketUsage, 0, len(bs))
	for _, b := range bs {
		q, ok := byID[b.project]
		if !ok || b.project == 0 {
			// Project 0 holds everything not charged to a bucket: a
			// bucket in it (made by another program, and given its own
			// project at the next writable open) has no usage of its own
			// to show yet.
			q = xfs.ProjectQuota{ID: b.project}
		}
		out = append(out, usage(v, b.name, q))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bucket < out[j].Bucket })
	return out
}

// usage turns a project's quota into a bucket's.
func usage(v *xfs.Volume, bucket string, q xfs.ProjectQuota) BucketUsage {
	bs := uint64(v.Geometry().BlockSize)
	at := func(unix int64) time.Time {
		if unix == 0 {
			return time.Time{}
		}
		return time.Unix(unix, 0).UTC()
	}
	return BucketUsage{
		Bucket: bucket, Project: q.ID,
		Quota: BucketQuota{
			HardBytes: q.Limits.BlkHard * bs, SoftBytes: q.Limits.BlkSoft * bs,
			HardObjects: q.Limits.InoHard, SoftObjects: q.Limits.InoSoft,
		},
		Bytes: uint64(max(q.Usage.Blocks, 0)) * bs, Objects: uint64(max(q.Usage.Inodes, 0)),
		BytesGraceEnds: at(q.Usage.BTimer), ObjectsGraceEnds: at(q.Usage.ITimer),
	}
}

// QuotaGrace is how long a bucket may stay over a soft limit before
// writes are refused: for bytes and for objects.
type QuotaGrace struct {
	Bytes, Objects time.Duration
}

// Grace returns the grace periods of soft limits.
func (s Quotas) Grace() (QuotaGrace, error) {
	qs, err := s.v.Quotas().List()
	if err != nil {
		return QuotaGrace{}, err
	}
	return graceOf(qs), nil
}

// graceOf reads the grace periods where the kernel keeps them, in project
// 0's timer fields (seconds; 0 is the kernel's default).
func graceOf(qs []xfs.ProjectQuota) QuotaGrace {
	g := QuotaGrace{Bytes: quota.DefaultGrace, Objects: quota.DefaultGrace}
	for _, q := range qs {
		if q.ID != 0 {
			continue
		}
		if q.Usage.BTimer > 0 {
			g.Bytes = time.Duration(q.Usage.BTimer) * time.Second
		}
		if q.Usage.ITimer > 0 {
			g.Objects = time.Duration(q.Usage.ITimer) * time.Second
		}
	}
	return g
}

// SetGrace sets how long soft limits may be passed (0: unchanged).
func (s Quotas) SetGrace(bytes, objects time.Duration) (err error) {
	defer s.settle(&err)
	return s.v.Quotas().SetGrace(bytes, objects)
}
