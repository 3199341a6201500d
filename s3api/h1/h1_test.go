package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// start serves h with an h1.Server on a loopback listener, wrapped to
// count the writes made to connections.
func start(t *testing.T, h http.Handler, configure ...func(*Server)) (*Server, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	s := &Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	for _, f := range configure {
		f(s)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(cl) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, cl
}

type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, writes: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func (c *countingConn) CloseWrite() error { return c.Conn.(*net.TCPConn).CloseWrite() }

// exchange sends raw request bytes on a new connection and reads the
// responses that follow, as many as asked.
func exchange(t *testing.T, addr, raw string, responses int) ([]*http.Response, [][]byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var rs []*http.Response
	var bodies [][]byte
	methods := requestLine.FindAllStringSubmatch(raw, -1)
	for i := range responses {
		var req *http.Request
		if i < len(methods) {
			req = &http.Request{Method: methods[i][1]}
		}
		r, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("response %d: %v", len(rs)+1, err)
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatalf("response %d body: %v", len(rs)+1, err)
		}
		rs = append(rs, r)
		bodies = append(bodies, b)
	}
	return rs, bodies
}

// dial connects to addr for the rest of the test, with a deadline.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// roundTrip sends raw on c and reads one response and its body.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, raw string) (*http.Response, []byte) {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	r, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

var requestLine = regexp.MustCompile(`(?m)^(GET|HEAD|PUT|POST|DELETE|NOT) `)

func TestSmallResponseIsOneWrite(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 4096)
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "4096")
		w.Header().Set("X-Amz-Request-Id", "0123456789ABCDEF")
		w.Write(body[:1000])
		w.Write(body[1000:])
	}))
	const n = 20
	rs, bodies := exchange(t, ln.Addr().String(), strings.Repeat("GET /o HTTP/1.1\r\nHost: h\r\n\r\n", n), n)
	for i, r := range rs {
		if r.StatusCode != 200 || !bytes.Equal(bodies[i], body) || r.Header.Get("Date") == "" {
			t.Fatalf("response %d: %s, %d bytes, %v", i, r.Status, len(bodies[i]), r.Header)
		}
	}
	if got := ln.writes.Load(); got != n {
		t.Errorf("%d writes for %d responses of 4 KiB, want one each", got, n)
	}
}

func TestFraming(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 2000)
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small": // no length given, fits the buffer: a Content-Length
			io.WriteString(w, "<html>hello</html>")
		case "/big": // no length given, longer: chunked
			w.Write(big)
		case "/flushed":
			io.WriteString(w, "a")
			w.(http.Flusher).Flush()
			io.WriteString(w, "b")
		case "/nocontent":
			w.WriteHeader(http.StatusNoContent)
			if _, err := w.Write([]byte("x")); err != http.ErrBodyNotAllowed {
				panic(fmt.Sprintf("write to a 204: %v", err))
			}
		case "/declared":
			w.Header().Set("Content-Length", "3")
			if _, err := io.WriteString(w, "abcd"); err != http.ErrContentLength {
				panic(fmt.Sprintf("write past Content-Length: %v", err))
			}
			io.WriteString(w, "abc")
		}
	}))
	raw := "GET /small HTTP/1.1\r\nHost: h\r\n\r\n" + "GET /big HTTP/1.1\r\nHost: h\r\n\r\n" +
		"GET /flushed HTTP/1.1\r\nHost: h\r\n\r\n" + "GET /nocontent HTTP/1.1\r\nHost: h\r\n\r\n" +
		"HEAD /small HTTP/1.1\r\nHost: h\r\n\r\n" + "GET /declared HTTP/1.1\r\nHost: h\r\n\r\n"
	rs, bodies := exchange(t, ln.Addr().String(), raw, 6)
	check := func(i int, status int, body string, length int64, te []string) {
		t.Helper()
		r := rs[i]
		if r.StatusCode != status || string(bodies[i]) != body || r.ContentLength != length || fmt.Sprint(r.TransferEncoding) != fmt.Sprint(te) {
			t.Errorf("response %d: %s, body %q, length %d, encoding %v", i, r.Status, bodies[i], r.ContentLength, r.TransferEncoding)
		}
	}
	check(0, 200, "<html>hello</html>", 18, nil)
	if ct := rs[0].Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("sniffed type %q", ct)
	}
	check(1, 200, string(big), -1, []string{"chunked"})
	check(2, 200, "ab", -1, []string{"chunked"})
	check(3, 204, "", 0, nil)
	check(4, 200, "", 18, nil)
	check(5, 200, "abc", 3, nil)
}

// TestBodiesLeftUnread: a short body the handler did not read is read
// for it and the connection serves on; a long one, or one the client
// holds back for a 100 Continue never sent, closes the connection.
func TestBodiesLeftUnread(t *testing.T) {
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "done")
	}))
	addr := ln.Addr().String()
	short := "PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
	rs, _ := exchange(t, addr, short+"GET /b HTTP/1.1\r\nHost: h\r\n\r\n", 2)
	if rs[0].Close || rs[1].StatusCode != 200 {
		t.Errorf("after a short unread body: close %v, next %s", rs[0].Close, rs[1].Status)
	}
	long := fmt.Sprintf("PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", maxDrain+10, strings.Repeat("z", maxDrain+10))
	if rs, _ := exchange(t, addr, long, 1); !rs[0].Close {
		t.Error("a long unread body left the connection open")
	}
	waiting := "PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
	if rs, _ := exchange(t, addr, waiting, 1); !rs[0].Close || rs[0].StatusCode != 200 {
		t.Errorf("a body never invited: %s, close %v", rs[0].Status, rs[0].Close)
	}
}

func TestContinue(t *testing.T) {
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/explicit" {
			w.WriteHeader(http.StatusContinue)
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			panic(err)
		}
		w.Write(b)
	}))
	for _, path := range []string{"/explicit", "/onread"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", path)
		br := bufio.NewReader(c)
		r, err := http.ReadResponse(br, nil)
		if err != nil || r.StatusCode != 100 {
			t.Fatalf("%s: %v %v, want 100 Continue first", path, r, err)
		}
		io.WriteString(c, "hello")
		r, err = http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != "hello" || r.Close {
			t.Errorf("%s: %q, close %v", path, b, r.Close)
		}
		c.Close()
	}
}

func TestRefusedRequests(t *testing.T) {
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		func(s *Server) { s.MaxHeaderBytes = 1 << 10 })
	for _, c := range []struct {
		raw    string
		status int
	}{
		{"GET / HTTP/1.1\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("v", 8<<10) + "\r\n\r\n", 431},
		{"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"GET / HTTP/1.1\r\nHost: h\r\nExpect: something\r\n\r\n", 417},
		{"NOT A REQUEST\r\n\r\n", 400},
		{"GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
	} {
		rs, _ := exchange(t, ln.Addr().String(), c.raw, 1)
		if rs[0].StatusCode != c.status || !rs[0].Close {
			t.Errorf("%q: %s (close %v), want %d and a close", c.raw[:min(len(c.raw), 40)], rs[0].Status, rs[0].Close, c.status)
		}
	}
}

func TestPanicsCloseTheConnection(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/panic":
			panic("boom")
		case "/abort":
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, "fine")
	}), func(s *Server) {
		s.ErrorLog = log.New(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logged.Write(p) }), "", 0)
	})
	for _, path := range []string{"/panic", "/abort"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: h\r\n\r\n", path)
		if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
			t.Errorf("%s: %q %v, want the connection closed without a response", path, b, err)
		}
		c.Close()
	}
	if rs, b := exchange(t, ln.Addr().String(), "GET / HTTP/1.1\r\nHost: h\r\n\r\n", 1); string(b[0]) != "fine" {
		t.Errorf("after the panics: %s %q", rs[0].Status, b[0])
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logged.String(), "http: panic serving"); n != 1 || !strings.Contains(logged.String(), "boom") {
		t.Errorf("log %q: want the one panic that is not ErrAbortHandler", logged.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestContextAndAddresses(t *testing.T) {
	ended := make(chan error, 1)
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		fmt.Fprintf(w, "%s %s %s %v", r.Host, r.RemoteAddr, local, r.TLS != nil)
		go func() { <-r.Context().Done(); ended <- r.Context().Err() }()
	}))
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: example:9000\r\n\r\n")
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	want := fmt.Sprintf("example:9000 %s %s false", c.LocalAddr(), ln.Addr())
	if string(b) != want {
		t.Errorf("handler saw %q, want %q", b, want)
	}
	select {
	case err := <-ended:
		if err != context.Canceled {
			t.Errorf("context ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the request's context outlived its handler")
	}
}

func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	s, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-release
		}
		io.WriteString(w, "ok")
	}))
	addr := ln.Addr().String()
	idle := dial(t, addr)
	idleReader := bufio.NewReader(idle)
	roundTrip(t, idle, idleReader, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	busy := dial(t, addr)
	io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	idle.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := idleReader.ReadByte(); err != io.EOF {
		t.Errorf("the idle connection: %v, want it closed", err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	r, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(r.Body); string(b) != "ok" || !r.Close {
		t.Errorf("the request in flight: %q, close %v", b, r.Close)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the listener still accepts after Shutdown")
	}
}

func TestIdleTimeout(t *testing.T) {
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		func(s *Server) { s.IdleTimeout = 100 * time.Millisecond })
	c := dial(t, ln.Addr().String())
	br := bufio.NewReader(c)
	roundTrip(t, c, br, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("an idle connection: %v, want it closed", err)
	}
}

func TestTLS(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS() // for its certificate and a client that trusts it
	cfg := ts.TLS.Clone()
	client := ts.Client()
	ts.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %v", r.Proto, r.TLS != nil && r.TLS.HandshakeComplete)
	}), TLSConfig: cfg, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	defer s.Close()
	client.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	for range 2 {
		r, err := client.Get("https://" + ln.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if string(b) != "HTTP/1.1 true" || r.ProtoMajor != 1 {
			t.Errorf("over TLS: %s %q", r.Proto, b)
		}
	}
	rs, _ := exchange(t, ln.Addr().String(), "GET / HTTP/1.1\r\nHost: h\r\n\r\n", 1)
	if rs[0].StatusCode != 400 {
		t.Errorf("plain HTTP to the TLS listener: %s", rs[0].Status)
	}
}

// pipeListener hands out one connection.
type pipeListener struct {
	once sync.Once
	conn net.Conn
	done chan struct{}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.conn })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}
func (l *pipeListener) Close() error {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	return nil
}
func (l *pipeListener) Addr() net.Addr { return l.conn.LocalAddr() }

// FuzzServe feeds arbitrary bytes to a connection: the server answers
// or closes, and never panics or hangs.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /k HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nxy",
		"HEAD / HTTP/1.0\r\n\r\n",
		"GET http://h/x?y HTTP/1.1\r\nHost: z\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		server, client := net.Pipe()
		ln := &pipeListener{conn: server, done: make(chan struct{})}
		s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
			if len(b)%2 == 0 {
				w.Header().Set("Content-Length", fmt.Sprint(len(b)))
			}
			w.Write(b)
		}), ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 50 * time.Millisecond, ErrorLog: log.New(io.Discard, "", 0)}
		served := make(chan struct{})
		go func() { s.Serve(ln); close(served) }()
		client.SetDeadline(time.Now().Add(5 * time.Second))
		go func() { client.Write(in); client.Write([]byte("\r\n\r\n")) }()
		io.Copy(io.Discard, client) // until the server closes or the deadline
		client.Close()
		s.Close()
		<-served
	})
}

// behaviour is a handler told by its request what to do: its status,
// the sizes of its writes, whether it declares their length (or a
// wrong one), how much of the body it reads, whether it invites the
// body with an explicit 100 Continue, and after which write it flushes.
var behaviour = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ping" {
		io.WriteString(w, "pong")
		return
	}
	q := r.URL.Query()
	if q.Get("continue") == "1" {
		w.WriteHeader(http.StatusContinue)
	}
	var read int64
	switch n := q.Get("read"); n {
	case "all":
		read, _ = io.Copy(io.Discard, r.Body)
	case "", "none":
	default:
		var want int64
		fmt.Sscan(n, &want)
		read, _ = io.CopyN(io.Discard, r.Body, want)
	}
	w.Header().Set("X-Read", fmt.Sprint(read))
	var sizes []int
	total := 0
	for f := range strings.SplitSeq(q.Get("writes"), ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err == nil {
			sizes = append(sizes, n)
			total += n
		}
	}
	switch q.Get("declare") {
	case "exact":
		w.Header().Set("Content-Length", fmt.Sprint(total))
	case "short":
		w.Header().Set("Content-Length", fmt.Sprint(max(total-1, 0)))
	case "long":
		w.Header().Set("Content-Length", fmt.Sprint(total+1))
	}
	var status int
	fmt.Sscan(q.Get("status"), &status)
	if status != 0 {
		w.WriteHeader(status)
	}
	flushAt := -1
	fmt.Sscan(q.Get("flush"), &flushAt)
	for i, n := range sizes {
		w.Write(bytes.Repeat([]byte{byte('a' + i%26)}, n))
		if i == flushAt {
			w.(http.Flusher).Flush()
		}
	}
})

// exchangeCase is one request of TestAgainstNetHTTP.
type exchangeCase struct {
	method, query string
	body          int  // -1: none
	chunked       bool // the body's framing
	expect, close bool
}

// outcome is what a client sees of a case: the response, and whether a
// request after it on the same connection is answered.
type outcome struct {
	status                int
	body, read, mediaType string
	closed, followed      bool
	truncated             bool // a body shorter than declared
	reset                 bool // the connection was reset under the response
}

func (c exchangeCase) run(t *testing.T, addr string) outcome {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	var hdr strings.Builder
	fmt.Fprintf(&hdr, "%s /obj?%s HTTP/1.1\r\nHost: h\r\n", c.method, c.query)
	if c.body >= 0 {
		if c.chunked {
			hdr.WriteString("Transfer-Encoding: chunked\r\n")
		} else {
			fmt.Fprintf(&hdr, "Content-Length: %d\r\n", c.body)
		}
		if c.expect {
			hdr.WriteString("Expect: 100-continue\r\n")
		}
	}
	if c.close {
		hdr.WriteString("Connection: close\r\n")
	}
	hdr.WriteString("\r\n")
	io.WriteString(conn, hdr.String())
	var out outcome
	var once sync.Once
	sendBody := func() {
		once.Do(func() {
			if c.body < 0 {
				return
			}
			payload := bytes.Repeat([]byte("b"), c.body)
			go func() {
				if c.chunked {
					for len(payload) > 0 {
						n := min(len(payload), 7000)
						fmt.Fprintf(conn, "%x\r\n", n)
						conn.Write(payload[:n])
						io.WriteString(conn, "\r\n")
						payload = payload[n:]
					}
					io.WriteString(conn, "0\r\n\r\n")
				} else {
					conn.Write(payload)
				}
			}()
		})
	}
	br := bufio.NewReader(conn)
	req := &http.Request{Method: c.method}
	if c.expect {
		// Clients wait a while for the 100, then send anyway (Go's
		// Transport one second, curl one).
		t := time.AfterFunc(300*time.Millisecond, sendBody)
		defer t.Stop()
	} else {
		sendBody()
	}
	r, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatalf("%+v: %v", c, err)
	}
	if r.StatusCode == http.StatusContinue {
		sendBody()
		if r, err = http.ReadResponse(br, req); err != nil {
			t.Fatalf("%+v after 100: %v", c, err)
		}
	}
	b, err := io.ReadAll(r.Body)
	out.truncated = err != nil
	out.reset = errors.Is(err, syscall.ECONNRESET)
	out.status, out.body, out.read, out.closed = r.StatusCode, string(b), r.Header.Get("X-Read"), r.Close
	out.mediaType = r.Header.Get("Content-Type")
	if !r.Close {
		io.WriteString(conn, "GET /ping HTTP/1.1\r\nHost: h\r\n\r\n")
		if r, err := http.ReadResponse(br, nil); err == nil {
			b, _ := io.ReadAll(r.Body)
			out.followed = string(b) == "pong"
		}
	}
	return out
}

func randomCase(rng *mrand.Rand) exchangeCase {
	c := exchangeCase{method: []string{"GET", "HEAD", "PUT", "POST"}[rng.IntN(4)], body: -1}
	if c.method == "PUT" || c.method == "POST" {
		c.body = []int{0, 1, 100, 5000, 70000, 300000}[rng.IntN(6)]
		c.chunked = rng.IntN(3) == 0
		c.expect = rng.IntN(3) == 0
	}
	c.close = rng.IntN(8) == 0
	q := url.Values{}
	q.Set("status", []string{"0", "200", "201", "204", "206", "304", "404", "500"}[rng.IntN(8)])
	var writes []string
	for range rng.IntN(5) {
		writes = append(writes, fmt.Sprint([]int{0, 1, 511, 2000, 4096, 9000, 40000}[rng.IntN(7)]))
	}
	q.Set("writes", strings.Join(writes, ","))
	q.Set("declare", []string{"", "", "exact", "exact", "short", "long"}[rng.IntN(6)])
	q.Set("read", []string{"none", "all", "all", "10", "100000"}[rng.IntN(5)])
	if c.expect && rng.IntN(2) == 0 {
		q.Set("continue", "1")
	}
	if rng.IntN(4) == 0 {
		q.Set("flush", fmt.Sprint(rng.IntN(3)))
	}
	c.query = q.Encode()
	return c
}

// TestAgainstNetHTTP: net/http's server is the oracle. The same random
// requests to the same handler, through both servers, must look the
// same to a client: status, body, the handler's headers, the content
// type, whether the connection closes and serves a next request.
// Framing (Content-Length or chunked) may differ; HEAD's length too.
func TestAgainstNetHTTP(t *testing.T) {
	seed := uint64(1)
	if s := os.Getenv("XFS3_H1_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	cases := 300
	if testing.Short() {
		cases = 60
	}
	t.Logf("seed %d (XFS3_H1_SEED), %d cases", seed, cases)
	rng := mrand.New(mrand.NewPCG(seed, 0))
	std := httptest.NewUnstartedServer(behaviour)
	std.Config.ErrorLog = log.New(io.Discard, "", 0)
	std.Start()
	defer std.Close()
	_, ours := start(t, behaviour)
	for range cases {
		c := randomCase(rng)
		want := c.run(t, std.Listener.Addr().String())
		got := c.run(t, ours.Addr().String())
		if want.reset && !got.reset && strings.HasPrefix(got.body, want.body) {
			// net/http closed with request bytes unread, and the reset
			// destroyed the end of its response: h1 lingers instead. Only
			// what arrived before the reset can be compared.
			want.body, want.truncated, want.reset = got.body, got.truncated, false
		}
		if got != want {
			t.Errorf("%s %s body %d chunked %v expect %v close %v:\n h1       %+v\n net/http %+v",
				c.method, c.query, c.body, c.chunked, c.expect, c.close, brief(got), brief(want))
		}
	}
}

func brief(o outcome) outcome {
	if len(o.body) > 20 {
		o.body = fmt.Sprintf("%s... (%d bytes)", o.body[:20], len(o.body))
	}
	return o
}

// TestWriteAfterHandler: a goroutine that outlives its handler gets an
// error from the response, not the next request's buffers.
func TestWriteAfterHandler(t *testing.T) {
	late := make(chan error, 1)
	_, ln := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			go func() {
				time.Sleep(50 * time.Millisecond)
				_, err := io.WriteString(w, "late")
				late <- err
			}()
		}
		io.WriteString(w, "on time")
	}))
	c := dial(t, ln.Addr().String())
	br := bufio.NewReader(c)
	if _, b := roundTrip(t, c, br, "GET /first HTTP/1.1\r\nHost: h\r\n\r\n"); string(b) != "on time" {
		t.Errorf("first: %q", b)
	}
	if err := <-late; err != errAfterHandler {
		t.Errorf("a write after the handler returned: %v", err)
	}
	if _, b := roundTrip(t, c, br, "GET /second HTTP/1.1\r\nHost: h\r\n\r\n"); string(b) != "on time" {
		t.Errorf("second: %q", b)
	}
}
