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
}

// lister walks a bucket depth-first in key order.
type lister struct {
	s      *Store
	opt    ListOptions
	res    ListResult
	count  int
	skip   string // a common prefix already emitted: its keys are dropped
	stop   bool
	maxKey int
}

// ListObjects returns a page of the bucket's keys in byte-wise order, with
// S3's prefix, delimiter and marker semantics (see the package doc for its
// cost). A common prefix is returned only if it sorts after StartAfter.
func (s *Store) ListObjects(bucket string, opt ListOptions) (ListResult, error) {
	b, err := s.openBucket(bucket)
	if err != nil {
		return ListResult{}, err
	}
	defer b.Close()
	l := &lister{s: s, opt: opt, maxKey: opt.MaxKeys}
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
// lock: it holds (xfs.Handle) each directory it enters, opened by name,
// and each object it reports, found by its component as GET finds it, so
// what changes meanwhile is seen before or after the change, and what is
// gone since the directory was read is skipped.
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
	list, err := l.s.sorted(ino)
	if err != nil {
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
	for _, e := range list[start:] {
		full := path + e.sortKey
		if !strings.HasPrefix(full, l.opt.Prefix) && !strings.HasPrefix(l.opt.Prefix, full) {
			if full > l.opt.Prefix {
				return nil // later entries sort even further away
			}
			continue
		}
		if l.skip != "" && strings.HasPrefix(full, l.skip) {
			continue
		}
		if e.dir {
			if err := l.dir(ino, e, full); err != nil {
				return err
			}
		} else if err := l.key(full, ino, e.sortKey, false); err != nil {
			return err
		}
		if l.stop {
			return nil
		}
	}
	return nil
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
	if _, err := l.s.v.GetXattr(ino, xattrFolder); err == nil {
		marker, _, err := l.s.openLeaf(keyPath{folder: true}, ino)
		if err != nil {
			return err
		}
		if marker != nil {
			marker.Close() // a marker file replaces the attribute
		} else if err := l.key(full, ino, "", true); err != nil {
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

// key considers one key in order: the object of component c in dir, or
// with folder the marker kept as an attribute of dir (held by the
// caller).
func (l *lister) key(key string, dir format.Ino, c string, folder bool) error {
	o := &l.opt
	if !strings.HasPrefix(key, o.Prefix) || key <= o.StartAfter {
		return nil
	}
	if l.skip != "" && strings.HasPrefix(key, l.skip) {
		return nil
	}
	if o.Delimiter != "" {
		if i := strings.Index(key[len(o.Prefix):], o.Delimiter); i >= 0 {
			cp := key[:len(o.Prefix)+i+len(o.Delimiter)]
			l.skip = cp
			if cp <= o.StartAfter {
				return nil
			}
			if l.full() {
				return nil
			}
			l.res.CommonPrefixes = append(l.res.CommonPrefixes, cp)
			l.res.NextMarker = cp
			l.count++
			return nil
		}
	}
	if l.full() {
		return nil
	}
	info := ObjectInfo{Key: key}
	ino := dir
	var st xfs.Stat
	if !folder {
		// By component, not by the name read: the object may have moved
		// between its two names (promote, prune) since.
		h, hst, err := l.s.openLeaf(keyPath{leaf: c}, dir)
		if err != nil || h == nil {
			return err // deleted since the directory was read
		}
		defer h.Close()
		ino, st = h.Ino(), hst
	}
	meta, etag, ftime, _, err := readMeta(l.s.v, ino)
	if err != nil {
		return err
	}
	info.ETag = etag
	info.Meta.StorageClass = meta.StorageClass
	if folder {
		info.LastModified = ftime
	} else {
		info.Size, info.LastModified = st.Size, st.Mtime
	}
	l.res.Objects = append(l.res.Objects, info)
	l.res.NextMarker = key
	l.count++
	return nil
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
