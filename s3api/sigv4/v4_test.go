package sigv4

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"
	"github.com/minio/minio-go/v7/pkg/signer"
)

// objectURL builds a path-style URL the way minio-go does: the key
// encoded by s3utils.EncodePath, the query by s3utils.QueryEncode.
func objectURL(t testing.TB, key string, q url.Values) *url.URL {
	t.Helper()
	raw := "http://127.0.0.1:9000/bucket/" + s3utils.EncodePath(key)
	if len(q) > 0 {
		raw += "?" + s3utils.QueryEncode(q)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func newReq(t testing.TB, method, key string, q url.Values, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, objectURL(t, key, q).String(), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	if body == nil {
		req.Body = nil
		req.ContentLength = 0
	}
	return req
}

var keys = []string{
	"plain.txt",
	"with space/and more  spaces",
	"unicode/日本語/ключ/é",
	"plus+sign and %percent",
	"tilde~and*star!'()",
	"double//slash///x",
	"trailing/",
	"semi;colon,comma=eq&amp?q#hash",
	"/leading-slash",
	"dots/./and/../x",
}

var queries = []url.Values{
	nil,
	{"uploads": {""}},
	{"partNumber": {"3"}, "uploadId": {"abc+/="}},
	{"prefix": {"a b+c"}, "delimiter": {"/"}, "list-type": {"2"}},
	{"k": {"b", "a", ""}, "empty": {""}},
	{"tagging": {""}, "versionId": {"~v1"}},
	{"unicode": {"é☃"}, "x-id": {"PutObject"}},
}

func TestSignV4HeaderMinio(t *testing.T) {
	body := []byte("hello, sigv4")
	for _, key := range keys {
		for qi, q := range queries {
			for _, mode := range []string{"signed", UnsignedPayload} {
				req := newReq(t, http.MethodPut, key, q, body)
				req.Header.Set("X-Amz-Meta-Note", "  spaced   value  ")
				req.Header.Set("Content-Type", "text/plain")
				if mode == "signed" {
					req.Header.Set("X-Amz-Content-Sha256", hexSHA(body))
				} else {
					req.Header.Set("X-Amz-Content-Sha256", UnsignedPayload)
				}
				signed := signer.SignV4(*req, testAK, testSK, "", testRegion)
				r, _ := wire(t, signed)
				auth, err := testVerifier(time.Now()).Verify(r)
				if err != nil {
					t.Fatalf("key %q query %d %s: %v", key, qi, mode, err)
				}
				if auth.Kind != V4Header || auth.AccessKey != testAK || auth.Scope.Region != testRegion {
					t.Fatalf("auth = %+v", auth)
				}
				br, err := auth.Body(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(br)
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("body %q, %v", got, err)
				}
			}
		}
	}
}

func TestSignV4Errors(t *testing.T) {
	body := []byte("payload")
	mk := func() *http.Request {
		req := newReq(t, http.MethodPut, "a/b c", url.Values{"x": {"1"}}, body)
		req.Header.Set("X-Amz-Content-Sha256", hexSHA(body))
		req.Header.Set("X-Amz-Meta-A", "1")
		return req
	}
	now := time.Now()
	cases := []struct {
		name  string
		sign  func() *http.Request
		clock time.Time
		want  error
	}{
		{"wrong secret", func() *http.Request { return signer.SignV4(*mk(), testAK, "nope", "", testRegion) }, now, ErrSignatureMismatch},
		{"unknown key", func() *http.Request { return signer.SignV4(*mk(), "AKUNKNOWN", testSK, "", testRegion) }, now, ErrInvalidAccessKey},
		{"clock ahead", func() *http.Request { return signer.SignV4(*mk(), testAK, testSK, "", testRegion) }, now.Add(16 * time.Minute), ErrRequestTimeTooSkewed},
		{"clock behind", func() *http.Request { return signer.SignV4(*mk(), testAK, testSK, "", testRegion) }, now.Add(-16 * time.Minute), ErrRequestTimeTooSkewed},
		{"within skew", func() *http.Request { return signer.SignV4(*mk(), testAK, testSK, "", testRegion) }, now.Add(14 * time.Minute), nil},
		{"anonymous", mk, now, ErrMissingAuth},
		{"wrong region", func() *http.Request { return signer.SignV4(*mk(), testAK, testSK, "", "eu-west-1") }, now, ErrMalformed},
		{"other service", func() *http.Request {
			return signer.SignV4WithServiceType(*mk(), testAK, testSK, "", testRegion, "s3-outposts")
		}, now, ErrMalformed},
		{"no content sha", func() *http.Request {
			r := mk()
			r.Header.Del("X-Amz-Content-Sha256")
			return signer.SignV4(*r, testAK, testSK, "", testRegion)
		}, now, ErrMalformed},
	}
	for _, c := range cases {
		r, _ := wire(t, c.sign())
		v := testVerifier(c.clock)
		v.Region = testRegion
		_, err := v.Verify(r)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestSignV4PayloadMismatch(t *testing.T) {
	body := []byte("the real body")
	req := newReq(t, http.MethodPut, "k", nil, body)
	req.Header.Set("X-Amz-Content-Sha256", hexSHA([]byte("another body")))
	r, _ := wire(t, signer.SignV4(*req, testAK, testSK, "", testRegion))
	auth, err := testVerifier(time.Now()).Verify(r)
	if err != nil {
		t.Fatal(err)
	}
	br, err := auth.Body(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(br)
	if !errors.Is(err, ErrContentSHA256Mismatch) {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("streamed %q", got)
	}
}

// TestSignV4Tamper changes every byte of the request line and of every
// signed header value, one at a time: each must fail.
func TestSignV4Tamper(t *testing.T) {
	body := []byte("payload")
	req := newReq(t, http.MethodPut, "dir/ke y+%~é", url.Values{"partNumber": {"1"}, "uploadId": {"u"}, "e": {""}}, body)
	req.Header.Set("X-Amz-Content-Sha256", hexSHA(body))
	req.Header.Set("X-Amz-Meta-Colour", "blue")
	req.Header.Set("Content-Type", "text/plain")
	signed := signer.SignV4(*req, testAK, testSK, "", testRegion)
	_, raw := wire(t, signed)
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	ranges := [][2]int{}
	line := bytes.Index(raw, []byte(" HTTP/1.1\r\n"))
	ranges = append(ranges, [2]int{0, line})
	for _, h := range []string{"Host", "X-Amz-Meta-Colour", "Content-Type", "X-Amz-Content-Sha256", "X-Amz-Date", "Authorization"} {
		i := bytes.Index(raw, []byte("\r\n"+h+": "))
		if i < 0 || i > end {
			t.Fatalf("no %s header in\n%s", h, raw)
		}
		start := i + len(h) + 4
		stop := start + bytes.Index(raw[start:], []byte("\r\n"))
		ranges = append(ranges, [2]int{start, stop})
	}
	tried := 0
	for _, rg := range ranges {
		for i := rg[0]; i < rg[1]; i++ {
			mut := bytes.Clone(raw)
			mut[i] = substitute(mut[i])
			r, ok := reparse(mut)
			if !ok {
				continue
			}
			tried++
			_, err := testVerifier(time.Now()).Verify(r)
			if err == nil || kindOf(err) == nil {
				t.Fatalf("byte %d (%q→%q) tampered: err = %v\n%s", i, raw[i], mut[i], err, mut[:end])
			}
		}
	}
	if tried < 200 {
		t.Fatalf("only %d tampered requests parsed", tried)
	}
}

// substitute returns a byte that differs from c without being an
// equivalent spelling of it (no hex-digit case flips).
func substitute(c byte) byte {
	if c == 'Q' {
		return 'R'
	}
	return 'Q'
}

func TestSignV4SignatureDigits(t *testing.T) {
	req := newReq(t, http.MethodGet, "k", nil, nil)
	req.Header.Set("X-Amz-Content-Sha256", UnsignedPayload)
	r, _ := wire(t, signer.SignV4(*req, testAK, testSK, "", testRegion))
	authz := r.Header.Get("Authorization")
	i := strings.Index(authz, "Signature=") + len("Signature=")
	for j := i; j < len(authz); j++ {
		d := byte('0')
		if authz[j] == '0' {
			d = '1'
		}
		r.Header.Set("Authorization", authz[:j]+string(d)+authz[j+1:])
		if _, err := testVerifier(time.Now()).Verify(r); !errors.Is(err, ErrSignatureMismatch) {
			t.Fatalf("digit %d: %v", j-i, err)
		}
	}
}

func TestPresignV4Minio(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPut} {
		for _, key := range keys {
			req := newReq(t, method, key, url.Values{"response-content-type": {"a/b c"}}, nil)
			signed := signer.PreSignV4(*req, testAK, testSK, "", testRegion, 3600)
			r, _ := wire(t, signed)
			now := time.Now()
			auth, err := testVerifier(now).Verify(r)
			if err != nil {
				t.Fatalf("%s %q: %v\n%s", method, key, err, signed.URL)
			}
			if auth.Kind != V4Presigned || auth.PayloadHash != UnsignedPayload {
				t.Fatalf("auth = %+v", auth)
			}
			if _, err := testVerifier(now.Add(time.Hour + time.Second)).Verify(r); !errors.Is(err, ErrExpired) {
				t.Fatalf("expired: %v", err)
			}
			if _, err := testVerifier(now.Add(-time.Hour)).Verify(r); !errors.Is(err, ErrNotYetValid) {
				t.Fatalf("future: %v", err)
			}
			wrong := signer.PreSignV4(*newReq(t, method, key, nil, nil), testAK, "bad", "", testRegion, 60)
			r, _ = wire(t, wrong)
			if _, err := testVerifier(now).Verify(r); !errors.Is(err, ErrSignatureMismatch) {
				t.Fatalf("wrong secret: %v", err)
			}
		}
	}
}

func TestPresignV4Tamper(t *testing.T) {
	req := newReq(t, http.MethodGet, "a b/c", url.Values{"versionId": {"1"}, "x": {""}}, nil)
	signed := signer.PreSignV4(*req, testAK, testSK, "", testRegion, 600)
	_, raw := wire(t, signed)
	line := bytes.Index(raw, []byte(" HTTP/1.1\r\n"))
	tried := 0
	for i := 0; i < line; i++ {
		mut := bytes.Clone(raw)
		mut[i] = substitute(mut[i])
		r, ok := reparse(mut)
		if !ok {
			continue
		}
		tried++
		if _, err := testVerifier(time.Now()).Verify(r); err == nil || kindOf(err) == nil {
			t.Fatalf("byte %d tampered: %v\n%s", i, err, mut[:line])
		}
	}
	if tried < 100 {
		t.Fatalf("only %d parsed", tried)
	}
}

func TestPresignV4Limits(t *testing.T) {
	req := newReq(t, http.MethodGet, "k", nil, nil)
	signed := signer.PreSignV4(*req, testAK, testSK, "", testRegion, 7*24*3600+1)
	r, _ := wire(t, signed)
	if _, err := testVerifier(time.Now()).Verify(r); !errors.Is(err, ErrExpiresRange) {
		t.Fatalf("8-day presign: %v", err)
	}
	req = newReq(t, http.MethodGet, "k", nil, nil)
	signed = signer.PreSignV4(*req, testAK, testSK, "", testRegion, 7*24*3600)
	r, _ = wire(t, signed)
	if _, err := testVerifier(time.Now()).Verify(r); err != nil {
		t.Fatalf("7-day presign: %v", err)
	}
}

func TestParseAuthorization(t *testing.T) {
	sig := strings.Repeat("ab", 32)
	good := "AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig
	a, err := ParseAuthorization(good)
	if err != nil {
		t.Fatal(err)
	}
	if a.Credential.AccessKey != "AK" || a.Credential.Date != "20250101" || a.Credential.Region != "us-east-1" ||
		a.Credential.Service != "s3" || len(a.SignedHeaders) != 2 || a.Signature != sig {
		t.Fatalf("parsed %+v", a)
	}
	bad := []string{
		"",
		"AWS4-HMAC-SHA256",
		"AWS4-HMAC-SHA1 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host",
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/2025010/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1//aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=x-amz-date, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=x-amz-date;host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=Host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig[1:],
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + strings.ToUpper(sig),
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + sig + ", Extra=1",
	}
	for _, b := range bad {
		if _, err := ParseAuthorization(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", b, err)
		}
	}
}

// TestAWSExample checks the canonical request machinery against the
// GET Object example of the S3 SigV4 documentation (header auth).
func TestAWSExample(t *testing.T) {
	r, err := http.NewRequest("GET", "https://examplebucket.s3.amazonaws.com/test.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Range", "bytes=0-9")
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
	v := &Verifier{
		Credentials: StaticCredentials{"AKIAIOSFODNN7EXAMPLE": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		Now:         func() time.Time { return time.Date(2013, 5, 24, 0, 5, 0, 0, time.UTC) },
	}
	if _, err := v.Verify(r); err != nil {
		t.Fatal(err)
	}
}
