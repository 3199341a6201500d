package s3api

import (
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xfs3/xfs3/store"
)

const userMetaPrefix = "X-Amz-Meta-"

// metaFromHeaders reads the object metadata of a PUT, POST ?uploads or a
// REPLACE copy: the standard headers, x-amz-meta-* and x-amz-tagging.
func metaFromHeaders(h http.Header) (store.Meta, error) {
	m := store.Meta{
		ContentType:        h.Get("Content-Type"),
		ContentEncoding:    h.Get("Content-Encoding"),
		ContentDisposition: h.Get("Content-Disposition"),
		ContentLanguage:    h.Get("Content-Language"),
		CacheControl:       h.Get("Cache-Control"),
		Expires:            h.Get("Expires"),
		StorageClass:       storedClass(h.Get("X-Amz-Storage-Class")),
	}
	// aws-chunked is how the body travels, not how the object is encoded.
	m.ContentEncoding = stripAWSChunked(m.ContentEncoding)
	for name, values := range h {
		if k, ok := strings.CutPrefix(name, userMetaPrefix); ok && len(values) > 0 {
			if m.User == nil {
				m.User = map[string]string{}
			}
			m.User[strings.ToLower(k)] = strings.Join(values, ",")
		}
	}
	if v, ok := h["X-Amz-Tagging"]; ok {
		tags, err := parseTaggingHeader(v[0])
		if err != nil {
			return store.Meta{}, err
		}
		m.Tags = tags
	}
	var err error
	m.Lock, err = lockFromHeaders(h)
	return m, err
}

// stripAWSChunked removes "aws-chunked" from a Content-Encoding list.
func stripAWSChunked(ce string) string {
	if !strings.Contains(ce, "aws-chunked") {
		return ce
	}
	var keep []string
	for _, v := range strings.Split(ce, ",") {
		if v = strings.TrimSpace(v); v != "" && v != "aws-chunked" {
			keep = append(keep, v)
		}
	}
	return strings.Join(keep, ",")
}

// parseTaggingHeader parses x-amz-tagging ("k1=v1&k2=v2", URL query
// encoded) into tags sorted by key.
func parseTaggingHeader(v string) ([]store.Tag, error) {
	q, err := url.ParseQuery(v)
	if err != nil {
		return nil, &s3Error{code: "InvalidTag", message: "The x-amz-tagging header is not a valid query string.", cause: err}
	}
	tags := make([]store.Tag, 0, len(q))
	for k, vals := range q {
		if len(vals) != 1 {
			return nil, errorf("InvalidTag", "Cannot provide multiple Tags with the same key %q.", k)
		}
		tags = append(tags, store.Tag{Key: k, Value: vals[0]})
	}
	return checkTags(tags)
}

// checkTags applies S3's object tag limits and sorts by key.
func checkTags(tags []store.Tag) ([]store.Tag, error) {
	if len(tags) > store.MaxTags {
		return nil, errorf("BadRequest", "Object tags cannot be greater than %d.", store.MaxTags)
	}
	return checkTagValues(tags)
}

// checkTagValues applies S3's limits on each tag and sorts by key.
func checkTagValues(tags []store.Tag) ([]store.Tag, error) {
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		switch {
		case t.Key == "" || utf8.RuneCountInString(t.Key) > store.MaxTagKeyLen || !utf8.ValidString(t.Key):
			return nil, errorf("InvalidTag", "The TagKey you have provided is invalid.")
		case utf8.RuneCountInString(t.Value) > store.MaxTagValueLen || !utf8.ValidString(t.Value):
			return nil, errorf("InvalidTag", "The TagValue you have provided is invalid.")
		case seen[t.Key]:
			return nil, errorf("InvalidTag", "Cannot provide multiple Tags with the same key %q.", t.Key)
		}
		seen[t.Key] = true
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	return tags, nil
}

// metaHeaderValue is how a user metadata value goes out in a header, as
// S3 sends it: US-ASCII as it is; UTF-8 beyond it encoded as RFC 2047
// (=?UTF-8?B?…?=), which SDKs decode and which survives clients that
// read header bytes as Latin-1. The value stays UTF-8 on the volume.
// Bytes that are not UTF-8 (a client that sent Latin-1) go back as they
// came.
func metaHeaderValue(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			if utf8.ValidString(v) {
				return mime.BEncoding.Encode("UTF-8", v)
			}
			return v
		}
	}
	return v
}

// setObjectHeaders sends an object's metadata as GET and HEAD do. The
// response-* query parameters override the standard headers.
func setObjectHeaders(h http.Header, rq *request, info store.ObjectInfo) {
	q := rq.query
	m := info.Meta
	ct := m.ContentType
	if ct == "" {
		ct = "binary/octet-stream" // what S3 answers for objects stored without one
	}
	for _, f := range []struct{ header, value, override string }{
		{"Content-Type", ct, "response-content-type"},
		{"Content-Encoding", m.ContentEncoding, "response-content-encoding"},
		{"Content-Disposition", m.ContentDisposition, "response-content-disposition"},
		{"Content-Language", m.ContentLanguage, "response-content-language"},
		{"Cache-Control", m.CacheControl, "response-cache-control"},
		{"Expires", m.Expires, "response-expires"},
	} {
		v := f.value
		if o := q.Get(f.override); o != "" {
			v = o
		}
		if v != "" {
			rq.setHeader(h, f.header, v)
		}
	}
	for k, v := range m.User {
		h[userMetaPrefix+k] = []string{metaHeaderValue(v)} // names as stored: lower case, like S3
	}
	if len(m.Tags) > 0 {
		h.Set("X-Amz-Tagging-Count", strconv.Itoa(len(m.Tags)))
	}
	if m.StorageClass != "" { // S3 sends the header for every class but STANDARD
		h.Set("X-Amz-Storage-Class", m.StorageClass)
	}
	setLockHeaders(h, m.Lock)
	rq.setHeader(h, "Accept-Ranges", "bytes")
}

// setValidators sends ETag and Last-Modified, which 304 responses carry too.
func setValidators(h http.Header, rq *request, info store.ObjectInfo) {
	rq.setHeader(h, "ETag", quoted(info.ETag))
	rq.setHeader(h, "Last-Modified", info.LastModified.UTC().Format(http.TimeFormat))
}
