package store

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// chunkSize is the unit in which PutObject streams a body.
const chunkSize = 1 << 20

// emptyETag is the MD5 of no bytes.
const emptyETag = "d41d8cd98f00b204e9800998ecf8427e"

// ObjectInfo describes an object.
type ObjectInfo struct {
	Key          string
	Size         int64
	LastModified time.Time // the file's mtime (folder markers: when put)
	ETag         string    // MD5 of the content, lowercase hex, unquoted
	Meta         Meta      // left empty by ListObjects
}

// PutObject stores the next size bytes of r as key (size -1: until EOF),
// replacing any object of that name atomically. See the package doc for
// how the write is staged.
func (s *Store) PutObject(bucket, key string, r io.Reader, size int64, meta Meta) (ObjectInfo, error) {
	kp, err := parseKey(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	meta = meta.clone()
	if err := meta.check(); err != nil {
		return ObjectInfo{}, err
	}
	if _, err := s.bucket(bucket); err != nil {
		return ObjectInfo{}, err
	}
	if kp.folder {
		return s.putFolder(bucket, kp, r, size, meta)
	}
	name := randomName()
	ino, err := s.v.Create(s.tmp, name, fileAttrs)
	if err != nil {
		return ObjectInfo{}, err
	}
	staged := true
	defer func() {
		if staged {
			s.v.Unlink(s.tmp, name)
		}
	}()
	etag, n, err := s.writeBody(ino, r, size)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := setXattrs(s.v, ino, meta.xattrs(etag)); err != nil {
		return ObjectInfo{}, err
	}

	s.ns.Lock()
	defer s.ns.Unlock()
	b, err := s.bucket(bucket) // may have been deleted meanwhile
	if err != nil {
		return ObjectInfo{}, err
	}
	inos, err := s.resolveDirs(b, kp, true)
	if err == nil {
		err = s.replace(kp, inos[len(inos)-1])
	}
	if err == nil {
		err = s.v.Rename(s.tmp, name, inos[len(inos)-1], kp.leaf)
	}
	if err != nil {
		if len(inos) > 1 {
			s.prune(kp, inos)
		}
		return ObjectInfo{}, err
	}
	staged = false
	st, err := s.v.Stat(ino)
	if err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: key, Size: n, LastModified: st.Mtime, ETag: etag, Meta: meta}, nil
}

// replace checks that the leaf of kp in dir may be (re)placed: absent or an
// object, which is then kept alive for its open readers.
func (s *Store) replace(kp keyPath, dir format.Ino) error {
	old, err := s.v.Lookup(dir, kp.leaf)
	if errors.Is(err, xfs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := s.v.Stat(old)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("key %q is a prefix of other keys: %w", kp.key, ErrKeyConflict)
	}
	return s.keepAlive(old)
}

// writeBody streams r into the staging file ino in chunkSize pieces,
// returning the MD5 hex and the byte count.
func (s *Store) writeBody(ino format.Ino, r io.Reader, size int64) (string, int64, error) {
	if size > 0 {
		if err := s.v.Preallocate(ino, size); err != nil {
			return "", 0, err
		}
	}
	if size >= 0 {
		r = io.LimitReader(r, size)
	}
	h := md5.New()
	buf := make([]byte, chunkSize)
	var off int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			h.Write(buf[:n])
			if _, err := s.v.WriteAt(ino, buf[:n], off); err != nil {
				return "", 0, err
			}
			off += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return "", 0, rerr
		}
	}
	if size >= 0 && off != size {
		return "", 0, fmt.Errorf("read %d of %d bytes: %w", off, size, ErrIncompleteBody)
	}
	return hex.EncodeToString(h.Sum(nil)), off, nil
}

// putFolder stores a folder marker: the key's directory, marked by an
// attribute. Markers hold no content.
func (s *Store) putFolder(bucket string, kp keyPath, r io.Reader, size int64, meta Meta) (ObjectInfo, error) {
	if size > 0 {
		return ObjectInfo{}, fmt.Errorf("folder marker %q with %d bytes of content: %w", kp.key, size, ErrInvalidKey)
	}
	if r != nil {
		var one [1]byte
		if n, _ := io.ReadFull(r, one[:]); n > 0 {
			return ObjectInfo{}, fmt.Errorf("folder marker %q with content: %w", kp.key, ErrInvalidKey)
		}
	}
	s.ns.Lock()
	defer s.ns.Unlock()
	b, err := s.bucket(bucket)
	if err != nil {
		return ObjectInfo{}, err
	}
	inos, err := s.resolveDirs(b, kp, true)
	if err != nil {
		if len(inos) > 1 {
			s.prune(kp, inos)
		}
		return ObjectInfo{}, err
	}
	dir := inos[len(inos)-1]
	if err := clearObjectXattrs(s.v, dir); err != nil {
		return ObjectInfo{}, err
	}
	now := time.Now().UTC()
	attrs := meta.xattrs(emptyETag)
	attrs[xattrFolder] = now.Format(time.RFC3339Nano)
	if err := setXattrs(s.v, dir, attrs); err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: kp.key, LastModified: now, ETag: emptyETag, Meta: meta}, nil
}

// Object is an open object: its information at open time and its content,
// which stays readable (unchanged) even if the key is overwritten or
// deleted meanwhile. Close it.
type Object struct {
	Info ObjectInfo
	s    *Store
	ino  format.Ino
	done bool
}

// ReadAt reads content at off, as io.ReaderAt.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if o.done {
		return 0, ErrClosed
	}
	if off >= o.Info.Size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	if o.Info.Size == 0 {
		return 0, io.EOF
	}
	if o.ino == 0 {
		return 0, io.EOF
	}
	return o.s.v.ReadAt(o.ino, p, off)
}

// Reader returns a reader over the whole content (an io.ReadSeeker).
func (o *Object) Reader() *io.SectionReader { return io.NewSectionReader(o, 0, o.Info.Size) }

// Range returns a reader over length bytes from off (length -1: to the
// end), clamped to the content; off beyond the content gives
// ErrInvalidRange.
func (o *Object) Range(off, length int64) (*io.SectionReader, error) {
	if off < 0 || off > o.Info.Size || (off == o.Info.Size && o.Info.Size > 0) {
		return nil, fmt.Errorf("offset %d of a %d-byte object: %w", off, o.Info.Size, ErrInvalidRange)
	}
	if length < 0 || off+length > o.Info.Size {
		length = o.Info.Size - off
	}
	return io.NewSectionReader(o, off, length), nil
}

// Close releases the content.
func (o *Object) Close() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.ino == 0 {
		return nil
	}
	return o.s.release(o.ino)
}

// GetObject opens an object for reading.
func (s *Store) GetObject(bucket, key string) (*Object, error) {
	s.ns.RLock()
	defer s.ns.RUnlock()
	info, ino, isFile, err := s.head(bucket, key)
	if err != nil {
		return nil, err
	}
	o := &Object{Info: info, s: s}
	if isFile {
		o.ino = ino
		s.hold(ino)
	}
	return o, nil
}

// HeadObject returns an object's information.
func (s *Store) HeadObject(bucket, key string) (ObjectInfo, error) {
	s.ns.RLock()
	defer s.ns.RUnlock()
	info, _, _, err := s.head(bucket, key)
	return info, err
}

// head resolves key; callers hold ns.
func (s *Store) head(bucket, key string) (ObjectInfo, format.Ino, bool, error) {
	kp, err := parseKey(key)
	if err != nil {
		return ObjectInfo{}, 0, false, err
	}
	b, err := s.bucket(bucket)
	if err != nil {
		return ObjectInfo{}, 0, false, err
	}
	inos, err := s.resolveDirs(b, kp, false)
	if err != nil {
		return ObjectInfo{}, 0, false, err
	}
	notFound := fmt.Errorf("key %q: %w", key, ErrNoSuchKey)
	ino := inos[len(inos)-1]
	if !kp.folder {
		ino, err = s.v.Lookup(ino, kp.leaf)
		if errors.Is(err, xfs.ErrNotFound) {
			return ObjectInfo{}, 0, false, notFound
		}
		if err != nil {
			return ObjectInfo{}, 0, false, err
		}
	}
	st, err := s.v.Stat(ino)
	if err != nil {
		return ObjectInfo{}, 0, false, err
	}
	if st.IsDir() != kp.folder {
		return ObjectInfo{}, 0, false, notFound
	}
	meta, etag, ftime, isFolder, err := readMeta(s.v, ino)
	if err != nil {
		return ObjectInfo{}, 0, false, err
	}
	info := ObjectInfo{Key: key, Size: st.Size, LastModified: st.Mtime, ETag: etag, Meta: meta}
	if kp.folder {
		if !isFolder {
			return ObjectInfo{}, 0, false, notFound
		}
		info.Size, info.LastModified = 0, ftime
	}
	return info, ino, !kp.folder, nil
}

// DeleteObject removes an object and then every directory above it left
// empty, up to the bucket, except folder markers. A missing key is not an
// error.
func (s *Store) DeleteObject(bucket, key string) error {
	kp, err := parseKey(key)
	if err != nil {
		return err
	}
	s.ns.Lock()
	defer s.ns.Unlock()
	b, err := s.bucket(bucket)
	if err != nil {
		return err
	}
	inos, err := s.resolveDirs(b, kp, false)
	if errors.Is(err, ErrNoSuchKey) {
		return nil
	}
	if err != nil {
		return err
	}
	dir := inos[len(inos)-1]
	if kp.folder {
		if _, err := s.v.GetXattr(dir, xattrFolder); errors.Is(err, xfs.ErrNoData) {
			return nil
		} else if err != nil {
			return err
		}
		if err := clearObjectXattrs(s.v, dir); err != nil {
			return err
		}
		return s.prune(kp, inos)
	}
	ino, err := s.v.Lookup(dir, kp.leaf)
	if errors.Is(err, xfs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := s.v.Stat(ino)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return nil // a prefix, not an object
	}
	if err := s.keepAlive(ino); err != nil {
		return err
	}
	if err := s.v.Unlink(dir, kp.leaf); err != nil {
		return err
	}
	return s.prune(kp, inos)
}

// CopyObject copies an object's bytes to another key (possibly in another
// bucket). With meta nil the source metadata is kept, otherwise replaced.
func (s *Store) CopyObject(srcBucket, srcKey, dstBucket, dstKey string, meta *Meta) (ObjectInfo, error) {
	src, err := s.GetObject(srcBucket, srcKey)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer src.Close()
	m := src.Info.Meta
	if meta != nil {
		m = *meta
	}
	return s.PutObject(dstBucket, dstKey, src.Reader(), src.Info.Size, m)
}
