package store

import (
	"errors"
	"sort"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// DefaultMaxKeys is the page size when ListOptions.MaxKeys is 0 or less.
const DefaultMaxKeys = 1000

// ListOptions selects a page of a listing.
type ListOptions struct {
	Prefix    string // only keys starting with Prefix
	Delimiter string // group keys by the part up to Delimiter after Prefix
	// StartAfter (S3's marker, start-after or decoded continuation token):
	// only keys, and common prefixes, that sort after it.
	StartAfter string
	MaxKeys    int // objects plus common prefixes per page
}

// ListResult is one page of a listing.
type ListResult struct {
	Objects        []ObjectInfo // without Meta
	CommonPrefixes []string
	// IsTruncated tells that more entries follow; pass NextMarker as the
	// next StartAfter to get them.
	IsTruncated bool
	NextMarker  string // the last key or common prefix of this page
}

// entry is one name of a directory with the key it sorts as.
type entry struct {
	sortKey string // the decoded component, plus "/" for directories
	name    string
	ino     format.Ino
	dir     bool
	// versions: a key's directory in the versions tree (a directory
	// named as an object beside a directory).
	versions bool
	// held: a file named so, which in a versions tree is a key's
	// versions in file form.
	held bool
}

// lister walks a bucket depth-first in key order.
type lister struct {
	s      *store
	bucket string // for noting a sick directory's place; "" in a versions tree
	opt    ListOptions
	res    ListResult
	count  int
	skip   string // a common prefix already emitted: its keys are dropped
	stop   bool
	maxKey int

	// Objects of one directory that go on the page unless deleted
	// meanwhile, in key order, waiting to be read together (flush), with
	// the directory and the version their entries are of.
	pending []pendingObject
	pendDir format.Ino
	pendAt  xfs.Version
	inos    []format.Ino // flush's scratch
	// sizeHint is how many entries the directory being read has left:
	// the first object sizes the page by it (appendObject).
	sizeHint int

	// versions: the walk is of a versions tree, whose keys are
	// directories of versions; vers holds each listed key's versions.
	versions bool
	vers     [][]ObjectInfo
	// until ("": none) ends the walk before the first key after it.
	until string
}

// pendingObject is a key of the page whose object is not read yet.
type pendingObject struct {
	key string
	e   *entry
}

// listBatch bounds the objects read in one xfs.Namespace.ReadEntryInodes
// call, which holds their directory's lock shared: a change to the
// directory waits for one batch at most.
const listBatch = 16

// ListObjects returns a page of the bucket's keys in byte-wise order, with
// S3's prefix, delimiter and marker semantics (see the package doc for its
// cost). A common prefix is returned only if it sorts after StartAfter.
func (s *Store) ListObjects(bucket string, opt ListOptions) (res ListResult, err error) {
	defer s.noteSick(bucket, opt.Prefix, &err)
	b, err := s.openBucket(bucket)
	if err != nil {
		return ListResult{}, err
	}
	defer b.Close()
	l := &lister{s: s.store, bucket: bucket, opt: opt, maxKey: opt.MaxKeys}
	if l.maxKey <= 0 {
		l.maxKey = DefaultMaxKeys
	}
	if err := l.walk(b.Ino(), ""); err != nil {
		return ListResult{}, err
	}
	return l.res, nil
}

// walk lists the directory ino whose keys start with path ("" or "a/b/").
// It holds one sorted directory per level of recursion. It takes no store
// lock: it holds (xfs.Handle) each directory it enters, opened by name.
// The objects it reports are read by the inode numbers of the entries
// read, while the directory is still at the version they were read at
// (flush); so what changes meanwhile is seen before or after the change,
// and what is gone since the directory was read is skipped.
func (l *lister) walk(ino format.Ino, path string) error {
	// When Prefix names a directory below this one, only that directory
	// can hold matching keys: look it up instead of reading this one.
	if rest, ok := strings.CutPrefix(l.opt.Prefix, path); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if after := l.opt.StartAfter; !strings.HasPrefix(after, path) && after > path {
				return nil
			}
			return l.dir(ino, entry{sortKey: rest[:i+1], name: entryName(rest[:i]), dir: true}, path+rest[:i+1])
		}
	}
	list, at, err := l.s.sorted(ino)
	if err != nil {
		if l.bucket != "" {
			l.s.noteSickDir(l.bucket, path, ino, err)
		}
		return err
	}
	// Entries sorting at or before the marker's component hold no key
	// after it, unless the marker lies inside them: start at the first
	// entry whose subtree can reach past the marker.
	start := 0
	if after := l.opt.StartAfter; strings.HasPrefix(after, path) {
		rest := after[len(path):]
		start = sort.Search(len(list), func(i int) bool {
			k := list[i].sortKey
			return k > rest || (list[i].dir && strings.HasPrefix(rest, k))
		})
	} else if after > path {
		return nil
	}
	l.sizeHint = len(list) - start
	for i := start; i < len(list) && !l.stop; i++ {
		e := &list[i]
		full := path + e.sortKey
		if !strings.HasPrefix(full, l.opt.Prefix) && !strings.HasPrefix(l.opt.Prefix, full) {
			if full > l.opt.Prefix {
				break // later entries sort even further away
			}
			continue
		}
		if l.skip != "" && strings.HasPrefix(full, l.skip) {
			continue
		}
		if e.dir {
			// The page stays in key order: what sorts before the
			// directory goes on it first.
			if err := l.flush(); err != nil {
				return err
			}
			if err := l.dir(ino, *e, full); err != nil {
				return err
			}
		} else if l.versions {
			if !e.versions && !e.held {
				continue // no key's versions
			}
			if err := l.keyVersions(full, ino, e); err != nil {
				return err
			}
		} else if e.versions {
			continue // files in a bucket
		} else if err := l.object(full, ino, at, e); err != nil {
			return err
		}
	}
	return l.flush()
}

// dir visits the directory entry e of parent whose keys start with full:
// its contents, after its folder marker if that is kept the old way (an
// attribute of the directory that no marker file replaced). A directory
// gone since parent was read is skipped.
func (l *lister) dir(parent format.Ino, e entry, full string) error {
	h, st, err := l.s.openEntry(parent, e.name)
	if err != nil || h == nil {
		return err
	}
	defer h.Close()
	if !st.IsDir() {
		return nil
	}
	ino := h.Ino()
	if _, err := l.s.v.Xattrs().Get(ino, xattrFolder); err == nil {
		marker, _, err := l.s.openLeaf(keyPath{folder: true}, ino)
		if err != nil {
			return err
		}
		if marker != nil {
			marker.Close() // a marker file replaces the attribute
		} else if err := l.folder(full, ino); err != nil {
			return err
		}
	} else if !errors.Is(err, xfs.ErrNoData) {
		return err
	}
	if l.stop || (l.skip != "" && strings.HasPrefix(full, l.skip)) {
		return nil
	}
	return l.walk(ino, full)
}

// paged tells whether key goes on the page as an object: it is inside
// the listing and not rolled into a common prefix (which it adds when it
// is the first key of one).
func (l *lister) paged(key string) (bool, error) {
	o := &l.opt
	if !strings.HasPrefix(key, o.Prefix) || key <= o.StartAfter {
		return false, nil
	}
	if l.until != "" && key > l.until {
		l.stop = true
		return false, nil
	}
	if l.skip != "" && strings.HasPrefix(key, l.skip) {
		return false, nil
	}
	if o.Delimiter != "" {
		if i := strings.Index(key[len(o.Prefix):], o.Delimiter); i >= 0 {
			cp := key[:len(o.Prefix)+i+len(o.Delimiter)]
			l.skip = cp
			if cp <= o.StartAfter {
				return false, nil
			}
			// The objects before it go on the page first.
			if err := l.flush(); err != nil || l.full() {
				return false, err
			}
			l.res.CommonPrefixes = append(l.res.CommonPrefixes, cp)
			l.res.NextMarker = cp
			l.count++
			return false, nil
		}
	}
	return true, nil
}

// object considers the object of entry e of directory dir, read at
// version at, whose key is key: it waits in pending to be read with
// others. Pending objects count towards the page until they are read
// (one may have been deleted meanwhile), so a page that would be full
// with them is read before the next one is taken.
func (l *lister) object(key string, dir format.Ino, at xfs.Version, e *entry) error {
	if ok, err := l.paged(key); !ok || err != nil {
		return err
	}
	if l.count+len(l.pending) >= l.maxKey {
		if err := l.flush(); err != nil {
			return err
		}
	}
	if l.full() {
		return nil
	}
	l.pending = append(l.pending, pendingObject{key: key, e: e})
	l.pendDir, l.pendAt = dir, at
	if len(l.pending) >= listBatch {
		return l.flush()
	}
	return nil
}

// flush puts the pending objects that still exist on the page, in order.
// While their directory is at the version their entries were read at,
// each is read by its inode number, in one engine call, under the
// directory's lock shared (no lookup: the same entries are there, and
// each inode is linked by its name). A directory changed since is
// looked into again, object by object, by component, as GET finds an
// object: an object may have moved between its two names.
func (l *lister) flush() error {
	batch := l.pending
	if len(batch) == 0 {
		return nil
	}
	l.pending = l.pending[:0]
	l.inos = l.inos[:0]
	for _, p := range batch {
		l.inos = append(l.inos, p.e.ino)
	}
	before := len(l.res.Objects)
	var info *ObjectInfo
	pick := func(ns string, name, value []byte) error {
		if ns == "user" {
			switch string(name) {
			case listedETag:
				info.ETag = string(value)
			case listedStorageClass:
				info.Meta.StorageClass = string(value)
			case listedVersion:
				if v, ok := parseVersionName(string(value)); ok {
					info.VersionID = v.ID()
				}
			}
		}
		return nil
	}
	current, err := l.s.v.Names().ReadEntryInodes(l.pendDir, l.pendAt, l.inos, func(i int, e *xfs.EntryInode) error {
		st := e.Stat()
		if !isFile(&st) {
			return nil // not an object (made by other tools)
		}
		info = l.appendObject(ObjectInfo{Key: batch[i].key, Size: st.Size, LastModified: st.Mtime})
		return e.Xattrs(pick)
	})
	if err != nil {
		return err
	}
	if !current {
		for _, p := range batch {
			if err := l.lookUp(p.key, l.pendDir, p.e.sortKey); err != nil {
				return err
			}
		}
		return nil // lookUp added them
	}
	if n := len(l.res.Objects); n > before {
		l.res.NextMarker = l.res.Objects[n-1].Key
		l.count += n - before
	}
	return nil
}

// The attributes a listing reports, by their names in the user namespace.
var (
	listedETag         = strings.TrimPrefix(xattrETag, "user.")
	listedStorageClass = strings.TrimPrefix(xattrStorageClass, "user.")
	listedVersion      = strings.TrimPrefix(xattrVersion, "user.")
	listedDeleteMarker = strings.TrimPrefix(xattrDeleteMarker, "user.")
)

// lookUp puts on the page the object of component c in dir, found by name
// (either of its names), unless it is gone.
func (l *lister) lookUp(key string, dir format.Ino, c string) error {
	h, st, err := l.s.openLeaf(keyPath{leaf: c}, dir)
	if err != nil || h == nil {
		return err // deleted since the directory was read
	}
	defer h.Close()
	return l.add(key, h.Ino(), &st)
}

// folder considers the folder marker kept as an attribute of dir (held by
// the caller), whose key is key.
func (l *lister) folder(key string, dir format.Ino) error {
	if ok, err := l.paged(key); !ok || err != nil || l.full() {
		return err
	}
	return l.add(key, dir, nil)
}

// add puts on the page the object of inode ino (held by the caller): the
// file st describes, or with st nil the folder marker kept as an
// attribute of the directory ino.
func (l *lister) add(key string, ino format.Ino, st *xfs.Stat) error {
	meta, etag, ftime, _, err := readMeta(l.s.v, ino)
	if err != nil {
		return err
	}
	info := ObjectInfo{Key: key, LastModified: ftime, ETag: etag, Meta: Meta{StorageClass: meta.StorageClass}}
	if st != nil {
		info.Size, info.LastModified = st.Size, st.Mtime
	}
	l.appendObject(info)
	l.res.NextMarker = key
	l.count++
	return nil
}

// appendObject adds info to the page and returns where it is. The first
// one sizes the page for the objects the walk can add from the directory
// it is in, up to MaxKeys: ObjectInfo is large, and growing the page by
// doubling took a fifth of a listing's time.
func (l *lister) appendObject(info ObjectInfo) *ObjectInfo {
	if l.res.Objects == nil {
		l.res.Objects = make([]ObjectInfo, 0, max(1, min(l.maxKey-l.count, l.sizeHint)))
	}
	l.res.Objects = append(l.res.Objects, info)
	return &l.res.Objects[len(l.res.Objects)-1]
}

// full reports a complete page; reaching one more entry marks truncation
// and stops the walk.
func (l *lister) full() bool {
	if l.count < l.maxKey {
		return false
	}
	l.res.IsTruncated = true
	l.stop = true
	return true
}
