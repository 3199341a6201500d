package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// The versions tree of a bucket (package doc, "Versions"): the
// noncurrent versions and the delete markers of key "a/b" are the files
// of the directory .xfs3.versions/a/.xfs3.o.b, named by their versions.
// Its prefix directories are named as in the bucket (entryName), its
// key directories as objects beside a directory (besideName), so a key
// and a prefix of the same component never share a directory.

// storedVersion is a file of a key's versions directory.
type storedVersion struct {
	version
	name string
}

// versionsPath is a key's place in the versions tree, held: the
// directories down to the key's directory's parent (the versions root
// first) and the key's directory (nil when it does not exist).
type versionsPath struct {
	dirs dirPath
	leaf *xfs.Handle
}

func (p *versionsPath) close() {
	p.dirs.close()
	if p.leaf != nil {
		p.leaf.Close()
	}
}

// ino is the key's versions directory, 0 when there is none.
func (p *versionsPath) ino() format.Ino {
	if p.leaf == nil {
		return 0
	}
	return p.leaf.Ino()
}

// openVersions resolves the versions directory of kp in the bucket whose
// directory is bucket. With create, what is missing is made (each under
// its parent's lock); without, a missing directory leaves the path short
// and leaf nil. The caller closes the path, also on error.
func (s *store) openVersions(bucket format.Ino, kp keyPath, create bool) (versionsPath, error) {
	var p versionsPath
	root, st, err := s.openEntry(bucket, versionsDir)
	if err == nil && root == nil && create {
		if _, err = s.ensureDir(bucket, versionsDir, dirAttrs); err == nil {
			root, st, err = s.openEntry(bucket, versionsDir)
		}
	}
	if err != nil || root == nil {
		return p, retryable(err)
	}
	if !st.IsDir() {
		root.Close()
		return p, fmt.Errorf("%s is not a directory: %w", versionsDir, ErrKeyConflict)
	}
	p.dirs, err = s.resolveDirs(root, kp, create)
	if errors.Is(err, ErrNoSuchKey) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	parent, name := p.dirs.last(), besideName(kp.leaf)
	h, st, err := s.openEntry(parent, name)
	switch {
	case err != nil:
		return p, err
	case h != nil && st.IsDir():
		p.leaf = h
		return p, nil
	case h != nil:
		h.Close()
		return p, fmt.Errorf("versions of %q: %q is not a directory: %w", kp.key, name, ErrKeyConflict)
	case !create:
		return p, nil
	}
	p.leaf, err = s.makeVersionsLeaf(bucket, parent, kp.leaf)
	return p, retryable(err)
}

// makeVersionsLeaf makes the versions directory of component c in
// parent, under parent's lock, and returns it held.
func (s *store) makeVersionsLeaf(bucket, parent format.Ino, c string) (*xfs.Handle, error) {
	defer s.locks.lock(parent)()
	name := besideName(c)
	err := s.makeDirNamed(bucket, parent, name, c)
	if err != nil && !errors.Is(err, xfs.ErrExist) {
		return nil, err
	}
	return s.v.Files().OpenAt(parent, name)
}

// readVersions returns the versions in a key's versions directory,
// newest first. Names of other forms are left out.
func (s *store) readVersions(dir format.Ino) ([]storedVersion, error) {
	if dir == 0 {
		return nil, nil
	}
	ents, err := s.v.Names().ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]storedVersion, 0, len(ents))
	for _, e := range ents {
		if e.Type != format.FTReg {
			continue
		}
		if v, ok := parseVersionName(e.Name); ok {
			out = append(out, storedVersion{version: v, name: e.Name})
		}
	}
	slices.SortFunc(out, func(a, b storedVersion) int { return strings.Compare(b.seq, a.seq) })
	return out, nil
}

// isMarker tells whether the file ino is a delete marker.
func (s *store) isMarker(ino format.Ino) (bool, error) {
	_, err := s.v.Xattrs().Get(ino, xattrDeleteMarker)
	if errors.Is(err, xfs.ErrNoData) {
		return false, nil
	}
	return err == nil, err
}

// markerAt tells whether the name in dir is a delete marker.
func (s *store) markerAt(dir format.Ino, name string) (bool, error) {
	ino, err := s.v.Names().Lookup(dir, name)
	if err != nil {
		return false, err
	}
	return s.isMarker(ino)
}

// current is a key's current version as a change under the key's lock
// and its directory's lock finds it.
type current struct {
	found bool
	name  string // its name in the key's directory (or where it goes)
	st    xfs.Stat
	v     version
	named bool // v is in the file's xattrVersion
}

// findCurrent finds the current version of kp in dir and where a new one
// goes. The caller holds the key's lock and dir's lock.
func (s *store) findCurrent(kp keyPath, dir format.Ino) (current, error) {
	var c current
	var err error
	if c.st, c.name, c.found, err = s.findLeaf(kp, dir); err != nil {
		return c, err
	}
	if !c.found && kp.folder {
		adopted, err := s.adoptFolder(dir)
		if err != nil {
			return c, err
		}
		if adopted {
			if c.st, c.name, c.found, err = s.findLeaf(kp, dir); err != nil {
				return c, err
			}
		}
	}
	if !c.found {
		c.name, err = s.leafName(kp, dir)
		return c, err
	}
	c.v, c.named, err = s.storedVersionOf(c.st.Ino, c.st.Mtime)
	return c, err
}

// adoptFolder turns an empty folder marker kept as dir's attribute (from
// before versioning) into a marker file, the form every version has:
// the file is made with the marker's metadata, as its null version,
// and then the attribute goes. A crash between the two leaves both, and
// the file wins (package doc). The caller holds dir's lock.
func (s *store) adoptFolder(dir format.Ino) (bool, error) {
	list, err := s.v.Xattrs().List(dir)
	if err != nil {
		return false, err
	}
	var attrs []xfs.Xattr
	var since time.Time
	isFolder := false
	for _, x := range list {
		switch full := x.FullName(); {
		case full == xattrFolder:
			isFolder = true
			since, _ = time.Parse(time.RFC3339Nano, string(x.Value))
		case full == xattrName:
		case strings.HasPrefix(full, xattrPrefix) || strings.HasPrefix(full, xattrMetaPrefix):
			attrs = append(attrs, x)
		}
	}
	if !isFolder {
		return false, nil
	}
	st, err := s.v.Stat(dir)
	if err != nil {
		return false, err
	}
	attrs = append(attrs, xattrOf(xattrVersion, version{seq: seqAt(since), null: true}.name()))
	a := fileAttrs
	a.ProjID = st.ProjID
	if _, err := s.v.Names().CreateFile(dir, entryName(""), a, nil, attrs); err != nil {
		return false, err
	}
	return true, clearObjectXattrs(s.v, dir)
}

// asideOp moves the current version into the key's versions directory,
// recording when it stopped being current.
func (c *current) asideOp(dir, vdir format.Ino, now time.Time) xfs.NameOp {
	op := xfs.NameOp{Dir: dir, Name: c.name, ToDir: vdir, ToName: c.v.name(), Attrs: []xfs.Xattr{
		xattrOf(xattrNoncurrent, now.UTC().Format(time.RFC3339Nano)),
	}}
	if !c.named {
		// Written before versioning: its version goes with it.
		op.Attrs = append(op.Attrs, xattrOf(xattrVersion, c.v.name()))
	}
	return op
}

// nullOp removes a noncurrent null version from vers, if there is one:
// a new null version replaces it.
func nullOp(vdir format.Ino, vers []storedVersion) []xfs.NameOp {
	for _, sv := range vers {
		if sv.null {
			return []xfs.NameOp{{Dir: vdir, Name: sv.name}}
		}
	}
	return nil
}

// installVersion is installIn's step for a bucket with versioning (state
// Enabled or Suspended), under the key's lock and dir's lock: the new
// version takes the key's name, and the version it replaces moves to the
// versions tree in the same transaction, unless both are null versions
// (Suspended), when the old one goes. A null version among the
// noncurrent ones goes when a new null version comes.
func (s *store) installVersion(bucket format.Ino, state string, kp keyPath, dir format.Ino, obj placement, cond Precondition) (placed, error) {
	cur, err := s.findCurrent(kp, dir)
	if err == nil {
		err = s.checkCondition(kp, dir, cond)
	}
	if err != nil {
		return placed{}, err
	}
	suspended := state == VersioningSuspended
	keep := cur.found && !(suspended && cur.v.null)
	if _, staged := obj.(*staging); cur.found && !staged {
		return placed{}, errNameTaken // the new version takes the name by a rename
	}
	var vp versionsPath
	defer vp.close()
	// The versions directory is needed to keep the current version, to
	// find a noncurrent null one, or to learn the newest version when
	// there is no current one (a delete marker).
	if keep || suspended || !cur.found {
		if vp, err = s.openVersions(bucket, kp, keep); err != nil {
			return placed{}, err
		}
	}
	var vers []storedVersion
	if suspended || !cur.found {
		if vers, err = s.readVersions(vp.ino()); err != nil {
			return placed{}, err
		}
	}
	floor := cur.v.seq
	if !cur.found && len(vers) > 0 {
		floor = vers[0].seq
	}
	v := version{seq: newSeq(floor), null: suspended}
	attrs := append(slices.Clip(obj.attrs()), xattrOf(xattrVersion, v.name()))
	if hashedName(cur.name) {
		attrs = append(attrs, xattrOf(xattrName, kp.leaf))
	}
	var ops []xfs.NameOp
	if keep {
		ops = append(ops, cur.asideOp(dir, vp.ino(), time.Now()))
	}
	if suspended {
		ops = append(ops, nullOp(vp.ino(), vers)...)
	}
	var ino format.Ino
	if len(ops) == 0 {
		ino, err = obj.install(dir, cur.name, attrs)
	} else {
		ino, err = s.applyWith(ops, obj, dir, cur.name, attrs)
	}
	if err != nil {
		return placed{}, err
	}
	return placed{ino: ino, version: v}, nil
}

// applyWith applies ops and moves the staging file obj to name in dir
// with attrs, in one transaction. A small object without a staging file
// gives errNameTaken, which stages it.
func (s *store) applyWith(ops []xfs.NameOp, obj placement, dir format.Ino, name string, attrs []xfs.Xattr) (format.Ino, error) {
	st, ok := obj.(*staging)
	if !ok {
		return 0, errNameTaken
	}
	ops = append(ops, xfs.NameOp{Dir: st.dir, Name: st.name, ToDir: dir, ToName: name, Attrs: attrs})
	if err := retryable(s.v.Names().Apply(ops)); err != nil {
		return 0, err
	}
	st.moved = true
	return st.ino, nil
}

// DeleteResult tells what a delete did in a bucket with versioning: the
// version it removed, or the delete marker it made (DeleteMarker, with
// the marker's VersionID). Without versioning both are empty.
type DeleteResult struct {
	VersionID    string
	DeleteMarker bool
}

// deleteVersioned is a DELETE without a version ID in a bucket with
// versioning: a delete marker becomes the key's newest version, and the
// current version moves to the versions tree (Enabled) or, when it is
// the null version, goes (Suspended, where the marker is the null
// version). One transaction.
func (s *store) deleteVersioned(b *xfs.Handle, state string, kp keyPath) (DeleteResult, error) {
	bucket := b.Ino()
	defer s.lockKey(bucket, kp.key)()
	path, mainDir, err := s.keyDirs(b, kp)
	defer path.close()
	if err != nil {
		return DeleteResult{}, err
	}
	vp, err := s.openVersions(bucket, kp, true)
	defer vp.close()
	if err != nil {
		return DeleteResult{}, err
	}
	suspended := state == VersioningSuspended
	var res DeleteResult
	var removed bool
	err = s.withCurrent(kp, path, mainDir, func(cur current) error {
		var vers []storedVersion
		if suspended || !cur.found {
			var err error
			if vers, err = s.readVersions(vp.ino()); err != nil {
				return err
			}
		}
		floor := cur.v.seq
		if !cur.found && len(vers) > 0 {
			floor = vers[0].seq
		}
		marker := version{seq: newSeq(floor), null: suspended}
		var ops []xfs.NameOp
		switch {
		case cur.found && suspended && cur.v.null:
			ops = append(ops, xfs.NameOp{Dir: path.last(), Name: cur.name})
		case cur.found:
			ops = append(ops, cur.asideOp(path.last(), vp.ino(), time.Now()))
		}
		if suspended {
			ops = append(ops, nullOp(vp.ino(), vers)...)
		}
		if err := s.addMarker(bucket, ops, vp.ino(), marker, kp); err != nil {
			return err
		}
		res, removed = DeleteResult{VersionID: marker.ID(), DeleteMarker: true}, cur.found
		if kp.folder && mainDir {
			// An empty folder marker from before versioning, kept as the
			// directory's attribute, is the null version the marker hides.
			return clearObjectXattrs(s.v, path.last())
		}
		return nil
	})
	if err == nil && removed {
		err = s.prune(kp, path)
	}
	return res, err
}

// keyDirs resolves the directories of kp (b, the bucket, taken over) for
// a change of its versions; mainDir tells whether they all exist. The
// caller closes path, also on error.
func (s *store) keyDirs(b *xfs.Handle, kp keyPath) (path dirPath, mainDir bool, err error) {
	path, err = s.resolveDirs(b, kp, false)
	if errors.Is(err, ErrNoSuchKey) {
		return path, false, nil
	}
	return path, err == nil, err
}

// withCurrent runs fn with the key's current version, found under the
// lock of the key's directory, held while fn runs. Without that
// directory (mainDir false) there is no current version and no lock.
// The caller holds the key's lock.
func (s *store) withCurrent(kp keyPath, path dirPath, mainDir bool, fn func(cur current) error) error {
	if !mainDir {
		return fn(current{})
	}
	defer s.locks.lock(path.last())()
	cur, err := s.findCurrent(kp, path.last())
	if err != nil {
		return err
	}
	return fn(cur)
}

// addMarker makes a delete marker (an empty file in .xfs3/tmp) and
// applies ops with its move into vdir as version v, in one transaction.
func (s *store) addMarker(bucket format.Ino, ops []xfs.NameOp, vdir format.Ino, v version, kp keyPath) error {
	project, err := s.quotas().project(bucket)
	if err != nil {
		return err
	}
	a := fileAttrs
	a.ProjID = project
	tmp := randomName()
	sd := s.stagingDir(tmp)
	attrs := []xfs.Xattr{xattrOf(xattrDeleteMarker, ""), xattrOf(xattrVersion, v.name())}
	if hashedName(besideName(kp.leaf)) {
		attrs = append(attrs, xattrOf(xattrName, kp.leaf))
	}
	if _, err := s.v.Names().CreateFile(sd, tmp, a, nil, attrs); err != nil {
		return err
	}
	ops = append(ops, xfs.NameOp{Dir: sd, Name: tmp, ToDir: vdir, ToName: v.name()})
	if err := s.v.Names().Apply(ops); err != nil {
		s.v.Names().Unlink(sd, tmp)
		return retryable(err)
	}
	return nil
}

// deleteVersion removes version id of kp for good. When it was the
// latest, the next newest becomes current: moved to the key's name if
// it is an object, left where it is if it is a delete marker (the key
// then reads as deleted). One transaction. A version that does not
// exist is no error.
func (s *store) deleteVersion(b *xfs.Handle, kp keyPath, id string) (DeleteResult, error) {
	bucket := b.Ino()
	defer s.lockKey(bucket, kp.key)()
	bucketDir, err := s.v.Files().Open(bucket)
	if err != nil {
		return DeleteResult{}, err
	}
	defer bucketDir.Close()
	path, mainDir, err := s.keyDirs(b, kp)
	defer path.close()
	if err != nil {
		return DeleteResult{}, err
	}
	vp, err := s.openVersions(bucket, kp, false)
	defer vp.close()
	if err != nil {
		return DeleteResult{}, err
	}
	vers, err := s.readVersions(vp.ino())
	if err != nil {
		return DeleteResult{}, err
	}
	res := DeleteResult{VersionID: id}
	var pruneMain, pruneVersions bool
	var promoteLater []xfs.NameOp // removing the latest, whose next needs the key's directories
	err = s.withCurrent(kp, path, mainDir, func(cur current) error {
		if cur.found && cur.v.ID() == id {
			ops := []xfs.NameOp{{Dir: path.last(), Name: cur.name}}
			if next, ok, err := s.nextObject(vp.ino(), vers, 0); err != nil {
				return err
			} else if ok {
				ops = append(ops, promoteOp(vp.ino(), next, path.last(), cur.name, kp))
			}
			pruneMain, pruneVersions = len(ops) == 1, len(ops) == 2
			return retryable(s.v.Names().Apply(ops))
		}
		i := slices.IndexFunc(vers, func(sv storedVersion) bool { return sv.ID() == id })
		if i < 0 {
			return nil
		}
		marker, err := s.markerAt(vp.ino(), vers[i].name)
		if err != nil {
			return err
		}
		res.DeleteMarker = marker
		ops := []xfs.NameOp{{Dir: vp.ino(), Name: vers[i].name}}
		pruneVersions = true
		// The latest version goes: the next newest becomes current,
		// unless it is a delete marker too.
		if !cur.found && i == 0 {
			next, ok, err := s.nextObject(vp.ino(), vers, 1)
			switch {
			case err != nil:
				return err
			case ok && !mainDir:
				promoteLater = append(ops, promoteOp(vp.ino(), next, 0, "", kp))
				return nil
			case ok:
				name, err := s.leafName(kp, path.last())
				if err != nil {
					return err
				}
				ops = append(ops, promoteOp(vp.ino(), next, path.last(), name, kp))
			}
		}
		return retryable(s.v.Names().Apply(ops))
	})
	if err == nil && promoteLater != nil {
		err = s.promoteInto(bucketDir, kp, promoteLater)
	}
	if err == nil && pruneMain {
		err = s.prune(kp, path)
	}
	if err == nil && pruneVersions {
		err = s.pruneVersions(kp, &vp)
	}
	return res, err
}

// nextObject returns vers[i] when it is an object, not a delete marker.
func (s *store) nextObject(vdir format.Ino, vers []storedVersion, i int) (storedVersion, bool, error) {
	if i >= len(vers) {
		return storedVersion{}, false, nil
	}
	marker, err := s.markerAt(vdir, vers[i].name)
	return vers[i], err == nil && !marker, err
}

// promoteOp moves version sv of vdir to name in dir, the key's name.
func promoteOp(vdir format.Ino, sv storedVersion, dir format.Ino, name string, kp keyPath) xfs.NameOp {
	op := xfs.NameOp{Dir: vdir, Name: sv.name, ToDir: dir, ToName: name}
	if hashedName(name) {
		op.Attrs = []xfs.Xattr{xattrOf(xattrName, kp.leaf)}
	}
	return op
}

// promoteInto applies ops, whose last moves a version to the key's name,
// after making the key's directories (bucket is the bucket's directory,
// held by the caller): the last op gets its place under the lock of the
// key's directory. The caller holds the key's lock.
func (s *store) promoteInto(bucket *xfs.Handle, kp keyPath, ops []xfs.NameOp) error {
	b, err := s.v.Files().Open(bucket.Ino())
	if err != nil {
		return err
	}
	path, err := s.resolveDirs(b, kp, true)
	defer path.close()
	if err == nil {
		err = func() error {
			dir := path.last()
			defer s.locks.lock(dir)()
			name, err := s.leafName(kp, dir)
			if err != nil {
				return err
			}
			last := &ops[len(ops)-1]
			*last = promoteOp(last.Dir, storedVersion{name: last.Name}, dir, name, kp)
			return retryable(s.v.Names().Apply(ops))
		}()
	}
	if err != nil && len(path) > 1 {
		s.prune(kp, path)
	}
	return err
}

// pruneVersions removes the key's versions directory when it is empty,
// and then the prefix directories above it left empty.
func (s *store) pruneVersions(kp keyPath, vp *versionsPath) error {
	leaf := vp.ino()
	if leaf == 0 {
		return nil
	}
	if empty, err := s.v.Names().IsEmptyDir(leaf); err != nil || !empty {
		return err
	}
	parent := vp.dirs.last()
	err := func() error {
		defer s.locks.lock(parent)()
		err := s.v.Names().Rmdir(parent, besideName(kp.leaf))
		if errors.Is(err, xfs.ErrNotEmpty) || errors.Is(err, xfs.ErrNotFound) {
			return nil
		}
		return err
	}()
	if err != nil {
		return err
	}
	return s.prune(kp, vp.dirs)
}

// ErrNoSuchVersion: the key has no version of that ID.
var ErrNoSuchVersion = errors.New("no such version")

// openVersion opens version id of kp (b is the bucket's directory, which
// it takes over). Its information carries the version ID; a delete
// marker gives a MarkerError.
func (s *store) openVersion(b *xfs.Handle, state string, kp keyPath, id string) (ObjectInfo, *xfs.Handle, error) {
	bucket := b.Ino()
	defer s.rlockKey(bucket, kp.key)()
	path, err := s.resolveDirs(b, kp, false)
	defer path.close()
	if err != nil && !errors.Is(err, ErrNoSuchKey) {
		return ObjectInfo{}, nil, err
	}
	if err == nil {
		h, st, err := s.openLeaf(kp, path.last())
		if err != nil {
			return ObjectInfo{}, nil, err
		}
		if h == nil && kp.folder && id == NullVersion {
			info, h, err := s.folderAttr(kp.key, path.last(), state)
			if err != nil || h != nil {
				return info, h, err
			}
		}
		if h != nil {
			v, err := s.versionOfFile(h.Ino(), st.Mtime)
			if err == nil && v.ID() == id {
				info, err := s.fileInfo(kp.key, h, &st, VersioningEnabled)
				if err == nil {
					return info, h, nil
				}
			}
			h.Close()
			if err != nil {
				return ObjectInfo{}, nil, err
			}
		}
	}
	noVersion := fmt.Errorf("key %q version %s: %w", kp.key, id, ErrNoSuchVersion)
	if state == "" && id == NullVersion {
		noVersion = fmt.Errorf("key %q: %w", kp.key, ErrNoSuchKey)
	}
	vp, err := s.openVersions(bucket, kp, false)
	defer vp.close()
	if err != nil || vp.leaf == nil {
		return ObjectInfo{}, nil, errors.Join(err, noVersion)
	}
	name := id
	if id == NullVersion {
		vers, err := s.readVersions(vp.ino())
		if err != nil {
			return ObjectInfo{}, nil, err
		}
		if i := slices.IndexFunc(vers, func(sv storedVersion) bool { return sv.null }); i >= 0 {
			name = vers[i].name
		}
	}
	h, st, err := s.openEntry(vp.ino(), name)
	if err != nil {
		return ObjectInfo{}, nil, err
	}
	if h == nil || !isFile(&st) {
		if h != nil {
			h.Close()
		}
		return ObjectInfo{}, nil, noVersion
	}
	if marker, err := s.isMarker(h.Ino()); err != nil || marker {
		h.Close()
		if err == nil {
			err = &MarkerError{Key: kp.key, VersionID: id}
		}
		return ObjectInfo{}, nil, err
	}
	info, err := s.fileInfo(kp.key, h, &st, VersioningEnabled)
	if err != nil {
		h.Close()
		return ObjectInfo{}, nil, err
	}
	return info, h, nil
}

// latestMarker is what a read of kp without a version ID answers when it
// finds no current version: a MarkerError when the key's latest version
// is a delete marker, else notFound.
func (s *store) latestMarker(bucket format.Ino, kp keyPath, notFound error) error {
	defer s.rlockKey(bucket, kp.key)()
	vp, err := s.openVersions(bucket, kp, false)
	defer vp.close()
	if err != nil {
		return err
	}
	vers, err := s.readVersions(vp.ino())
	if err != nil || len(vers) == 0 {
		return errors.Join(err, notFound)
	}
	if marker, err := s.markerAt(vp.ino(), vers[0].name); err != nil || !marker {
		return errors.Join(err, notFound)
	}
	return &MarkerError{Key: kp.key, VersionID: vers[0].ID(), Latest: true}
}
