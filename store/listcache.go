package store

import (
	"container/list"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Listing a large directory means reading all of it and sorting it, since
// XFS keeps entries in hash order. Paging through a bucket of a million
// flat keys would repeat that for every page of 1000, so sorted directories
// are kept in a small cache, valid while the directory is unchanged: the
// inode's change count, generation and creation time all match.
const (
	// cacheMinEntries: smaller directories are cheaper to sort again.
	cacheMinEntries = 512
	// cacheMaxEntries bounds the entries held over all directories
	// (about 100 bytes each with their names).
	cacheMaxEntries = 1 << 20
)

// dirVersion identifies one state of a directory inode.
type dirVersion struct {
	xfs.Version // generation and change count
	crtime      time.Time
}

func versionOf(st *xfs.Stat) dirVersion {
	return dirVersion{st.Version(), st.Crtime}
}

// sortedDir is a directory's files and subdirectories in key order. It is
// shared by concurrent listings and never modified.
type sortedDir struct {
	ino     format.Ino
	version dirVersion
	entries []entry
}

// dirCache holds sorted directories, least recently used evicted first.
type dirCache struct {
	mu      sync.Mutex
	byIno   map[format.Ino]*list.Element // of *sortedDir
	lru     list.List                    // front: most recent
	entries int
}

func newDirCache() *dirCache {
	return &dirCache{byIno: map[format.Ino]*list.Element{}}
}

// sorted returns the entries of directory ino in key order, from the cache
// when it holds the directory's current version, and the version of the
// directory they are of (for xfs.Namespace.ReadEntryInodes).
func (s *store) sorted(ino format.Ino) ([]entry, xfs.Version, error) {
	st, err := s.v.Stat(ino)
	if err != nil {
		return nil, xfs.Version{}, err
	}
	v := versionOf(&st)
	if d := s.dirs.get(ino, v); d != nil {
		return d.entries, v.Version, nil
	}
	ents, read, err := s.v.Names().ReadDirVersion(ino)
	if err != nil {
		return nil, xfs.Version{}, err
	}
	out := make([]entry, 0, len(ents))
	for _, e := range ents {
		if e.Type != format.FTDir && e.Type != format.FTReg {
			continue // only files and directories map to keys
		}
		c, beside, ok := decodeName(e.Name, func() (string, bool) {
			v, err := s.v.Xattrs().Get(e.Ino, xattrName)
			return string(v), err == nil
		})
		if !ok {
			continue // not of the documented forms: no key
		}
		ent := entry{sortKey: c, name: e.Name, ino: e.Ino}
		switch {
		case e.Type == format.FTDir && beside:
			ent.versions = true // a key's versions directory
		case beside:
			ent.held = true // an object beside a directory, or in a versions tree a key's versions in file form
		case e.Type == format.FTDir:
			ent.dir = true
			ent.sortKey += "/"
		}
		out = append(out, ent)
	}
	// One object per key: where a crash left an object under both of its
	// names, findLeaf takes the entry name, and so does the listing.
	slices.SortFunc(out, func(a, b entry) int {
		if c := strings.Compare(a.sortKey, b.sortKey); c != 0 {
			return c
		}
		return besideRank(a) - besideRank(b)
	})
	out = slices.CompactFunc(out, func(a, b entry) bool { return a.sortKey == b.sortKey })
	// The directory may have changed since the Stat, or while the names
	// of hashed entries were read from their inodes: cache it only if it
	// was read at the version of the Stat and is still there.
	if len(out) >= cacheMinEntries && read == v.Version {
		if again, err := s.v.Stat(ino); err == nil && versionOf(&again) == v {
			s.dirs.put(&sortedDir{ino: ino, version: v, entries: out})
		}
	}
	return out, read, nil
}

func (c *dirCache) get(ino format.Ino, v dirVersion) *sortedDir {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byIno[ino]
	if !ok {
		return nil
	}
	d := el.Value.(*sortedDir)
	if d.version != v {
		c.remove(el)
		return nil
	}
	c.lru.MoveToFront(el)
	return d
}

func (c *dirCache) put(d *sortedDir) {
	if len(d.entries) > cacheMaxEntries {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byIno[d.ino]; ok {
		c.remove(el)
	}
	for c.entries+len(d.entries) > cacheMaxEntries {
		c.remove(c.lru.Back())
	}
	c.byIno[d.ino] = c.lru.PushFront(d)
	c.entries += len(d.entries)
}

func (c *dirCache) remove(el *list.Element) {
	d := c.lru.Remove(el).(*sortedDir)
	delete(c.byIno, d.ino)
	c.entries -= len(d.entries)
}

// besideRank orders an object's entry name before its name beside a
// directory.
func besideRank(e entry) int {
	if e.name == entryName(e.sortKey) {
		return 0
	}
	return 1
}
