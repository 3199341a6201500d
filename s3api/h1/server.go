// Package h1 is the HTTP/1.1 server of the S3 listener: net/http's
// handler interface (http.Handler, *http.Request, http.ResponseWriter)
// served with less work a request than net/http's server does.
//
// # Why
//
// A small S3 request costs the server tens of microseconds outside its
// handler. net/http spends part of it on things this listener does not
// need: a goroutine a request to watch for the client going away, a
// 4 KiB connection buffer that splits a response of a 4 KiB object into
// two socket writes, and a copy of the response header. h1 keeps one
// goroutine a connection, reads requests with net/http's own parser
// (http.ReadRequest), and sends each response in as few writes as the
// buffer allows: a response up to writeBufferSize bytes, headers and
// body, leaves in one write when the handler returns.
//
// # Model
//
// A connection serves requests one after the other. For each it reads
// the header (within ReadHeaderTimeout, at most MaxHeaderBytes), runs the
// handler, and finishes the response:
//   - a body of unknown length that fits pendingMax bytes gets a
//     Content-Length; a longer one, or one flushed early, is chunked;
//   - a body the handler declared with Content-Length is checked against
//     it: more is refused with http.ErrContentLength, less closes the
//     connection after the response;
//   - HEAD and statuses without a body (1xx, 204, 304) send no body.
//
// A request body the handler left unread is read and dropped, up to
// maxDrain bytes, before the response goes out; past that, or when the
// request asked for a "100 Continue" (its client may hold the body
// back, so what follows on the wire is unknown), the response says
// "Connection: close" and the connection closes after it.
// "Expect: 100-continue" is answered by WriteHeader(100) or, failing
// that, on the body's first read, never after the final header.
//
// # What differs from net/http
//
// A request's context is canceled when its handler returns or the
// server closes, not when the client disconnects mid-request: no
// reader watches the socket while a handler runs. A handler notices a
// client gone away when a write fails. There is no HTTP/2, no Hijack and
// no response trailers. Over TLS the server offers only "http/1.1".
//
// # Locking
//
// A connection's goroutine owns the connection, its buffers and the
// response. The one exception is the "100 Continue" sent by a body read
// from another goroutine, which the response's mutex orders against the
// final header. Server.mu guards the set of listeners and connections.
package h1

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves HTTP/1.1 on listeners. Its fields are set before Serve.
type Server struct {
	Handler http.Handler
	// TLSConfig, when set, makes every connection TLS (HTTP/1.1 only).
	TLSConfig *tls.Config
	// ReadHeaderTimeout bounds a TLS handshake and the reading of each
	// request's header once its first byte arrived (0: no bound).
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a connection that waits this long for its next
	// request (0: ReadHeaderTimeout).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's line and header (0: 1 MiB).
	MaxHeaderBytes int
	// ErrorLog receives accept, handshake and panic errors (nil: the log
	// package's standard logger).
	ErrorLog *log.Logger

	closing atomic.Bool
	tlsOnce sync.Once
	tls     *tls.Config

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	ctx       context.Context // every request's ancestor, canceled by Close
	cancel    context.CancelFunc
}

// Serve accepts connections on ln and serves them until the server is
// shut down or closed (http.ErrServerClosed) or ln fails. ln is closed
// when Serve returns.
func (s *Server) Serve(ln net.Listener) error {
	defer ln.Close()
	if !s.track(ln) {
		return http.ErrServerClosed
	}
	defer s.untrack(ln)
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of descriptors or memory, say: wait and try again, as
			// connections in flight finish and free what they hold.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.logf("h1: accept: %v; retrying in %v", err, backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		c := s.newConn(nc)
		if c == nil {
			nc.Close()
			return http.ErrServerClosed
		}
		go c.serve()
	}
}

// Shutdown stops accepting, closes connections as they become idle and
// returns once none is left, or with ctx's error when ctx ends first.
// Requests in flight finish; their connections close after them.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.closeListeners()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.closeIdle() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Close stops accepting and closes every connection at once, canceling
// the contexts of the requests in flight.
func (s *Server) Close() error {
	s.closing.Store(true)
	s.closeListeners()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	return nil
}

func (s *Server) track(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	if s.listeners == nil {
		s.listeners = make(map[net.Listener]struct{})
	}
	s.listeners[ln] = struct{}{}
	return true
}

func (s *Server) untrack(ln net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.listeners, ln)
}

func (s *Server) closeListeners() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ln := range s.listeners {
		ln.Close()
	}
}

// newConn registers a connection, or returns nil once the server is
// closing.
func (s *Server) newConn(nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return nil
	}
	if s.conns == nil {
		s.conns = make(map[*conn]struct{})
		s.ctx, s.cancel = context.WithCancel(context.Background())
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	return c
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// closeIdle closes the connections waiting for a request and reports
// whether none is left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.state.CompareAndSwap(stateIdle, stateClosed) {
			c.nc.Close()
		}
	}
	return len(s.conns) == 0
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

func (s *Server) maxHeaderBytes() int64 {
	if s.MaxHeaderBytes > 0 {
		return int64(s.MaxHeaderBytes)
	}
	return http.DefaultMaxHeaderBytes
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return s.ReadHeaderTimeout
}
