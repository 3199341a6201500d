package store

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// Uploads is the store's multipart uploads: an upload is a directory
// under the system area holding one file per part; completing it moves
// the parts' extents onto one file and renames that into place, so no
// byte is copied where the parts are block-aligned. The uploads in
// progress are indexed in memory (upMu); an upload's own mu orders the
// changes to it. Uploads comes from Store.Uploads.
type Uploads struct{ *store }

// Uploads returns the store's multipart uploads.
func (s *Store) Uploads() Uploads { return Uploads{s.store} }

func (s *store) multipart() Uploads { return Uploads{s} }

// Multipart limits, as S3 sets them.
const (
	MinPartSize   = 5 << 20 // every part but the last
	MaxPartSize   = 5 << 30
	MaxPartNumber = 10000
	// MaxObjectSize bounds PutObject and a completed upload.
	MaxObjectSize = 5 << 40
)

// UploadInfo describes a multipart upload in progress.
type UploadInfo struct {
	Bucket    string
	Key       string
	UploadID  string
	Initiated time.Time
	Meta      Meta // what CreateMultipartUpload was given; the object gets it
}

// PartInfo describes one uploaded part.
type PartInfo struct {
	PartNumber   int
	Size         int64
	ETag         string // MD5 of the part, lowercase hex, unquoted
	LastModified time.Time
	Checksums    Checksums // those sent with the part
}

// CompletePart names a part in CompleteMultipartUpload, as the client lists it.
type CompletePart struct {
	PartNumber int
	ETag       string // quoted or not
	// Checksums the client lists for the part: each must equal the
	// part's stored checksum of that algorithm (else ErrInvalidPart).
	Checksums Checksums
}

// CompleteOptions are CompleteWith's optional checks.
type CompleteOptions struct {
	// Checksums the client expects of the object (composite ones with or
	// without their "-N"); a mismatch is ErrBadDigest, one of another
	// algorithm than the upload's ErrInvalidChecksum.
	Checksums Checksums
	// If makes the completion conditional (If-Match, If-None-Match).
	If Precondition
	// ObjectSize, when set, is the size the client expects of the object
	// (S3's x-amz-mp-object-size); another size is ErrObjectSizeMismatch,
	// found before any part is consumed.
	ObjectSize *int64
}

// ListPartsOptions selects a page of ListParts.
type ListPartsOptions struct {
	PartNumberMarker int // only parts after this number
	MaxParts         int // 0: 1000
}

// ListPartsResult is one page of parts, in part-number order.
type ListPartsResult struct {
	Upload               UploadInfo
	Parts                []PartInfo
	IsTruncated          bool
	NextPartNumberMarker int
}

// ListUploadsOptions selects a page of ListMultipartUploads.
type ListUploadsOptions struct {
	Prefix         string
	Delimiter      string
	KeyMarker      string
	UploadIDMarker string
	MaxUploads     int // 0: 1000
}

// ListUploadsResult is one page of uploads in (key, initiation) order.
type ListUploadsResult struct {
	Uploads            []UploadInfo
	CommonPrefixes     []string
	IsTruncated        bool
	NextKeyMarker      string
	NextUploadIDMarker string
}

// Xattrs of an upload's directory (besides its Meta) and of its parts
// (besides user.xfs3.etag and the checksums).
const (
	xattrUploadBucket    = xattrPrefix + "upload-bucket"
	xattrUploadKey       = xattrPrefix + "upload-key"
	xattrUploadInitiated = xattrPrefix + "upload-initiated" // RFC 3339, nanoseconds
	xattrPartSize        = xattrPrefix + "part-size"        // decimal bytes
)

// defaultMaxList is the page size of ListParts and ListMultipartUploads,
// and the most they return.
const defaultMaxList = 1000

// upload is an upload in progress. mu serialises changes to its
// directory (a part renamed in, completion, abort) and its readers;
// gone, set under mu, tells that it completed or was aborted.
type upload struct {
	info UploadInfo
	dir  format.Ino
	mu   sync.Mutex
	gone bool
}

// newUploadID returns 24 random bytes in hex: unguessable, a valid file
// name, and safe as a command-line argument (base64 could begin with '-',
// which the aws CLI takes for an option).
func newUploadID() string {
	var b [24]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// partName is the file name of part number n in its upload's directory.
func partName(n int) string { return fmt.Sprintf("%05d", n) }

// parsePartName is the inverse of partName; ok is false for other names.
func parsePartName(name string) (int, bool) {
	if len(name) != 5 {
		return 0, false
	}
	n, err := strconv.Atoi(name)
	return n, err == nil && n >= 1 && n <= MaxPartNumber
}

// loadUploads indexes the upload directories; entries without the
// upload attributes (none are expected: uploads are renamed in complete)
// are skipped.
func (s Uploads) loadUploads() error {
	ents, err := s.v.Names().ReadDir(s.upl)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type != format.FTDir {
			continue
		}
		u, err := s.readUpload(e.Ino, e.Name)
		if err != nil {
			return fmt.Errorf("upload %s: %w", e.Name, err)
		}
		if u != nil {
			s.uploads[e.Name] = u
		}
	}
	return nil
}

// readUpload decodes an upload directory's attributes (nil: not an upload).
func (s Uploads) readUpload(dir format.Ino, id string) (*upload, error) {
	meta, _, _, _, err := readMeta(s.v, dir)
	if err != nil {
		return nil, err
	}
	var vals [3]string
	for i, name := range []string{xattrUploadBucket, xattrUploadKey, xattrUploadInitiated} {
		v, err := s.v.Xattrs().Get(dir, name)
		if errors.Is(err, xfs.ErrNoData) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		vals[i] = string(v)
	}
	initiated, err := time.Parse(time.RFC3339Nano, vals[2])
	if err != nil {
		return nil, nil
	}
	return &upload{dir: dir, info: UploadInfo{Bucket: vals[0], Key: vals[1], UploadID: id, Initiated: initiated, Meta: meta}}, nil
}

// countUploads is the number of uploads in progress into bucket.
func (s Uploads) countUploads(bucket string) int {
	s.upMu.Lock()
	defer s.upMu.Unlock()
	n := 0
	for _, u := range s.uploads {
		if u.info.Bucket == bucket {
			n++
		}
	}
	return n
}

// findUpload returns the upload id of key in bucket, locked; the caller
// unlocks u.mu. A completed, aborted or unknown upload, or one of another
// key, gives ErrNoSuchUpload.
func (s Uploads) findUpload(bucket, key, id string) (*upload, error) {
	if _, err := s.bucket(bucket); err != nil {
		return nil, err
	}
	s.upMu.Lock()
	u := s.uploads[id]
	s.upMu.Unlock()
	if u != nil {
		u.mu.Lock()
		if !u.gone && u.info.Bucket == bucket && u.info.Key == key {
			return u, nil
		}
		u.mu.Unlock()
	}
	return nil, fmt.Errorf("upload %q of %s/%s: %w", id, bucket, key, ErrNoSuchUpload)
}

// dropUpload forgets u and removes its directory with its parts; the
// caller holds u.mu.
func (s Uploads) dropUpload(u *upload) error {
	u.gone = true
	s.upMu.Lock()
	delete(s.uploads, u.info.UploadID)
	s.upMu.Unlock()
	return s.removeTree(s.upl, u.info.UploadID)
}

// Create starts an upload of key; the object appears only
// when CompleteMultipartUpload succeeds. The upload is a directory
// .xfs3/uploads/<UploadID> holding its bucket, key, initiation time and
// meta in xattrs. Of meta's Checksums only Algorithm and Type are kept:
// the algorithm every part's checksum must use and the type of the
// object's (ErrInvalidChecksum for an unknown algorithm or a type it does
// not have; a type without an algorithm is ignored; the type defaults to
// the algorithm's). It is made in .xfs3/tmp and renamed into place whole.
func (s Uploads) Create(bucket, key string, meta Meta) (up UploadInfo, err error) {
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	if _, err := parseKey(key); err != nil {
		return UploadInfo{}, err
	}
	meta = meta.clone()
	if meta.Checksums, err = uploadChecksums(meta.Checksums); err != nil {
		return UploadInfo{}, err
	}
	if err := meta.check(); err != nil {
		return UploadInfo{}, err
	}
	project, err := s.quotas().bucketProject(bucket)
	if err != nil {
		return UploadInfo{}, err
	}
	info := UploadInfo{Bucket: bucket, Key: key, UploadID: newUploadID(), Initiated: time.Now().UTC(), Meta: meta}
	name := randomName()
	a := sysAttrs
	a.ProjID = project // its parts are charged to the bucket
	staged := s.stagingDir(name)
	dir, err := s.v.Names().Mkdir(staged, name, a)
	if err != nil {
		return UploadInfo{}, err
	}
	moved := false
	defer func() {
		if !moved {
			s.removeTree(staged, name)
		}
	}()
	attrs := meta.metaXattrs()
	attrs[xattrUploadBucket] = bucket
	attrs[xattrUploadKey] = key
	attrs[xattrUploadInitiated] = info.Initiated.Format(time.RFC3339Nano)
	if err := setXattrs(s.v, dir, attrs); err != nil {
		return UploadInfo{}, err
	}
	b, err := s.openBucket(bucket)
	if err != nil {
		return UploadInfo{}, err
	}
	defer b.Close()
	// The bucket's lock shared: DeleteBucket (exclusive) sees either no
	// bucket here or this upload in the index.
	defer s.locks.rlock(b.Ino())()
	if gone, err := s.removed(b.Ino()); err != nil || gone {
		if gone {
			err = fmt.Errorf("bucket %q: %w", bucket, ErrNoSuchBucket)
		}
		return UploadInfo{}, err
	}
	if err := s.v.Names().Rename(staged, name, s.upl, info.UploadID); err != nil {
		return UploadInfo{}, err
	}
	moved = true
	s.upMu.Lock()
	s.uploads[info.UploadID] = &upload{info: info, dir: dir}
	s.upMu.Unlock()
	info.Meta = meta.clone() // the index's copy stays private
	return info, nil
}

// UploadPart stores part number part (1..MaxPartNumber) of an upload from the
// next size bytes of r, replacing an earlier part of that number.
// It streams into a staging file and renames it over the part's file, so
// a replaced part stays whole until the new one is complete. r follows
// PutObject's reader contract; sums are stored with the part, unchecked.
func (s Uploads) UploadPart(bucket, key, uploadID string, part int, r io.Reader, size int64, sums Checksums) (info PartInfo, err error) {
	return s.uploadPart(bucket, key, uploadID, part, size, func(st *staging) (string, int64, Checksums, error) {
		etag, n, err := s.writeBody(st.ino, r, size, MaxPartSize)
		return etag, n, sums.reported(r), err
	})
}

// CopyPart stores part number part of an upload as a copy of n bytes of
// src from off (UploadPartCopy), sharing src's blocks where the range
// allows (see cloneCopy) and copying bytes otherwise.
func (s Uploads) CopyPart(bucket, key, uploadID string, part int, src *Object, off, n int64) (PartInfo, error) {
	if off < 0 || n < 0 || off+n > src.Info.Size {
		return PartInfo{}, fmt.Errorf("bytes %d to %d of a %d-byte object: %w", off, off+n, src.Info.Size, ErrInvalidRange)
	}
	return s.uploadPart(bucket, key, uploadID, part, n, func(st *staging) (string, int64, Checksums, error) {
		etag, ok, err := s.cloneCopy(st.ino, src, off, n)
		if ok || err != nil {
			return etag, n, Checksums{}, err
		}
		etag, got, err := s.writeBody(st.ino, io.NewSectionReader(src, off, n), n, MaxPartSize)
		return etag, got, Checksums{}, err
	})
}

// uploadPart stores a part whose content fill puts in a staging file,
// returning its ETag, size and checksums.
func (s Uploads) uploadPart(bucket, key, uploadID string, part int, size int64, fill func(*staging) (string, int64, Checksums, error)) (info PartInfo, err error) {
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	if part < 1 || part > MaxPartNumber {
		return PartInfo{}, fmt.Errorf("part number %d (1 to %d): %w", part, MaxPartNumber, ErrInvalidPart)
	}
	u, err := s.findUpload(bucket, key, uploadID)
	if err != nil {
		return PartInfo{}, err
	}
	u.mu.Unlock() // streaming needs no lock; the rename below retakes it
	project, err := s.quotas().bucketProject(bucket)
	if err != nil {
		return PartInfo{}, err
	}
	if err := s.quotas().checkRoom(project, size); err != nil {
		return PartInfo{}, err
	}
	st, err := s.newStaging(project)
	if err != nil {
		return PartInfo{}, err
	}
	defer st.discard()
	etag, n, sums, err := fill(st)
	if err != nil {
		return PartInfo{}, err
	}
	if err := checkPartChecksums(u, sums); err != nil {
		return PartInfo{}, err
	}
	attrs := map[string]string{xattrETag: etag, xattrPartSize: strconv.FormatInt(n, 10)}
	for _, c := range sums.named() {
		if *c.val != "" {
			attrs[c.name] = *c.val
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.gone {
		return PartInfo{}, fmt.Errorf("upload %q: %w", uploadID, ErrNoSuchUpload)
	}
	if err := s.v.Names().RenameSettingXattrs(st.dir, st.name, u.dir, partName(part), xattrList(attrs)); err != nil {
		return PartInfo{}, fmt.Errorf("place part with its metadata xattrs: %w", err)
	}
	st.moved = true
	stat, err := s.v.Stat(st.ino)
	if err != nil {
		return PartInfo{}, err
	}
	return PartInfo{PartNumber: part, Size: n, ETag: etag, LastModified: stat.Mtime, Checksums: sums}, nil
}

// storedPart is a part file as CompleteMultipartUpload uses it.
type storedPart struct {
	number int
	ino    format.Ino
	size   int64
	md5    []byte
	sums   Checksums
}

// Complete joins the listed parts into the object key,
// replacing any object of that name atomically. The ETag is the MD5 of the
// parts' binary MD5s, in hex, followed by "-" and the number of parts.
//
// The object is built in a staging file: a part is moved there by
// remapping its extents (xfs.Files.AppendExtents, no data copied) while
// the staging size is a multiple of the block size, and copied otherwise
// (every part after one of unaligned size). It gets the upload's Meta
// (tags included, checksums empty) and is renamed into place as PutObject
// does; then the upload's directory goes, with its unused parts.
//
// The object remembers the upload ID and its parts' numbers and sizes
// (Object.Parts). A completion of an upload that is gone succeeds again,
// answering the object as it is, when that object came from the upload
// with the same part numbers and ETags.
//
// Errors: ErrNoSuchUpload; ErrInvalidPartOrder when part numbers do not
// ascend; ErrInvalidPart for an empty list, a part that is missing, whose
// ETag (quoted or not) differs, or whose content an earlier failed
// completion consumed; ErrEntityTooSmall for a part but the last under
// MinPartSize; ErrEntityTooLarge over MaxObjectSize. A completion that
// fails after moving parts (the volume is full, a name on the key's
// path is neither file nor directory) leaves those parts consumed: retrying gives
// ErrInvalidPart for them.
func (s Uploads) Complete(bucket, key, uploadID string, parts []CompletePart) (info ObjectInfo, err error) {
	return s.CompleteWith(bucket, key, uploadID, parts, CompleteOptions{})
}

// CompleteWith is Complete with checks of
// opt. The object's checksum is computed from its parts' (see
// objectChecksum) and kept with the parts' numbers, sizes, ETags and
// checksums (ObjectParts), all set in the transaction of its metadata.
// A condition (opt.If) that fails before the parts are joined leaves the
// upload as it was; one that fails only when the object is put in place
// (a concurrent write got there first) leaves its parts consumed, like any
// failure at that step.
func (s Uploads) CompleteWith(bucket, key, uploadID string, parts []CompletePart, opt CompleteOptions) (info ObjectInfo, err error) {
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	kp, err := parseKey(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	u, err := s.findUpload(bucket, key, uploadID)
	if errors.Is(err, ErrNoSuchUpload) {
		if info, ok, rerr := s.repeatedCompletion(bucket, kp, uploadID, parts); rerr != nil || ok {
			return info, rerr
		}
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	defer u.mu.Unlock()
	stored, err := s.checkParts(u, parts)
	if err != nil {
		return ObjectInfo{}, err
	}
	objSums, objParts, err := objectChecksum(u, parts, stored, opt.Checksums)
	if err != nil {
		return ObjectInfo{}, err
	}
	if opt.ObjectSize != nil {
		var total int64
		for _, p := range stored {
			total += p.size
		}
		if total != *opt.ObjectSize {
			return ObjectInfo{}, fmt.Errorf("the parts make %d bytes, the request expects %d: %w", total, *opt.ObjectSize, ErrObjectSizeMismatch)
		}
	}
	if err := s.checkPrecondition(bucket, key, opt.If); err != nil {
		return ObjectInfo{}, err
	}
	project, err := s.quotas().bucketProject(bucket)
	if err != nil {
		return ObjectInfo{}, err
	}
	st, err := s.newStaging(project)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer st.discard()
	size, err := s.joinParts(st.ino, stored)
	if err != nil {
		return ObjectInfo{}, err
	}
	sums := md5.New()
	for _, p := range stored {
		sums.Write(p.md5)
	}
	etag := fmt.Sprintf("%x-%d", sums.Sum(nil), len(stored))
	meta := u.info.Meta.clone()
	meta.Checksums = objSums
	attrs := meta.xattrs(etag)
	partsXattrs(attrs, objParts)
	attrs[xattrFromUpload] = uploadID
	st.xattrs = xattrList(attrs)
	p, err := s.place(bucket, kp, st, opt.If)
	if err != nil {
		return ObjectInfo{}, err
	}
	// The object is in place; a leftover directory would only come back
	// as an upload of consumed parts after a restart.
	s.dropUpload(u)
	return ObjectInfo{Key: key, Size: size, LastModified: p.mtime, ETag: etag, Meta: meta, VersionID: p.versionID()}, nil
}

// checkParts validates a completion's part list against the stored parts.
func (s Uploads) checkParts(u *upload, parts []CompletePart) ([]storedPart, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no parts listed: %w", ErrInvalidPart)
	}
	for i, p := range parts {
		if i > 0 && p.PartNumber <= parts[i-1].PartNumber {
			return nil, fmt.Errorf("part %d listed after part %d: %w", p.PartNumber, parts[i-1].PartNumber, ErrInvalidPartOrder)
		}
		if p.PartNumber < 1 || p.PartNumber > MaxPartNumber {
			return nil, fmt.Errorf("part number %d (1 to %d): %w", p.PartNumber, MaxPartNumber, ErrInvalidPart)
		}
	}
	out := make([]storedPart, 0, len(parts))
	var total int64
	for i, p := range parts {
		sp, etag, err := s.readPart(u.dir, p.PartNumber)
		if errors.Is(err, xfs.ErrNotFound) {
			return nil, fmt.Errorf("part %d was not uploaded: %w", p.PartNumber, ErrInvalidPart)
		}
		if err != nil {
			return nil, err
		}
		if want := strings.Trim(p.ETag, `"`); !strings.EqualFold(want, etag) {
			return nil, fmt.Errorf("part %d has ETag %s, not %s: %w", p.PartNumber, etag, want, ErrInvalidPart)
		}
		if i < len(parts)-1 && sp.size < s.minPart {
			return nil, fmt.Errorf("part %d has %d bytes (at least %d but the last): %w", p.PartNumber, sp.size, s.minPart, ErrEntityTooSmall)
		}
		total += sp.size
		out = append(out, sp)
	}
	if total > MaxObjectSize {
		return nil, fmt.Errorf("%d bytes (at most %d): %w", total, MaxObjectSize, ErrEntityTooLarge)
	}
	return out, nil
}

// readPart reads a part file's attributes and checks that its content is
// still all there.
func (s Uploads) readPart(dir format.Ino, n int) (storedPart, string, error) {
	ino, err := s.v.Names().Lookup(dir, partName(n))
	if err != nil {
		return storedPart{}, "", err
	}
	list, err := s.v.Xattrs().List(ino)
	if err != nil {
		return storedPart{}, "", err
	}
	byName := make(map[string]string, len(list))
	for _, x := range list {
		byName[x.FullName()] = string(x.Value)
	}
	etag := byName[xattrETag]
	sum, err := hex.DecodeString(etag)
	if err != nil || len(sum) != md5.Size {
		return storedPart{}, "", fmt.Errorf("part %d has a malformed ETag %q: %w", n, etag, ErrInvalidPart)
	}
	size, err := strconv.ParseInt(byName[xattrPartSize], 10, 64)
	if err != nil {
		return storedPart{}, "", fmt.Errorf("part %d has a malformed size %q: %w", n, byName[xattrPartSize], ErrInvalidPart)
	}
	st, err := s.v.Stat(ino)
	if err != nil {
		return storedPart{}, "", err
	}
	if st.Size != size {
		return storedPart{}, "", fmt.Errorf("part %d holds %d of its %d bytes (an earlier completion took them): %w", n, st.Size, size, ErrInvalidPart)
	}
	sp := storedPart{number: n, ino: ino, size: size, md5: sum}
	for _, c := range sp.sums.named() {
		*c.val = byName[c.name]
	}
	return sp, etag, nil
}

// joinParts appends the parts to the empty file dst, moving extents while
// dst's size is block aligned and copying otherwise, and returns the size.
func (s Uploads) joinParts(dst format.Ino, parts []storedPart) (int64, error) {
	bs := int64(s.v.Geometry().BlockSize)
	var size int64
	var buf []byte
	for _, p := range parts {
		if size%bs == 0 {
			if err := s.v.Files().AppendExtents(dst, p.ino); err != nil {
				return 0, fmt.Errorf("move part %d: %w", p.number, err)
			}
		} else {
			if buf == nil {
				buf = make([]byte, chunkSize)
			}
			if err := s.copyFile(dst, size, p.ino, p.size, buf); err != nil {
				return 0, fmt.Errorf("copy part %d: %w", p.number, err)
			}
		}
		size += p.size
	}
	return size, nil
}

// copyFile copies n bytes of src to dst at off through buf.
func (s Uploads) copyFile(dst format.Ino, off int64, src format.Ino, n int64, buf []byte) error {
	for done := int64(0); done < n; {
		chunk := buf[:min(int64(len(buf)), n-done)]
		got, err := s.v.Files().ReadAt(src, chunk, done)
		if got < len(chunk) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if _, err := s.v.Files().WriteAt(dst, chunk, off+done); err != nil {
			return err
		}
		done += int64(len(chunk))
	}
	return nil
}

// Abort discards an upload and its parts.
func (s Uploads) Abort(bucket, key, uploadID string) (err error) {
	defer s.noteSick(bucket, key, &err)
	defer s.settle(&err)
	return s.abort(bucket, key, uploadID)
}

// abort is Abort without the settle.
func (s Uploads) abort(bucket, key, uploadID string) error {
	u, err := s.findUpload(bucket, key, uploadID)
	if err != nil {
		return err
	}
	defer u.mu.Unlock()
	return s.dropUpload(u)
}
