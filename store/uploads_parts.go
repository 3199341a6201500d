package store

import (
	"errors"
	"strings"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// xattrFromUpload is the ID of the upload an object was completed from
// (set with its other metadata): a repeated completion of that upload
// answers as the first did.
const xattrFromUpload = xattrPrefix + "upload-id"

// partsAddingUp reads the parts record of ino with each part's offset;
// nil when the object was not completed from an upload, or when the
// record does not add up to size (the file was rewritten by another tool):
// the object is then one part.
func partsAddingUp(v *xfs.Volume, ino format.Ino, size int64) ([]ObjectPart, error) {
	parts, err := readParts(v, ino)
	if err != nil || parts == nil {
		return nil, err
	}
	var off int64
	for i := range parts {
		parts[i].Offset = off
		off += parts[i].Size
	}
	if off != size {
		return nil, nil
	}
	return parts, nil
}

// Parts returns the parts of a multipart object in part-number order, as
// they were completed; nil for an object stored whole (PutObject,
// CopyObject, a folder marker).
func (o *Object) Parts() ([]ObjectPart, error) {
	if o.done {
		return nil, ErrClosed
	}
	if o.ino == 0 {
		return nil, nil
	}
	return partsAddingUp(o.s.v, o.ino, o.Info.Size)
}

// repeatedCompletion answers a CompleteMultipartUpload whose upload is
// gone: when the object at key was completed from that upload with the
// same part numbers and ETags, it returns the object (ok), so a client
// that retries a completion whose answer it lost gets the same result.
func (s Uploads) repeatedCompletion(bucket string, kp keyPath, uploadID string, parts []CompletePart) (ObjectInfo, bool, error) {
	info, h, isFile, err := s.head(bucket, kp.key, "")
	if err == nil {
		defer h.Close()
	}
	if errors.Is(err, ErrNoSuchKey) || (err == nil && !isFile) {
		return ObjectInfo{}, false, nil
	}
	if err != nil {
		return ObjectInfo{}, false, err
	}
	ino := h.Ino()
	from, err := s.v.Xattrs().Get(ino, xattrFromUpload)
	if errors.Is(err, xfs.ErrNoData) || (err == nil && string(from) != uploadID) {
		return ObjectInfo{}, false, nil
	}
	if err != nil {
		return ObjectInfo{}, false, err
	}
	stored, err := readParts(s.v, ino)
	if err != nil || len(stored) != len(parts) {
		return ObjectInfo{}, false, err
	}
	for i, p := range parts {
		if p.PartNumber != stored[i].PartNumber || !strings.EqualFold(strings.Trim(p.ETag, `"`), stored[i].ETag) {
			return ObjectInfo{}, false, nil
		}
	}
	return info, true, nil
}
