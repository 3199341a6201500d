package store

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// VersionListOptions selects a page of a version listing.
type VersionListOptions struct {
	Prefix    string // only keys starting with Prefix
	Delimiter string // group keys by the part up to Delimiter after Prefix
	// KeyMarker: only keys after it, or with VersionIDMarker, the
	// versions of KeyMarker older than that version and then the keys
	// after it.
	KeyMarker       string
	VersionIDMarker string
	MaxKeys         int // versions, delete markers and common prefixes per page
}

// VersionListResult is one page of a version listing.
type VersionListResult struct {
	// Versions are in key order, each key's newest first, with
	// VersionID, IsLatest and DeleteMarker set; Meta holds only the
	// storage class.
	Versions       []ObjectInfo
	CommonPrefixes []string
	// IsTruncated tells that more follow: pass NextKeyMarker and
	// NextVersionIDMarker as the next markers.
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIDMarker string
}

// listVersions lists the versions of a bucket's keys. It walks the
// bucket (current versions) and its versions tree (the others) side by
// side, in key order, each walk a listing of the same prefix and
// delimiter, so that its cost is that of the two listings plus one read
// of each listed version.
func (s *store) listVersions(bucket string, opt VersionListOptions) (VersionListResult, error) {
	if opt.VersionIDMarker != "" {
		if opt.KeyMarker == "" {
			return VersionListResult{}, fmt.Errorf("a version-id marker without a key marker: %w", ErrInvalidVersion)
		}
		if err := checkVersionID(opt.VersionIDMarker); err != nil {
			return VersionListResult{}, err
		}
	}
	b, err := s.openBucket(bucket)
	if err != nil {
		return VersionListResult{}, err
	}
	defer b.Close()
	vl := &versionPage{max: opt.MaxKeys}
	if vl.max <= 0 {
		vl.max = DefaultMaxKeys
	}
	if opt.VersionIDMarker != "" && strings.HasPrefix(opt.KeyMarker, opt.Prefix) {
		vers, err := s.keyVersions(b.Ino(), opt.KeyMarker)
		if err != nil {
			return VersionListResult{}, err
		}
		vl.key(afterVersion(vers, opt.VersionIDMarker))
	}
	cursor := opt.KeyMarker
	for !vl.res.IsTruncated {
		lo := ListOptions{Prefix: opt.Prefix, Delimiter: opt.Delimiter, StartAfter: cursor, MaxKeys: vl.max - len(vl.res.Versions) - len(vl.res.CommonPrefixes) + 1}
		// The versions tree first: its page counts versions, and the
		// bucket's walk need not go past where it stopped.
		old, err := s.listVersionsTree(b.Ino(), lo)
		if err != nil {
			return VersionListResult{}, err
		}
		until := ""
		if old.IsTruncated {
			until = old.NextMarker
		}
		cur, err := s.listTree(b.Ino(), false, lo, until)
		if err != nil {
			return VersionListResult{}, err
		}
		items := mergeListings(cur, old)
		if len(items) == 0 {
			break
		}
		for _, it := range items {
			if it.prefix {
				vl.prefix(it.key)
			} else {
				vl.key(it.versions())
			}
			if vl.res.IsTruncated {
				break
			}
			cursor = it.key
		}
		if !cur.IsTruncated && !old.IsTruncated {
			break
		}
	}
	if !vl.res.IsTruncated {
		vl.res.NextKeyMarker, vl.res.NextVersionIDMarker = "", ""
	}
	return vl.res, nil
}

// versionPage gathers a page of versions up to max entries.
type versionPage struct {
	max int
	res VersionListResult
}

// room tells whether one more entry fits, marking the page truncated
// when it does not.
func (p *versionPage) room() bool {
	if len(p.res.Versions)+len(p.res.CommonPrefixes) < p.max {
		return true
	}
	p.res.IsTruncated = true
	return false
}

func (p *versionPage) key(vers []ObjectInfo) {
	for _, v := range vers {
		if !p.room() {
			return
		}
		p.res.Versions = append(p.res.Versions, v)
		p.res.NextKeyMarker, p.res.NextVersionIDMarker = v.Key, v.VersionID
	}
}

func (p *versionPage) prefix(cp string) {
	if p.room() {
		p.res.CommonPrefixes = append(p.res.CommonPrefixes, cp)
		p.res.NextKeyMarker, p.res.NextVersionIDMarker = cp, ""
	}
}

// afterVersion returns the versions of vers (newest first) older than
// the version id: after it, or when it is gone, those of an older
// sequence.
func afterVersion(vers []ObjectInfo, id string) []ObjectInfo {
	if i := slices.IndexFunc(vers, func(v ObjectInfo) bool { return v.VersionID == id }); i >= 0 {
		return vers[i+1:]
	}
	if id == NullVersion {
		return nil
	}
	return slices.DeleteFunc(vers, func(v ObjectInfo) bool { return v.VersionID == NullVersion || v.VersionID >= id })
}

// listedItem is a key or common prefix of a version listing, with what
// each walk found of it.
type listedItem struct {
	key    string
	prefix bool
	cur    *ObjectInfo  // the current version (bucket walk)
	old    []ObjectInfo // the others (versions tree walk), newest first
}

// versions are the item's versions, newest first, the latest marked.
func (it *listedItem) versions() []ObjectInfo {
	out := make([]ObjectInfo, 0, len(it.old)+1)
	if it.cur != nil {
		c := *it.cur
		if c.VersionID == "" {
			c.VersionID = NullVersion
		}
		c.IsLatest = true
		out = append(out, c)
	}
	for _, v := range it.old {
		// A version that moved between the two walks is listed once.
		if it.cur != nil && v.VersionID == out[0].VersionID {
			continue
		}
		v.IsLatest = len(out) == 0
		out = append(out, v)
	}
	return out
}

// mergeListings merges a page of the bucket walk and one of the versions
// tree walk in key order, up to where both are complete: a walk cut
// short says nothing of keys after its last.
func mergeListings(cur, old treePage) []listedItem {
	byKey := map[string]*listedItem{}
	var items []*listedItem
	item := func(key string, prefix bool) *listedItem {
		if it, ok := byKey[key]; ok {
			return it
		}
		it := &listedItem{key: key, prefix: prefix}
		byKey[key] = it
		items = append(items, it)
		return it
	}
	for i := range cur.Objects {
		item(cur.Objects[i].Key, false).cur = &cur.Objects[i]
	}
	for i, o := range old.Objects {
		item(o.Key, false).old = old.vers[i]
	}
	for _, p := range append(slices.Clip(cur.CommonPrefixes), old.CommonPrefixes...) {
		item(p, true)
	}
	slices.SortFunc(items, func(a, b *listedItem) int { return cmp.Compare(a.key, b.key) })
	out := make([]listedItem, 0, len(items))
	for _, it := range items {
		if (cur.IsTruncated && it.key > cur.NextMarker) || (old.IsTruncated && it.key > old.NextMarker) {
			break
		}
		out = append(out, *it)
	}
	return out
}

// treePage is a page of a walk, with the versions of each key of a
// versions tree walk (parallel to Objects).
type treePage struct {
	ListResult
	vers [][]ObjectInfo
}

// listTree walks the tree at root: a bucket, or with versions a versions
// tree, whose page counts versions. until ("": none) ends the walk at the
// keys after it.
func (s *store) listTree(root format.Ino, versions bool, opt ListOptions, until string) (treePage, error) {
	l := &lister{s: s, opt: opt, maxKey: opt.MaxKeys, versions: versions, until: until}
	if err := l.walk(root, ""); err != nil {
		return treePage{}, err
	}
	return treePage{l.res, l.vers}, nil
}

// listVersionsTree walks the versions tree of the bucket, if it has one.
func (s *store) listVersionsTree(bucket format.Ino, opt ListOptions) (treePage, error) {
	h, st, err := s.openEntry(bucket, versionsDir)
	if err != nil || h == nil {
		return treePage{}, err
	}
	defer h.Close()
	if !st.IsDir() {
		return treePage{}, nil
	}
	return s.listTree(h.Ino(), true, opt, "")
}

// keyVersions puts on the page the versions of key, whose versions
// directory, or file in file form, is entry e of dir.
func (l *lister) keyVersions(key string, dir format.Ino, e *entry) error {
	if ok, err := l.paged(key); !ok || err != nil || l.full() {
		return err
	}
	h, st, err := l.s.openEntry(dir, e.name)
	if err != nil || h == nil {
		return err
	}
	defer h.Close()
	var vers []ObjectInfo
	switch {
	case st.IsDir():
		vers, err = l.s.versionInfos(key, h.Ino())
	case isFile(&st):
		vers, err = l.s.heldInfos(key, h.Ino(), &st)
	}
	if err != nil || len(vers) == 0 {
		return err
	}
	l.res.Objects = append(l.res.Objects, ObjectInfo{Key: key})
	l.vers = append(l.vers, vers)
	l.res.NextMarker = key
	l.count += len(vers)
	return nil
}

// heldInfos reads key's versions in file form, the file ino: the
// delete marker and the version it hides.
func (s *store) heldInfos(key string, ino format.Ino, st *xfs.Stat) ([]ObjectInfo, error) {
	v, marker, since, err := s.heldVersions(ino, st)
	if err != nil {
		return nil, err
	}
	info, err := s.storedInfo(key, ino, st)
	if err != nil {
		return nil, err
	}
	info.VersionID = v.ID()
	return []ObjectInfo{{Key: key, LastModified: since, VersionID: marker.ID(), DeleteMarker: true}, info}, nil
}

// versionInfos reads the versions in the versions directory vdir of
// key, newest first: their inodes by the numbers the directory's entries
// gave, in batches of listBatch while the directory is unchanged (as a
// listing reads objects), else each by name.
func (s *store) versionInfos(key string, vdir format.Ino) ([]ObjectInfo, error) {
	ents, at, err := s.v.Names().ReadDirVersion(vdir)
	if err != nil {
		return nil, err
	}
	type named struct {
		storedVersion
		ino format.Ino
	}
	vers := make([]named, 0, len(ents))
	for _, e := range ents {
		if v, ok := parseVersionName(e.Name); ok && e.Type == format.FTReg {
			vers = append(vers, named{storedVersion{v, e.Name}, e.Ino})
		}
	}
	slices.SortFunc(vers, func(a, b named) int { return strings.Compare(b.seq, a.seq) })
	out := make([]ObjectInfo, 0, len(vers))
	inos := make([]format.Ino, 0, listBatch)
	var info *ObjectInfo // the version being read, for pick
	pick := func(ns string, name, value []byte) error {
		if ns == "user" {
			info.pickListed(name, value)
		}
		return nil
	}
	for len(vers) > 0 {
		batch := vers[:min(listBatch, len(vers))]
		inos = inos[:0]
		for _, v := range batch {
			inos = append(inos, v.ino)
		}
		current, err := s.v.Names().ReadEntryInodes(vdir, at, inos, func(i int, e *xfs.EntryInode) error {
			st := e.Stat()
			out = append(out, ObjectInfo{Key: key, LastModified: st.Mtime, Size: st.Size, VersionID: batch[i].ID()})
			info = &out[len(out)-1]
			err := e.Xattrs(pick)
			if info.DeleteMarker {
				info.Size = 0
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if !current {
			break // changed since it was read: the rest by name
		}
		vers = vers[len(batch):]
	}
	for _, v := range vers {
		h, st, err := s.openEntry(vdir, v.name)
		if err != nil {
			return nil, err
		}
		if h == nil {
			continue // removed since the directory was read
		}
		info, err := s.storedInfo(key, h.Ino(), &st)
		h.Close()
		if err != nil {
			return nil, err
		}
		info.VersionID = v.ID()
		out = append(out, info)
	}
	return out, nil
}

// pickListed takes a user-namespace attribute a version listing shows.
func (info *ObjectInfo) pickListed(name, value []byte) {
	switch string(name) {
	case listedETag:
		info.ETag = string(value)
	case listedStorageClass:
		info.Meta.StorageClass = string(value)
	case listedDeleteMarker:
		info.DeleteMarker = true
	}
}

// storedInfo reads what a version listing shows of the version file ino.
func (s *store) storedInfo(key string, ino format.Ino, st *xfs.Stat) (ObjectInfo, error) {
	info := ObjectInfo{Key: key, LastModified: st.Mtime, Size: st.Size}
	list, err := s.v.Xattrs().List(ino)
	if err != nil {
		return ObjectInfo{}, err
	}
	for _, x := range list {
		if x.Namespace == "user" {
			info.pickListed([]byte(x.Name), x.Value)
		}
	}
	if info.DeleteMarker {
		info.Size = 0
	}
	return info, nil
}

// keyVersions returns every version of key, newest first, the latest
// marked, as a version listing shows them.
func (s *store) keyVersions(bucket format.Ino, key string) ([]ObjectInfo, error) {
	kp, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	defer s.rlockKey(bucket, key)()
	it := listedItem{key: key}
	b, err := s.v.Files().Open(bucket)
	if err != nil {
		return nil, err
	}
	path, err := s.resolveDirs(b, kp, false)
	defer path.close()
	if err == nil {
		h, st, err := s.openLeaf(kp, path.last())
		if err != nil {
			return nil, err
		}
		if h != nil {
			info, err := s.fileInfo(key, h, &st, VersioningEnabled)
			h.Close()
			if err != nil {
				return nil, err
			}
			info.Meta = Meta{StorageClass: info.Meta.StorageClass}
			it.cur = &info
		}
	}
	vp, err := s.openVersions(bucket, kp, versionsFind)
	defer vp.close()
	if err != nil {
		return nil, err
	}
	switch {
	case vp.leaf != nil:
		it.old, err = s.versionInfos(key, vp.ino())
	case vp.held != nil:
		it.old, err = s.heldInfos(key, vp.held.Ino(), &vp.heldSt)
	}
	if err != nil {
		return nil, err
	}
	return it.versions(), nil
}
