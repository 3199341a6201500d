package store

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// chunkSize is the unit in which PutObject streams a body.
const chunkSize = 1 << 20

// smallObjectMax is the largest body created in place (smallObject): its
// data is written under the lock of the directory it goes in, which a
// larger body would hold too long for the other PUTs into it.
const smallObjectMax = 128 << 10

// chunkPool recycles the buffers of large bodies.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// emptyETag is the MD5 of no bytes.
const emptyETag = "d41d8cd98f00b204e9800998ecf8427e"

// ObjectInfo describes an object.
type ObjectInfo struct {
	Key          string
	Size         int64
	LastModified time.Time // the file's mtime (folder markers: when put)
	ETag         string    // MD5 of the content, lowercase hex, unquoted
	Meta         Meta      // ListObjects fills only StorageClass
	// VersionID is the version's ID in a bucket with versioning ("null"
	// for the null version), "" in a bucket that never had versioning.
	VersionID string
	// DeleteMarker and IsLatest are set in version listings.
	DeleteMarker bool
	IsLatest     bool
}

// PutObject stores the next size bytes of r as key (size -1: until EOF),
// replacing any object of that name atomically. See the package doc for
// how the write is staged.
//
// Reader contract: r is read until it returns io.EOF; with size ≥ 0 it is
// read once more after the size-th byte, so that a reader which verifies
// a checksum can give its verdict with EOF. Any other error from r, even
// one returned together with the final bytes (n > 0), abandons the write:
// nothing is stored, the staging file is removed and PutObject returns
// that error wrapped, so a verifying reader's ErrBadDigest reaches the
// caller through errors.Is. Bytes beyond size are not read. A reader that
// implements ChecksumReporter supplies the checksums stored with the object.
func (s *Store) PutObject(bucket, key string, r io.Reader, size int64, meta Meta) (ObjectInfo, error) {
	return s.putObject(bucket, key, r, size, meta, Precondition{})
}

func (s *store) putObject(bucket, key string, r io.Reader, size int64, meta Meta, cond Precondition) (info ObjectInfo, err error) {
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	kp, err := parseKey(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	meta = meta.clone()
	if err := meta.check(); err != nil {
		return ObjectInfo{}, err
	}
	project, err := s.quotas().bucketProject(bucket)
	if err != nil {
		return ObjectInfo{}, err
	}
	if kp.folder {
		// In a bucket with versioning a marker is a file, as every
		// version is.
		var empty bool
		if r, empty, err = peekEmpty(r, size); err != nil {
			return ObjectInfo{}, err
		}
		if state, err := s.bucketVersioning(bucket); err != nil {
			return ObjectInfo{}, err
		} else if empty && state == "" {
			return s.putFolder(bucket, kp, meta, cond)
		}
	}
	if err := s.quotas().checkRoom(project, size); err != nil {
		return ObjectInfo{}, err
	}
	if size >= 0 && size <= smallObjectMax {
		return s.putSmall(bucket, kp, key, r, size, meta, project, cond)
	}
	st, err := s.newStaging(project)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer st.discard()
	etag, n, err := s.writeBody(st.ino, r, size, MaxObjectSize)
	if err != nil {
		return ObjectInfo{}, err
	}
	meta.Checksums = meta.Checksums.reported(r)
	st.xattrs = xattrList(meta.xattrs(etag))
	p, err := s.place(bucket, kp, st, cond)
	if err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: key, Size: n, LastModified: p.mtime, ETag: etag, Meta: meta, VersionID: p.versionID()}, nil
}

// putSmall stores a body of at most smallObjectMax bytes. A new key is
// created in place with its data and metadata in one engine transaction
// (a smallObject); a key that exists is replaced through a staging file,
// as a large body is, since a rename is what replaces a name atomically.
func (s *store) putSmall(bucket string, kp keyPath, key string, r io.Reader, size int64, meta Meta, project uint32, cond Precondition) (ObjectInfo, error) {
	body, err := readSmallBody(r, size)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer body.release()
	etag := body.etag
	meta.Checksums = meta.Checksums.reported(r)
	obj := &smallObject{s: s, project: project, data: body.data, xattrs: xattrList(meta.xattrs(etag))}
	p, err := s.place(bucket, kp, obj, cond)
	if errors.Is(err, errNameTaken) {
		p, err = s.placeStaged(bucket, kp, obj, cond)
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: key, Size: size, LastModified: p.mtime, ETag: etag, Meta: meta, VersionID: p.versionID()}, nil
}

// placeStaged places a small object through a staging file, made with
// its body in one transaction.
func (s *store) placeStaged(bucket string, kp keyPath, obj *smallObject, cond Precondition) (placed, error) {
	st, err := s.newStagingWith(obj.project, obj.data)
	if err != nil {
		return placed{}, err
	}
	defer st.discard()
	st.xattrs = obj.xattrs
	return s.place(bucket, kp, st, cond)
}

// smallBody is a body read whole into a recycled buffer, with its MD5
// hex.
type smallBody struct {
	data []byte
	etag string
	buf  *[]byte
}

// release gives the buffer back; data must no longer be read.
func (b *smallBody) release() {
	if b.buf != nil {
		bodyBuffers[bodyClass(cap(*b.buf))].Put(b.buf)
		b.buf, b.data = nil, nil
	}
}

// bodyBuffers recycles the buffers of small bodies, one pool a
// power-of-two capacity from 1<<minBodyShift to chunkSize: the body is
// the largest thing a small PUT would otherwise allocate.
var bodyBuffers [bodyClasses]sync.Pool

const (
	minBodyShift = 12
	bodyClasses  = 20 - minBodyShift + 1 // up to chunkSize
)

// bodyClass is the class of the smallest buffer that holds n bytes.
func bodyClass(n int) int {
	if n <= 1<<minBodyShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minBodyShift
}

// readSmallBody reads a body of known size below chunkSize whole,
// following PutObject's reader contract. The caller releases it.
func readSmallBody(r io.Reader, size int64) (smallBody, error) {
	class := bodyClass(int(size))
	buf, _ := bodyBuffers[class].Get().(*[]byte)
	if buf == nil {
		b := make([]byte, 1<<(class+minBodyShift))
		buf = &b
	}
	body := smallBody{data: (*buf)[:size], buf: buf}
	n, err := readFull(io.LimitReader(r, size), body.data)
	switch {
	case err != nil && err != io.EOF:
		err = readError(err)
	case int64(n) != size:
		err = fmt.Errorf("read %d of %d bytes: %w", n, size, ErrIncompleteBody)
	default:
		if err = readEOF(r); err != nil {
			err = readError(err)
		}
	}
	if err != nil {
		body.release()
		return smallBody{}, err
	}
	sum := md5.Sum(body.data)
	body.etag = hex.EncodeToString(sum[:])
	return body, nil
}

// A placement is an object ready to take its name in place: a staging
// file to rename, or a small object to create.
type placement interface {
	// attrs are the metadata attributes the object takes with its name.
	attrs() []xfs.Xattr
	// install gives the object name in dir with attrs, in one engine
	// change, and returns its inode. The caller holds dir's lock.
	install(dir format.Ino, name string, attrs []xfs.Xattr) (format.Ino, error)
}

// errNameTaken: a smallObject's name exists, so it cannot be created
// in place.
var errNameTaken = errors.New("store: the object's name is taken")

// smallObject is a body small enough to be created under its name with
// its data and attributes in one engine transaction (xfs.CreateFile):
// one commit per new key, and no staging file.
type smallObject struct {
	s       *store
	project uint32
	data    []byte
	xattrs  []xfs.Xattr
}

func (o *smallObject) attrs() []xfs.Xattr { return o.xattrs }

func (o *smallObject) install(dir format.Ino, name string, attrs []xfs.Xattr) (format.Ino, error) {
	a := fileAttrs
	a.ProjID = o.project
	ino, err := o.s.v.Names().CreateFile(dir, name, a, o.data, attrs)
	if errors.Is(err, xfs.ErrExist) {
		return 0, errNameTaken
	}
	return ino, retryable(err)
}

// staging is a file in a staging directory of .xfs3/tmp, removed by
// discard unless it was renamed away. xattrs are set on it by the rename
// that puts it in place, in the same transaction.
type staging struct {
	s      *store
	dir    format.Ino
	name   string
	ino    format.Ino
	xattrs []xfs.Xattr
	moved  bool
}

// newStaging makes an empty staging file charged to the project of the
// bucket it is for, so that its blocks count against that bucket's quota
// as they are written.
func (s *store) newStaging(project uint32) (*staging, error) { return s.newStagingWith(project, nil) }

// newStagingWith is newStaging with the file made holding data (at most
// xfs.MaxCreateData bytes), in the same transaction.
func (s *store) newStagingWith(project uint32, data []byte) (*staging, error) {
	name := randomName()
	a := fileAttrs
	a.ProjID = project
	dir := s.stagingDir(name)
	ino, err := s.v.Names().CreateFile(dir, name, a, data, nil)
	if err != nil {
		return nil, err
	}
	return &staging{s: s, dir: dir, name: name, ino: ino}, nil
}

// discard removes the staging file unless it was renamed away.
func (st *staging) discard() {
	if !st.moved {
		st.s.v.Names().Unlink(st.dir, st.name)
	}
}

func (st *staging) attrs() []xfs.Xattr { return st.xattrs }

// install renames the staging file to name in dir, setting attrs.
func (st *staging) install(dir format.Ino, name string, attrs []xfs.Xattr) (format.Ino, error) {
	if err := retryable(st.s.v.Names().RenameSettingXattrs(st.dir, st.name, dir, name, attrs)); err != nil {
		return 0, err
	}
	st.moved = true
	return st.ino, nil
}

// place puts a complete object at key kp in bucket: it makes missing
// parent directories (moving objects that stand in their way beside
// them), then, under the leaf directory's lock, picks the leaf's name and
// installs the object there in one engine transaction (a staging file's
// rename, or a small object's create); a replaced object stays readable
// by its open readers. It returns the object's mtime, read before the
// lock drops (after that the inode may already be replaced and freed),
// and its version in a bucket with versioning. On failure the
// directories it made are removed again. cond is checked against the
// object being replaced under the same lock as the install. A directory
// of the path removed meanwhile makes it start again.
func (s *store) place(bucket string, kp keyPath, obj placement, cond Precondition) (placed, error) {
	return retry(func() (placed, error) { return s.placeOnce(bucket, kp, obj, cond) })
}

// placed is where place put an object: its inode, mtime and version (the
// zero version without versioning).
type placed struct {
	ino     format.Ino
	mtime   time.Time
	version version
}

// versionID is the version ID S3 reports for the placed object: none in
// a bucket that never had versioning.
func (p placed) versionID() string { return p.version.ID() }

func (s *store) placeOnce(bucket string, kp keyPath, obj placement, cond Precondition) (placed, error) {
	b, err := s.openBucket(bucket) // may have been deleted meanwhile
	if err != nil {
		return placed{}, err
	}
	state, err := s.versioning(b.Ino())
	if err != nil {
		b.Close()
		return placed{}, err
	}
	if state != "" {
		defer s.lockKey(b.Ino(), kp.key)()
	}
	bucketIno := b.Ino()
	lock, err := s.newVersionLock(bucketIno, state, obj.attrs(), s.now())
	if err != nil {
		b.Close()
		return placed{}, err
	}
	path, err := s.resolveDirs(b, kp, true)
	defer path.close()
	var p placed
	if err == nil {
		p, err = s.installIn(bucketIno, state, kp, path.last(), obj, cond, lock)
	}
	if err != nil && len(path) > 1 {
		s.prune(kp, path)
	}
	return p, err
}

// installIn is place's step under the leaf directory's lock.
func (s *store) installIn(bucket format.Ino, state string, kp keyPath, dir format.Ino, obj placement, cond Precondition, lock versionLock) (placed, error) {
	defer s.locks.lock(dir)()
	var p placed
	var err error
	if state != "" {
		p, err = s.installVersion(bucket, state, kp, dir, obj, cond, lock)
	} else {
		p.ino, err = s.installPlain(kp, dir, obj, cond)
	}
	if err != nil {
		return placed{}, err
	}
	if kp.folder {
		// An empty marker kept as the directory's attribute: the file
		// replaces it.
		if err := clearObjectXattrs(s.v, dir); err != nil {
			return placed{}, err
		}
	}
	stat, err := s.v.Stat(p.ino)
	if err != nil {
		return placed{}, err
	}
	p.mtime = stat.Mtime
	return p, nil
}

// installPlain installs an object in a bucket without versioning: it
// replaces the object of its name.
func (s *store) installPlain(kp keyPath, dir format.Ino, obj placement, cond Precondition) (format.Ino, error) {
	name, err := s.leafName(kp, dir)
	if err == nil {
		err = s.checkCondition(kp, dir, cond)
	}
	if err != nil {
		return 0, err
	}
	attrs := obj.attrs()
	if hashedName(name) {
		attrs = append(slices.Clip(attrs), xattrOf(xattrName, kp.leaf))
	}
	return obj.install(dir, name, attrs)
}

// leafName returns the name the object of kp takes in dir: where it is
// now if it exists, beside the directory of the same component if there
// is one, else its entry name.
// Callers hold dir's lock.
func (s *store) leafName(kp keyPath, dir format.Ino) (string, error) {
	name := entryName(kp.leaf)
	st, found, err := s.lookupStat(dir, name)
	switch {
	case err != nil:
		return "", err
	case found && isFile(&st):
		return name, nil
	case found && !st.IsDir():
		return "", fmt.Errorf("key %q: %q is neither object nor prefix: %w", kp.key, name, ErrKeyConflict)
	case found:
		return besideName(kp.leaf), nil
	}
	// An object may lie beside a directory that is gone (a crash between
	// pruning the directory and moving the object back).
	if _, found, err := s.findFile(dir, besideName(kp.leaf)); err != nil || found {
		return besideName(kp.leaf), err
	}
	return name, nil
}

// findLeaf finds the object file of kp in dir: at its entry name, or
// beside the directory of that name. Callers hold dir's lock; readers
// use openLeaf.
func (s *store) findLeaf(kp keyPath, dir format.Ino) (st xfs.Stat, name string, found bool, err error) {
	name = entryName(kp.leaf)
	if st, found, err = s.findFile(dir, name); err != nil || found {
		return st, name, found, err
	}
	name = besideName(kp.leaf)
	st, found, err = s.findFile(dir, name)
	return st, name, found, err
}

// findFile looks up a regular file; other types are not found.
func (s *store) findFile(dir format.Ino, name string) (xfs.Stat, bool, error) {
	st, found, err := s.lookupStat(dir, name)
	if err != nil || !found || !isFile(&st) {
		return xfs.Stat{}, false, err
	}
	return st, true, nil
}

// checkCondition checks cond against the object of kp in dir as it is
// now: its file, or for a folder marker without content the directory's
// marker attribute.
func (s *store) checkCondition(kp keyPath, dir format.Ino, cond Precondition) error {
	if cond.none() {
		return nil
	}
	st, _, found, err := s.findLeaf(kp, dir)
	if err != nil {
		return err
	}
	ino := st.Ino
	if !found && kp.folder {
		_, ferr := s.v.Xattrs().Get(dir, xattrFolder)
		if ferr != nil && !errors.Is(ferr, xfs.ErrNoData) {
			return ferr
		}
		found, ino = ferr == nil, dir
	}
	return cond.check(s.v, kp.key, ino, found)
}

func isFile(st *xfs.Stat) bool { return st.Mode&format.SIFMT == format.SIFREG }

// lookupStat looks name up in dir and stats it; found is false (and err
// nil) when there is no such name.
func (s *store) lookupStat(dir format.Ino, name string) (st xfs.Stat, found bool, err error) {
	ino, err := s.v.Names().Lookup(dir, name)
	if errors.Is(err, xfs.ErrNotFound) {
		return xfs.Stat{}, false, nil
	}
	if err != nil {
		return xfs.Stat{}, false, err
	}
	st, err = s.v.Stat(ino)
	return st, err == nil, err
}

// writeBody streams r into the staging file ino in chunkSize pieces,
// following PutObject's reader contract, and returns the MD5 hex and the
// byte count. Bodies over limit bytes give ErrEntityTooLarge.
func (s *store) writeBody(ino format.Ino, r io.Reader, size, limit int64) (string, int64, error) {
	if size > limit {
		return "", 0, fmt.Errorf("%d bytes (at most %d): %w", size, limit, ErrEntityTooLarge)
	}
	// A body that one WriteAt maps needs no preallocation (it would be a
	// transaction more); larger ones get their space in one extent, and a
	// full volume is found before the body is read.
	if size > chunkSize {
		if err := s.v.Files().Preallocate(ino, size); err != nil {
			return "", 0, err
		}
	}
	if size >= 0 && size < chunkSize {
		// Small bodies are the common case: a 1 MiB buffer each would
		// cost more in zeroing than the PUT itself.
		body, err := readSmallBody(r, size)
		if err == nil && size > 0 {
			_, err = s.v.Files().WriteAt(ino, body.data, 0)
		}
		body.release()
		return body.etag, size, err
	}
	body := r
	if size >= 0 {
		body = io.LimitReader(r, size)
	} else {
		body = io.LimitReader(r, limit+1)
	}
	p := newBodyPipe(func(b []byte, off int64) error {
		_, err := s.v.Files().WriteAt(ino, b, off)
		return err
	})
	defer p.stop()
	var off int64
	for !p.failed() {
		buf := p.buffer()
		n, rerr := readFull(body, *buf)
		if rerr != nil && rerr != io.EOF {
			return "", 0, readError(rerr)
		}
		if n > 0 {
			p.put(buf, n, off)
			off += int64(n)
		} else {
			p.unused(buf)
		}
		if rerr == io.EOF {
			break
		}
	}
	digest, err := p.finish()
	switch {
	case err != nil:
		return "", 0, err
	case off > limit:
		return "", 0, fmt.Errorf("body over %d bytes: %w", limit, ErrEntityTooLarge)
	case size >= 0 && off != size:
		return "", 0, fmt.Errorf("read %d of %d bytes: %w", off, size, ErrIncompleteBody)
	case size >= 0:
		if err := readEOF(r); err != nil {
			return "", 0, readError(err)
		}
	}
	return hex.EncodeToString(digest), off, nil
}

// bodyPipe moves a large body to its file in chunks, in three stages
// that overlap: the caller reads chunk n+1 from the client (checking its
// signature) while one goroutine takes the MD5 of chunk n and another
// writes it. The digest runs at about 640 MB/s a core here, and writing
// new blocks into the host's page cache costs its kernel about as much;
// done one after another with the reading, each would stall the client's
// stream. pipeDepth buffers go round: a chunk's is free again once it is
// both hashed and written.
type bodyPipe struct {
	hashes, writes chan *pipeChunk
	free           chan *[]byte
	bufs           [pipeDepth]*[]byte
	digests        chan []byte
	ends           chan error // the writer's first error, or nil
	broken         atomic.Bool
	// finish's results, once both stages have ended.
	ended  bool
	digest []byte
	err    error
}

// pipeDepth is how many chunk buffers a body in flight holds.
const pipeDepth = 4

type pipeChunk struct {
	buf  *[]byte
	data []byte
	off  int64
	refs atomic.Int32 // stages still to see it
}

// newBodyPipe starts the stages; write puts a chunk's bytes at their
// offset. After a failed write the writer skips the chunks that follow,
// and failed tells the reader to stop.
func newBodyPipe(write func(p []byte, off int64) error) *bodyPipe {
	p := &bodyPipe{
		hashes:  make(chan *pipeChunk, pipeDepth),
		writes:  make(chan *pipeChunk, pipeDepth),
		free:    make(chan *[]byte, pipeDepth),
		digests: make(chan []byte, 1),
		ends:    make(chan error, 1),
	}
	for i := range p.bufs {
		p.bufs[i] = chunkPool.Get().(*[]byte)
		p.free <- p.bufs[i]
	}
	go func() {
		d := md5.New()
		for c := range p.hashes {
			d.Write(c.data)
			p.release(c)
		}
		p.digests <- d.Sum(nil)
	}()
	go func() {
		var err error
		for c := range p.writes {
			if err == nil {
				if err = writeChunk(write, c); err != nil {
					p.broken.Store(true)
				}
			}
			p.release(c)
		}
		p.ends <- err
	}()
	return p
}

// writeChunk runs write for c, a panic in it turned into its error: on
// the pipe's goroutine no request's recovery would catch it, and the
// whole server would go down.
func writeChunk(write func(p []byte, off int64) error, c *pipeChunk) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write of the body at %d panicked: %v\n%s", c.off, r, debug.Stack())
		}
	}()
	return write(c.data, c.off)
}

// release marks a stage done with c; the last one frees its buffer.
func (p *bodyPipe) release(c *pipeChunk) {
	if c.refs.Add(-1) == 0 {
		p.free <- c.buf
	}
}

// buffer waits for a free chunk buffer.
func (p *bodyPipe) buffer() *[]byte { return <-p.free }

// put hands the first n bytes of buf, at off in the body, to both stages.
func (p *bodyPipe) put(buf *[]byte, n int, off int64) {
	c := &pipeChunk{buf: buf, data: (*buf)[:n], off: off}
	c.refs.Store(2)
	p.hashes <- c
	p.writes <- c
}

// unused gives back a buffer that got no bytes.
func (p *bodyPipe) unused(buf *[]byte) { p.free <- buf }

// failed reports whether a write has failed: reading on is pointless.
func (p *bodyPipe) failed() bool { return p.broken.Load() }

// finish ends the body: it waits for both stages and returns the MD5 of
// every chunk put and the first failed write's error.
func (p *bodyPipe) finish() ([]byte, error) {
	if !p.ended {
		close(p.hashes)
		close(p.writes)
		p.digest, p.err = <-p.digests, <-p.ends
		p.ended = true
	}
	return p.digest, p.err
}

// stop ends the stages, if finish has not, and returns the buffers to the
// pool: no write of this body runs after it returns.
func (p *bodyPipe) stop() {
	p.finish()
	for _, b := range p.bufs {
		chunkPool.Put(b)
	}
}

// maxEmptyReads bounds reads that return neither bytes nor an error.
const maxEmptyReads = 100

// readFull fills buf from r. Unlike io.ReadFull it returns r's error even
// when that error came with the bytes that filled buf: a verifying reader
// reports a bad digest exactly there.
func readFull(r io.Reader, buf []byte) (int, error) {
	n, empty := 0, 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// readEOF reads r once past a body of known size to collect the error a
// verifying reader may return with EOF; further bytes are ignored.
func readEOF(r io.Reader) error {
	var probe [1]byte
	for range maxEmptyReads {
		n, err := r.Read(probe[:])
		if err == io.EOF {
			return nil
		}
		if err != nil || n > 0 {
			return err
		}
	}
	return io.ErrNoProgress
}

// readError reports a failed body read; a reader ending early is an
// incomplete body.
func readError(err error) error {
	if err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: %w", ErrIncompleteBody, err)
	}
	return fmt.Errorf("read body: %w", err)
}

// peekEmpty tells whether a body is empty, reading it when its size is
// not declared; r2 then reads the whole body, r's checksums included.
func peekEmpty(r io.Reader, size int64) (r2 io.Reader, empty bool, err error) {
	switch {
	case size > 0:
		return r, false, nil
	case r == nil:
		return r, true, nil
	case size == 0:
		if err := readEOF(r); err != nil {
			return r, false, readError(err)
		}
		return r, true, nil
	}
	var one [1]byte
	n, err := readFull(r, one[:])
	if err != nil && err != io.EOF {
		return r, false, readError(err)
	}
	if n == 0 {
		return r, true, nil
	}
	return prepended{io.MultiReader(bytes.NewReader(one[:n]), r), r}, false, nil
}

// prepended is a body whose first bytes were read ahead; it reports the
// checksums of its source.
type prepended struct {
	io.Reader
	src io.Reader
}

func (p prepended) Checksums() Checksums { return Checksums{}.reported(p.src) }

// putFolder stores an empty folder marker as an attribute of its
// directory, so that a kernel mount shows a plain directory (markers with
// content are files, see the package doc). A marker file it replaces is
// removed after the attribute is set: a crash between the two leaves the
// file, which wins.
func (s *store) putFolder(bucket string, kp keyPath, meta Meta, cond Precondition) (ObjectInfo, error) {
	return retry(func() (ObjectInfo, error) {
		b, err := s.openBucket(bucket)
		if err != nil {
			return ObjectInfo{}, err
		}
		path, err := s.resolveDirs(b, kp, true)
		defer path.close()
		var info ObjectInfo
		if err == nil {
			info, err = s.setFolder(kp, path.last(), meta, cond)
		}
		if err != nil && len(path) > 1 {
			s.prune(kp, path)
		}
		return info, err
	})
}

// setFolder is putFolder's step under the directory's lock, which keeps
// a prune from removing dir between its check for a marker and its Rmdir.
func (s *store) setFolder(kp keyPath, dir format.Ino, meta Meta, cond Precondition) (ObjectInfo, error) {
	defer s.locks.lock(dir)()
	if gone, err := s.removed(dir); err != nil || gone {
		if gone {
			err = fmt.Errorf("folder %q: %w", kp.key, errRetry)
		}
		return ObjectInfo{}, err
	}
	_, ferr := s.v.Xattrs().Get(dir, xattrFolder)
	if ferr != nil && !errors.Is(ferr, xfs.ErrNoData) {
		return ObjectInfo{}, ferr
	}
	if err := cond.check(s.v, kp.key, dir, ferr == nil); err != nil {
		return ObjectInfo{}, err
	}
	if err := clearObjectXattrs(s.v, dir); err != nil {
		return ObjectInfo{}, err
	}
	now := time.Now().UTC()
	attrs := meta.xattrs(emptyETag)
	attrs[xattrFolder] = now.Format(time.RFC3339Nano)
	if err := setXattrs(s.v, dir, attrs); err != nil {
		return ObjectInfo{}, err
	}
	_, name, found, err := s.findLeaf(kp, dir)
	if err == nil && found {
		err = s.v.Names().Unlink(dir, name)
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: kp.key, LastModified: now, ETag: emptyETag, Meta: meta}, nil
}

// Object is an open object: its information at open time and its content,
// which stays readable (unchanged) even if the key is overwritten or
// deleted meanwhile. Close it.
type Object struct {
	Info ObjectInfo
	s    *store
	ino  format.Ino
	h    *xfs.Handle // the reference that keeps the inode readable
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
	return o.s.v.Files().ReadAt(o.ino, p, off)
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
	if o.h == nil {
		return nil
	}
	return o.h.Close()
}

// GetObject opens an object for reading.
func (s *Store) GetObject(bucket, key string) (*Object, error) {
	return s.getObject(bucket, key, "")
}

// getObject opens version id of an object ("" the current one).
func (s *store) getObject(bucket, key, id string) (*Object, error) {
	info, h, isFile, err := s.head(bucket, key, id)
	if err != nil {
		return nil, err
	}
	o := &Object{Info: info, s: s}
	if isFile {
		o.h, o.ino = h, h.Ino()
	} else {
		h.Close()
	}
	if err := s.refuseRotten(o); err != nil { // found rotten by a scrub
		o.Close()
		return nil, err
	}
	return o, nil
}

// HeadObject returns an object's information.
func (s *Store) HeadObject(bucket, key string) (ObjectInfo, error) {
	return s.headObject(bucket, key, "")
}

func (s *store) headObject(bucket, key, id string) (ObjectInfo, error) {
	info, h, _, err := s.head(bucket, key, id)
	if err == nil {
		h.Close()
	}
	return info, err
}

// head resolves key and returns the object's inode held (the caller
// closes h): its file, or for a folder marker kept the old way, as an
// attribute of its directory, that directory (isFile false). id names a
// version ("" the current one). It takes no lock: every name it reads
// is one engine lookup taking a reference, and every state between the
// steps of a key-mapping change reads as the same keys.
func (s *store) head(bucket, key, id string) (info ObjectInfo, h *xfs.Handle, isFile bool, err error) {
	defer s.noteSick(bucket, key, &err)
	kp, err := parseKey(key)
	if err != nil {
		return ObjectInfo{}, nil, false, err
	}
	if id != "" {
		if err := checkVersionID(id); err != nil {
			return ObjectInfo{}, nil, false, err
		}
	}
	b, err := s.openBucket(bucket)
	if err != nil {
		return ObjectInfo{}, nil, false, err
	}
	state, err := s.versioning(b.Ino())
	if err != nil {
		b.Close()
		return ObjectInfo{}, nil, false, err
	}
	if id != "" {
		info, h, err := s.openVersion(b, state, kp, id)
		return info, h, err == nil, err
	}
	bucketIno := b.Ino()
	path, err := s.resolveDirs(b, kp, false)
	defer path.close()
	if errors.Is(err, ErrNoSuchKey) && state != "" {
		return ObjectInfo{}, nil, false, s.latestMarker(bucketIno, kp, err)
	}
	if err != nil {
		return ObjectInfo{}, nil, false, err
	}
	dir := path.last()
	h, st, err := s.openLeaf(kp, dir)
	if err != nil {
		return ObjectInfo{}, nil, false, err
	}
	if h != nil {
		info, err := s.fileInfo(key, h, &st, state)
		if err != nil {
			h.Close()
			return ObjectInfo{}, nil, false, err
		}
		return info, h, true, nil
	}
	notFound := fmt.Errorf("key %q: %w", key, ErrNoSuchKey)
	if state != "" {
		// A delete marker may be the key's latest version.
		notFound = s.latestMarker(bucketIno, kp, notFound)
	}
	if !kp.folder {
		return ObjectInfo{}, nil, false, notFound
	}
	info, h, err = s.folderAttr(key, dir, state)
	if err == nil && h == nil {
		err = notFound
	}
	return info, h, false, err
}

// folderAttr opens the empty folder marker kept as the attribute of dir
// (held by the caller), the old way; h is nil when there is none. In a
// bucket with versioning it is the null version.
func (s *store) folderAttr(key string, dir format.Ino, state string) (ObjectInfo, *xfs.Handle, error) {
	meta, etag, ftime, isFolder, err := readMeta(s.v, dir)
	if err != nil || !isFolder {
		return ObjectInfo{}, nil, err
	}
	h, err := s.v.Files().Open(dir)
	if err != nil {
		return ObjectInfo{}, nil, err
	}
	info := ObjectInfo{Key: key, LastModified: ftime, ETag: etag, Meta: meta}
	if state != "" {
		info.VersionID = NullVersion
	}
	return info, h, nil
}

// fileInfo reads the information of the object file h (st its stat) of
// key; in a bucket with versioning (state not "") with its version ID.
func (s *store) fileInfo(key string, h *xfs.Handle, st *xfs.Stat, state string) (ObjectInfo, error) {
	meta, etag, _, _, err := readMeta(s.v, h.Ino())
	if err != nil {
		return ObjectInfo{}, err
	}
	info := ObjectInfo{Key: key, Size: st.Size, LastModified: st.Mtime, ETag: etag, Meta: meta}
	if state != "" {
		v, err := s.versionOfFile(h.Ino(), st.Mtime)
		if err != nil {
			return ObjectInfo{}, err
		}
		info.VersionID = v.ID()
	}
	return info, nil
}

// openLeaf finds and holds the object file of kp in dir, as findLeaf
// does, without dir's lock; h is nil when there is none. Finding a name
// is always right (it held the object then); not finding one could be
// the instant an object moves back from beside a pruned directory
// between the two lookups, so a miss is checked again under dir's lock,
// shared.
func (s *store) openLeaf(kp keyPath, dir format.Ino) (*xfs.Handle, xfs.Stat, error) {
	names := [2]string{entryName(kp.leaf), besideName(kp.leaf)}
	for _, locked := range []bool{false, true} {
		if locked {
			defer s.locks.rlock(dir)()
		}
		for _, name := range names {
			h, st, err := s.openEntry(dir, name)
			if err != nil {
				return nil, xfs.Stat{}, err
			}
			if h != nil && isFile(&st) {
				return h, st, nil
			}
			if h != nil {
				h.Close()
			}
		}
	}
	return nil, xfs.Stat{}, nil
}

// DeleteObject removes an object and then every directory above it left
// empty, up to the bucket, except folder markers. A missing key is not an
// error.
func (s *Store) DeleteObject(bucket, key string) (err error) {
	defer s.settle(&err)
	return s.deleteObject(bucket, key)
}

// DeleteObjects deletes several keys of a bucket, each as DeleteObject
// would, and returns one error per key (nil for success). They are made
// durable together, with one log force for the lot. Keys that share a
// directory (a prefix up to the last "/") find it once and leave it
// together (xfs.Namespace.UnlinkFiles: a transaction for up to about thirty
// of them), and the directory is pruned once after.
func (s *Store) DeleteObjects(bucket string, keys []string) []error {
	errs := make([]error, len(keys))
	if state, err := s.bucketVersioning(bucket); err == nil && state != "" {
		// Each key gets its delete marker under its own lock.
		for i, k := range keys {
			_, errs[i] = s.deleteKey(bucket, k, "", DeleteOptions{})
		}
		var err error
		s.settle(&err)
		return errorsOr(errs, err)
	}
	done := make([]bool, len(keys))
	groups := map[string][]int{}
	var order []string
	kps := make([]keyPath, len(keys))
	for i, k := range keys {
		kp, err := parseKey(k)
		if err != nil || kp.folder {
			continue // one by one: it reports the error, or clears the marker
		}
		kps[i] = kp
		// The key up to its last "/" names its directory; joining the
		// components would not ("/x" and "x" both have "" before x).
		dir := kp.key[:len(kp.key)-len(kp.leaf)]
		if groups[dir] == nil {
			order = append(order, dir)
		}
		groups[dir] = append(groups[dir], i)
	}
	for _, dir := range order {
		if idx := groups[dir]; len(idx) > 1 {
			s.deleteLeaves(bucket, kps, idx, errs, done)
		}
	}
	for i, k := range keys {
		if !done[i] {
			errs[i] = s.deleteObject(bucket, k)
		} else {
			s.noteSick(bucket, k, &errs[i])
		}
	}
	var err error
	s.settle(&err)
	return errorsOr(errs, err)
}

// errorsOr sets err where errs has none: a batch that failed to become
// durable failed for every key.
func errorsOr(errs []error, err error) []error {
	if err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

func (s *store) deleteObject(bucket, key string) error {
	_, err := s.deleteKey(bucket, key, "", DeleteOptions{})
	return err
}

// deleteKey deletes version id of key ("" the key: in a bucket with
// versioning that makes a delete marker).
func (s *store) deleteKey(bucket, key, id string, opt DeleteOptions) (res DeleteResult, err error) {
	defer s.noteSick(bucket, key, &err)
	kp, err := parseKey(key)
	if err != nil {
		return DeleteResult{}, err
	}
	if id != "" {
		if err := checkVersionID(id); err != nil {
			return DeleteResult{}, err
		}
	}
	return retry(func() (DeleteResult, error) {
		b, err := s.openBucket(bucket)
		if err != nil {
			return DeleteResult{}, err
		}
		state, err := s.versioning(b.Ino())
		switch {
		case err != nil:
			b.Close()
			return DeleteResult{}, err
		case id != "":
			return s.deleteVersion(b, kp, id, opt)
		case state != "":
			return s.deleteVersioned(b, state, kp, opt.ifCurrent)
		}
		return DeleteResult{}, s.deletePlain(b, kp, opt.ifModified)
	})
}

// deletePlain deletes a key in a bucket without versioning (b, which it
// takes over).
func (s *store) deletePlain(b *xfs.Handle, kp keyPath, ifModified time.Time) error {
	path, err := s.resolveDirs(b, kp, false)
	defer path.close()
	if errors.Is(err, ErrNoSuchKey) {
		return nil
	}
	if err != nil {
		return err
	}
	if removed, err := s.removeLeaf(kp, path.last(), ifModified); err != nil || !removed {
		return err
	}
	return s.prune(kp, path)
}

// deleteLeaves deletes the objects at idx, whose keys share their
// directories, as deleteObject would each, and marks done those it
// settled. A key whose name turns out to be no object file of its own
// (a directory or something else by that name) gets unlinkLeaf's second
// look, beside the directory; one whose path fails to resolve is left
// to deleteObject, which reports why.
func (s *store) deleteLeaves(bucket string, kps []keyPath, idx []int, errs []error, done []bool) {
	b, err := s.openBucket(bucket)
	if err != nil {
		return
	}
	kp := kps[idx[0]]
	path, err := s.resolveDirs(b, kp, false)
	defer path.close()
	if errors.Is(err, ErrNoSuchKey) {
		for _, i := range idx {
			done[i] = true // no directory, so no such key: nothing to do
		}
		return
	}
	if err != nil {
		return
	}
	dir := path.last()
	var removed []int
	func() {
		defer s.locks.lock(dir)()
		names := make([]string, len(idx))
		for j, i := range idx {
			names[j] = entryName(kps[i].leaf)
		}
		for j, err := range s.v.Names().UnlinkFiles(dir, names) {
			i := idx[j]
			if notObjectFile(err) {
				err = s.v.Names().UnlinkFile(dir, besideName(kps[i].leaf))
				if notObjectFile(err) {
					done[i] = true // no such key
					continue
				}
			}
			errs[i], done[i] = err, true
			if err == nil {
				removed = append(removed, i)
			}
		}
	}()
	if len(removed) == 0 {
		return
	}
	if err := s.prune(kp, path); err != nil {
		for _, i := range removed {
			errs[i] = err
		}
	}
}

// notObjectFile tells whether an unlink found no object file at its name:
// nothing there, a directory or an inode of another kind.
func notObjectFile(err error) bool {
	return errors.Is(err, xfs.ErrNotFound) || errors.Is(err, xfs.ErrIsDir) || errors.Is(err, xfs.ErrInvalid)
}

// removeLeaf is deleteObject's step under the directory's lock; removed
// tells whether something went that may leave directories to prune.
// With ifModified set, only an object of that Last-Modified goes (else
// errChanged): its file's mtime, or for a folder marker kept in its
// directory's attributes the time recorded there.
func (s *store) removeLeaf(kp keyPath, dir format.Ino, ifModified time.Time) (removed bool, err error) {
	defer s.locks.lock(dir)()
	if !ifModified.IsZero() {
		st, _, found, err := s.findLeaf(kp, dir)
		if err != nil {
			return false, err
		}
		modified := st.Mtime
		if !found && kp.folder {
			v, ferr := s.v.Xattrs().Get(dir, xattrFolder)
			if ferr != nil && !errors.Is(ferr, xfs.ErrNoData) {
				return false, ferr
			}
			modified, _ = time.Parse(time.RFC3339Nano, string(v))
			found = ferr == nil
		}
		if !found || !modified.Equal(ifModified) {
			return false, errChanged
		}
	}
	found, err := s.unlinkLeaf(kp, dir)
	if err != nil {
		return false, err
	}
	if kp.folder {
		return true, clearObjectXattrs(s.v, dir)
	}
	return found, nil
}

// unlinkLeaf removes the object file of kp in dir, where findLeaf would
// find it (at its entry name, or beside a directory of that name), each
// name a lookup and a type check inside the unlink: a DELETE costs no
// separate Lookup and Stat. The caller holds dir's lock.
func (s *store) unlinkLeaf(kp keyPath, dir format.Ino) (found bool, err error) {
	for _, name := range [...]string{entryName(kp.leaf), besideName(kp.leaf)} {
		err := s.v.Names().UnlinkFile(dir, name)
		switch {
		case err == nil:
			return true, nil
		case !notObjectFile(err):
			return false, err
		}
	}
	return false, nil
}

// CopyObject copies an object's bytes to another key (possibly in another
// bucket). With meta nil the source metadata, tags and checksums are kept
// (S3's COPY directive); otherwise meta replaces them, tags included, and
// the source's checksums stay unless meta brings its own. A checksum the
// copy keeps must describe it whole: when meta's Checksums.Algorithm names
// one, or the source's checksum is composite (made of parts the copy does
// not have), the copy gets a checksum of that algorithm computed while its
// bytes are copied.
func (s *Store) CopyObject(srcBucket, srcKey, dstBucket, dstKey string, meta *Meta) (ObjectInfo, error) {
	return s.copyObject(srcBucket, srcKey, "", dstBucket, dstKey, meta)
}

// copyObject copies version srcID of the source ("" its current
// version), as CopyObject.
func (s *store) copyObject(srcBucket, srcKey, srcID, dstBucket, dstKey string, meta *Meta) (info ObjectInfo, err error) {
	defer s.noteSick(dstBucket, dstKey, &err) // a sick source is noted by its head
	defer s.settle(&err)
	src, err := s.getObject(srcBucket, srcKey, srcID)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer src.Close()
	m := src.Info.Meta
	m.Lock = ObjectLock{} // a copy is a new version: its own lock or the default
	if meta != nil {
		m = *meta
		if m.Checksums == (Checksums{}) {
			m.Checksums = src.Info.Meta.Checksums // the content is the same
		}
	}
	body, err := copyChecksummed(src.Reader(), &m.Checksums)
	if err != nil {
		return ObjectInfo{}, err
	}
	if info, ok, err := s.putCloned(dstBucket, dstKey, src, m, body); ok || err != nil {
		return info, err
	}
	return s.putObject(dstBucket, dstKey, body, src.Info.Size, m, Precondition{})
}
