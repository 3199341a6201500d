package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/config"
)

// debugServer serves Go's profiling handlers on a listener of its own
// (--debug-listen), never on the S3 one.
//
// Importing net/http/pprof registers its handlers on
// http.DefaultServeMux as well; the S3 server never uses that mux (its
// handler is s3api's), so they are reachable only here.
type debugServer struct {
	srv *http.Server
	ln  net.Listener
}

// namedProfiles are the runtime/pprof profiles served by name.
var namedProfiles = []string{"allocs", "block", "goroutine", "heap", "mutex", "threadcreate"}

// debugMux routes /debug/pprof/ to the profiling handlers, on a mux of
// its own.
func debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	for _, name := range namedProfiles {
		mux.Handle("/debug/pprof/"+name, pprof.Handler(name))
	}
	return mux
}

// startDebug listens on addr, which config has checked is loopback, and
// serves the profiling handlers until close.
func startDebug(addr string, log zerolog.Logger) (*debugServer, error) {
	if err := config.CheckLoopback(addr); err != nil {
		return nil, fmt.Errorf("debug listen: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug listen: %w", err)
	}
	// "localhost" is resolved by the system; what it gave must be
	// loopback too.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("debug listen: %s resolved to %s, which is not a loopback address", addr, ln.Addr())
	}
	d := &debugServer{ln: ln, srv: &http.Server{
		Handler:           debugMux(),
		ReadHeaderTimeout: 30 * time.Second,
		// No WriteTimeout: a CPU profile or trace answers after the
		// seconds it was asked for, and pprof refuses a request whose
		// duration exceeds the server's write timeout.
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    serverErrorLog(log),
	}}
	go func() {
		if err := d.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn().Err(err).Msg("profiling listener stopped")
		}
	}()
	return d, nil
}

// url is where the handlers are, for the start's message.
func (d *debugServer) url() string { return "http://" + d.ln.Addr().String() + "/debug/pprof/" }

// close stops the listener at once: a profile being taken is cut off
// rather than waited for, as nothing of the volume depends on it.
func (d *debugServer) close() {
	if d != nil {
		d.srv.Close()
	}
}
