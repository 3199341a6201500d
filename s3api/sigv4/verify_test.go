package sigv4

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

func TestVerifyDispatch(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name  string
		authz string
		query url.Values
		want  error
	}{
		{"anonymous", "", nil, ErrMissingAuth},
		{"bearer", "Bearer x", nil, ErrMalformed},
		{"v4 garbage", "AWS4-HMAC-SHA256 nonsense", nil, ErrMalformed},
		{"v2 garbage", "AWS nocolon", nil, ErrInvalidArgument},
		{"both", "AWS a:b", url.Values{"X-Amz-Credential": {"x"}}, ErrInvalidArgument},
		{"presign partial", "", url.Values{"X-Amz-Algorithm": {Algorithm}}, ErrMalformed},
		{"v2 presign partial", "", url.Values{"AWSAccessKeyId": {"a"}}, ErrIncompleteQuery},
	}
	for _, c := range cases {
		r := newReq(t, http.MethodGet, "k", c.query, nil)
		if c.authz != "" {
			r.Header.Set("Authorization", c.authz)
		}
		if _, err := testVerifier(now).Verify(r); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestDateHeader: a V4 request dated by the Date header instead of
// X-Amz-Date is accepted when the signature covers it.
func TestDateHeader(t *testing.T) {
	tm := time.Now().UTC().Truncate(time.Second)
	r := newReq(t, http.MethodGet, "k", nil, nil)
	r.Header.Set("Date", tm.Format(http.TimeFormat))
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	scope := Scope{tm.Format(dateFormat), testRegion, "s3"}
	signed := []string{"date", "host", "x-amz-content-sha256"}
	canon, err := CanonicalRequest(r, signed, emptySHA256, "")
	if err != nil {
		t.Fatal(err)
	}
	sig := sign(SigningKey(testSK, scope), StringToSign(tm, scope, canon))
	r.Header.Set("Authorization", Algorithm+" Credential="+testAK+"/"+scope.String()+", SignedHeaders="+strings.Join(signed, ";")+", Signature="+sig)
	if _, err := testVerifier(tm).Verify(r); err != nil {
		t.Fatal(err)
	}
	if _, err := testVerifier(tm.Add(time.Hour)).Verify(r); !errors.Is(err, ErrRequestTimeTooSkewed) {
		t.Fatal(err)
	}
	// Without a valid date S3 answers 403 AccessDenied (ErrInvalidDate),
	// not a malformed header.
	for _, date := range []string{"", "yesterday"} {
		r.Header.Set("Date", date)
		if _, err := testVerifier(tm).Verify(r); !errors.Is(err, ErrInvalidDate) {
			t.Errorf("Date %q: %v, want ErrInvalidDate", date, err)
		}
	}
	r.Header.Set("X-Amz-Date", "20261301T000000Z")
	if _, err := testVerifier(tm).Verify(r); !errors.Is(err, ErrInvalidDate) {
		t.Errorf("a bad X-Amz-Date: %v, want ErrInvalidDate", err)
	}
}

func TestSHA256Reader(t *testing.T) {
	body := []byte("abc")
	if _, err := NewSHA256Reader(bytes.NewReader(body), "xyz"); !errors.Is(err, ErrMalformed) {
		t.Fatal(err)
	}
	r, err := NewSHA256Reader(oneByte{bytes.NewReader(body)}, hexSHA(body))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("%q %v", got, err)
	}
	r, _ = NewSHA256Reader(bytes.NewReader(body[:2]), hexSHA(body))
	if _, err := io.ReadAll(r); !errors.Is(err, ErrContentSHA256Mismatch) {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, ErrContentSHA256Mismatch) {
		t.Fatal("error not sticky")
	}
}

// TestPresignedPayloadHash: a presigned PUT that also sends a hex
// x-amz-content-sha256 has its body checked against it.
func TestPresignedPayloadHash(t *testing.T) {
	body := []byte("presigned body")
	req := newReq(t, http.MethodPut, "k", nil, body)
	signed := signer.PreSignV4(*req, testAK, testSK, "", testRegion, 60)
	signed.Header.Set("X-Amz-Content-Sha256", hexSHA([]byte("other")))
	r, _ := wire(t, signed)
	auth, err := testVerifier(time.Now()).Verify(r)
	if err != nil {
		t.Fatal(err)
	}
	br, err := auth.Body(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(br); !errors.Is(err, ErrContentSHA256Mismatch) {
		t.Fatal(err)
	}
}

// TestSigningKeyCache checks that cached signing keys are the derived
// ones for every secret and scope, a changed secret included, and that
// the cache stays bounded.
func TestSigningKeyCache(t *testing.T) {
	var v Verifier
	for i := 0; i < 3*keyCacheMax; i++ {
		secret := fmt.Sprintf("secret-%d", i%7)
		scope := Scope{Date: fmt.Sprintf("202612%02d", 1+i%28), Region: []string{"us-east-1", "eu-west-1", ""}[i%3], Service: "s3"}
		for round := 0; round < 2; round++ {
			if got, want := v.signingKey(secret, scope), SigningKey(secret, scope); !bytes.Equal(got, want) {
				t.Fatalf("secret %q scope %v: cached key %x, derived %x", secret, scope, got, want)
			}
		}
		if n := len(v.keys.keys); n > keyCacheMax {
			t.Fatalf("cache holds %d keys, more than %d", n, keyCacheMax)
		}
	}
	// Two secrets and scopes that read the same when joined with a
	// separator each get their own key.
	a, aScope := "s\x00d/r", Scope{Date: "x", Region: "y", Service: "s3"}
	b, bScope := "s", Scope{Date: "d/r\x00x", Region: "y", Service: "s3"}
	for _, c := range []struct {
		secret string
		scope  Scope
	}{{a, aScope}, {b, bScope}, {a, aScope}} {
		if got, want := v.signingKey(c.secret, c.scope), SigningKey(c.secret, c.scope); !bytes.Equal(got, want) {
			t.Fatalf("secret %q scope %v: cached key %x, derived %x", c.secret, c.scope, got, want)
		}
	}
}

// BenchmarkVerifyV4Header verifies a signed DELETE, as every request of
// an S3 client is: the signing key comes from the cache after the first.
//
//	go test -run '^$' -bench VerifyV4Header ./s3api/sigv4/
func BenchmarkVerifyV4Header(b *testing.B) {
	now := time.Now()
	r, err := http.NewRequest(http.MethodDelete, "http://127.0.0.1:9000/bucket/prefix/key", nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := Sign(r, testAK, testSK, testRegion, UnsignedPayload, now); err != nil {
		b.Fatal(err)
	}
	v := testVerifier(now)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseAmzTimeAgreesWithTimeParse: the fast X-Amz-Date parser gives
// time.Parse's time and accepts and refuses what it does, over valid
// dates, edge dates and damaged strings.
func TestParseAmzTimeAgreesWithTimeParse(t *testing.T) {
	cases := []string{
		"20261206T231015Z", "20240229T000000Z", "20230229T000000Z", "20260431T120000Z",
		"20261301T000000Z", "20261200T000000Z", "20261206T240000Z", "20261206T236000Z",
		"20261206T235960Z", "2026120AT231015Z", "20261206 231015Z", "20261206T231015",
		"", "00000101T000000Z", "99991231T235959Z", "+0261206T231015Z", "20261206t231015Z",
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		b := []byte("20261206T231015Z")
		for n := rng.Intn(3); n > 0; n-- {
			b[rng.Intn(len(b))] = "0123456789TZ-+ x"[rng.Intn(16)]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		got, gerr := parseAmzTime(s)
		want, werr := time.Parse(timeFormat, s)
		if (gerr == nil) != (werr == nil) || !got.Equal(want) {
			t.Fatalf("parseAmzTime(%q) = %v, %v; time.Parse gives %v, %v", s, got, gerr, want, werr)
		}
	}
}
