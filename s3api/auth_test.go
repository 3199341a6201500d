package s3api

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

func TestPresigned(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "pre")
	c := ctx(t)
	u, err := ts.client.PresignedPutObject(c, "pre", "up.txt", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", u.String(), strings.NewReader("presigned body"))
	resp, body := send(t, req)
	if resp.StatusCode != 200 {
		t.Fatalf("presigned PUT: %d %s", resp.StatusCode, body)
	}
	u, err = ts.client.PresignedGetObject(c, "pre", "up.txt", time.Minute, map[string][]string{"response-content-type": {"text/x-test"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, body = send(t, mustRequest(t, "GET", u.String()))
	if resp.StatusCode != 200 || string(body) != "presigned body" || resp.Header.Get("Content-Type") != "text/x-test" {
		t.Fatalf("presigned GET: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// The signature covers the query: changing an override breaks it.
	tampered := strings.Replace(u.String(), "text%2Fx-test", "text%2Fhtml", 1)
	resp, body = send(t, mustRequest(t, "GET", tampered))
	wantError(t, resp, body, 403, "SignatureDoesNotMatch")

	// SigV2 presigned, as old tools send.
	r := ts.rawRequest(t, "GET", "/pre/up.txt", nil, nil)
	resp, body = send(t, signer.PreSignV2(*r, testAccessKey, testSecretKey, 60, false))
	if resp.StatusCode != 200 || string(body) != "presigned body" {
		t.Fatalf("V2 presigned GET: %d %q", resp.StatusCode, body)
	}
}

func mustRequest(t *testing.T, method, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestFailedUploadsLeaveNothing: bodies that fail their signature, payload
// hash or chunk checks at the end leave no object behind.
func TestFailedUploadsLeaveNothing(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "safe")
	payload := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB: more than one chunk
	// Chunk signatures chain from the seed signature, which covers the
	// signing time: the wire and the request it is cut into must share one.
	streaming := func(t *testing.T, at time.Time) []byte {
		req := ts.rawRequest(t, "PUT", "/safe/k", payload, nil)
		req = signer.StreamingSignV4(req, testAccessKey, testSecretKey, "", testRegion, int64(len(payload)), at, newSHAHasher())
		wire, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatal(err)
		}
		return wire
	}
	for _, c := range []struct {
		name   string
		req    func(t *testing.T) *http.Request
		status int
		code   string
	}{
		{"payload hash", func(t *testing.T) *http.Request {
			return signed(t, ts.rawRequest(t, "PUT", "/safe/k", payload, nil), append([]byte("x"), payload[1:]...))
		}, 400, "XAmzContentSHA256Mismatch"},
		{"truncated chunked", func(t *testing.T) *http.Request {
			at := time.Now().UTC()
			wire := streaming(t, at)
			req := ts.rawRequest(t, "PUT", "/safe/k", payload, nil)
			req = signer.StreamingSignV4(req, testAccessKey, testSecretKey, "", testRegion, int64(len(payload)), at, newSHAHasher())
			cut := wire[:len(wire)-200]
			req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(cut)), int64(len(cut))
			return req
		}, 400, "IncompleteBody"},
		{"tampered chunk", func(t *testing.T) *http.Request {
			req := ts.rawRequest(t, "PUT", "/safe/k", payload, nil)
			req = signer.StreamingSignV4(req, testAccessKey, testSecretKey, "", testRegion, int64(len(payload)), time.Now().UTC(), newSHAHasher())
			wire, _ := io.ReadAll(req.Body)
			// The first chunk's data starts after its header line. Searching
			// for payload bytes instead could land in the header's hex
			// signature, which is then malformed rather than wrong.
			i := bytes.Index(wire, []byte("\r\n")) + len("\r\n")
			if !bytes.HasPrefix(wire[i:], payload[:64]) {
				t.Fatalf("the wire does not start with a chunk header line: %q", wire[:min(len(wire), 200)])
			}
			wire[i] ^= 1
			req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(wire)), int64(len(wire))
			return req
		}, 403, "SignatureDoesNotMatch"},
		{"bad trailer checksum", func(t *testing.T) *http.Request {
			req := ts.rawRequest(t, "PUT", "/safe/k", payload, http.Header{"X-Amz-Content-Sha256": {sigv4.StreamingUnsignedTrailer}})
			return signer.SignV4Trailer(*req, testAccessKey, testSecretKey, "", testRegion, http.Header{"X-Amz-Checksum-Crc32": {"AAAAAA=="}})
		}, 400, "BadDigest"},
		{"bad md5", func(t *testing.T) *http.Request {
			return signed(t, ts.rawRequest(t, "PUT", "/safe/k", payload, http.Header{"Content-Md5": {"AAAAAAAAAAAAAAAAAAAAAA=="}}), payload)
		}, 400, "BadDigest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := send(t, c.req(t))
			wantError(t, resp, body, c.status, c.code)
			if _, err := ts.store.HeadObject("safe", "k"); !errors.Is(err, store.ErrNoSuchKey) {
				t.Errorf("object left behind: %v", err)
			}
		})
	}

	// The same requests done right succeed.
	req := ts.rawRequest(t, "PUT", "/safe/k", payload, nil)
	req = signer.StreamingSignV4(req, testAccessKey, testSecretKey, "", testRegion, int64(len(payload)), time.Now().UTC(), newSHAHasher())
	resp, body := send(t, req)
	if resp.StatusCode != 200 {
		t.Fatalf("streaming PUT: %d %s", resp.StatusCode, body)
	}
	o, err := ts.store.GetObject("safe", "k")
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, o.Reader())
	o.Close()
	if got != string(payload) {
		t.Errorf("stored %d bytes, want %d", len(got), len(payload))
	}
}

// TestExpectContinue: a request with a bad signature is answered without
// "100 Continue", so the client never sends its body; a good one gets it.
func TestExpectContinue(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "cont")
	body := []byte("0123456789")
	for _, c := range []struct {
		name   string
		secret string
		want   string
	}{
		{"bad signature", "wrong", "HTTP/1.1 403"},
		{"good signature", testSecretKey, "HTTP/1.1 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := ts.rawRequest(t, "PUT", "/cont/k", body, http.Header{"Expect": {"100-continue"}})
			sum := hexSHA256(body)
			req.Header.Set("X-Amz-Content-Sha256", sum)
			req = signer.SignV4(*req, testAccessKey, c.secret, "", testRegion)
			conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var head bytes.Buffer
			fmt.Fprintf(&head, "PUT /cont/k HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", req.Host, len(body))
			for k, v := range req.Header {
				fmt.Fprintf(&head, "%s: %s\r\n", k, v[0])
			}
			head.WriteString("\r\n")
			if _, err := conn.Write(head.Bytes()); err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(conn)
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(line, c.want) {
				t.Fatalf("first response line %q, want %q", line, c.want)
			}
			if c.want != "HTTP/1.1 100" {
				if _, err := ts.store.HeadObject("cont", "k"); !errors.Is(err, store.ErrNoSuchKey) {
					t.Errorf("object stored: %v", err)
				}
				return
			}
			for { // the blank line ending the 100 response
				l, err := br.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if l == "\r\n" {
					break
				}
			}
			conn.Write(body)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("after 100: %d", resp.StatusCode)
			}
		})
	}
}

// TestSigV2Header: the legacy header scheme works end to end.
func TestSigV2Header(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "old")
	req := ts.rawRequest(t, "PUT", "/old/k", []byte("v2"), nil)
	req.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	resp, body := send(t, signer.SignV2(*req, testAccessKey, testSecretKey, false))
	if resp.StatusCode != 200 {
		t.Fatalf("V2 PUT: %d %s", resp.StatusCode, body)
	}
}
