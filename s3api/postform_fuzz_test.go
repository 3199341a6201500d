package s3api

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzPostPolicy: any document parses into a policy or fails with
// InvalidPolicyDocument; a policy that accepts a form has not expired,
// covers every field the form sends, and holds each of its conditions.
func FuzzPostPolicy(f *testing.F) {
	for _, doc := range []string{
		`{"expiration":"2030-01-01T00:00:00.000Z","conditions":[{"bucket":"b"},["starts-with","$key",""],["content-length-range",1,10]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["eq","$Content-Type","text/plain"],["starts-with","$key","user/"]]}`,
		`{"expiration":"2000-01-01T00:00:00Z","conditions":[]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range","5","4"]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["starts-with","$content-type","image/"],{"key":"k","x-amz-meta-a":"b"}]}`,
		`{"conditions":[]}`, `[]`, `{"expiration":1}`, ``,
	} {
		f.Add([]byte(doc), "user/k", "image/png, image/gif", int64(1893456000))
	}
	f.Fuzz(func(t *testing.T, doc []byte, key, contentType string, unix int64) {
		p, err := parsePostPolicy(doc)
		if err != nil {
			if toS3Error(err).code != "InvalidPolicyDocument" {
				t.Fatalf("%q: %v", doc, err)
			}
			return
		}
		if p.lengthRange && (p.minSize < 0 || p.minSize > p.maxSize) {
			t.Fatalf("%q: length range %d..%d", doc, p.minSize, p.maxSize)
		}
		now := time.Unix(unix%(1<<40), 0)
		fields := map[string]string{"bucket": "b", "key": key, "content-type": contentType, "policy": "exempt"}
		err = p.check(now, fields)
		if err != nil {
			if toS3Error(err).code != "AccessDenied" {
				t.Fatalf("%q: %v", doc, err)
			}
			return
		}
		if !now.Before(p.expiration) {
			t.Fatalf("%q: accepted at %v, expired %v", doc, now, p.expiration)
		}
		for _, name := range []string{"key", "content-type"} {
			if !p.coveredFieldNames[name] {
				t.Fatalf("%q: accepted a form whose %s no condition names", doc, name)
			}
		}
		for _, c := range p.conditions {
			v := fields[c.field]
			if c.op == "eq" && v != c.value || c.op == "starts-with" && c.field != "content-type" && !strings.HasPrefix(v, c.value) {
				t.Fatalf("%q: accepted %q=%q against %s", doc, c.field, v, c.text)
			}
		}
	})
}

// FuzzPostForm: any body reads into bounded fields and a file, or fails
// with an S3 error; reading the file afterwards never panics.
func FuzzPostForm(f *testing.F) {
	ct, good := formBody(f, []formField{{"key", "a/${filename}"}, {"policy", "e30="}, {"x-amz-meta-x", "y"}}, "f.txt", []byte("content"))
	boundary := strings.TrimPrefix(ct, "multipart/form-data; boundary=")
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(bytes.Replace(good, []byte(`name="file"`), []byte(`name="other"`), 1))
	f.Add(bytes.Replace(good, []byte(`name="key"`), []byte(`name=""`), 1))
	f.Add([]byte("--" + boundary + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--" + boundary + "\r\nContent-Disposition: form-data; name=\"A\"\r\n\r\ny\r\n--" + boundary + "--\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		form, err := readPostForm(ct, bytes.NewReader(body))
		if err != nil {
			if _, ok := codes[toS3Error(err).code]; !ok {
				t.Fatalf("unknown code for %v", err)
			}
			return
		}
		total := 0
		for name, v := range form.fields {
			if name != strings.ToLower(name) || len(v) > maxFormField || name == "file" {
				t.Fatalf("field %q of %d bytes", name, len(v))
			}
			total += len(name) + len(v)
		}
		if total > maxFormFields || len(form.fields) > maxFormFieldCount || form.file == nil {
			t.Fatalf("form of %d fields, %d bytes, file %v", len(form.fields), total, form.file != nil)
		}
		io.Copy(io.Discard, form.file)
	})
}
