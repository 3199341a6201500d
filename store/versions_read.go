package store

import (
	"errors"
	"fmt"
	"slices"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Reads of a version by ID, and of a key whose latest version is a
// delete marker.

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
	vp, err := s.openVersions(bucket, kp, versionsFind)
	defer vp.close()
	if err == nil && vp.held != nil {
		return s.heldVersion(&vp, kp, id, noVersion)
	}
	if err != nil || vp.leaf == nil {
		return ObjectInfo{}, nil, errors.Join(err, noVersion)
	}
	name := id
	if id == NullVersion {
		vers, err := s.readVersions(&vp)
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

// heldVersion is openVersion of a key whose versions are in file form
// (vp.held), which it takes over when it is the version asked for.
func (s *store) heldVersion(vp *versionsPath, kp keyPath, id string, noVersion error) (ObjectInfo, *xfs.Handle, error) {
	v, marker, _, err := s.heldVersions(vp.held.Ino(), &vp.heldSt)
	switch {
	case err != nil:
		return ObjectInfo{}, nil, err
	case marker.ID() == id:
		return ObjectInfo{}, nil, &MarkerError{Key: kp.key, VersionID: id}
	case v.ID() != id:
		return ObjectInfo{}, nil, noVersion
	}
	info, err := s.fileInfo(kp.key, vp.held, &vp.heldSt, VersioningEnabled)
	if err != nil {
		return ObjectInfo{}, nil, err
	}
	h := vp.held
	vp.held = nil
	return info, h, nil
}

// latestMarker is what a read of kp without a version ID answers when it
// finds no current version: a MarkerError when the key's latest version
// is a delete marker, else notFound.
func (s *store) latestMarker(bucket format.Ino, kp keyPath, notFound error) error {
	defer s.rlockKey(bucket, kp.key)()
	vp, err := s.openVersions(bucket, kp, versionsFind)
	defer vp.close()
	if err != nil {
		return err
	}
	vers, err := s.readVersions(&vp)
	if err != nil || len(vers) == 0 {
		return errors.Join(err, notFound)
	}
	if vp.held != nil {
		// In file form the marker is the newest version.
		return &MarkerError{Key: kp.key, VersionID: vers[0].ID(), Latest: true}
	}
	if marker, err := s.markerAt(vp.ino(), vers[0].name); err != nil || !marker {
		return errors.Join(err, notFound)
	}
	return &MarkerError{Key: kp.key, VersionID: vers[0].ID(), Latest: true}
}
