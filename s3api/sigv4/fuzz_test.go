package sigv4

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Seeds beyond testdata/fuzz are added here so the targets start from
// valid inputs.

func FuzzParseAuthorization(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + strings.Repeat("0f", 32))
	f.Add("AWS4-HMAC-SHA256 Credential=A/K/20250101/r/s3/aws4_request,SignedHeaders=host,Signature=")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAuthorization(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(a.Signature) != 64 || a.Credential.AccessKey == "" || len(a.SignedHeaders) == 0 {
			t.Fatalf("accepted %+v", a)
		}
	})
}

func FuzzParsePresigned(f *testing.F) {
	f.Add("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20250101T000000Z&X-Amz-Expires=600&X-Amz-SignedHeaders=host&X-Amz-Signature=" + strings.Repeat("0f", 32))
	f.Add("X-Amz-Expires=604801")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		p, err := ParsePresigned(q)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrExpiresRange) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if p.Expires <= 0 || p.Expires > MaxPresignExpiry {
			t.Fatalf("expiry %v", p.Expires)
		}
	})
}

// FuzzChunkedReader decodes arbitrary bodies in each mode: it must end in
// io.EOF or a typed error, and never deliver more than it declares.
func FuzzChunkedReader(f *testing.F) {
	tm := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	scope := Scope{"20260102", testRegion, "s3"}
	key := SigningKey(testSK, scope)
	seed := strings.Repeat("00", 32)
	f.Add(encodeChunks([]byte("hello world"), []int{4}, key, scope, tm, seed, ""), uint8(0))
	f.Add(encodeChunks([]byte("hello world"), []int{5}, key, scope, tm, seed, "x-amz-checksum-crc32:AAAAAA==\r\n"), uint8(1))
	f.Add([]byte("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n"), uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		c := ChunkedConfig{SigningKey: key, Scope: scope, Time: tm, SeedSignature: seed, DecodedLength: -1}
		switch mode % 4 {
		case 0:
			c.Signed = true
		case 1:
			c.Signed, c.Trailer = true, true
		case 2:
			c.Trailer = true
		case 3:
			c.Signed, c.DecodedLength = true, 11
		}
		cr := NewChunkedReader(bytes.NewReader(body), c)
		got, err := io.ReadAll(cr)
		if err != nil && kindOf(err) == nil {
			t.Fatalf("untyped error %v", err)
		}
		if len(got) > len(body) {
			t.Fatalf("decoded %d bytes from %d", len(got), len(body))
		}
		if err == nil && c.DecodedLength >= 0 && int64(len(got)) != c.DecodedLength {
			t.Fatalf("decoded %d, declared %d", len(got), c.DecodedLength)
		}
	})
}
