package s3api

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/checksum"
)

// hdrMpObjectSize is the size a client expects a completed upload to have.
const hdrMpObjectSize = "X-Amz-Mp-Object-Size"

type initiateMultipartUploadResult struct {
	XMLName  struct{} `xml:"InitiateMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Bucket   string
	Key      string
	UploadID string `xml:"UploadId"`
}

func (s *server) createMultipartUpload(w http.ResponseWriter, r *http.Request, rq *request) error {
	meta, err := metaFromHeaders(r.Header)
	if err != nil {
		return err
	}
	if err := s.checkWriteLock(r, rq, meta.Lock); err != nil {
		return err
	}
	if meta.Checksums, err = uploadChecksumHeaders(r.Header); err != nil {
		return err
	}
	up, err := s.store.Uploads().Create(rq.bucket, rq.key, meta)
	if err != nil {
		return err
	}
	if c := up.Meta.Checksums; c.Algorithm != "" {
		w.Header().Set(hdrChecksumAlgorithm, c.Algorithm)
		w.Header().Set(hdrChecksumType, c.Type)
	}
	writeXML(w, http.StatusOK, initiateMultipartUploadResult{Xmlns: xmlns, Bucket: rq.bucket, Key: rq.key, UploadID: up.UploadID})
	return nil
}

// uploadChecksumHeaders reads the checksum an upload is created with:
// x-amz-checksum-algorithm and x-amz-checksum-type, which needs it.
func uploadChecksumHeaders(h http.Header) (store.Checksums, error) {
	name, typ := h.Get(hdrChecksumAlgorithm), h.Get(hdrChecksumType)
	if name == "" {
		if typ != "" {
			return store.Checksums{}, errorf("InvalidRequest", "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
		}
		return store.Checksums{}, nil
	}
	alg, ok := checksum.Lookup(name)
	if !ok {
		return store.Checksums{}, errorf("InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [%s]", checksum.Names())
	}
	if t, _ := checksum.ParseType(typ); typ != "" && !alg.Supports(t) {
		return store.Checksums{}, errorf("InvalidRequest", "The %s checksum type cannot be used with the %s checksum algorithm.", typ, alg.Header())
	}
	return store.Checksums{Algorithm: alg.Name(), Type: typ}, nil
}

// partNumber reads ?partNumber (1 to store.MaxPartNumber).
func partNumber(q url.Values) (int, error) {
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > store.MaxPartNumber {
		return 0, errorf("InvalidArgument", "Part number must be an integer between 1 and %d, inclusive.", store.MaxPartNumber)
	}
	return n, nil
}

func (s *server) uploadPart(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := rq.query
	part, err := partNumber(q)
	if err != nil {
		return err
	}
	up, err := s.store.Uploads().Get(rq.bucket, rq.key, q.Get("uploadId"))
	if err != nil {
		return err
	}
	body, size, err := uploadBody(r, rq, store.MaxPartSize)
	if err != nil {
		return err
	}
	if err := partChecksum(body, up); err != nil {
		return err
	}
	info, err := s.store.Uploads().UploadPart(rq.bucket, rq.key, q.Get("uploadId"), part, body, size, body.declared())
	if err != nil {
		return err
	}
	writeStored(w, info.ETag, body.Checksums(), false)
	return nil
}

// partChecksum checks the checksum a part brings against its upload's
// algorithm before the part is read: another algorithm is refused, as S3
// does; a part that brings none gets the upload's computed here. Parts of
// an upload without an algorithm may bring any (verified, kept with the
// part, as S3 takes the CRC32 SDKs send by default).
func partChecksum(body *verifyingReader, up store.UploadInfo) error {
	if want := up.Meta.Checksums.Algorithm; want != "" {
		return body.need(want, hdrChecksumAlgorithm)
	}
	return nil
}

func (s *server) uploadPartCopy(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := rq.query
	part, err := partNumber(q)
	if err != nil {
		return err
	}
	src, err := parseCopySource(r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return err
	}
	var spec rangeSpec
	rangeHeader, ranged := r.Header["X-Amz-Copy-Source-Range"]
	if ranged {
		var ok bool
		spec, ok = parseRangeSpec(rangeHeader[0])
		if !ok || spec.first < 0 || spec.last < 0 { // S3 takes only bytes=first-last here
			return errorf("InvalidArgument", "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy.")
		}
	}
	if err := drainEmptyBody(r, rq); err != nil {
		return err
	}
	o, err := s.store.Versions().Get(src.bucket, src.key, src.version)
	if err != nil {
		return copySourceError(err)
	}
	defer o.Close()
	if failed, notModified := copySourceConditions(r.Header).evaluate(o.Info); failed || notModified {
		return &s3Error{code: "PreconditionFailed"}
	}
	content := o.Reader()
	if ranged {
		if spec.last >= o.Info.Size {
			return errorf("InvalidRange", "Range specified is not valid for source object of size: %d.", o.Info.Size)
		}
		if content, err = o.Range(spec.first, spec.last-spec.first+1); err != nil {
			return err
		}
	}
	if content.Size() > store.MaxPartSize {
		return errorf("EntityTooLarge", "A part is at most %d bytes.", int64(store.MaxPartSize))
	}
	up, err := s.store.Uploads().Get(rq.bucket, rq.key, q.Get("uploadId"))
	if err != nil {
		return err
	}
	var info store.PartInfo
	if name := up.Meta.Checksums.Algorithm; name != "" {
		// The part's checksum is computed from its bytes as they are copied.
		body, err := verifyChecksum(content, name, "")
		if err != nil {
			return err
		}
		info, err = s.store.Uploads().UploadPart(rq.bucket, rq.key, q.Get("uploadId"), part, body, content.Size(), store.Checksums{})
		if err != nil {
			return err
		}
	} else {
		_, off, n := content.Outer()
		info, err = s.store.Uploads().CopyPart(rq.bucket, rq.key, q.Get("uploadId"), part, o, off, n)
		if err != nil {
			return err
		}
	}
	setCopySourceVersion(w.Header(), o.Info.VersionID)
	res := newCopyResult("CopyPartResult", info.LastModified, info.ETag)
	res.withChecksums(info.Checksums)
	writeXML(w, http.StatusOK, res)
	return nil
}

type completeMultipartUpload struct {
	XMLName struct{} `xml:"CompleteMultipartUpload"`
	Parts   []struct {
		PartNumber int
		ETag       string
		xmlChecksums
	} `xml:"Part"`
}

type completeMultipartUploadResult struct {
	XMLName  struct{} `xml:"CompleteMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Location string
	Bucket   string
	Key      string
	ETag     string
	xmlChecksums
	ChecksumType string `xml:",omitempty"`
}

// parseCompleteMultipartUpload decodes the part list of a Complete body.
func parseCompleteMultipartUpload(data []byte) ([]store.CompletePart, error) {
	var c completeMultipartUpload
	if err := decodeXML(data, &c); err != nil {
		return nil, err
	}
	if len(c.Parts) == 0 {
		return nil, errorf("MalformedXML", "You must specify at least one part.")
	}
	if len(c.Parts) > store.MaxPartNumber {
		return nil, errorf("MalformedXML", "At most %d parts may be listed.", store.MaxPartNumber)
	}
	parts := make([]store.CompletePart, len(c.Parts))
	for i, p := range c.Parts {
		if p.PartNumber < 1 || p.PartNumber > store.MaxPartNumber {
			return nil, errorf("InvalidArgument", "Part number must be an integer between 1 and %d, inclusive.", store.MaxPartNumber)
		}
		sums := p.xmlChecksums.store()
		for _, alg := range checksum.All {
			if v := sums.Value(alg); v != "" {
				if _, err := alg.Decode(v); err != nil {
					return nil, errorf("InvalidRequest", "Value for Checksum%s of part %d is invalid.", alg.Name(), p.PartNumber)
				}
			}
		}
		parts[i] = store.CompletePart{PartNumber: p.PartNumber, ETag: p.ETag, Checksums: sums}
	}
	return parts, nil
}

// maxCompleteBody bounds a Complete body: 10,000 parts of about 100 bytes.
const maxCompleteBody = 2 << 20

func (s *server) completeMultipartUpload(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxCompleteBody)
	if err != nil {
		return err
	}
	parts, err := parseCompleteMultipartUpload(data)
	if err != nil {
		return err
	}
	want, err := headerChecksums(r.Header)
	if err != nil {
		return err
	}
	id := rq.query.Get("uploadId")
	if typ := r.Header.Get(hdrChecksumType); typ != "" {
		up, err := s.store.Uploads().Get(rq.bucket, rq.key, id)
		if err != nil {
			return err
		}
		switch have := up.Meta.Checksums.Type; {
		case have == "":
			return errorf("InvalidRequest", "The upload was created without a checksum: x-amz-checksum-type %s cannot apply.", typ)
		case typ != have:
			return errorf("InvalidRequest", "The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", have)
		}
	}
	cond, err := writePrecondition(r.Header)
	if err != nil {
		return err
	}
	if err := s.checkWritePrecondition(rq, cond); err != nil {
		return err
	}
	opt := store.CompleteOptions{Checksums: want, If: cond}
	if v := r.Header.Get(hdrMpObjectSize); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return errorf("InvalidArgument", "x-amz-mp-object-size must be a whole number of bytes, not %q.", v)
		}
		opt.ObjectSize = &n
	}
	info, err := s.store.Uploads().CompleteWith(rq.bucket, rq.key, id, parts, opt)
	if err != nil {
		return raceLost(err)
	}
	setVersionID(w.Header(), info.VersionID)
	s.setExpiration(w.Header(), rq, info)
	loc := url.URL{Scheme: "http", Host: r.Host, Path: "/" + rq.bucket + "/" + rq.key}
	if r.TLS != nil {
		loc.Scheme = "https"
	}
	writeXML(w, http.StatusOK, completeMultipartUploadResult{
		Xmlns: xmlns, Location: loc.String(), Bucket: rq.bucket, Key: rq.key, ETag: quoted(info.ETag),
		xmlChecksums: toXMLChecksums(info.Meta.Checksums), ChecksumType: info.Meta.Checksums.Type,
	})
	return nil
}

func (s *server) abortMultipartUpload(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := s.store.Uploads().Abort(rq.bucket, rq.key, rq.query.Get("uploadId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type listPartsResult struct {
	XMLName              struct{} `xml:"ListPartsResult"`
	Xmlns                string   `xml:"xmlns,attr"`
	Bucket               string
	Key                  string
	UploadID             string `xml:"UploadId"`
	Initiator            owner
	Owner                owner
	StorageClass         string
	PartNumberMarker     int
	NextPartNumberMarker int
	MaxParts             int
	IsTruncated          bool
	Parts                []xmlPart `xml:"Part"`
	ChecksumAlgorithm    string    `xml:",omitempty"`
	ChecksumType         string    `xml:",omitempty"`
}

type xmlPart struct {
	PartNumber   int
	LastModified string
	ETag         string
	Size         int64
	xmlChecksums
}

// intParam reads a non-negative integer query parameter (def when absent).
func intParam(q url.Values, name string, def int) (int, error) {
	v, ok := q[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 0 {
		return 0, errorf("InvalidArgument", "Argument %s must be a non-negative integer.", name)
	}
	return n, nil
}

func (s *server) listParts(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := rq.query
	maxParts, err := intParam(q, "max-parts", 1000)
	if err != nil {
		return err
	}
	marker, err := intParam(q, "part-number-marker", 0)
	if err != nil {
		return err
	}
	maxParts = min(max(maxParts, 1), 1000)
	res, err := s.store.Uploads().ListParts(rq.bucket, rq.key, q.Get("uploadId"), store.ListPartsOptions{PartNumberMarker: marker, MaxParts: maxParts})
	if err != nil {
		return err
	}
	o := ownerOf(rq)
	out := listPartsResult{
		Xmlns: xmlns, Bucket: rq.bucket, Key: rq.key, UploadID: q.Get("uploadId"),
		Initiator: o, Owner: o, StorageClass: storageClassOf(res.Upload.Meta),
		PartNumberMarker: marker, NextPartNumberMarker: res.NextPartNumberMarker,
		MaxParts: maxParts, IsTruncated: res.IsTruncated,
		ChecksumAlgorithm: res.Upload.Meta.Checksums.Algorithm, ChecksumType: res.Upload.Meta.Checksums.Type,
	}
	for _, p := range res.Parts {
		out.Parts = append(out.Parts, xmlPart{
			PartNumber: p.PartNumber, LastModified: isoTime(p.LastModified), ETag: quoted(p.ETag), Size: p.Size,
			xmlChecksums: toXMLChecksums(p.Checksums),
		})
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

type listMultipartUploadsResult struct {
	XMLName            struct{} `xml:"ListMultipartUploadsResult"`
	Xmlns              string   `xml:"xmlns,attr"`
	Bucket             string
	KeyMarker          string
	UploadIDMarker     string `xml:"UploadIdMarker"`
	NextKeyMarker      string
	NextUploadIDMarker string `xml:"NextUploadIdMarker"`
	Delimiter          string `xml:",omitempty"`
	Prefix             string
	EncodingType       string `xml:",omitempty"`
	MaxUploads         int
	IsTruncated        bool
	Uploads            []xmlUpload    `xml:"Upload"`
	CommonPrefixes     []commonPrefix `xml:"CommonPrefixes"`
}

type xmlUpload struct {
	Key          string
	UploadID     string `xml:"UploadId"`
	Initiator    owner
	Owner        owner
	StorageClass string
	Initiated    string
}

func (s *server) listMultipartUploads(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := rq.query
	maxUploads, err := intParam(q, "max-uploads", 1000)
	if err != nil {
		return err
	}
	maxUploads = min(max(maxUploads, 1), 1000)
	urlEncoding, err := urlEncodingRequested(q)
	if err != nil {
		return err
	}
	opt := store.ListUploadsOptions{
		Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"),
		KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker"), MaxUploads: maxUploads,
	}
	res, err := s.store.Uploads().List(rq.bucket, opt)
	if err != nil {
		return err
	}
	enc := encoder(urlEncoding)
	o := ownerOf(rq)
	out := listMultipartUploadsResult{
		Xmlns: xmlns, Bucket: rq.bucket, KeyMarker: enc(opt.KeyMarker), UploadIDMarker: opt.UploadIDMarker,
		NextKeyMarker: enc(res.NextKeyMarker), NextUploadIDMarker: res.NextUploadIDMarker,
		Delimiter: enc(opt.Delimiter), Prefix: enc(opt.Prefix), MaxUploads: maxUploads, IsTruncated: res.IsTruncated,
	}
	if urlEncoding {
		out.EncodingType = "url"
	}
	for _, u := range res.Uploads {
		out.Uploads = append(out.Uploads, xmlUpload{
			Key: enc(u.Key), UploadID: u.UploadID, Initiator: o, Owner: o,
			StorageClass: storageClassOf(u.Meta), Initiated: isoTime(u.Initiated),
		})
	}
	for _, p := range res.CommonPrefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, commonPrefix{Prefix: enc(p)})
	}
	writeXML(w, http.StatusOK, out)
	return nil
}
