package s3api

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/checksum"
)

// uploadSize is the payload length of a PUT: x-amz-decoded-content-length
// for aws-chunked bodies (-1 when not sent: the chunked reader finds the
// end), else Content-Length (-1 when unknown).
func uploadSize(r *http.Request) (int64, error) {
	if !strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return r.ContentLength, nil
	}
	v := r.Header.Get("X-Amz-Decoded-Content-Length")
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errorf("InvalidArgument", "x-amz-decoded-content-length %q is not a length.", v)
	}
	return n, nil
}

// uploadBody prepares a PUT body: its size (checked against limit), and the
// body verified by signature and checksums.
func uploadBody(r *http.Request, rq *request, limit int64) (*verifyingReader, int64, error) {
	size, err := uploadSize(r)
	if err != nil {
		return nil, 0, err
	}
	if size > limit {
		return nil, 0, errorf("EntityTooLarge", "Your proposed upload of %d bytes exceeds the maximum of %d.", size, limit)
	}
	body, err := rq.body(r)
	if err != nil {
		return nil, 0, err
	}
	vr, err := newVerifyingReader(r.Header, body)
	if err != nil {
		return nil, 0, err
	}
	return vr, size, nil
}

func (s *server) putObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	meta, err := metaFromHeaders(r.Header)
	if err != nil {
		return err
	}
	if err := s.checkWriteLock(r, rq, meta.Lock); err != nil {
		return err
	}
	cond, err := writePrecondition(r.Header)
	if err != nil {
		return err
	}
	if err := s.checkWritePrecondition(rq, cond); err != nil {
		return err
	}
	body, size, err := uploadBody(r, rq, store.MaxObjectSize)
	if err != nil {
		return err
	}
	meta.Checksums = body.declared()
	info, err := s.store.PutObjectIf(rq.bucket, rq.key, body, size, meta, cond)
	if err != nil {
		return raceLost(err)
	}
	setVersionID(w.Header(), info.VersionID)
	s.setExpiration(w.Header(), rq, info)
	writeStored(w, info.ETag, body.Checksums(), true)
	return nil
}

// setVersionID sends the version an answer is about, in a bucket with
// versioning (id "" otherwise).
func setVersionID(h http.Header, id string) {
	if id != "" {
		h.Set("X-Amz-Version-Id", id)
	}
}

// writeStored answers an upload (PutObject, UploadPart) with the stored
// content's ETag and checksums (with their type for objects) and an
// empty body.
func writeStored(w http.ResponseWriter, etag string, sums store.Checksums, withType bool) {
	h := w.Header()
	h.Set("ETag", quoted(etag))
	setChecksumHeaders(h, sums, withType)
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func (s *server) getObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	return s.serveObject(w, r, rq, true)
}

func (s *server) headObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	return s.serveObject(w, r, rq, false)
}

// serveObject answers GET and HEAD: preconditions, then Range, then the
// headers and (for GET) the streamed content.
func (s *server) serveObject(w http.ResponseWriter, r *http.Request, rq *request, withBody bool) error {
	part, err := requestedPart(r, rq)
	if err != nil {
		return err
	}
	o, err := s.store.Versions().Get(rq.bucket, rq.key, rq.version)
	if err != nil {
		return err
	}
	defer o.Close()
	info := o.Info
	h := w.Header()
	setVersionID(h, info.VersionID)
	partBytes, err := partRange(o, part, h)
	if err != nil {
		return err
	}
	setValidators(h, rq, info)
	failed, notModified := requestConditions(r.Header).evaluate(info)
	if failed {
		return &s3Error{code: "PreconditionFailed"}
	}
	if notModified {
		return &s3Error{code: "NotModified"}
	}
	br, ranged, err := requestRange(r.Header.Get("Range"), info.Size)
	if err != nil {
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
		return err
	}
	if partBytes != nil {
		br, ranged = *partBytes, true
	}
	setObjectHeaders(h, rq, info)
	s.setExpiration(h, rq, info)
	if checksumMode(r.Header) && !ranged {
		setChecksumHeaders(h, info.Meta.Checksums, true)
	}
	content := o.Reader()
	status := http.StatusOK
	switch {
	case ranged && br.length() == 0: // an empty part
		content = io.NewSectionReader(o, 0, 0)
	case ranged:
		if content, err = o.Range(br.first, br.length()); err != nil {
			return err
		}
		h.Set("Content-Range", br.contentRange(info.Size))
		status = http.StatusPartialContent
	}
	rq.setHeader(h, "Content-Length", strconv.FormatInt(content.Size(), 10))
	w.WriteHeader(status)
	if !withBody {
		return nil
	}
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	src := &readRecorder{r: content}
	if _, err := io.CopyBuffer(w, src, *buf); err != nil {
		if src.err != nil {
			return src.err // the store failed: logged as InternalError
		}
		return &s3Error{code: "ClientDisconnected", cause: err}
	}
	return nil
}

// readRecorder remembers a read error, to tell a store failure from a
// client gone away when a copy to the client stops.
type readRecorder struct {
	r   io.Reader
	err error
}

func (rr *readRecorder) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	if err != nil && err != io.EOF {
		rr.err = err
	}
	return n, err
}

// requestedPart reads ?partNumber of a GET or HEAD (0 when absent).
func requestedPart(r *http.Request, rq *request) (int, error) {
	v, ok := rq.query["partNumber"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 1 || n > store.MaxPartNumber {
		return 0, errorf("InvalidArgument", "Part number must be an integer between 1 and %d, inclusive.", store.MaxPartNumber)
	}
	if r.Header.Get("Range") != "" {
		return 0, errorf("InvalidRequest", "Cannot specify both Range header and partNumber query parameter.")
	}
	return n, nil
}

// copyBuffers hold the buffers GET copies through: large, because each
// read of the store is an engine call (io.Copy's default is 32 KiB).
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 1<<20)
	return &b
}}

func (s *server) deleteObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	opt := store.DeleteOptions{BypassGovernance: s.bypassGovernance(r, rq, rq.key)}
	res, err := s.store.Versions().DeleteWith(rq.bucket, rq.key, rq.version, opt)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), res.VersionID)
	if res.DeleteMarker {
		w.Header().Set("X-Amz-Delete-Marker", "true")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// copyResult is CopyObjectResult or CopyPartResult: same fields.
type copyResult struct {
	XMLName      xml.Name
	Xmlns        string `xml:"xmlns,attr"`
	LastModified string
	ETag         string
	xmlChecksums
	ChecksumType string `xml:",omitempty"` // CopyObjectResult only
}

// withChecksums adds the copy's checksums to the result, and their type
// (objects have one, parts not).
func (c *copyResult) withChecksums(sums store.Checksums) {
	c.xmlChecksums = toXMLChecksums(sums)
	if c.XMLName.Local == "CopyObjectResult" && c.xmlChecksums != (xmlChecksums{}) {
		c.ChecksumType = checksumType(sums)
	}
}

func newCopyResult(root string, lastModified time.Time, etag string) copyResult {
	return copyResult{XMLName: xml.Name{Local: root}, Xmlns: xmlns, LastModified: isoTime(lastModified), ETag: quoted(etag)}
}

// directive reads x-amz-metadata-directive or x-amz-tagging-directive:
// COPY (the default) or REPLACE.
func directive(h http.Header, name string) (replace bool, err error) {
	switch v := h.Get(name); v {
	case "", "COPY":
		return false, nil
	case "REPLACE":
		return true, nil
	default:
		return false, errorf("InvalidArgument", "Unknown %s value %q.", strings.ToLower(name), v)
	}
}

func (s *server) copyObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	src, err := parseCopySource(r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return err
	}
	replaceMeta, err := directive(r.Header, "X-Amz-Metadata-Directive")
	if err != nil {
		return err
	}
	replaceTags, err := directive(r.Header, "X-Amz-Tagging-Directive")
	if err != nil {
		return err
	}
	newClass := r.Header.Get("X-Amz-Storage-Class") != ""
	// Copying a version onto its own key is how a version is restored.
	if src.bucket == rq.bucket && src.key == rq.key && src.version == "" && !replaceMeta && !replaceTags && !newClass {
		return errorf("InvalidRequest", "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
	}
	headers, err := metaFromHeaders(r.Header)
	if err != nil {
		return err
	}
	if err := s.checkWriteLock(r, rq, headers.Lock); err != nil {
		return err
	}
	// A copy request has no body of its own; a non-empty one is refused
	// before any store call so the signature's payload check still ran.
	if err := drainEmptyBody(r, rq); err != nil {
		return err
	}
	info, err := s.store.Versions().Head(src.bucket, src.key, src.version)
	if err != nil {
		return copySourceError(err)
	}
	if failed, notModified := copySourceConditions(r.Header).evaluate(info); failed || notModified {
		return &s3Error{code: "PreconditionFailed"}
	}
	meta := info.Meta
	if replaceMeta {
		meta = headers
		meta.Checksums = info.Meta.Checksums // same bytes, same sums
	}
	if name := r.Header.Get(hdrChecksumAlgorithm); name != "" {
		alg, ok := checksum.Lookup(name)
		if !ok {
			return errorf("InvalidRequest", "Value for x-amz-checksum-algorithm header is invalid.")
		}
		meta.Checksums = store.Checksums{Algorithm: alg.Name()} // computed by the copy
	}
	if meta.Checksums == (store.Checksums{}) {
		// S3 gives a copy of an object without a checksum a CRC64NVME
		// (clients expect a FULL_OBJECT one); the bytes are read anyway.
		meta.Checksums.Algorithm = checksum.CRC64NVME.Name()
	}
	// The class is the request's (STANDARD when not sent) whatever the
	// metadata directive: S3 never copies it from the source.
	meta.StorageClass = headers.StorageClass
	meta.Lock = headers.Lock // a copy's lock is its own or the bucket's default
	meta.Tags = info.Meta.Tags
	if replaceTags {
		meta.Tags = headers.Tags
	}
	out, err := s.store.Versions().Copy(src.bucket, src.key, src.version, rq.bucket, rq.key, &meta)
	if err != nil {
		return copySourceError(err)
	}
	setVersionID(w.Header(), out.VersionID)
	setCopySourceVersion(w.Header(), info.VersionID)
	s.setExpiration(w.Header(), rq, out)
	res := newCopyResult("CopyObjectResult", out.LastModified, out.ETag)
	res.withChecksums(out.Meta.Checksums)
	writeXML(w, http.StatusOK, res)
	return nil
}

// drainEmptyBody reads a body that must be empty through the signature
// check, so that a request signed over a payload it did not send fails.
func drainEmptyBody(r *http.Request, rq *request) error {
	body, err := rq.body(r)
	if err != nil {
		return err
	}
	var one [1]byte
	n, err := io.ReadFull(body, one[:])
	if n > 0 {
		return errorf("InvalidRequest", "This request does not take a body.")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
