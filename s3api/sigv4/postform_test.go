package sigv4

import (
	"errors"
	"math/rand"
	"testing"
	"time"
)

func TestVerifyPostForm(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	scope := Scope{Date: now.Format(dateFormat), Region: testRegion, Service: "s3"}
	policy := "eyJleHBpcmF0aW9uIjogIjIwMzAtMDEtMDFUMDA6MDA6MDBaIiwgImNvbmRpdGlvbnMiOiBbXX0="
	good := PostForm{
		Policy: policy, Algorithm: Algorithm, Credential: testAK + "/" + scope.String(),
		Date: now.Format(timeFormat), Signature: SignPostPolicy(testSK, scope, policy),
	}
	// The form is not bound to the clock: its policy's expiration is.
	a, err := testVerifier(now.Add(30 * 24 * time.Hour)).VerifyPostForm(good)
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != V4PostForm || a.AccessKey != testAK || a.Scope != scope {
		t.Fatalf("auth = %+v", a)
	}
	bad := func(name string, want error, change func(*PostForm)) {
		f := good
		change(&f)
		if _, err := testVerifier(now).VerifyPostForm(f); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	bad("policy changed", ErrSignatureMismatch, func(f *PostForm) { f.Policy += "AA" })
	bad("wrong secret", ErrSignatureMismatch, func(f *PostForm) { f.Signature = SignPostPolicy("other", scope, policy) })
	bad("algorithm", ErrMalformed, func(f *PostForm) { f.Algorithm = "AWS4-HMAC-SHA1" })
	bad("date of another day", ErrMalformed, func(f *PostForm) { f.Date = now.Add(48 * time.Hour).Format(timeFormat) })
	bad("date unparsable", ErrMalformed, func(f *PostForm) { f.Date = "yesterday" })
	bad("credential", ErrMalformed, func(f *PostForm) { f.Credential = testAK + "/x" })
	bad("unknown key", ErrInvalidAccessKey, func(f *PostForm) { f.Credential = "NOPE/" + scope.String() })
	bad("short signature", ErrMalformed, func(f *PostForm) { f.Signature = f.Signature[:63] })
	// Every single-character change of the signature is refused.
	rng := rand.New(rand.NewSource(5))
	for range 64 {
		f := good
		i := rng.Intn(len(f.Signature))
		c := "0123456789abcdef"[rng.Intn(16)]
		if f.Signature[i] == c {
			continue
		}
		f.Signature = f.Signature[:i] + string(c) + f.Signature[i+1:]
		if _, err := testVerifier(now).VerifyPostForm(f); !errors.Is(err, ErrSignatureMismatch) {
			t.Fatalf("signature digit %d changed: %v", i, err)
		}
	}
}
