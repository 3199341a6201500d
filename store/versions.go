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
// and a prefix of the same component never share a directory. Pruning
// an empty prefix directory here leaves the name beside it alone
// (pruneVersionsTree): unlike an object in the bucket, it has no plain
// name to go back to.
//
// File form: the first DELETE of a key with a current version and
// nothing in the versions tree moves the version to the key's name in
// the tree, .xfs3.versions/a/.xfs3.o.b, as a file, with xattrDeletedBy
// naming the marker that now hides it: one rename, no inode made;
// removing that marker while no version is current renames it back
// (unhide). Any other change of such a key's versions first gives it its
// directory (expand), in a transaction of its own that changes no
// version; reads take either form.

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
	// held is a key's versions in file form, for a reader (versionsFind),
	// and heldSt its stat; leaf is nil then.
	held   *xfs.Handle
	heldSt xfs.Stat
}

func (p *versionsPath) close() {
	p.dirs.close()
	for _, h := range []*xfs.Handle{p.leaf, p.held} {
		if h != nil {
			h.Close()
		}
	}
}

// ino is the key's versions directory, 0 when there is none.
func (p *versionsPath) ino() format.Ino {
	if p.leaf == nil {
		return 0
	}
	return p.leaf.Ino()
}

// versionsMake is how much of a key's versions path openVersions makes.
type versionsMake int

const (
	versionsFind     versionsMake = iota // nothing: a missing directory leaves the path short, a file form is left so (held)
	versionsExpand                       // nothing, but a key in file form gets its directory (expand)
	versionsPrefixes                     // the prefix directories, as versionsExpand; the key's own is left to leafOps
	versionsAll                          // the key's directory too
)

// versionsMakeFor is what a change that puts a version in the versions
// tree of a bucket in state makes up front. With Enabled, the key's own
// directory is made by the change's Apply (leafOps); a Suspended change
// may release the null version it replaces, and an Apply that releases
// an inode cannot make one (xfs.NameOp.New).
func versionsMakeFor(state string) versionsMake {
	if state == VersioningEnabled {
		return versionsPrefixes
	}
	return versionsAll
}

// openVersions resolves the versions directory of kp in the bucket whose
// directory is bucket, making what mk says (each under its parent's
// lock); a missing directory it does not make leaves the path short and
// leaf nil. The caller holds the key's lock (shared for versionsFind)
// and closes the path, also on error.
func (s *store) openVersions(bucket format.Ino, kp keyPath, mk versionsMake) (versionsPath, error) {
	var p versionsPath
	create := mk >= versionsPrefixes
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
	case h != nil && isFile(&st) && mk == versionsFind:
		p.held, p.heldSt = h, st
		return p, nil
	case h != nil && isFile(&st):
		err := s.expand(parent, kp, h.Ino(), &st)
		h.Close()
		if err != nil {
			return p, err
		}
		p.leaf, err = s.v.Files().OpenAt(parent, name)
		return p, retryable(err)
	case h != nil:
		h.Close()
		return p, fmt.Errorf("versions of %q: %q is not a directory: %w", kp.key, name, ErrKeyConflict)
	case mk != versionsAll:
		return p, nil
	}
	p.leaf, err = s.makeVersionsLeaf(bucket, parent, kp.leaf)
	return p, retryable(err)
}

// heldVersions reads a key's versions in file form, the file ino: its
// version and the delete marker above it, with the marker's time.
func (s *store) heldVersions(ino format.Ino, st *xfs.Stat) (v, marker version, since time.Time, err error) {
	if v, _, err = s.storedVersionOf(ino, st.Mtime); err != nil {
		return
	}
	by, err := s.v.Xattrs().Get(ino, xattrDeletedBy)
	if err != nil {
		return v, marker, since, fmt.Errorf("versions in file form, inode %d: %s: %w", ino, xattrDeletedBy, err)
	}
	marker, ok := parseVersionName(string(by))
	if !ok || marker.seq <= v.seq {
		return v, marker, since, fmt.Errorf("versions in file form, inode %d: marker %q not above version %q: %w", ino, by, v.name(), ErrKeyConflict)
	}
	if at, err := s.v.Xattrs().Get(ino, xattrNoncurrent); err == nil {
		since, _ = time.Parse(time.RFC3339Nano, string(at))
	}
	return v, marker, since, nil
}

// expand gives kp's versions in file form (the file ino in the versions
// tree's directory parent) their directory: the version moves into it
// under its own name, and the marker above it becomes a marker file of
// its time. One transaction that changes no version, so a crash leaves
// the one form or the other; quota limits are not checked, since a
// change that frees (a removal by ID) may need it first. The caller
// holds the key's lock.
func (s *store) expand(parent format.Ino, kp keyPath, ino format.Ino, st *xfs.Stat) error {
	v, marker, since, err := s.heldVersions(ino, st)
	if err != nil {
		return err
	}
	name, tmp := besideName(kp.leaf), expandingPrefix+randomName()
	var named []xfs.Xattr
	if hashedName(name) {
		named = []xfs.Xattr{xattrOf(xattrName, kp.leaf)}
	}
	dir, file := dirAttrs, fileAttrs
	dir.ProjID, file.ProjID = st.ProjID, st.ProjID
	immutable := isImmutable(st)
	markerAttrs := append([]xfs.Xattr{xattrOf(xattrDeleteMarker, ""), xattrOf(xattrVersion, marker.name())}, named...)
	return retryable(s.v.Names().ApplyUnchecked([]xfs.NameOp{
		{Dir: parent, Name: name, ToDir: parent, ToName: tmp, Immutable: immutable},
		{ToDir: parent, ToName: name, Attrs: named, New: &xfs.NewInode{Attrs: dir, Dir: true}},
		{Dir: parent, Name: tmp, ToDir: xfs.MadeDir, ToName: v.name(), Immutable: immutable},
		{ToDir: xfs.MadeDir, ToName: marker.name(), Attrs: markerAttrs, New: &xfs.NewInode{Attrs: file, Mtime: since}},
	}))
}

// dir is where ops put the key's versions: its directory, or MadeDir
// when there is none yet and leafOps makes it.
func (p *versionsPath) dir() format.Ino {
	if p.leaf == nil {
		return xfs.MadeDir
	}
	return p.leaf.Ino()
}

// leafOps returns the op that makes the key's versions directory in the
// Apply that first puts a version there, ahead of the ops that name it
// MadeDir (dir); none when it exists. The key's lock keeps others from
// making or removing it meanwhile; its parent removed meanwhile gives
// errRetry through the Apply.
func (s *store) leafOps(bucket format.Ino, kp keyPath, p *versionsPath) ([]xfs.NameOp, error) {
	if p.leaf != nil {
		return nil, nil
	}
	project, err := s.quotas().project(bucket)
	if err != nil {
		return nil, err
	}
	a := dirAttrs
	a.ProjID = project
	op := xfs.NameOp{ToDir: p.dirs.last(), ToName: besideName(kp.leaf), New: &xfs.NewInode{Attrs: a, Dir: true}}
	if hashedName(op.ToName) {
		op.Attrs = []xfs.Xattr{xattrOf(xattrName, kp.leaf)}
	}
	return []xfs.NameOp{op}, nil
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
// newest first. Names of other forms are left out. Versions in file form
// (p.held) have no names: a change by name expands them first.
func (s *store) readVersions(p *versionsPath) ([]storedVersion, error) {
	if p.held != nil {
		v, marker, _, err := s.heldVersions(p.held.Ino(), &p.heldSt)
		if err != nil {
			return nil, err
		}
		return []storedVersion{{version: marker}, {version: v}}, nil
	}
	dir := p.ino()
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
	}, Immutable: isImmutable(&c.st)}
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
func (s *store) installVersion(bucket format.Ino, state string, kp keyPath, dir format.Ino, obj placement, cond Precondition, lock versionLock) (placed, error) {
	cur, err := s.findCurrent(kp, dir)
	if err == nil {
		err = s.checkCondition(kp, dir, cond)
	}
	if err != nil {
		return placed{}, err
	}
	suspended := state == VersioningSuspended
	keep := cur.found && !(suspended && cur.v.null)
	if _, staged := obj.(*staging); cur.found && !keep && !staged {
		return placed{}, errNameTaken // the new version replaces the null one by a rename
	}
	var vp versionsPath
	defer vp.close()
	// The versions directory is needed to keep the current version, to
	// find a noncurrent null one, or to learn the newest version when
	// there is no current one (a delete marker).
	if keep || suspended || !cur.found {
		mk := versionsFind // the newest version is all it needs
		switch {
		case keep:
			mk = versionsMakeFor(state)
		case suspended:
			mk = versionsExpand // the null version may go, by its name
		}
		if vp, err = s.openVersions(bucket, kp, mk); err != nil {
			return placed{}, err
		}
	}
	var vers []storedVersion
	if suspended || !cur.found {
		if vers, err = s.readVersions(&vp); err != nil {
			return placed{}, err
		}
	}
	floor := cur.v.seq
	if !cur.found && len(vers) > 0 {
		floor = vers[0].seq
	}
	v := version{seq: newSeq(floor), null: suspended}
	attrs := append(slices.Clip(obj.attrs()), xattrOf(xattrVersion, v.name()))
	attrs = append(attrs, lock.add...)
	if hashedName(cur.name) {
		attrs = append(attrs, xattrOf(xattrName, kp.leaf))
	}
	var ops []xfs.NameOp
	if keep {
		if ops, err = s.leafOps(bucket, kp, &vp); err != nil {
			return placed{}, err
		}
		ops = append(ops, cur.asideOp(dir, vp.dir(), s.now()))
	}
	if suspended {
		ops = append(ops, nullOp(vp.ino(), vers)...)
	}
	var ino format.Ino
	if len(ops) == 0 && !lock.immutable {
		ino, err = obj.install(dir, cur.name, attrs)
	} else {
		ino, err = s.applyWith(ops, obj, dir, cur.name, attrs, lock.immutable)
	}
	if err != nil {
		return placed{}, err
	}
	return placed{ino: ino, version: v}, nil
}

// applyWith applies ops and puts obj at name in dir with attrs, in one
// transaction: a staging file moves there; a small object is made there,
// data and all (xfs.NameOp.New), unless an op releases a version (which
// such an Apply may not) or it must be immutable, when errNameTaken
// stages it.
func (s *store) applyWith(ops []xfs.NameOp, obj placement, dir format.Ino, name string, attrs []xfs.Xattr, immutable bool) (format.Ino, error) {
	var op xfs.NameOp
	switch o := obj.(type) {
	case *staging:
		op = xfs.NameOp{Dir: o.dir, Name: o.name, ToDir: dir, ToName: name, Attrs: attrs, Immutable: immutable}
	case *smallObject:
		if immutable || releases(ops) {
			return 0, errNameTaken
		}
		a := fileAttrs
		a.ProjID = o.project
		op = xfs.NameOp{ToDir: dir, ToName: name, Attrs: attrs, New: &xfs.NewInode{Attrs: a, Data: o.data}}
	default:
		return 0, errNameTaken
	}
	if err := retryable(s.v.Names().Apply(append(ops, op))); err != nil {
		return 0, err
	}
	if st, ok := obj.(*staging); ok {
		st.moved = true
		return st.ino, nil
	}
	return s.v.Names().Lookup(dir, name)
}

// releases tells whether ops remove a version's name, which an Apply that
// makes inodes may not do (xfs.NameOp.New): the store's versions have one
// link each.
func releases(ops []xfs.NameOp) bool {
	return slices.ContainsFunc(ops, func(op xfs.NameOp) bool { return op.ToDir == 0 })
}
