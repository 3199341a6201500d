package store

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Copies share extents. A copy of an object (CopyObject, a copy of a
// version, UploadPartCopy) whose bytes start on a block boundary of the
// source is made by cloning its blocks into the staging file
// (xfs.Files.CloneRange): the two objects then map the same blocks, and
// freeing either takes one count off them. No byte is written, and none
// is read when the copy's ETag and checksums are known already: the
// source's ETag when it is an MD5 of the same bytes (an object put whole,
// copied whole), its checksums when the copy keeps them. Otherwise the
// copy reads its bytes once, to compute them. Volumes without reflink,
// and ranges that start inside a block, copy bytes as before.

// minClone is the smallest copy made by sharing blocks: below it the
// bytes are copied, in the one transaction that creates a small object.
const minClone = smallObjectMax + 1

// cloneCopy fills staging file dst with n bytes of src from off by
// sharing blocks, and returns the copy's ETag (reading its bytes only
// when it cannot be taken from the source) and a reader the caller reads
// to compute checksums (nil when none are asked for). ok is false when
// the volume or the range cannot share blocks: the caller copies bytes.
func (s *store) cloneCopy(dst format.Ino, src *Object, off, n int64) (etag string, ok bool, err error) {
	if src.ino == 0 || n < minClone {
		return "", false, nil
	}
	_, err = s.v.Files().CloneRange(dst, 0, src.ino, off, n)
	if errors.Is(err, xfs.ErrUnsupported) || errors.Is(err, xfs.ErrUnaligned) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if off == 0 && n == src.Info.Size && isMD5(src.Info.ETag) {
		return src.Info.ETag, true, nil
	}
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(fileReader{s, dst}, 0, n)); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// isMD5 reports whether etag is an MD5 of the content (32 hex digits),
// not the ETag of an object completed from parts ("…-N").
func isMD5(etag string) bool {
	if len(etag) != 32 {
		return false
	}
	_, err := hex.DecodeString(etag)
	return err == nil
}

// fileReader reads a file of the volume by inode, as io.ReaderAt.
type fileReader struct {
	s   *store
	ino format.Ino
}

func (f fileReader) ReadAt(p []byte, off int64) (int, error) {
	return f.s.v.Files().ReadAt(f.ino, p, off)
}

// putCloned places a copy of src under key by sharing its blocks, with
// meta and, when body computes checksums (copyChecksummed), the ones it
// computes while its bytes are read; ok is false when the copy cannot
// share blocks (the caller copies bytes).
func (s *store) putCloned(bucket, key string, src *Object, meta Meta, body io.Reader) (info ObjectInfo, ok bool, err error) {
	size := src.Info.Size
	if src.ino == 0 || size < minClone {
		return ObjectInfo{}, false, nil
	}
	kp, err := parseKey(key)
	if err != nil {
		return ObjectInfo{}, true, err
	}
	meta = meta.clone()
	if err := meta.check(); err != nil {
		return ObjectInfo{}, true, err
	}
	project, err := s.quotas().bucketProject(bucket)
	if err != nil {
		return ObjectInfo{}, true, err
	}
	if err := s.quotas().checkRoom(project, size); err != nil {
		return ObjectInfo{}, true, err
	}
	st, err := s.newStaging(project)
	if err != nil {
		return ObjectInfo{}, true, err
	}
	defer st.discard()
	etag, ok, err := s.cloneCopy(st.ino, src, 0, size)
	if !ok || err != nil {
		return ObjectInfo{}, ok, err
	}
	if _, summing := body.(ChecksumReporter); summing {
		if _, err := io.Copy(io.Discard, body); err != nil {
			return ObjectInfo{}, true, err
		}
		meta.Checksums = meta.Checksums.reported(body)
	}
	st.xattrs = xattrList(meta.xattrs(etag))
	p, err := s.place(bucket, kp, st, Precondition{})
	if err != nil {
		return ObjectInfo{}, true, err
	}
	return ObjectInfo{Key: key, Size: size, LastModified: p.mtime, ETag: etag, Meta: meta, VersionID: p.versionID()}, true, nil
}
