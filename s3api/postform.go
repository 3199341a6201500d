package s3api

import (
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

// Browser form uploads (S3's POST Object): POST /bucket with a
// multipart/form-data body whose fields come first and whose "file" field
// is last. The form is authenticated by its signed policy (policy.go),
// not by the request, so the middleware lets it through unverified
// (isFormUpload) and only this handler may serve such a request.
//
// The fields are read into memory, bounded (maxFormField each,
// maxFormFields together, maxFormFieldCount of them; part headers are
// mime/multipart's to bound: 10 MiB each, 10,000 in all); the file is never
// buffered: it streams to the store as a PUT body does, through the
// content-length-range bounds and the checksum verification of PUT.
// Fields after the file are not read, as in S3.

const (
	maxFormField      = 64 << 10
	maxFormFields     = 1 << 20
	maxFormFieldCount = 1000
)

// isFormUpload tells a browser form upload: POST to a bucket, no query,
// a multipart/form-data body.
func isFormUpload(r *http.Request) bool {
	if r.Method != http.MethodPost || r.URL.RawQuery != "" {
		return false
	}
	if _, key := splitPath(r.URL.Path); key != "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// postForm is a parsed form up to its file.
type postForm struct {
	fields   map[string]string // lower-case names
	file     io.Reader         // the file field's content, unread
	filename string
	fileType string // the file part's own Content-Type
}

// readPostForm reads the fields of a form body up to the file field.
func readPostForm(contentType string, body io.Reader) (*postForm, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, errorf("MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data (no boundary).")
	}
	mr := multipart.NewReader(body, params["boundary"])
	f := &postForm{fields: map[string]string{}}
	total := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, errorf("InvalidArgument", "POST requires exactly one file upload per request.")
		}
		if err != nil {
			return nil, &s3Error{code: "MalformedPOSTRequest", cause: err}
		}
		name := strings.ToLower(part.FormName())
		if name == "" {
			return nil, errorf("MalformedPOSTRequest", "A part of the form has no field name.")
		}
		if name == "file" {
			f.file, f.filename, f.fileType = part, part.FileName(), part.Header.Get("Content-Type")
			return f, nil
		}
		if len(f.fields) >= maxFormFieldCount {
			return nil, errorf("MaxPostPreDataLengthExceededError", "The form has more than %d fields before its file.", maxFormFieldCount)
		}
		value, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
		if err != nil {
			return nil, &s3Error{code: "MalformedPOSTRequest", cause: err}
		}
		if len(value) > maxFormField {
			return nil, errorf("MaxPostPreDataLengthExceededError", "Form field %q is over %d bytes.", name, maxFormField)
		}
		if total += len(name) + len(value); total > maxFormFields {
			return nil, errorf("MaxPostPreDataLengthExceededError", "Your POST request fields preceding the upload file were too large.")
		}
		if _, dup := f.fields[name]; dup {
			return nil, errorf("InvalidArgument", "Form field %q appears more than once.", name)
		}
		f.fields[name] = string(value)
	}
}

// formSignatureFields are the fields of the signature, not of the object.
var formSignatureFields = []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature", "x-amz-security-token"}

// formHeader gives the object fields of a form as the request headers of a
// PUT would carry them, so that the same rules and metadata apply: the
// standard content headers, x-amz-* (checksums and metadata included),
// and acl as x-amz-acl.
func formHeader(fields map[string]string) http.Header {
	h := http.Header{}
	for name, v := range fields {
		switch {
		case name == "acl":
			h.Set("X-Amz-Acl", v)
		case name == "x-amz-checksum-algorithm":
			// A form names its checksum's algorithm as an SDK does on PUT.
			h.Set("X-Amz-Sdk-Checksum-Algorithm", v)
		case name == "content-type", name == "content-encoding", name == "content-disposition",
			name == "content-language", name == "cache-control", name == "expires", name == "content-md5":
			h.Set(name, v)
		case strings.HasPrefix(name, "x-amz-") && !slices.Contains(formSignatureFields, name):
			h.Set(name, v)
		}
	}
	h.Del("X-Amz-Trailer") // a form has no trailer
	return h
}

// authorizeForm verifies a form's signature and decodes its policy. A form
// without a policy is anonymous, which no bucket here accepts.
func (s *server) authorizeForm(fields map[string]string) (*sigv4.Auth, *postPolicy, error) {
	enc, ok := fields["policy"]
	if !ok {
		return nil, nil, errorf("AccessDenied", "Anonymous form uploads are not allowed: the form needs a signed policy.")
	}
	var auth *sigv4.Auth
	var err error
	if isFormV2(fields) {
		auth, err = s.verifyFormV2(enc, fields) // postform_v2.go
	} else {
		auth, err = s.verifier.VerifyPostForm(sigv4.PostForm{
			Policy: enc, Algorithm: fields["x-amz-algorithm"], Credential: fields["x-amz-credential"],
			Date: fields["x-amz-date"], Signature: fields["x-amz-signature"],
		})
	}
	if err != nil {
		return nil, nil, err
	}
	doc, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, nil, policyError("the policy is not base64.")
	}
	p, err := parsePostPolicy(doc)
	if err != nil {
		return nil, nil, err
	}
	return auth, p, nil
}

// sizeBoundReader enforces a policy's content-length-range on a streamed
// file: too many bytes fail at once, too few at the end, so the store
// abandons the write either way.
type sizeBoundReader struct {
	r                io.Reader
	n, minSize, maxN int64
}

func (b *sizeBoundReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.maxN {
		return n, errorf("EntityTooLarge", "Your proposed upload exceeds the maximum allowed size (%d bytes).", b.maxN)
	}
	if err == io.EOF && b.n < b.minSize {
		return n, errorf("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size (%d bytes).", b.minSize)
	}
	return n, err
}

// postResponse is the body of success_action_status 201.
type postResponse struct {
	XMLName  struct{} `xml:"PostResponse"`
	Location string
	Bucket   string
	Key      string
	ETag     string
}

func (s *server) postObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	form, err := readPostForm(r.Header.Get("Content-Type"), r.Body)
	if err != nil {
		return err
	}
	auth, policy, err := s.authorizeForm(form.fields)
	if err != nil {
		return err
	}
	if err := s.identify(rq, auth); err != nil {
		return err
	}
	key, ok := form.fields["key"]
	if !ok || key == "" {
		return errorf("InvalidArgument", "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
	}
	key = strings.ReplaceAll(key, "${filename}", form.filename)
	rq.key = key
	if err := s.authorize(r, rq); err != nil {
		return err
	}
	checked := make(map[string]string, len(form.fields)+1)
	for k, v := range form.fields {
		checked[k] = v
	}
	checked["key"], checked["bucket"] = key, rq.bucket
	if auth.Kind == sigv4.V2PostForm {
		exemptFormV2Fields(checked)
	}
	if err := policy.check(s.now(), checked); err != nil {
		return err
	}
	h := formHeader(form.fields)
	if h.Get("Content-Type") == "" && form.fileType != "" {
		h.Set("Content-Type", form.fileType)
	}
	asPut := &http.Request{Method: http.MethodPut, Header: h, URL: r.URL}
	op := rq.op
	rq.op = "PutObject" // the same header rules as a PUT
	err = s.checkHeaders(asPut, rq)
	rq.op = op
	if err != nil {
		return err
	}
	meta, err := metaFromHeaders(h)
	if err != nil {
		return err
	}
	if err := s.checkWriteLock(r, rq, meta.Lock); err != nil {
		return err
	}
	if t, ok := form.fields["tagging"]; ok {
		if meta.Tags, err = parseTagging([]byte(t)); err != nil {
			return err
		}
	}
	minSize, maxSize := policy.sizeBounds(store.MaxObjectSize)
	body, err := newVerifyingReader(h, &sizeBoundReader{r: form.file, minSize: minSize, maxN: maxSize})
	if err != nil {
		return err
	}
	meta.Checksums = body.declared()
	info, err := s.store.PutObject(rq.bucket, key, body, -1, meta)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), info.VersionID)
	return writePostResult(w, r, rq, form.fields, info.ETag, body.Checksums())
}

// writePostResult answers a stored form upload: a 303 to
// success_action_redirect (or redirect) when it is a valid URL, else
// success_action_status 200, 201 (with a PostResponse) or 204 (the
// default, also for any other value).
func writePostResult(w http.ResponseWriter, r *http.Request, rq *request, fields map[string]string, etag string, sums store.Checksums) error {
	loc := url.URL{Scheme: "http", Host: r.Host, Path: "/" + rq.bucket + "/" + rq.key}
	if r.TLS != nil {
		loc.Scheme = "https"
	}
	h := w.Header()
	h.Set("ETag", quoted(etag))
	h.Set("Location", loc.String())
	setChecksumHeaders(h, sums, true)
	target := fields["success_action_redirect"]
	if target == "" {
		target = fields["redirect"]
	}
	if u, err := url.Parse(target); target != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		q := u.Query()
		q.Set("bucket", rq.bucket)
		q.Set("key", rq.key)
		q.Set("etag", quoted(etag))
		u.RawQuery = q.Encode()
		h.Set("Location", u.String())
		w.WriteHeader(http.StatusSeeOther)
		return nil
	}
	switch fields["success_action_status"] {
	case "201":
		writeXML(w, http.StatusCreated, postResponse{Location: loc.String(), Bucket: rq.bucket, Key: rq.key, ETag: quoted(etag)})
	case "200":
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}
