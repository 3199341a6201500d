package s3api

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// xmlns is the namespace of every S3 response document but Error.
const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"

// maxXMLBody bounds the XML request bodies (DeleteObjects with 1000 long
// keys stays well under it).
const maxXMLBody = 2 << 20

// isoLayout is how times in XML bodies are written, as S3 does: UTC,
// milliseconds.
const isoLayout = "2006-01-02T15:04:05.000Z"

func isoTime(t time.Time) string { return t.UTC().Format(isoLayout) }

// quoted returns the ETag as S3 sends it, in double quotes.
func quoted(etag string) string { return `"` + etag + `"` }

// writeXML sends v as an XML document with status.
func writeXML(w http.ResponseWriter, status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil { // the response types always marshal
		status, out = http.StatusInternalServerError, nil
	}
	sendXML(w, status, append([]byte(xml.Header), out...))
}

// xmlDoc is a document written by hand (listxml.go), without reflection.
type xmlDoc interface {
	appendXML(b []byte) []byte
}

// xmlBufs holds the buffers hand-written documents are built in.
var xmlBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledXML bounds the buffers kept for reuse: a page of long,
// URL-encoded keys can take megabytes, which one such request should not
// keep pinned.
const maxPooledXML = 1 << 20

// writeXMLDoc sends doc as writeXML sends a value: the same header and
// bytes, built in a pooled buffer.
func writeXMLDoc(w http.ResponseWriter, status int, doc xmlDoc) {
	bp := xmlBufs.Get().(*[]byte)
	body := doc.appendXML(append((*bp)[:0], xml.Header...))
	sendXML(w, status, body)
	if cap(body) <= maxPooledXML {
		*bp = body[:0]
		xmlBufs.Put(bp)
	}
}

// sendXML sends a whole XML body; Write does not keep it.
func sendXML(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// owner is the Owner (and Initiator) element. There is one tenant per
// access key; its canonical ID is derived from the key so that it is
// stable and 64 hex digits like S3's.
type owner struct {
	ID          string
	DisplayName string
}

func ownerOf(rq *request) owner {
	ak := rq.account
	if ak == "" && rq.auth != nil {
		ak = rq.auth.AccessKey
	}
	return owner{ID: ownerID(ak), DisplayName: ak}
}

func ownerID(accessKey string) string {
	sum := sha256.Sum256([]byte("xfs3 owner " + accessKey))
	return hex.EncodeToString(sum[:])
}

// readXMLBody reads at most limit bytes of the request body, checked as
// the signature demands and against Content-MD5 and an x-amz-checksum-*
// header or trailer when sent (SDKs checksum DeleteObjects bodies). A
// Complete's x-amz-checksum-* headers are its object's, not its body's.
func readXMLBody(r *http.Request, rq *request, limit int64) ([]byte, error) {
	h := r.Header
	if rq.op == "CompleteMultipartUpload" {
		h = http.Header{}
		if v, ok := r.Header["Content-Md5"]; ok {
			h["Content-Md5"] = v
		}
	}
	body, err := rq.body(r)
	if err != nil {
		return nil, err
	}
	verified, err := newVerifyingReader(h, body)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(verified, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errorf("MaxMessageLengthExceeded", "The request body exceeds %d bytes.", limit)
	}
	return data, nil
}

// decodeXML decodes a request document; anything that is not one
// well-formed document of the expected root is MalformedXML.
func decodeXML(data []byte, v any) error {
	if len(data) == 0 {
		return errorf("MalformedXML", "The request body is empty.")
	}
	if err := xml.Unmarshal(data, v); err != nil {
		return &s3Error{code: "MalformedXML", cause: err}
	}
	return nil
}

// contentMD5 decodes the Content-MD5 header: nil when absent, InvalidDigest
// when it is not the base64 of 16 bytes.
func contentMD5(h http.Header) ([]byte, error) {
	v, ok := h["Content-Md5"]
	if !ok {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v[0])
	if err != nil || len(b) != md5.Size {
		return nil, &s3Error{code: "InvalidDigest", cause: errors.New("Content-MD5 " + strconv.Quote(v[0]))}
	}
	return b, nil
}
