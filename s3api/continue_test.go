package s3api

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// expectRequest sends the head of a signed PUT with "Expect:
// 100-continue" and a body of size bytes over a raw connection, and
// returns the connection and a reader of what the server answers.
func (ts *testServer) expectRequest(t *testing.T, ak, sk, target string, size int) (net.Conn, *bufio.Reader) {
	t.Helper()
	req := ts.rawRequest(t, "PUT", target, nil, http.Header{"X-Amz-Content-Sha256": {"UNSIGNED-PAYLOAD"}})
	req.ContentLength = int64(size)
	req = signer.SignV4(*req, ak, sk, "", testRegion)
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var head bytes.Buffer
	fmt.Fprintf(&head, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n", req.URL.RequestURI(), req.URL.Host, size)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	head.WriteString("\r\n")
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn)
}

// TestContinueAfterAuthorization: a request refused by policy is answered
// at once, without a 100 Continue and with "Connection: close"; one
// refused after its 100 (its body invited) gets its error after the body,
// not a connection closed under the client.
func TestContinueAfterAuthorization(t *testing.T) {
	ts := newTestServer(t)
	c := ctx(t)
	mustBucket(t, ts, "mine")
	root := ts.adminClient(testAccessKey, testSecretKey)
	if err := root.AddUser(c, "reader", "reader-secret", true); err != nil {
		t.Fatal(err)
	}
	if _, err := root.AttachPolicies(c, "reader", "readonly"); err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20

	_, br := ts.expectRequest(t, "reader", "reader-secret", "/mine/refused", size)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden || !resp.Close {
		t.Errorf("refused by policy: %d, close %v; want 403 without 100 Continue, then close", resp.StatusCode, resp.Close)
	}

	conn, br := ts.expectRequest(t, testAccessKey, testSecretKey, "/no-such-bucket/k", size)
	cont, err := http.ReadResponse(br, nil)
	if err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("authorized request: %v, %v; want 100 Continue", cont, err)
	}
	if _, err := conn.Write(make([]byte, size)); err != nil {
		t.Fatalf("sending the invited body: %v", err)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing bucket after 100 Continue: %d, want 404", resp.StatusCode)
	}
}
