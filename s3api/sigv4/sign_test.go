package sigv4

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// TestSignMatchesMinio: Sign gives byte for byte the Authorization header
// minio-go's signer gives for the same request at the same time, with and
// without a region, over the keys and queries of the other tests (but
// for the order of repeated query keys); the
// Verifier accepts it after a trip through the wire, and refuses it with
// another secret.
func TestSignMatchesMinio(t *testing.T) {
	body := []byte(`{"quota":8388608,"size":0,"rate":0,"requests":0,"quotatype":"hard"}`)
	for _, region := range []string{"", testRegion} {
		for _, key := range keys {
			for qi, q := range queries {
				theirs := newReq(t, http.MethodPut, key, q, body)
				theirs.Header.Set("X-Amz-Content-Sha256", hexSHA(body))
				theirs = signer.SignV4(*theirs, testAK, testSK, "", region)
				at, err := time.Parse(timeFormat, theirs.Header.Get("X-Amz-Date"))
				if err != nil {
					t.Fatal(err)
				}
				ours := newReq(t, http.MethodPut, key, q, body)
				if err := Sign(ours, testAK, testSK, region, hexSHA(body), at); err != nil {
					t.Fatal(err)
				}
				// minio-go keeps repeated query keys in the order given;
				// Sign sorts them by value, as AWS does (the Verifier
				// accepts both).
				pairs, _ := parseQuery(ours.URL.RawQuery)
				if got, want := ours.Header.Get("Authorization"), theirs.Header.Get("Authorization"); got != want && !repeatedUnsorted(pairs) {
					t.Fatalf("region %q key %q query %d:\n ours   %s\n minio  %s", region, key, qi, got, want)
				}
				r, _ := wire(t, ours)
				v := testVerifier(at)
				v.AllowEmptyRegion = true
				auth, err := v.Verify(r)
				if err != nil || auth.Scope.Region != region || auth.AccessKey != testAK {
					t.Fatalf("region %q key %q query %d: %+v, %v", region, key, qi, auth, err)
				}
			}
		}
	}
	req := newReq(t, http.MethodGet, "k", url.Values{"bucket": {"b"}}, nil)
	at := time.Now()
	if err := Sign(req, testAK, "wrong", "", hexSHA(nil), at); err != nil {
		t.Fatal(err)
	}
	r, _ := wire(t, req)
	v := testVerifier(at)
	v.AllowEmptyRegion = true
	if _, err := v.Verify(r); !errors.Is(err, ErrSignatureMismatch) {
		t.Errorf("signed with a wrong secret: %v", err)
	}
}
