package s3api

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"hash/crc32"
	"io"
	"math/rand"
	"mime/multipart"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/s3api/sigv4"
)

// formField is one field of a test form, in order.
type formField struct{ name, value string }

// formBody encodes fields and then the file as multipart/form-data.
func formBody(t testing.TB, fields []formField, filename string, file []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := mw.WriteField(f.name, f.value); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(file)
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

// signedForm is a policy with its signature fields, signed now with the
// test credentials.
func signedForm(t testing.TB, expiration time.Time, conditions []any) []formField {
	t.Helper()
	now := time.Now().UTC()
	scope := sigv4.Scope{Date: now.Format("20060102"), Region: testRegion, Service: "s3"}
	cred := testAccessKey + "/" + scope.String()
	date := now.Format("20060102T150405Z")
	conditions = append(conditions,
		map[string]string{"x-amz-algorithm": sigv4.Algorithm},
		map[string]string{"x-amz-credential": cred},
		map[string]string{"x-amz-date": date})
	doc, err := json.Marshal(map[string]any{"expiration": expiration.UTC().Format("2006-01-02T15:04:05.000Z"), "conditions": conditions})
	if err != nil {
		t.Fatal(err)
	}
	policy := base64.StdEncoding.EncodeToString(doc)
	return []formField{
		{"policy", policy}, {"x-amz-algorithm", sigv4.Algorithm}, {"x-amz-credential", cred},
		{"x-amz-date", date}, {"x-amz-signature", sigv4.SignPostPolicy(testSecretKey, scope, policy)},
	}
}

// postForm sends a form to the bucket, unsigned as a browser sends it.
func (ts *testServer) postForm(t testing.TB, bucket string, fields []formField, filename string, file []byte) (*http.Response, []byte) {
	t.Helper()
	ct, body := formBody(t, fields, filename, file)
	req, err := http.NewRequest(http.MethodPost, ts.url+"/"+bucket, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return resp, rb
}

func TestPostFormUpload(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "forms")
	hour := time.Now().Add(time.Hour)
	base := []any{
		map[string]string{"bucket": "forms"},
		[]any{"starts-with", "$key", "user/"},
		[]any{"starts-with", "$Content-Type", "image/"},
		[]any{"content-length-range", 1, 1000},
		[]any{"eq", "$x-amz-meta-owner", "eric"},
		[]any{"starts-with", "$success_action_status", ""},
		[]any{"starts-with", "$tagging", ""},
		[]any{"starts-with", "$x-amz-storage-class", ""},
	}
	tagging := `<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>`
	fields := append(signedForm(t, hour, base),
		formField{"key", "user/${filename}"}, formField{"Content-Type", "image/png"},
		formField{"x-amz-meta-owner", "eric"}, formField{"success_action_status", "201"},
		formField{"tagging", tagging}, formField{"x-amz-storage-class", "STANDARD_IA"})
	resp, body := ts.postForm(t, "forms", fields, "cat.png", []byte("meow"))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var pr postResponse
	if err := xml.Unmarshal(body, &pr); err != nil || pr.Bucket != "forms" || pr.Key != "user/cat.png" || pr.ETag != `"`+md5hex("meow")+`"` {
		t.Fatalf("PostResponse %+v %v: %s", pr, err, body)
	}
	o, err := ts.store.GetObject("forms", "user/cat.png")
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, o.Reader())
	o.Close()
	m := o.Info.Meta
	if got != "meow" || m.ContentType != "image/png" || m.User["owner"] != "eric" || len(m.Tags) != 1 || m.StorageClass != "STANDARD_IA" {
		t.Fatalf("stored %q with %+v", got, m)
	}

	// success_action_redirect: 303 to the URL with bucket, key and etag.
	redirect := append(signedForm(t, hour, append(base[:len(base):len(base)], []any{"starts-with", "$success_action_redirect", "http://app.example/"})),
		formField{"key", "user/r"}, formField{"Content-Type", "image/gif"}, formField{"x-amz-meta-owner", "eric"},
		formField{"success_action_redirect", "http://app.example/done?x=1"})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ct, rbody := formBody(t, redirect, "r.gif", []byte("gif"))
	req, _ := http.NewRequest(http.MethodPost, ts.url+"/forms", bytes.NewReader(rbody))
	req.Header.Set("Content-Type", ct)
	rr, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rr.Body.Close()
	loc, _ := url.Parse(rr.Header.Get("Location"))
	if rr.StatusCode != http.StatusSeeOther || loc == nil || loc.Host != "app.example" || loc.Query().Get("key") != "user/r" ||
		loc.Query().Get("bucket") != "forms" || loc.Query().Get("etag") != `"`+md5hex("gif")+`"` || loc.Query().Get("x") != "1" {
		t.Fatalf("redirect: %d %s", rr.StatusCode, rr.Header.Get("Location"))
	}
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestPostFormRefusals: each way a form can break its policy or the
// rules is refused with S3's code, and nothing is stored.
func TestPostFormRefusals(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "forms")
	hour := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": "forms"}, []any{"eq", "$key", "k"}, []any{"content-length-range", 2, 10}}
	good := func() []formField { return append(signedForm(t, hour, conds), formField{"key", "k"}) }
	cases := []struct {
		name   string
		fields []formField
		file   string
		status int
		code   string
	}{
		{"too large", good(), "0123456789a", 400, "EntityTooLarge"},
		{"too small", good(), "0", 400, "EntityTooSmall"},
		{"expired", append(signedForm(t, time.Now().Add(-time.Second), conds), formField{"key", "k"}), "abc", 403, "AccessDenied"},
		{"condition failed", append(signedForm(t, hour, conds), formField{"key", "other"}), "abc", 403, "AccessDenied"},
		{"extra field", append(good(), formField{"x-amz-meta-a", "b"}), "abc", 403, "AccessDenied"},
		{"no key", signedForm(t, hour, conds), "abc", 400, "InvalidArgument"},
		{"bad signature", append(tamper(signedForm(t, hour, conds)), formField{"key", "k"}), "abc", 403, "SignatureDoesNotMatch"},
		{"no policy", []formField{{"key", "k"}}, "abc", 403, "AccessDenied"},
		{"not base64", append(replaceField(signedForm(t, hour, conds), "policy", "%%%"), formField{"key", "k"}), "abc", 403, "SignatureDoesNotMatch"},
		{"wrong bucket", append(signedForm(t, hour, []any{map[string]string{"bucket": "other"}, []any{"eq", "$key", "k"}}), formField{"key", "k"}), "abc", 403, "AccessDenied"},
		{"no bucket condition", append(signedForm(t, hour, []any{[]any{"eq", "$key", "k"}}), formField{"key", "k"}), "abc", 403, "AccessDenied"},
		{"public acl", append(signedForm(t, hour, append(conds, map[string]string{"acl": "public-read"})), formField{"key", "k"}, formField{"acl", "public-read"}), "abc", 400, "AccessControlListNotSupported"},
		{"bad storage class", append(signedForm(t, hour, append(conds, map[string]string{"x-amz-storage-class": "COLD"})), formField{"key", "k"}, formField{"x-amz-storage-class", "COLD"}), "abc", 400, "InvalidStorageClass"},
		{"bad checksum", append(signedForm(t, hour, append(conds, map[string]string{"x-amz-checksum-crc32": "AAAAAA=="})), formField{"key", "k"}, formField{"x-amz-checksum-crc32", "AAAAAA=="}), "abc", 400, "BadDigest"},
	}
	for _, c := range cases {
		resp, body := ts.postForm(t, "forms", c.fields, "f", []byte(c.file))
		wantError(t, resp, body, c.status, c.code)
		if _, err := ts.store.HeadObject("forms", "k"); err == nil {
			t.Fatalf("%s: the refused form stored k", c.name)
		}
	}
	// An invalid policy document, signed: InvalidPolicyDocument.
	for _, doc := range []string{`{"conditions":[]}`, `{"expiration":"tomorrow","conditions":[]}`, `{"expiration":"2099-01-01T00:00:00Z","conditions":[["lt","$key","x"]]}`, `[]`} {
		resp, body := ts.postForm(t, "forms", append(signRaw(t, doc), formField{"key", "k"}), "f", []byte("abc"))
		wantError(t, resp, body, 400, "InvalidPolicyDocument")
	}
	// A good form stores, with the checksum verified and returned.
	sum := crc32.ChecksumIEEE([]byte("abc"))
	crc := base64.StdEncoding.EncodeToString([]byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	fields := append(signedForm(t, hour, append(conds, map[string]string{"x-amz-checksum-crc32": crc})), formField{"key", "k"}, formField{"x-amz-checksum-crc32", crc})
	resp, body := ts.postForm(t, "forms", fields, "f", []byte("abc"))
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("X-Amz-Checksum-Crc32") != crc {
		t.Fatalf("good form: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if info, err := ts.store.HeadObject("forms", "k"); err != nil || info.Meta.Checksums.CRC32 != crc {
		t.Fatalf("stored %+v %v", info, err)
	}
	// Signed requests reaching other operations still need a signature:
	// a form body does not open anything else.
	req, _ := http.NewRequest(http.MethodGet, ts.url+"/forms", nil)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	r2, b2 := send(t, req)
	wantError(t, r2, b2, 403, "AccessDenied")
}

func tamper(fields []formField) []formField {
	for i, f := range fields {
		if f.name == "x-amz-signature" {
			c := byte('0')
			if f.value[0] == '0' {
				c = '1'
			}
			fields[i].value = string(c) + f.value[1:]
		}
	}
	return fields
}

func replaceField(fields []formField, name, value string) []formField {
	for i := range fields {
		if fields[i].name == name {
			fields[i].value = value
		}
	}
	return fields
}

// signRaw signs an arbitrary policy document.
func signRaw(t testing.TB, doc string) []formField {
	fields := signedForm(t, time.Now(), nil)
	policy := base64.StdEncoding.EncodeToString([]byte(doc))
	now := time.Now().UTC()
	scope := sigv4.Scope{Date: now.Format("20060102"), Region: testRegion, Service: "s3"}
	fields = replaceField(fields, "policy", policy)
	return replaceField(fields, "x-amz-signature", sigv4.SignPostPolicy(testSecretKey, scope, policy))
}

// TestPostFormMinio: minio-go's PresignedPostPolicy form, posted as a
// browser would, with a streamed file larger than one store chunk.
func TestPostFormMinio(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "forms")
	data := make([]byte, 3<<20+17)
	rand.New(rand.NewSource(3)).Read(data)
	p := minio.NewPostPolicy()
	for _, err := range []error{
		p.SetBucket("forms"), p.SetKey("big/object"), p.SetExpires(time.Now().UTC().Add(time.Hour)),
		p.SetContentType("application/x-test"), p.SetContentLengthRange(1, 4<<20),
		p.SetUserMetadata("origin", "minio-go"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	u, formData, err := ts.client.PresignedPostPolicy(ctx(t), p)
	if err != nil {
		t.Fatal(err)
	}
	var fields []formField
	for k, v := range formData {
		fields = append(fields, formField{k, v})
	}
	ct, body := formBody(t, fields, "object", data)
	req, _ := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	resp, rb := send(t, req)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("minio-go form: %d %s", resp.StatusCode, rb)
	}
	o, err := ts.store.GetObject("forms", "big/object")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := readAll(t, o.Reader()); got != string(data) || o.Info.Meta.ContentType != "application/x-test" || o.Info.Meta.User["origin"] != "minio-go" {
		t.Fatalf("stored %d bytes, meta %+v", len(got), o.Info.Meta)
	}
	if resp.Header.Get("ETag") != `"`+o.Info.ETag+`"` {
		t.Fatalf("ETag %s, stored %s", resp.Header.Get("ETag"), o.Info.ETag)
	}
}
