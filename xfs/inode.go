package xfs

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/ialloc"
	"github.com/xfs3/xfs3/xfs/reclaim"
)

// Fork selects an inode's data or attribute fork.
type Fork int

const (
	DataFork Fork = iota
	AttrFork
)

func (f Fork) String() string {
	if f == AttrFork {
		return "attr fork"
	}
	return "data fork"
}

// inode is one committed version of an on-disk inode: its verified core
// and raw bytes, plus fork mappings loaded on first use. A version is
// immutable; a transaction that changes the inode publishes a new version
// when it commits, so readers holding an older one stay consistent.
type inode struct {
	ino  format.Ino
	core format.Dinode // a value: one object less per cached inode for the collector
	raw  []byte

	maps [2]struct {
		once sync.Once
		ext  []format.Extent
		err  error
	}
}

// fork returns the raw bytes of a fork inside the inode's literal area.
func (ip *inode) fork(f Fork) []byte {
	data, attr := ip.core.Forks(ip.raw)
	if f == AttrFork {
		return attr
	}
	return data
}

func (ip *inode) format(f Fork) int8 {
	if f == AttrFork {
		return ip.core.AFormat
	}
	return ip.core.Format
}

func (ip *inode) nextents(f Fork) uint64 {
	if f == AttrFork {
		return ip.core.AttrExtents()
	}
	return ip.core.DataExtents()
}

func (ip *inode) isDir() bool  { return ip.core.Mode&format.SIFMT == format.SIFDIR }
func (ip *inode) isReg() bool  { return ip.core.Mode&format.SIFMT == format.SIFREG }
func (ip *inode) isLink() bool { return ip.core.Mode&format.SIFMT == format.SIFLNK }

// inodeHandle is the cache entry of an inode: its lock and its latest
// committed version.
//
// Lock order: see package xfs doc.
type inodeHandle struct {
	// lock is the inode lock: shared for reads that span several blocks,
	// exclusive for changes.
	lock  sync.RWMutex
	cur   atomic.Pointer[inode] // nil until loaded
	shard *inodeShard
	// The rest is guarded by shard.Mu. refs counts holders; opens counts
	// the open Handles; doomed is set when the inode lost its last link
	// while opens > 0, so the last Close releases it.
	refs   int
	opens  int
	doomed bool
}

// inodeCache keeps inodes in memory within a budget of bytes; held
// handles are never evicted, so an inode never has two locks. Like the
// buffer cache it is sharded, by inode number, with an LRU list and a
// lock per shard, and one goroutine at a time reclaims (package reclaim).
type inodeCache struct {
	shards  [inodeShards]inodeShard
	bytes   atomic.Int64 // entry bytes for each cached handle
	budget  int64
	entry   int64 // what one cached inode is reckoned to take
	reclaim *reclaim.Reclaimer
}

// inodeShard is one part of the inode cache; its lock also guards its
// handles' refs, opens and doomed.
type inodeShard = reclaim.Shard[format.Ino, inodeHandle]

// inodeShards, like the buffer cache's shards, is a power of two well
// above the cores we serve on.
const (
	inodeShardBits = 6
	inodeShards    = 1 << inodeShardBits
)

// inodeOverhead is what a cached inode takes besides its raw bytes: the
// handle, the version and its decoded core, the map and list entry.
// Extent maps loaded later are not counted.
const inodeOverhead = 512

// init sets a budget of bytes for inodes of inodeSize bytes.
func (c *inodeCache) init(budget int64, inodeSize int) {
	c.budget, c.entry = budget, int64(inodeSize)+inodeOverhead
	c.reclaim = reclaim.ForBudget(inodeShards, budget, &c.bytes, c.scan)
}

func (c *inodeCache) shard(ino format.Ino) *inodeShard {
	return &c.shards[reclaim.Index(uint64(ino), inodeShardBits)]
}

// hold returns the handle of ino with a reference; drop it with release.
func (c *inodeCache) hold(ino format.Ino) *inodeHandle {
	s := c.shard(ino)
	s.Mu.Lock()
	h, ok := s.Get(ino)
	if !ok {
		h = s.Add(ino)
		h.shard = s
	}
	h.refs++
	s.Mu.Unlock()
	if !ok && c.bytes.Add(c.entry) > c.budget {
		c.reclaim.Need(c.entry)
	}
	return h
}

func (c *inodeCache) release(h *inodeHandle) {
	h.shard.Mu.Lock()
	h.refs--
	h.shard.Mu.Unlock()
	// Held handles may have kept the cache over its budget.
	if c.bytes.Load() > c.budget {
		c.reclaim.Need(0)
	}
}

// opened reports whether ino is cached with open Handles.
func (c *inodeCache) opened(ino format.Ino) bool {
	s := c.shard(ino)
	s.Mu.Lock()
	defer s.Mu.Unlock()
	h, ok := s.Peek(ino)
	return ok && h.opens > 0
}

// scan evicts the least recently used unheld handles of a shard, want
// bytes of them if it has them (the reclaimer's Scan).
func (c *inodeCache) scan(shard int, want int64) (entries int, bytes int64) {
	s := &c.shards[shard]
	s.Mu.Lock()
	defer s.Mu.Unlock()
	entries, bytes = s.Evict(want, func(h *inodeHandle) bool { return h.refs > 0 }, func(*inodeHandle) int64 { return c.entry })
	c.bytes.Add(-bytes)
	return entries, bytes
}

// stats returns the inode cache's use of its budget and its counters.
func (c *inodeCache) stats() reclaim.Stats {
	st := reclaim.Stats{Bytes: c.bytes.Load(), Budget: c.budget, Counters: c.reclaim.Counters()}
	st.Entries, st.Hits, st.Misses = reclaim.Sum(c.shards[:])
	return st
}

// iget returns the latest committed version of the in-use inode ino.
func (v *mount) iget(ino format.Ino) (*inode, error) {
	h := v.icache.hold(ino)
	defer v.icache.release(h)
	return v.igetHeld(h, ino)
}

// igetHeld is iget for a caller that holds the handle.
func (v *mount) igetHeld(h *inodeHandle, ino format.Ino) (*inode, error) {
	if ip := h.cur.Load(); ip != nil {
		return ip, nil
	}
	ip, err := v.readInode(ino)
	if err != nil {
		return nil, v.markSick(err, ino)
	}
	if ip.core.Mode == 0 {
		return nil, format.Corrupt("inode", fmt.Sprintf("inode %d", ino), "referenced inode is free")
	}
	h.cur.CompareAndSwap(nil, ip)
	return h.cur.Load(), nil
}

// readInode reads and verifies an inode, free or not. Its block comes
// through the buffer cache: a change to the inode needs that block next
// (inodeChange.flush), and the inodes beside it share it.
func (v *mount) readInode(ino format.Ino) (*inode, error) {
	g := &v.geo
	if _, err := g.InoLocation(ino); err != nil {
		return nil, err
	}
	ag, agino := g.InoToAg(ino)
	bno, slot := g.AgInoToAgBlock(agino)
	raw := make([]byte, g.InodeSize)
	if err := v.cache.ReadCopy(g.AgbToDaddr(ag, bno), g.BlockSize, ialloc.BufOps, slot*g.InodeSize, raw); err != nil {
		return nil, fmt.Errorf("read inode %d: %w", ino, err)
	}
	core, err := format.VerifyInode(&v.geo, ino, raw)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("inode %d", ino))
	}
	return &inode{ino: ino, core: *core, raw: raw}, nil
}

// rlock takes ino's lock shared for a read spanning several blocks and
// returns the function that drops it.
func (v *mount) rlock(ino format.Ino) func() {
	h := v.icache.hold(ino)
	h.lock.RLock()
	return func() {
		h.lock.RUnlock()
		v.icache.release(h)
	}
}

// newInodeAttrs are the caller's choices for a new inode.
type newInodeAttrs struct {
	Mode     uint16 // type and permission bits
	UID, GID uint32
	ProjID   uint32 // 0: the parent's, if it passes it on
	Nlink    uint32
	Now      time.Time
}

// initInodeCore turns a free inode's core into a new in-use inode, taking
// the project ID (and, for directories, the inherit flag) from the parent
// like the kernel does for a parent with PROJINHERIT.
func (v *mount) initInodeCore(d *format.Dinode, a newInodeAttrs, parent *format.Dinode) {
	gen := d.Gen
	*d = *ialloc.FreeInodeCore(&v.geo, d.Ino)
	d.Gen = gen + 1
	d.Mode, d.UID, d.GID, d.Nlink = a.Mode, a.UID, a.GID, a.Nlink
	ts := format.TimestampOf(a.Now)
	d.Atime, d.Mtime, d.Ctime, d.Crtime = ts, ts, ts, ts
	d.ChangeCount = 1
	projid, inherit := a.ProjID, a.ProjID != 0
	if projid == 0 && parent != nil && parent.Flags&format.DiflagProjInherit != 0 {
		projid, inherit = parent.ProjID(), true
	}
	d.SetProjID(projid)
	if inherit && a.Mode&format.SIFMT == format.SIFDIR {
		d.Flags |= format.DiflagProjInherit
	}
	switch a.Mode & format.SIFMT {
	case format.SIFDIR, format.SIFLNK:
		d.Format = format.FmtLocal
	default:
		d.Format = format.FmtExtents
	}
	d.AFormat = format.FmtExtents
}

// allocInode takes a free inode near parent (see ialloc.Tx.Alloc) and
// returns its free version to initialise.
func (t *txn) allocInode(parent format.Ino, isDir bool) (*inode, error) {
	ino, err := t.ialloc.Alloc(parent, isDir)
	if err != nil {
		return nil, err
	}
	return t.freeInode(ino)
}

// freeInode returns the bytes of a free inode (from this transaction's new
// chunk, or as committed) as a version to initialise. It does not lock the
// inode's block: blocks of inodes are locked only while a commit copies
// inodes into them, in address order, so they never take part in a
// deadlock with the AG headers.
func (t *txn) freeInode(ino format.Ino) (*inode, error) {
	g := &t.v.geo
	ag, agino := g.InoToAg(ino)
	bno, slot := g.AgInoToAgBlock(agino)
	d := g.AgbToDaddr(ag, bno)
	raw := make([]byte, g.InodeSize)
	if b, held := t.Held(d); held {
		copy(raw, b[slot*g.InodeSize:])
	} else if err := t.v.cache.ReadCopy(d, g.BlockSize, ialloc.BufOps, slot*g.InodeSize, raw); err != nil {
		return nil, err
	}
	core, err := format.VerifyInode(g, ino, raw)
	if err != nil {
		return nil, format.Located(err, fmt.Sprintf("inode %d", ino))
	}
	if core.Mode != 0 {
		return nil, format.Corrupt("inode", fmt.Sprintf("inode %d", ino), "the inode btree says free, the inode is in use")
	}
	return &inode{ino: ino, core: *core, raw: raw}, nil
}

// lockInode takes ino's lock exclusively for a change and returns the
// handle and the function that drops it.
func (v *mount) lockInode(ino format.Ino) (*inodeHandle, func()) {
	h := v.icache.hold(ino)
	h.lock.Lock()
	return h, func() {
		h.lock.Unlock()
		v.icache.release(h)
	}
}

// lockInodesInOrder locks two different inodes of one kind (two files),
// lower inode number first (lock order: see package doc), and returns
// their handles and the function that drops both.
func (v *mount) lockInodesInOrder(a, b format.Ino) (ha, hb *inodeHandle, unlock func()) {
	first, second := a, b
	if second < first {
		first, second = second, first
	}
	h1, unlock1 := v.lockInode(first)
	h2, unlock2 := v.lockInode(second)
	ha, hb = h1, h2
	if first != a {
		ha, hb = h2, h1
	}
	return ha, hb, func() { unlock2(); unlock1() }
}

// lockInodePair takes the locks of two different inodes, which no lock
// order ranks against each other (two directories, either of which may be
// the other's ancestor), and returns their handles and the function that
// drops both. It never waits for one lock while holding the other: it
// waits for one, tries the other, and on failure lets go and waits for
// the one it missed first. So it joins no cycle of waiters, whatever order
// others take these locks in.
func (v *mount) lockInodePair(a, b format.Ino) (ha, hb *inodeHandle, unlock func()) {
	ha, hb = v.icache.hold(a), v.icache.hold(b)
	first, second := ha, hb
	for {
		first.lock.Lock()
		if second.lock.TryLock() {
			break
		}
		first.lock.Unlock()
		first, second = second, first
	}
	return ha, hb, func() {
		hb.lock.Unlock()
		ha.lock.Unlock()
		v.icache.release(hb)
		v.icache.release(ha)
	}
}

// lockInodeSet takes the locks of several inodes of one kind (the
// directories of Namespace.Apply) exclusively, as lockInodePair takes
// two: it never waits for one while holding another, so the set needs no
// order of its own. inos must not repeat.
func (v *mount) lockInodeSet(inos []format.Ino) (map[format.Ino]*inodeHandle, func()) {
	hs := make([]*inodeHandle, len(inos))
	for i, ino := range inos {
		hs[i] = v.icache.hold(ino)
	}
	for first := 0; ; {
		hs[first].lock.Lock()
		failed := -1
		for i, h := range hs {
			if i != first && !h.lock.TryLock() {
				failed = i
				break
			}
		}
		if failed < 0 {
			break
		}
		for i := range failed {
			if i != first {
				hs[i].lock.Unlock()
			}
		}
		hs[first].lock.Unlock()
		first = failed // wait for the one that was busy
	}
	handles := make(map[format.Ino]*inodeHandle, len(inos))
	for i, ino := range inos {
		handles[ino] = hs[i]
	}
	return handles, func() {
		for _, h := range hs {
			h.lock.Unlock()
			v.icache.release(h)
		}
	}
}
