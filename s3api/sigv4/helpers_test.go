package sigv4

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
	"testing"
	"time"
)

const (
	testAK     = "AKIDEXAMPLE"
	testSK     = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testRegion = "us-east-1"
)

func testVerifier(now time.Time) *Verifier {
	return &Verifier{
		Credentials: StaticCredentials{testAK: testSK, "other": "other-secret"},
		Now:         func() time.Time { return now },
	}
}

// wire sends a client request through its HTTP/1.1 serialisation and
// parses it back as a server would see it, body included.
func wire(t testing.TB, req *http.Request) (*http.Request, []byte) {
	t.Helper()
	req.Trailer = nil
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		t.Fatalf("write request: %v", err)
	}
	raw := buf.Bytes()
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("read request: %v\n%s", err, raw)
	}
	return r, raw
}

// reparse parses wire bytes, reporting whether they still form a request.
func reparse(raw []byte) (*http.Request, bool) {
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	return r, err == nil
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sentinels is every error kind; each failure must wrap exactly one.
var sentinels = []error{
	ErrMissingAuth, ErrMalformed, ErrInvalidAccessKey, ErrSignatureMismatch,
	ErrRequestTimeTooSkewed, ErrExpired, ErrContentSHA256Mismatch, ErrIncompleteBody,
	ErrNotYetValid, ErrExpiresRange, ErrInvalidArgument, ErrInvalidDate, ErrInvalidExpires,
	ErrIncompleteQuery,
}

func kindOf(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// shaHasher adapts crypto/sha256 to minio-go's md5simd.Hasher.
type shaHasher struct{ hash.Hash }

func (shaHasher) Close() {}

func newSHAHasher() shaHasher { return shaHasher{sha256.New()} }
