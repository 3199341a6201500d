package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A connection's state, as Shutdown sees it.
const (
	stateIdle   int32 = iota // waiting for a request's first byte
	stateActive              // reading a request or serving it
	stateClosed
)

const (
	readBufferSize  = 4 << 10
	writeBufferSize = 16 << 10
	// maxDrain bounds the unread request body read and dropped to keep
	// a connection open (net/http's bound too).
	maxDrain = 256 << 10
	// lingerTimeout is how long a connection closed with request bytes
	// still unread waits for the client's end after sending its own:
	// closing at once would reset the connection and could destroy the
	// response before the client read it.
	lingerTimeout = 500 * time.Millisecond
)

// writers recycles write buffers: a connection holds one only while it
// serves a request.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, writeBufferSize) }}

type conn struct {
	s      *Server
	nc     net.Conn // as accepted
	rw     net.Conn // what requests come on: nc, or its TLS session
	remote string
	tls    *tls.ConnectionState
	ctx    context.Context // the requests' parent: carries the local address
	lim    limitedReader   // bounds a request header's bytes
	br     *bufio.Reader
	bw     *bufio.Writer // while serving a request
	state  atomic.Int32

	pending     [pendingMax]byte // a body held until its length is known
	deadlineSet bool
	refused     bool // a request was answered without a handler: bytes may follow
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, rw: nc, remote: nc.RemoteAddr().String()}
	c.ctx = context.WithValue(s.ctx, http.LocalAddrContextKey, nc.LocalAddr())
	c.lim = limitedReader{r: nc, n: math.MaxInt64}
	c.br = bufio.NewReaderSize(&c.lim, readBufferSize)
	return c
}

// serve runs the connection until it closes.
func (c *conn) serve() {
	linger := false
	defer func() { c.close(linger || c.refused) }()
	if c.s.TLSConfig != nil && !c.handshake() {
		return
	}
	for first := true; ; first = false {
		req, ok := c.readRequest(first)
		if !ok {
			return
		}
		keep, unread := c.serveRequest(req)
		if !keep {
			linger = unread
			return
		}
		if !c.state.CompareAndSwap(stateActive, stateIdle) {
			return
		}
	}
}

// handshake runs a TLS handshake within ReadHeaderTimeout.
func (c *conn) handshake() bool {
	tc := tls.Server(c.nc, c.s.tlsConfig())
	if d := c.s.ReadHeaderTimeout; d > 0 {
		c.nc.SetDeadline(time.Now().Add(d))
	}
	if err := tc.HandshakeContext(c.ctx); err != nil {
		var rh tls.RecordHeaderError
		if errors.As(err, &rh) && rh.Conn != nil && looksLikeHTTP(rh.RecordHeader[:]) {
			io.WriteString(rh.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
			return false
		}
		// The prefix is net/http's: the server's log sorts by it.
		c.s.logf("http: TLS handshake error from %s: %v", c.remote, err)
		return false
	}
	c.nc.SetDeadline(time.Time{})
	st := tc.ConnectionState()
	c.tls, c.rw, c.lim.r = &st, tc, tc
	return true
}

func looksLikeHTTP(hdr []byte) bool {
	switch string(hdr) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// readRequest waits for a request and reads its header. It reports
// false when the connection is to close: the client left, a timeout,
// Shutdown, or a malformed request (answered first).
func (c *conn) readRequest(first bool) (*http.Request, bool) {
	c.lim.n = c.s.maxHeaderBytes() + 4096 // net/http's slack for the request line
	if c.br.Buffered() == 0 {
		wait := c.s.idleTimeout()
		if first {
			wait = c.s.ReadHeaderTimeout
		}
		c.setReadDeadline(wait)
		if _, err := c.br.Peek(1); err != nil {
			return nil, false
		}
	}
	if !c.state.CompareAndSwap(stateIdle, stateActive) {
		return nil, false // Shutdown closed it
	}
	c.setReadDeadline(c.s.ReadHeaderTimeout)
	req, err := http.ReadRequest(c.br)
	tooLarge := c.lim.n <= 0
	c.lim.n = math.MaxInt64
	if err != nil {
		var ne net.Error
		switch {
		case tooLarge:
			c.refuse(http.StatusRequestHeaderFieldsTooLarge, "")
		case strings.HasPrefix(err.Error(), "unsupported transfer encoding"):
			c.refuse(http.StatusNotImplemented, "unsupported transfer encoding")
		case err == io.EOF, errors.Is(err, net.ErrClosed), errors.As(err, &ne) && ne.Timeout():
			// The client left or went quiet mid-header: nobody to answer.
		default:
			c.refuse(http.StatusBadRequest, err.Error())
		}
		return nil, false
	}
	c.setReadDeadline(0)
	if req.ProtoMajor != 1 {
		c.refuse(http.StatusHTTPVersionNotSupported, "")
		return nil, false
	}
	// http.ReadRequest moves the Host field to req.Host.
	switch {
	case req.ProtoAtLeast(1, 1) && req.Host == "":
		c.refuse(http.StatusBadRequest, "missing required Host header")
		return nil, false
	case !validHost(req.Host):
		c.refuse(http.StatusBadRequest, "malformed Host header")
		return nil, false
	}
	if e, ok := req.Header["Expect"]; ok && !(len(e) == 1 && strings.EqualFold(e[0], "100-continue")) {
		c.refuse(http.StatusExpectationFailed, "")
		return nil, false
	}
	req.RemoteAddr = c.remote
	req.TLS = c.tls
	return req, true
}

// serveRequest runs the handler and finishes its response. keep says
// the connection can serve another request; unread, that request bytes
// may still be on their way.
func (c *conn) serveRequest(req *http.Request) (keep, unread bool) {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	req = req.WithContext(ctx)
	c.bw = writers.Get().(*bufio.Writer)
	c.bw.Reset(c.rw)
	defer func() {
		c.bw.Reset(nil)
		writers.Put(c.bw)
		c.bw = nil
	}()
	w := newResponse(c, req)
	if !c.runHandler(w, req) {
		c.bw.Flush() // what the handler wrote before it panicked
		return false, true
	}
	w.finish()
	unread = w.body != nil && !w.body.eof
	keep = !w.closeAfter && w.err == nil && !req.Close && !c.s.closing.Load()
	return keep, unread
}

// runHandler runs the handler, reporting false if it panicked.
func (c *conn) runHandler(w *response, req *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			if p != http.ErrAbortHandler {
				c.s.logf("http: panic serving %s: %v\n%s", c.remote, p, debug.Stack())
			}
		}
	}()
	c.s.Handler.ServeHTTP(w, req)
	return true
}

// refuse answers a request that reached no handler; the connection
// closes after it.
func (c *conn) refuse(code int, detail string) {
	c.refused = true
	text := statusLine(code)
	body := text[len("HTTP/1.1 ") : len(text)-2]
	if detail != "" {
		body += ": " + detail
	}
	c.setWriteDeadline(time.Second)
	io.WriteString(c.rw, text+"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"+
		"Content-Length: "+itoa(len(body))+"\r\n\r\n"+body)
}

// close ends the connection. With linger it first waits, briefly, for
// the client to finish sending and close its end.
func (c *conn) close(linger bool) {
	c.state.Store(stateClosed)
	if linger {
		if cw, ok := c.rw.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
			io.Copy(io.Discard, c.nc)
		}
	}
	c.rw.Close()
	c.s.forget(c)
}

func (c *conn) setReadDeadline(d time.Duration) {
	switch {
	case d > 0:
		c.rw.SetReadDeadline(time.Now().Add(d))
		c.deadlineSet = true
	case c.deadlineSet:
		c.rw.SetReadDeadline(time.Time{})
		c.deadlineSet = false
	}
}

func (c *conn) setWriteDeadline(d time.Duration) {
	c.rw.SetWriteDeadline(time.Now().Add(d))
}

// limitedReader is io.LimitedReader whose limit is reset per request.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// validHost reports whether a Host header's bytes are those of a
// host[:port], IP literals and percent-escapes included (net/http's
// rule).
func validHost(h string) bool { return alnumOr(h, "!$%&'()*+,-.:;=[]_~") }

// tlsConfig is the server's TLS configuration offering HTTP/1.1 alone.
func (s *Server) tlsConfig() *tls.Config {
	s.tlsOnce.Do(func() {
		s.tls = s.TLSConfig.Clone()
		s.tls.NextProtos = []string{"http/1.1"}
	})
	return s.tls
}
