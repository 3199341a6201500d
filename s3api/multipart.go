package s3api

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/xfs3/xfs3/store"
)

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
	if name := r.Header.Get("X-Amz-Checksum-Algorithm"); name != "" {
		if _, ok := algorithmNamed(name); !ok {
			return errorf("InvalidRequest", "Checksum algorithm %q is not supported.", name)
		}
	}
	up, err := s.store.CreateMultipartUpload(rq.bucket, rq.key, meta)
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, initiateMultipartUploadResult{Xmlns: xmlns, Bucket: rq.bucket, Key: rq.key, UploadID: up.UploadID})
	return nil
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
	q := r.URL.Query()
	part, err := partNumber(q)
	if err != nil {
		return err
	}
	body, size, err := uploadBody(r, rq, store.MaxPartSize)
	if err != nil {
		return err
	}
	info, err := s.store.UploadPart(rq.bucket, rq.key, q.Get("uploadId"), part, body, size, body.declared())
	if err != nil {
		return err
	}
	writeStored(w, info.ETag, body.Checksums())
	return nil
}

func (s *server) uploadPartCopy(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := r.URL.Query()
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
	o, err := s.store.GetObject(src.bucket, src.key)
	if err != nil {
		return err
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
	info, err := s.store.UploadPart(rq.bucket, rq.key, q.Get("uploadId"), part, content, content.Size(), store.Checksums{})
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, newCopyResult("CopyPartResult", info.LastModified, info.ETag))
	return nil
}

type completeMultipartUpload struct {
	XMLName struct{} `xml:"CompleteMultipartUpload"`
	Parts   []struct {
		PartNumber int
		ETag       string
	} `xml:"Part"`
}

type completeMultipartUploadResult struct {
	XMLName  struct{} `xml:"CompleteMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Location string
	Bucket   string
	Key      string
	ETag     string
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
		parts[i] = store.CompletePart{PartNumber: p.PartNumber, ETag: p.ETag}
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
	cond, err := writePrecondition(r.Header)
	if err != nil {
		return err
	}
	if err := s.checkWritePrecondition(rq, cond); err != nil {
		return err
	}
	info, err := s.store.CompleteMultipartUploadIf(rq.bucket, rq.key, r.URL.Query().Get("uploadId"), parts, cond)
	if err != nil {
		return raceLost(err)
	}
	loc := url.URL{Scheme: "http", Host: r.Host, Path: "/" + rq.bucket + "/" + rq.key}
	if r.TLS != nil {
		loc.Scheme = "https"
	}
	writeXML(w, http.StatusOK, completeMultipartUploadResult{
		Xmlns: xmlns, Location: loc.String(), Bucket: rq.bucket, Key: rq.key, ETag: quoted(info.ETag),
	})
	return nil
}

func (s *server) abortMultipartUpload(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := s.store.AbortMultipartUpload(rq.bucket, rq.key, r.URL.Query().Get("uploadId")); err != nil {
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
}

type xmlPart struct {
	PartNumber     int
	LastModified   string
	ETag           string
	Size           int64
	ChecksumCRC32  string `xml:",omitempty"`
	ChecksumCRC32C string `xml:",omitempty"`
	ChecksumSHA1   string `xml:",omitempty"`
	ChecksumSHA256 string `xml:",omitempty"`
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
	q := r.URL.Query()
	maxParts, err := intParam(q, "max-parts", 1000)
	if err != nil {
		return err
	}
	marker, err := intParam(q, "part-number-marker", 0)
	if err != nil {
		return err
	}
	maxParts = min(max(maxParts, 1), 1000)
	res, err := s.store.ListParts(rq.bucket, rq.key, q.Get("uploadId"), store.ListPartsOptions{PartNumberMarker: marker, MaxParts: maxParts})
	if err != nil {
		return err
	}
	o := ownerOf(rq)
	out := listPartsResult{
		Xmlns: xmlns, Bucket: rq.bucket, Key: rq.key, UploadID: q.Get("uploadId"),
		Initiator: o, Owner: o, StorageClass: storageClassOf(res.Upload.Meta),
		PartNumberMarker: marker, NextPartNumberMarker: res.NextPartNumberMarker,
		MaxParts: maxParts, IsTruncated: res.IsTruncated,
	}
	for _, p := range res.Parts {
		out.Parts = append(out.Parts, xmlPart{
			PartNumber: p.PartNumber, LastModified: isoTime(p.LastModified), ETag: quoted(p.ETag), Size: p.Size,
			ChecksumCRC32: p.Checksums.CRC32, ChecksumCRC32C: p.Checksums.CRC32C,
			ChecksumSHA1: p.Checksums.SHA1, ChecksumSHA256: p.Checksums.SHA256,
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
	q := r.URL.Query()
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
	res, err := s.store.ListMultipartUploads(rq.bucket, opt)
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
