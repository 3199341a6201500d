package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A loadGen is how the delete benchmark sends its timed requests.
//
// Its clients share the machine with the server under test. Through
// net/http, with each request signed as it is sent, they cost 50-180 us
// of CPU per DELETE on a 2-core VM, as much as the server itself: the
// clients then bound any server's rate and flatten the ratio between two
// servers. The presigned generator signs and serialises every request
// before the clock starts (SigV4 allows the server 15 minutes of skew)
// and sends them over plain kept-alive connections, one write and one
// read each, which about halves the clients' CPU (42-101 us per DELETE
// where net/http took 76-175 in the same session): the timed phase
// measures more of the server, as clients on other machines would see
// it. The server's work is the same either way: it verifies every
// signature.
type loadGen string

const (
	loadPresigned loadGen = "presigned" // the default
	loadNetHTTP   loadGen = "nethttp"   // signed on the fly, net/http
)

func parseLoadGen(s string) (loadGen, error) {
	switch lg := loadGen(s); lg {
	case "":
		return loadPresigned, nil
	case loadPresigned, loadNetHTTP:
		return lg, nil
	}
	return "", fmt.Errorf("%q is neither %s nor %s", s, loadPresigned, loadNetHTTP)
}

// prepare readies a timed phase: method for objects 0..n-1 from workers
// clients, the way lg says. Whatever can be done before the clock starts
// is done; the answered function sends the requests and answers each
// one's latency (see fanOut).
func (c *benchClient) prepare(lg loadGen, workers, n int, method string, want int) (func() ([]time.Duration, error), error) {
	if lg == loadNetHTTP {
		return func() ([]time.Duration, error) { return c.parallel(workers, n, method, nil, want) }, nil
	}
	reqs, err := c.presign(method, n)
	if err != nil {
		return nil, err
	}
	return func() ([]time.Duration, error) { return c.sendRaw(workers, reqs, want) }, nil
}

// presign answers the wire form of method's signed request for each of
// objects 0..n-1, without a body.
func (c *benchClient) presign(method string, n int) ([][]byte, error) {
	reqs := make([][]byte, n)
	var buf bytes.Buffer
	for i := range reqs {
		req, err := c.signed(method, deleteBenchKey(i), nil)
		if err != nil {
			return nil, err
		}
		buf.Reset()
		if err := req.Write(&buf); err != nil {
			return nil, err
		}
		reqs[i] = bytes.Clone(buf.Bytes())
	}
	return reqs, nil
}

// sendRaw sends the serialised requests from workers clients, each over
// a connection of its own kept alive (and dialled again when the server
// closes it), see fanOut.
func (c *benchClient) sendRaw(workers int, reqs [][]byte, want int) ([]time.Duration, error) {
	u, err := url.Parse(c.url)
	if err != nil {
		return nil, err
	}
	return fanOut(workers, len(reqs), want, func() (requestSender, func()) {
		var conn net.Conn
		var br *bufio.Reader
		send := func(i int) (int, []byte, error) {
			if conn == nil {
				var err error
				if conn, err = net.Dial("tcp", u.Host); err != nil {
					return 0, nil, err
				}
				br = bufio.NewReader(conn)
			}
			code, body, closed, err := roundTrip(conn, br, reqs[i])
			if closed {
				conn.Close()
				conn = nil
			}
			return code, body, err
		}
		stop := func() {
			if conn != nil {
				conn.Close()
			}
		}
		return send, stop
	})
}

// roundTrip writes one serialised request and reads its whole answer;
// closed reports that the server will not take another on conn.
func roundTrip(conn net.Conn, br *bufio.Reader, req []byte) (code int, body []byte, closed bool, err error) {
	if err := conn.SetDeadline(time.Now().Add(benchRequestTimeout)); err != nil {
		return 0, nil, true, err
	}
	if _, err := conn.Write(req); err != nil {
		return 0, nil, true, err
	}
	// Every timed request is a DELETE: no answer is a HEAD's.
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, nil, true, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return resp.StatusCode, body, resp.Close, err
}

// TestSendRaw: the presigned generator's sender delivers every request
// exactly once, in full, dials again when the server closes a connection,
// and stops with the first answer it did not want.
func TestSendRaw(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path+" "+r.Header.Get("X-Amz-Date")]++
		mu.Unlock()
		if served.Add(1)%3 == 0 {
			w.Header().Set("Connection", "close")
		}
		if strings.HasSuffix(r.URL.Path, "/o0000077") {
			http.Error(w, "denied", http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := newBenchClient(srv.URL, 4)
	reqs, err := c.presign("DELETE", 60)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		for _, h := range []string{"Authorization: AWS4-HMAC-SHA256 ", "X-Amz-Content-Sha256: ", "X-Amz-Date: "} {
			if !bytes.Contains(r, []byte(h)) {
				t.Fatalf("presigned request lacks %q:\n%s", h, r)
			}
		}
	}
	lat, err := c.sendRaw(4, reqs, http.StatusNoContent)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 60 || served.Load() != 60 {
		t.Errorf("the server saw %d distinct requests in %d, want 60 once each", len(seen), served.Load())
	}
	for i, d := range lat {
		if d <= 0 {
			t.Errorf("request %d has no latency", i)
		}
	}

	reqs, err = c.presign("DELETE", 200)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.sendRaw(4, reqs, http.StatusNoContent); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("an unwanted answer gave %v, want its 403", err)
	}
	if n := served.Load(); n >= 60+200 {
		t.Errorf("the sender went on after an unwanted answer: %d requests served", n-60)
	}
}

// TestParseLoadGen: the generator is presigned unless asked otherwise.
func TestParseLoadGen(t *testing.T) {
	for in, want := range map[string]loadGen{"": loadPresigned, "presigned": loadPresigned, "nethttp": loadNetHTTP} {
		if got, err := parseLoadGen(in); err != nil || got != want {
			t.Errorf("parseLoadGen(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := parseLoadGen("curl"); err == nil {
		t.Error("an unknown generator was accepted")
	}
}
