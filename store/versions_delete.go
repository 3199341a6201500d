package store

import (
	"errors"
	"slices"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Deletes in a bucket with versioning: delete markers, and versions
// removed by ID with the next newest promoted (package doc, "Versions").

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
func (s *store) deleteVersioned(b *xfs.Handle, state string, kp keyPath, ifCurrent string) (DeleteResult, error) {
	bucket := b.Ino()
	defer s.lockKey(bucket, kp.key)()
	path, mainDir, err := s.keyDirs(b, kp)
	defer path.close()
	if err != nil {
		return DeleteResult{}, err
	}
	vp, err := s.openVersions(bucket, kp, versionsMakeFor(state))
	defer vp.close()
	if err != nil {
		return DeleteResult{}, err
	}
	suspended := state == VersioningSuspended
	var res DeleteResult
	var removed bool
	err = s.withCurrent(kp, path, mainDir, func(cur current) error {
		if ifCurrent != "" && (!cur.found || cur.v.ID() != ifCurrent) {
			return errChanged
		}
		var vers []storedVersion
		if suspended || !cur.found {
			var err error
			if vers, err = s.readVersions(&vp); err != nil {
				return err
			}
		}
		floor := cur.v.seq
		if !cur.found && len(vers) > 0 {
			floor = vers[0].seq
		}
		marker := version{seq: newSeq(floor), null: suspended}
		if cur.found && !suspended && vp.leaf == nil && !kp.folder {
			if err := s.hideInFileForm(path.last(), &cur, &vp, marker, kp); err != nil {
				return err
			}
			res, removed = DeleteResult{VersionID: marker.ID(), DeleteMarker: true}, true
			return nil
		}
		var ops []xfs.NameOp
		switch {
		case cur.found && suspended && cur.v.null:
			ops = append(ops, xfs.NameOp{Dir: path.last(), Name: cur.name})
		case cur.found:
			ops = append(ops, cur.asideOp(path.last(), vp.dir(), time.Now()))
		}
		if suspended {
			ops = append(ops, nullOp(vp.ino(), vers)...)
		}
		if err := s.addMarker(bucket, ops, &vp, marker, kp); err != nil {
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

// hideInFileForm is the first delete marker of a key that has nothing in
// the versions tree: the current version cur, in dir, moves there as the
// key's versions in file form, hidden by marker. One rename.
func (s *store) hideInFileForm(dir format.Ino, cur *current, vp *versionsPath, marker version, kp keyPath) error {
	op := cur.asideOp(dir, vp.dirs.last(), time.Now())
	op.ToName = besideName(kp.leaf)
	op.Attrs = append(op.Attrs, xattrOf(xattrDeletedBy, marker.name()))
	if hashedName(op.ToName) {
		op.Attrs = append(op.Attrs, xattrOf(xattrName, kp.leaf))
	}
	return retryable(s.v.Names().Apply([]xfs.NameOp{op}))
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

// addMarker applies ops with a delete marker (an empty file) made in
// the key's versions directory vp as version v, in one transaction: the
// marker, and the directory when it is the key's first version there,
// are made by the Apply itself. When an op releases a version (Suspended,
// where the marker replaces the null version), which an Apply that makes
// inodes may not, the marker is made in .xfs3/tmp first and moved in;
// vp's directory exists then (versionsMakeFor).
func (s *store) addMarker(bucket format.Ino, ops []xfs.NameOp, vp *versionsPath, v version, kp keyPath) error {
	project, err := s.quotas().project(bucket)
	if err != nil {
		return err
	}
	a := fileAttrs
	a.ProjID = project
	attrs := []xfs.Xattr{xattrOf(xattrDeleteMarker, ""), xattrOf(xattrVersion, v.name())}
	if hashedName(besideName(kp.leaf)) {
		attrs = append(attrs, xattrOf(xattrName, kp.leaf))
	}
	if !releases(ops) {
		leaf, err := s.leafOps(bucket, kp, vp)
		if err != nil {
			return err
		}
		marker := xfs.NameOp{ToDir: vp.dir(), ToName: v.name(), Attrs: attrs, New: &xfs.NewInode{Attrs: a}}
		return retryable(s.v.Names().Apply(slices.Concat(leaf, ops, []xfs.NameOp{marker})))
	}
	tmp := randomName()
	sd := s.stagingDir(tmp)
	if _, err := s.v.Names().CreateFile(sd, tmp, a, nil, attrs); err != nil {
		return err
	}
	ops = append(ops, xfs.NameOp{Dir: sd, Name: tmp, ToDir: vp.ino(), ToName: v.name()})
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
func (s *store) deleteVersion(b *xfs.Handle, kp keyPath, id string, opt DeleteOptions) (DeleteResult, error) {
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
	vp, err := s.openVersions(bucket, kp, versionsFind)
	defer func() { vp.close() }()
	if err != nil {
		return DeleteResult{}, err
	}
	if vp.held != nil {
		res, done, err := s.unhide(bucketDir, kp, path, mainDir, &vp, id, opt)
		if done || err != nil {
			return res, err
		}
		vp.close()
		if vp, err = s.openVersions(bucket, kp, versionsExpand); err != nil {
			return DeleteResult{}, err
		}
	}
	vers, err := s.readVersions(&vp)
	if err != nil {
		return DeleteResult{}, err
	}
	res := DeleteResult{VersionID: id}
	var pruneMain, pruneVersions bool
	var promoteLater []xfs.NameOp // removing the latest, whose next needs the key's directories
	err = s.withCurrent(kp, path, mainDir, func(cur current) error {
		if cur.found && cur.v.ID() == id && (opt.ifNoncurrent || opt.ifSoleMarker) {
			return errChanged
		}
		if cur.found && cur.v.ID() == id {
			if err := s.releaseForDelete(bucket, cur.st.Ino, opt.BypassGovernance); err != nil {
				return err
			}
			ops := []xfs.NameOp{{Dir: path.last(), Name: cur.name}}
			if next, ok, err := s.nextObject(vp.ino(), vers, 0); err != nil {
				return err
			} else if ok {
				op, err := s.promoteOp(vp.ino(), next, path.last(), cur.name, kp)
				if err != nil {
					return err
				}
				ops = append(ops, op)
			}
			pruneMain, pruneVersions = len(ops) == 1, len(ops) == 2
			return retryable(s.v.Names().Apply(ops))
		}
		i := slices.IndexFunc(vers, func(sv storedVersion) bool { return sv.ID() == id })
		if i < 0 {
			return nil
		}
		ino, err := s.v.Names().Lookup(vp.ino(), vers[i].name)
		if err != nil {
			return err
		}
		marker, err := s.isMarker(ino)
		if err != nil {
			return err
		}
		res.DeleteMarker = marker
		if opt.ifSoleMarker && (!marker || cur.found || len(vers) != 1) {
			return errChanged
		}
		if err := s.releaseForDelete(bucket, ino, opt.BypassGovernance); err != nil {
			return err
		}
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
				op, err := s.promoteOp(vp.ino(), next, 0, "", kp)
				promoteLater = append(ops, op)
				return err
			case ok:
				name, err := s.leafName(kp, path.last())
				if err != nil {
					return err
				}
				op, err := s.promoteOp(vp.ino(), next, path.last(), name, kp)
				if err != nil {
					return err
				}
				ops = append(ops, op)
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

// unhide removes the delete marker of kp's versions in file form
// (vp.held) when id names it and no version is current, as a client
// undoing a DELETE does: the version goes back to the key's name, one
// rename (its user.xfs3.deleted-by stays, meaning nothing there). done
// is false for any other case, which the caller takes the general way.
// The caller holds the key's lock.
func (s *store) unhide(bucketDir *xfs.Handle, kp keyPath, path dirPath, mainDir bool, vp *versionsPath, id string, opt DeleteOptions) (DeleteResult, bool, error) {
	if opt.ifNoncurrent || opt.ifSoleMarker {
		return DeleteResult{}, false, nil
	}
	_, marker, _, err := s.heldVersions(vp.held.Ino(), &vp.heldSt)
	if err != nil || marker.ID() != id {
		return DeleteResult{}, false, err
	}
	op := keyNameOp(vp.dirs.last(), besideName(kp.leaf), 0, "", kp)
	op.Immutable = isImmutable(&vp.heldSt)
	done := true
	if !mainDir {
		err = s.promoteInto(bucketDir, kp, []xfs.NameOp{op})
	} else {
		err = s.withCurrent(kp, path, mainDir, func(cur current) error {
			if cur.found {
				done = false // the marker is not the latest
				return nil
			}
			name, err := s.leafName(kp, path.last())
			if err != nil {
				return err
			}
			last := keyNameOp(op.Dir, op.Name, path.last(), name, kp)
			last.Immutable = op.Immutable
			return retryable(s.v.Names().Apply([]xfs.NameOp{last}))
		})
	}
	if err != nil || !done {
		return DeleteResult{}, done, err
	}
	return DeleteResult{VersionID: id, DeleteMarker: true}, true, s.pruneVersionsTree(kp, vp.dirs)
}

// nextObject returns vers[i] when it is an object, not a delete marker.
func (s *store) nextObject(vdir format.Ino, vers []storedVersion, i int) (storedVersion, bool, error) {
	if i >= len(vers) {
		return storedVersion{}, false, nil
	}
	marker, err := s.markerAt(vdir, vers[i].name)
	return vers[i], err == nil && !marker, err
}

// promoteOp moves version sv of vdir to name in dir, the key's name; a
// locked version keeps its immutable flag through the move.
func (s *store) promoteOp(vdir format.Ino, sv storedVersion, dir format.Ino, name string, kp keyPath) (xfs.NameOp, error) {
	op := keyNameOp(vdir, sv.name, dir, name, kp)
	st, _, err := s.lookupStat(vdir, sv.name)
	op.Immutable = isImmutable(&st)
	return op, err
}

// keyNameOp moves the object name in dir to toName in toDir, where its
// key is kp.
func keyNameOp(dir format.Ino, name string, toDir format.Ino, toName string, kp keyPath) xfs.NameOp {
	op := xfs.NameOp{Dir: dir, Name: name, ToDir: toDir, ToName: toName}
	if hashedName(toName) {
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
			immutable := last.Immutable
			*last = keyNameOp(last.Dir, last.Name, dir, name, kp)
			last.Immutable = immutable
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
	return s.pruneVersionsTree(kp, vp.dirs)
}
