package sigv4

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// TestPresignExpiryEdges: X-Amz-Expires from 1 to 604800 seconds is
// accepted and valid until exactly date+expires; outside that range, or
// not a number, it is ErrExpiresRange before any signature check; a date
// ahead of the clock by more than the skew is ErrNotYetValid, within the
// skew it is valid.
func TestPresignExpiryEdges(t *testing.T) {
	for _, secs := range []int64{1, 2, 3600, 604800} {
		req := newReq(t, http.MethodGet, "k", nil, nil)
		r, _ := wire(t, signer.PreSignV4(*req, testAK, testSK, "", testRegion, secs))
		p, err := ParsePresigned(r.URL.Query())
		if err != nil {
			t.Fatalf("expires %d: %v", secs, err)
		}
		end := p.Time.Add(time.Duration(secs) * time.Second)
		if _, err := testVerifier(end.Add(-time.Nanosecond)).Verify(r); err != nil {
			t.Fatalf("expires %d, last instant: %v", secs, err)
		}
		if _, err := testVerifier(end).Verify(r); !errors.Is(err, ErrExpired) {
			t.Fatalf("expires %d, at the end: %v", secs, err)
		}
		if _, err := testVerifier(p.Time.Add(-MaxSkew + time.Second)).Verify(r); err != nil {
			t.Fatalf("dated within the skew ahead: %v", err)
		}
		if _, err := testVerifier(p.Time.Add(-MaxSkew - time.Second)).Verify(r); !errors.Is(err, ErrNotYetValid) {
			t.Fatalf("dated beyond the skew ahead: %v", err)
		}
	}
	req := newReq(t, http.MethodGet, "k", nil, nil)
	r, _ := wire(t, signer.PreSignV4(*req, testAK, testSK, "", testRegion, 60))
	for _, bad := range []string{"0", "-1", "604801", "99999999999999999999", "ten", ""} {
		q := r.URL.Query()
		q.Set("X-Amz-Expires", bad)
		if _, err := ParsePresigned(q); !errors.Is(err, ErrExpiresRange) {
			t.Fatalf("X-Amz-Expires %q: %v", bad, err)
		}
		r2 := r.Clone(r.Context())
		r2.URL = &url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		if _, err := testVerifier(time.Now()).Verify(r2); !errors.Is(err, ErrExpiresRange) {
			t.Fatalf("verify with X-Amz-Expires %q: %v", bad, err)
		}
	}
	if strconv.Itoa(int(MaxPresignExpiry/time.Second)) != "604800" {
		t.Fatalf("MaxPresignExpiry is %v, S3's is 7 days", MaxPresignExpiry)
	}
}
