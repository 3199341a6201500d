package sigv4

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// botocoreCase is one request of testdata/v2/botocore.json, signed by
// botocore (testdata/v2/gen_botocore.py writes the file).
type botocoreCase struct {
	Name    string
	Method  string
	URL     string
	Headers map[string]string
	Now     int64 // a time at which the request is valid
}

func loadBotocoreCases(t *testing.T) []botocoreCase {
	t.Helper()
	data, err := os.ReadFile("testdata/v2/botocore.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []botocoreCase }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("no cases")
	}
	return doc.Cases
}

func (c botocoreCase) request(t *testing.T) *http.Request {
	t.Helper()
	req, err := http.NewRequest(c.Method, c.URL, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	r, _ := wire(t, req)
	return r
}

// TestBotocoreV2: what botocore signs with V2 verifies, presigned URLs of
// bucket-level requests included (their resource is "/bucket/", and
// botocore signs its own list of sub-resources), and a change to the
// path does not.
func TestBotocoreV2(t *testing.T) {
	for _, c := range loadBotocoreCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			v := testVerifier(time.Unix(c.Now, 0))
			a, err := v.Verify(c.request(t))
			if err != nil {
				t.Fatalf("%s %s: %v", c.Method, c.URL, err)
			}
			want := V2Header
			if len(c.Headers) == 0 {
				want = V2Presigned
			}
			if a.Kind != want || a.AccessKey != testAK {
				t.Fatalf("auth %+v", a)
			}
			r := c.request(t)
			r.URL.Path += "x"
			r.URL.RawPath = ""
			if _, err := v.Verify(r); !errors.Is(err, ErrSignatureMismatch) {
				t.Fatalf("path changed to %s: %v", r.URL.Path, err)
			}
		})
	}
}

// TestV2ResourceForms: a signature over one canonical resource does not
// verify a request for another. The forms accepted for a bucket-level
// request ("/b" and "/b/") and for a sub-resource one list omits
// (encryption) are the same request; a sub-resource both lists name, or
// another bucket, is not.
func TestV2ResourceForms(t *testing.T) {
	now := time.Now()
	expires := "1900000000"
	presigned := func(path, query, resource string) *http.Request {
		sts := "GET\n\n\n" + expires + "\n" + resource
		q := url.Values{"AWSAccessKeyId": {testAK}, "Expires": {expires}, "Signature": {signV2(testSK, sts)}}
		if query != "" {
			query += "&"
		}
		r, err := http.NewRequest(http.MethodGet, "http://h"+path+"?"+query+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		path, query, resource string
		ok                    bool
	}{
		{"/b", "list-type=2", "/b", true},
		{"/b", "list-type=2", "/b/", true},
		{"/b/", "list-type=2", "/b/", true},
		{"/b/", "list-type=2", "/b", false},
		{"/b/k", "", "/b/k/", false},
		{"/b", "", "/c/", false},
		{"/b", "encryption", "/b?encryption", true},
		{"/b", "encryption", "/b/", true},
		{"/b", "object-lock", "/b?object-lock", true},
		{"/b", "object-lock", "/b", true},
		{"/b", "acl", "/b/", false},
		{"/b", "acl", "/b/?acl", true},
		{"/b/k", "versionId=v1&retention", "/b/k?retention&versionId=v1", true},
		{"/b/k", "versionId=v1&retention", "/b/k?versionId=v1", true},
		{"/b/k", "versionId=v1&retention", "/b/k?versionId=v2", false},
	} {
		_, err := testVerifier(now).Verify(presigned(c.path, c.query, c.resource))
		if (err == nil) != c.ok {
			t.Errorf("%s?%s signed over %s: %v, want ok=%v", c.path, c.query, c.resource, err, c.ok)
		}
	}
}

// TestV2Refusals: each V2 refusal has its kind, which the S3 layer turns
// into S3's code (403 AccessDenied for a date or an Expires that is not
// one, 400 InvalidArgument for a header that is not "AWS AK:sig").
func TestV2Refusals(t *testing.T) {
	now := time.Now().UTC()
	// header signs with minio-go, which adds a Date header when there is
	// none; a Date of "-" is removed after signing.
	header := func(h map[string]string) *http.Request {
		r := newReq(t, http.MethodPut, "k", nil, []byte("x"))
		for k, v := range h {
			r.Header[http.CanonicalHeaderKey(k)] = []string{v}
		}
		s := signer.SignV2(*r, testAK, testSK, false)
		if h["Date"] == "-" {
			s.Header.Del("Date")
		}
		return s
	}
	query := func(q string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, "http://h/b/k?"+q, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	rfc := func(tm time.Time) string { return tm.Format(http.TimeFormat) }
	for _, c := range []struct {
		name string
		r    *http.Request
		want error
	}{
		{"date header", header(map[string]string{"Date": rfc(now)}), nil},
		{"x-amz-date, RFC 1123", header(map[string]string{"X-Amz-Date": rfc(now)}), nil},
		{"x-amz-date, ISO 8601", header(map[string]string{"X-Amz-Date": now.Format(timeFormat)}), nil},
		{"no date", header(map[string]string{"Date": "-"}), ErrInvalidDate},
		{"bad date", header(map[string]string{"Date": "Bad Date"}), ErrInvalidDate},
		{"bad x-amz-date", header(map[string]string{"X-Amz-Date": "Bad Date", "Date": rfc(now)}), ErrInvalidDate},
		{"empty x-amz-date", header(map[string]string{"X-Amz-Date": "", "Date": rfc(now)}), ErrInvalidDate},
		{"before the epoch", header(map[string]string{"X-Amz-Date": "Tue, 07 Jul 1950 21:53:04 GMT"}), ErrInvalidDate},
		{"years ago", header(map[string]string{"X-Amz-Date": "Tue, 07 Jul 2010 21:53:04 GMT"}), ErrRequestTimeTooSkewed},
		{"far future", header(map[string]string{"X-Amz-Date": "Tue, 07 Jul 9999 21:53:04 GMT"}), ErrRequestTimeTooSkewed},
		{"presigned", query("AWSAccessKeyId=" + testAK + "&Expires=1&Signature=x"), ErrExpired},
		{"no signature", query("AWSAccessKeyId=" + testAK + "&Expires=1900000000"), ErrIncompleteQuery},
		{"empty expires", query("AWSAccessKeyId=" + testAK + "&Expires=&Signature=x"), ErrIncompleteQuery},
		{"no access key", query("Expires=1900000000&Signature=x"), ErrIncompleteQuery},
		{"expires not a number", query("AWSAccessKeyId=" + testAK + "&Expires=soon&Signature=x"), ErrInvalidExpires},
		{"expires negative", query("AWSAccessKeyId=" + testAK + "&Expires=-5&Signature=x"), ErrInvalidExpires},
		{"wrong signature", query("AWSAccessKeyId=" + testAK + "&Expires=1900000000&Signature=x"), ErrSignatureMismatch},
		{"unknown key", query("AWSAccessKeyId=nobody&Expires=1900000000&Signature=x"), ErrInvalidAccessKey},
		{"repeated", query("AWSAccessKeyId=" + testAK + "&Expires=1900000000&Signature=x&Signature=y"), ErrMalformed},
	} {
		if c.r.Header.Get("Authorization") != "" {
			c.r, _ = wire(t, c.r)
		}
		_, err := testVerifier(now).Verify(c.r)
		if c.want == nil && err != nil || c.want != nil && kindOf(err) != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestV2AmzDateLine: with both Date and x-amz-date, S3 asks for an empty
// date line, while some clients sign the Date header: both verify.
func TestV2AmzDateLine(t *testing.T) {
	now := time.Now().UTC()
	for _, line := range []string{"", now.Format(http.TimeFormat)} {
		r := newReq(t, http.MethodGet, "k", nil, nil)
		r.Header.Set("Date", now.Format(http.TimeFormat))
		r.Header.Set("X-Amz-Date", now.Format(http.TimeFormat))
		sts := "GET\n\n\n" + line + "\nx-amz-date:" + now.Format(http.TimeFormat) + "\n/bucket/k"
		r.Header.Set("Authorization", "AWS "+testAK+":"+signV2(testSK, sts))
		if _, err := testVerifier(now).Verify(r); err != nil {
			t.Errorf("date line %q: %v", line, err)
		}
	}
}

// TestV2HeaderSpaces: the spaces inside an x-amz-* value are signed as
// sent (botocore and minio-go keep them), those around it are not.
func TestV2HeaderSpaces(t *testing.T) {
	now := time.Now().UTC()
	r := newReq(t, http.MethodGet, "k", nil, nil)
	r.Header.Set("Date", now.Format(http.TimeFormat))
	r.Header.Set("X-Amz-Meta-A", " a  b ")
	sts := "GET\n\n\n" + now.Format(http.TimeFormat) + "\nx-amz-meta-a:a  b\n/bucket/k"
	r.Header.Set("Authorization", "AWS "+testAK+":"+signV2(testSK, sts))
	if _, err := testVerifier(now).Verify(r); err != nil {
		t.Fatal(err)
	}
}

// TestSubResourceLists: the lists are sorted, as the resource needs them.
func TestSubResourceLists(t *testing.T) {
	for _, l := range [][]string{subResources, botocoreSubResources} {
		if !slices.IsSorted(l) || len(slices.Compact(slices.Clone(l))) != len(l) {
			t.Errorf("not sorted or repeated: %v", l)
		}
	}
}

func TestVerifyPostFormV2(t *testing.T) {
	policy := "eyJleHBpcmF0aW9uIjogIjIwMzAtMDEtMDFUMDA6MDA6MDBaIiwgImNvbmRpdGlvbnMiOiBbXX0="
	good := PostFormV2{Policy: policy, AccessKey: testAK, Signature: SignPostPolicyV2(testSK, policy)}
	a, err := testVerifier(time.Now()).VerifyPostFormV2(good)
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != V2PostForm || a.AccessKey != testAK || a.Kind.String() != "v2-post-form" {
		t.Fatalf("auth = %+v", a)
	}
	for _, c := range []struct {
		name   string
		change func(*PostFormV2)
		want   error
	}{
		{"policy changed", func(f *PostFormV2) { f.Policy += "AA" }, ErrSignatureMismatch},
		{"wrong secret", func(f *PostFormV2) { f.Signature = SignPostPolicyV2("other-secret", policy) }, ErrSignatureMismatch},
		{"signature changed", func(f *PostFormV2) { f.Signature = strings.ToLower(f.Signature) }, ErrSignatureMismatch},
		{"unknown key", func(f *PostFormV2) { f.AccessKey = "NOPE" }, ErrInvalidAccessKey},
		{"no key", func(f *PostFormV2) { f.AccessKey = "" }, ErrInvalidArgument},
		{"no signature", func(f *PostFormV2) { f.Signature = "" }, ErrInvalidArgument},
	} {
		f := good
		c.change(&f)
		if _, err := testVerifier(time.Now()).VerifyPostFormV2(f); kindOf(err) != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestV4AnyRegion: a verifier without a Region accepts a signature for
// any region, computed with the key and scope of the region the
// credential names; a signature made for one region and sent as another
// is refused.
func TestV4AnyRegion(t *testing.T) {
	now := time.Now()
	for _, region := range []string{"us-east-1", "eu-west-1", "ap-southeast-2", "EU", "default"} {
		r := newReq(t, http.MethodGet, "k", nil, nil)
		r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
		signed, _ := wire(t, signer.SignV4(*r, testAK, testSK, "", region))
		a, err := testVerifier(now).Verify(signed)
		if err != nil || a.Scope.Region != region {
			t.Errorf("region %s: %+v, %v", region, a, err)
		}
		moved := signed.Clone(signed.Context())
		authz := moved.Header.Get("Authorization")
		moved.Header.Set("Authorization", strings.Replace(authz, "/"+region+"/", "/xx-moved-1/", 1))
		if _, err := testVerifier(now).Verify(moved); !errors.Is(err, ErrSignatureMismatch) {
			t.Errorf("region %s sent as another: %v", region, err)
		}
	}
}

// FuzzVerifyV2: any V2 request (a query and an Authorization header)
// verifies or fails with exactly one kind, and what verifies carries the
// signature of one of its strings to sign.
func FuzzVerifyV2(f *testing.F) {
	f.Add("list-type=2&AWSAccessKeyId="+testAK+"&Expires=1900000000&Signature=x852leJ%2BcVCCEoR95JzxVk8Oy58%3D", "", "", "/bkt")
	f.Add("acl", "AWS "+testAK+":abc", "Tue, 07 Jul 2026 21:53:04 GMT", "/b/k")
	f.Add("", "AWS nocolon", "", "/")
	f.Add("Expires=-1&AWSAccessKeyId=a&Signature=b", "", "Bad Date", "/b/")
	now := time.Date(2026, 7, 7, 21, 53, 4, 0, time.UTC)
	f.Fuzz(func(t *testing.T, rawQuery, authz, date, path string) {
		u, err := url.Parse("http://h" + path)
		if err != nil || u.Host != "h" {
			return
		}
		u.RawQuery = rawQuery
		r := &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		if date != "" {
			r.Header.Set("Date", date)
		}
		a, err := testVerifier(now).Verify(r)
		if err != nil {
			if kindOf(err) == nil {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if a.Kind != V2Header && a.Kind != V2Presigned {
			return // V4, verified elsewhere
		}
		sig, dates := strings.TrimPrefix(authz, "AWS "+a.AccessKey+":"), []string{date}
		if a.Kind == V2Presigned {
			sig, dates = u.Query().Get("Signature"), []string{u.Query().Get("Expires")}
		}
		secret, _ := testVerifier(now).Credentials.SecretKey(a.AccessKey)
		stss, err := stringsToSignV2(r, dates...)
		if err != nil || !matchV2(secret, stss, sig) {
			t.Fatalf("accepted %q %q without its signature", rawQuery, authz)
		}
	})
}
