package sigv4

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

func TestSignV2Minio(t *testing.T) {
	for _, key := range keys {
		for qi, q := range queries {
			req := newReq(t, http.MethodPut, key, q, []byte("x"))
			req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
			req.Header.Set("Content-Type", "text/plain")
			req.Header.Set("Content-Md5", "XrY7u+Ae7tCTyyK7j1rNww==")
			req.Header.Set("X-Amz-Meta-B", "two")
			req.Header.Set("X-Amz-Meta-A", "one")
			r, _ := wire(t, signer.SignV2(*req, testAK, testSK, false))
			auth, err := testVerifier(time.Now()).Verify(r)
			if err != nil {
				t.Fatalf("%q query %d: %v", key, qi, err)
			}
			if auth.Kind != V2Header || auth.AccessKey != testAK {
				t.Fatalf("auth %+v", auth)
			}
		}
	}
}

func TestSignV2Errors(t *testing.T) {
	mk := func() *http.Request {
		req := newReq(t, http.MethodGet, "k", url.Values{"acl": {""}}, nil)
		req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		return req
	}
	now := time.Now()
	r, _ := wire(t, signer.SignV2(*mk(), testAK, "bad", false))
	if _, err := testVerifier(now).Verify(r); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("wrong secret: %v", err)
	}
	r, _ = wire(t, signer.SignV2(*mk(), "nobody", testSK, false))
	if _, err := testVerifier(now).Verify(r); !errors.Is(err, ErrInvalidAccessKey) {
		t.Fatalf("unknown key: %v", err)
	}
	r, _ = wire(t, signer.SignV2(*mk(), testAK, testSK, false))
	if _, err := testVerifier(now.Add(20 * time.Minute)).Verify(r); !errors.Is(err, ErrRequestTimeTooSkewed) {
		t.Fatalf("skew: %v", err)
	}
	// Sub-resources are signed; other query parameters are not (V2 rule).
	for _, q := range []string{"acl=x", "versionId=1", "uploads"} {
		r2 := r.Clone(r.Context())
		r2.URL.RawQuery = q
		if _, err := testVerifier(now).Verify(r2); !errors.Is(err, ErrSignatureMismatch) {
			t.Fatalf("query %q: %v", q, err)
		}
	}
	r.Header.Set("X-Amz-Meta-New", "v")
	if _, err := testVerifier(now).Verify(r); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("added amz header: %v", err)
	}
}

func TestPresignV2Minio(t *testing.T) {
	for _, key := range keys {
		req := newReq(t, http.MethodGet, key, url.Values{"versionId": {"v 1"}}, nil)
		signed := signer.PreSignV2(*req, testAK, testSK, 600, false)
		r, raw := wire(t, signed)
		now := time.Now()
		auth, err := testVerifier(now).Verify(r)
		if err != nil {
			t.Fatalf("%q: %v\n%s", key, err, signed.URL)
		}
		if auth.Kind != V2Presigned {
			t.Fatalf("auth %+v", auth)
		}
		if _, err := testVerifier(now.Add(601 * time.Second)).Verify(r); !errors.Is(err, ErrExpired) {
			t.Fatalf("expired: %v", err)
		}
		line := bytes.Index(raw, []byte(" HTTP/1.1\r\n"))
		for i := 0; i < line; i++ {
			mut := bytes.Clone(raw)
			mut[i] = substitute(mut[i])
			r, ok := reparse(mut)
			if !ok {
				continue
			}
			if _, err := testVerifier(now).Verify(r); err == nil || kindOf(err) == nil {
				t.Fatalf("byte %d tampered: %v\n%s", i, err, mut[:line])
			}
		}
	}
}

// TestSignV2AmzDate: with x-amz-date and no Date header, the Date line of
// the string to sign is empty and x-amz-date is a canonical amz header.
func TestSignV2AmzDate(t *testing.T) {
	tm := time.Now().UTC()
	r := newReq(t, http.MethodDelete, "a b", url.Values{"uploadId": {"u1"}, "other": {"x"}}, nil)
	r.Header.Set("X-Amz-Date", tm.Format(timeFormat))
	sts, err := StringToSignV2(r, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "DELETE\n\n\n\nx-amz-date:" + tm.Format(timeFormat) + "\n/bucket/a%20b?uploadId=u1"
	if sts != want {
		t.Fatalf("string to sign %q, want %q", sts, want)
	}
	r.Header.Set("Authorization", "AWS "+testAK+":"+signV2(testSK, sts))
	if _, err := testVerifier(tm).Verify(r); err != nil {
		t.Fatal(err)
	}
}
