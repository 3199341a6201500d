package sigv4

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// streamingRequest signs a chunked upload with minio-go and returns the
// request as the server sees it, with the raw body.
func streamingRequest(t testing.TB, data []byte, secret string, reqTime time.Time) (*http.Request, []byte) {
	t.Helper()
	req := newReq(t, http.MethodPut, "big/obj ect", nil, data)
	signed := signer.StreamingSignV4(req, testAK, secret, "", testRegion, int64(len(data)), reqTime, newSHAHasher())
	r, _ := wire(t, signed)
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r, raw
}

func decode(t testing.TB, r *http.Request, body []byte, now time.Time) ([]byte, *ChunkedReader, error) {
	t.Helper()
	auth, err := testVerifier(now).Verify(r)
	if err != nil {
		return nil, nil, err
	}
	cr := auth.ChunkedReader(bytes.NewReader(body))
	got, err := io.ReadAll(cr)
	return got, cr, err
}

func TestStreamingMinio(t *testing.T) {
	now := time.Now()
	for _, n := range []int{0, 1, 2, 1000, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200<<10 + 17} {
		data := payload(n, uint64(n))
		r, body := streamingRequest(t, data, testSK, now)
		if r.Header.Get("X-Amz-Content-Sha256") != StreamingPayload {
			t.Fatalf("header %q", r.Header.Get("X-Amz-Content-Sha256"))
		}
		got, _, err := decode(t, r, body, now)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: %d bytes, %v", n, len(got), err)
		}
		// Through Auth.Body, with a 1-byte reader on top.
		auth, err := testVerifier(now).Verify(r)
		if err != nil {
			t.Fatal(err)
		}
		br, _ := auth.Body(bytes.NewReader(body))
		got, err = io.ReadAll(oneByte{br})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d one byte at a time: %v", n, err)
		}
	}
}

type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

func TestStreamingWrongSecret(t *testing.T) {
	now := time.Now()
	r, _ := streamingRequest(t, payload(10, 1), "wrong", now)
	if _, err := testVerifier(now).Verify(r); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatal(err)
	}
}

// TestStreamingTamper changes each byte of the body's framing and a
// sample of its data: every change fails, never a silent success.
func TestStreamingTamper(t *testing.T) {
	now := time.Now()
	data := payload(70<<10, 7) // two chunks and the final one
	r, body := streamingRequest(t, data, testSK, now)
	positions := 0
	for i := 0; i < len(body); i++ {
		inData := isChunkData(body, i)
		if inData && i%509 != 0 {
			continue
		}
		positions++
		mut := bytes.Clone(body)
		mut[i] = substitute(mut[i])
		got, _, err := decode(t, r, mut, now)
		if err == nil {
			t.Fatalf("byte %d (%q) tampered: read %d bytes without error", i, body[i], len(got))
		}
		if kindOf(err) == nil {
			t.Fatalf("byte %d: untyped error %v", i, err)
		}
		if inData && !errors.Is(err, ErrSignatureMismatch) {
			t.Fatalf("data byte %d: %v", i, err)
		}
	}
	// Each hex digit of each chunk signature, changed to another hex digit.
	for i := 0; i+len(chunkSigPrefix) < len(body); i++ {
		if !bytes.HasPrefix(body[i:], []byte(chunkSigPrefix)) {
			continue
		}
		for j := i + len(chunkSigPrefix); j < i+len(chunkSigPrefix)+64; j++ {
			mut := bytes.Clone(body)
			mut[j] = "1032547698badcfe"[hexVal(mut[j])]
			if _, _, err := decode(t, r, mut, now); !errors.Is(err, ErrSignatureMismatch) {
				t.Fatalf("signature digit at %d: %v", j, err)
			}
		}
	}
	if positions < 300 {
		t.Fatalf("only %d positions", positions)
	}
}

func hexVal(c byte) int {
	v, _ := strconv.ParseUint(string(c), 16, 8)
	return int(v)
}

// isChunkData reports whether body[i] is payload data, by walking the
// chunk framing of a well-formed body.
func isChunkData(body []byte, i int) bool {
	pos := 0
	for pos < len(body) {
		eol := bytes.Index(body[pos:], []byte("\r\n"))
		hdr := body[pos : pos+eol]
		size, _ := strconv.ParseUint(string(bytes.SplitN(hdr, []byte(";"), 2)[0]), 16, 64)
		start := pos + eol + 2
		if i >= start && i < start+int(size) {
			return true
		}
		if size == 0 {
			return false
		}
		pos = start + int(size) + 2
	}
	return false
}

func TestStreamingTruncated(t *testing.T) {
	now := time.Now()
	data := payload(100<<10, 3)
	r, body := streamingRequest(t, data, testSK, now)
	for _, cut := range []int{0, 1, 50, 90, 100, 64 << 10, 65<<10 + 100, len(body) - 90, len(body) - 3, len(body) - 2, len(body) - 1} {
		if _, _, err := decode(t, r, body[:cut], now); !errors.Is(err, ErrIncompleteBody) {
			t.Fatalf("cut at %d of %d: %v", cut, len(body), err)
		}
	}
}

// encodeChunks writes an aws-chunked body with the given chunk sizes,
// signed like a V4 client when key is not nil. It is this package's own
// encoder: minio-go always uses 64 KiB chunks, this one tests others.
func encodeChunks(data []byte, sizes []int, key []byte, scope Scope, tm time.Time, seed string, trailer string) []byte {
	var b bytes.Buffer
	prev := seed
	emit := func(chunk []byte) {
		fmt.Fprintf(&b, "%x", len(chunk))
		if key != nil {
			sts := chunkPayloadAlgorithm + "\n" + tm.Format(timeFormat) + "\n" + scope.String() + "\n" + prev + "\n" + emptySHA256 + "\n" + hexSHA(chunk)
			prev = sign(key, sts)
			b.WriteString(chunkSigPrefix + prev)
		}
		b.WriteString("\r\n")
		b.Write(chunk)
		if len(chunk) > 0 || trailer == "" {
			b.WriteString("\r\n")
		}
	}
	for i := 0; len(data) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(data))
		emit(data[:n])
		data = data[n:]
	}
	emit(nil)
	if trailer != "" {
		b.WriteString(trailer)
		if key != nil {
			sts := chunkTrailerAlgorithm + "\n" + tm.Format(timeFormat) + "\n" + scope.String() + "\n" + prev + "\n" + hexSHA(bytes.ReplaceAll([]byte(trailer), []byte("\r\n"), []byte("\n")))
			b.WriteString(trailerSigName + ":" + sign(key, sts) + "\r\n")
		}
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

func TestChunkSizes(t *testing.T) {
	tm := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	scope := Scope{"20260102", testRegion, "s3"}
	key := SigningKey(testSK, scope)
	seed := hex.EncodeToString(make([]byte, 32))
	data := payload(100<<10+5, 9)
	for _, sizes := range [][]int{{1}, {3, 1, 7}, {8 << 10}, {64 << 10}, {65<<10 + 3}, {1 << 20}} {
		if sizes[0] == 1 {
			data := data[:3000]
			body := encodeChunks(data, sizes, key, scope, tm, seed, "")
			checkDecode(t, body, data, ChunkedConfig{Signed: true, SigningKey: key, Scope: scope, Time: tm, SeedSignature: seed, DecodedLength: int64(len(data))})
			continue
		}
		body := encodeChunks(data, sizes, key, scope, tm, seed, "")
		checkDecode(t, body, data, ChunkedConfig{Signed: true, SigningKey: key, Scope: scope, Time: tm, SeedSignature: seed, DecodedLength: int64(len(data))})
		// Signed with a trailer.
		tr := "x-amz-checksum-crc32:AAAAAA==\r\n"
		body = encodeChunks(data, sizes, key, scope, tm, seed, tr)
		cr := checkDecode(t, body, data, ChunkedConfig{Signed: true, Trailer: true, SigningKey: key, Scope: scope, Time: tm, SeedSignature: seed, DecodedLength: int64(len(data))})
		if cr.Trailer().Get("X-Amz-Checksum-Crc32") != "AAAAAA==" {
			t.Fatalf("trailer %v", cr.Trailer())
		}
		// Wrong length declared.
		c := ChunkedConfig{Signed: true, SigningKey: key, Scope: scope, Time: tm, SeedSignature: seed, DecodedLength: int64(len(data)) + 1}
		if _, err := io.ReadAll(NewChunkedReader(bytes.NewReader(encodeChunks(data, sizes, key, scope, tm, seed, "")), c)); !errors.Is(err, ErrIncompleteBody) {
			t.Fatalf("long declared length: %v", err)
		}
		c.DecodedLength -= 2
		if _, err := io.ReadAll(NewChunkedReader(bytes.NewReader(encodeChunks(data, sizes, key, scope, tm, seed, "")), c)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("short declared length: %v", err)
		}
	}
}

func checkDecode(t *testing.T, body, want []byte, c ChunkedConfig) *ChunkedReader {
	t.Helper()
	cr := NewChunkedReader(bytes.NewReader(body), c)
	got, err := io.ReadAll(cr)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("decoded %d of %d bytes: %v", len(got), len(want), err)
	}
	return cr
}

func TestSignedTrailerTamper(t *testing.T) {
	tm := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	scope := Scope{"20260102", testRegion, "s3"}
	key := SigningKey(testSK, scope)
	seed := hex.EncodeToString(make([]byte, 32))
	data := payload(1000, 2)
	body := encodeChunks(data, []int{400}, key, scope, tm, seed, "x-amz-checksum-sha256:abc=\r\n")
	c := ChunkedConfig{Signed: true, Trailer: true, SigningKey: key, Scope: scope, Time: tm, SeedSignature: seed, DecodedLength: 1000}
	mut := bytes.Replace(body, []byte("abc="), []byte("abd="), 1)
	if _, err := io.ReadAll(NewChunkedReader(bytes.NewReader(mut), c)); !errors.Is(err, ErrSignatureMismatch) {
		t.Fatalf("tampered trailer: %v", err)
	}
}

// TestUnsignedTrailerMinio: minio-go's unsigned streaming upload with a
// checksum trailer, as current SDKs send it.
func TestUnsignedTrailerMinio(t *testing.T) {
	for _, n := range []int{1, 100, 64 << 10, 64<<10 + 1, 150 << 10} {
		data := payload(n, uint64(n)+5)
		req := newReq(t, http.MethodPut, "key with space", nil, data)
		req.Header.Set("X-Amz-Content-Sha256", StreamingUnsignedTrailer)
		trailer := http.Header{"X-Amz-Checksum-Crc32": {"sOO8/Q=="}}
		signed := signer.SignV4Trailer(*req, testAK, testSK, "", testRegion, trailer)
		r, _ := wire(t, signed)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, cr, err := decode(t, r, body, time.Now())
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: %d bytes, %v\n%q", n, len(got), err, body[max(0, len(body)-80):])
		}
		if v := cr.Trailer().Get("x-amz-checksum-crc32"); v != "sOO8/Q==" {
			t.Fatalf("trailer %v", cr.Trailer())
		}
		for _, cut := range []int{len(body) - 1, len(body) - 5, len(body) / 2, 3} {
			if _, _, err := decode(t, r, body[:cut], time.Now()); !errors.Is(err, ErrIncompleteBody) {
				t.Fatalf("size %d cut %d: %v", n, cut, err)
			}
		}
	}
}

// TestUnsignedTrailerSDKForm: the exact form the AWS SDKs and CLI send
// (trailer lines ended by CRLF).
func TestUnsignedTrailerSDKForm(t *testing.T) {
	body := "5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n"
	cr := NewChunkedReader(bytes.NewReader([]byte(body)), ChunkedConfig{Trailer: true, DecodedLength: 11})
	got, err := io.ReadAll(cr)
	if err != nil || string(got) != "hello world" {
		t.Fatalf("%q %v", got, err)
	}
	if cr.Trailer().Get("X-Amz-Checksum-Crc32") != "DUoRhQ==" {
		t.Fatalf("trailer %v", cr.Trailer())
	}
	bad := []struct {
		body string
		want error
	}{
		{"5\r\nhello\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n", ErrIncompleteBody},
		{"5\r\nhello\r\n", ErrIncompleteBody},
		{"5\r\nhel", ErrIncompleteBody},
		{"5\r\nhelloXX0\r\n\r\n", ErrMalformed},
		{"z\r\nhello\r\n0\r\n\r\n", ErrMalformed},
		{"5;chunk-signature=00\r\nhello\r\n0\r\n\r\n", ErrMalformed},
		{"5\r\nhello\r\n0\r\nno-colon\r\n\r\n", ErrMalformed},
		{"5\r\nhello\r\n0\r\nx-amz-trailer-signature:00\r\n\r\n", ErrMalformed},
	}
	for _, b := range bad {
		_, err := io.ReadAll(NewChunkedReader(bytes.NewReader([]byte(b.body)), ChunkedConfig{Trailer: true, DecodedLength: -1}))
		if !errors.Is(err, b.want) {
			t.Errorf("%q: %v, want %v", b.body, err, b.want)
		}
	}
}

// TestSignedTrailerMinio: minio-go's STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
// upload, with the trailer signature chained from the last chunk.
func TestSignedTrailerMinio(t *testing.T) {
	now := time.Now()
	for _, n := range []int{1, 1000, 64 << 10, 130<<10 + 1} {
		data := payload(n, uint64(n)+9)
		req := newReq(t, http.MethodPut, "trailer key", nil, data)
		req.Trailer = http.Header{"X-Amz-Checksum-Crc32c": {"sOO8/Q=="}}
		signed := signer.StreamingSignV4(req, testAK, testSK, "", testRegion, int64(n), now, newSHAHasher())
		r, _ := wire(t, signed)
		if r.Header.Get("X-Amz-Content-Sha256") != StreamingPayloadTrailer {
			t.Fatalf("header %q", r.Header.Get("X-Amz-Content-Sha256"))
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, cr, err := decode(t, r, body, now)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: %d bytes, %v\n%q", n, len(got), err, body[max(0, len(body)-200):])
		}
		if cr.Trailer().Get("X-Amz-Checksum-Crc32c") != "sOO8/Q==" {
			t.Fatalf("trailer %v", cr.Trailer())
		}
		mut := bytes.Replace(body, []byte("sOO8/Q=="), []byte("sOO8/R=="), 1)
		if _, _, err := decode(t, r, mut, now); !errors.Is(err, ErrSignatureMismatch) {
			t.Fatalf("tampered trailer: %v", err)
		}
		if _, _, err := decode(t, r, body[:len(body)-10], now); !errors.Is(err, ErrIncompleteBody) {
			t.Fatalf("truncated: %v", err)
		}
	}
}
