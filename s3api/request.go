package s3api

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/s3api/iam"
	"github.com/xfs3/xfs3/s3api/identity"
	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

// request is the per-request state shared by the middleware and the
// operation that serves it.
type request struct {
	id, hostID  string
	op          string
	bucket, key string
	version     string     // ?versionId of an operation on one version
	query       url.Values // r.URL.Query(), parsed once; nil without a query
	auth        *sigv4.Auth
	// Who signed: root (Config.Credentials), a user or service account
	// (ident), or nobody (anonymous). decision is the last policy
	// decision taken, for the log.
	root      bool
	ident     *identity.Identity
	anonymous bool
	// account owns every bucket for users, service accounts and anonymous
	// requests: the root access key that seals identities (ownerOf).
	account  string
	decision iam.Decision
	ctx      iam.Context // condition keys, made on first use (authorize.go)
	tagsRead bool        // the object's existing tags are in ctx
	// sendContinue answers "Expect: 100-continue" (nil without it);
	// continued once it has.
	sendContinue func()
	continued    bool
	errCode      string
	err          error      // the cause logged with errCode
	metrics      *opMetrics // the operation's series; nil until one is chosen or with metrics off
	header       headerBuf  // values of the response headers set by rq.setHeader
}

// setHeader sets a response header of the request (see headerBuf).
func (rq *request) setHeader(h http.Header, key, value string) { rq.header.set(h, key, value) }

type requestKey struct{}

// serverHeader is every response's Server header (capped: see headerBuf).
var serverHeader = []string{"xfs3"}[:1:1]

// newRequestIDs returns a request ID (16 upper-case hex digits) and a host
// ID (base64 of 24 bytes), both random, as S3 sends them in
// x-amz-request-id and x-amz-id-2. They name a request in logs and
// reports and protect nothing, so a fast generator serves, and both
// share one string.
func newRequestIDs() (string, string) {
	const idLen, hostLen = 16, 32
	var raw [24]byte
	for i := 0; i < len(raw); i += 8 {
		binary.LittleEndian.PutUint64(raw[i:], mathrand.Uint64())
	}
	var b [idLen + hostLen]byte
	n := mathrand.Uint64()
	for i := idLen - 1; i >= 0; i-- {
		b[i] = upperHex[n&15]
		n >>= 4
	}
	base64.StdEncoding.Encode(b[idLen:], raw[:])
	both := string(b[:])
	return both[:idLen], both[idLen:]
}

const upperHex = "0123456789ABCDEF"

// headerBuf holds the values of the response headers a request sets
// through it: http.Header.Set allocates a slice for every value, and a
// small GET sets about ten. Each value gets a one-element slice of the
// array, capped so that an Add to it cannot spill into the next.
type headerBuf struct {
	vals [12]string
	n    int
}

// set is h.Set(key, value) without the allocation, while the array lasts.
func (b *headerBuf) set(h http.Header, key, value string) {
	if b.n == len(b.vals) {
		h.Set(key, value)
		return
	}
	b.vals[b.n] = value
	h[textproto.CanonicalMIMEHeaderKey(key)] = b.vals[b.n : b.n+1 : b.n+1]
	b.n++
}

// splitPath gives the bucket and key of a path-style URL path.
func splitPath(p string) (bucketName, key string) {
	p = strings.TrimPrefix(p, "/")
	bucketName, key, _ = strings.Cut(p, "/")
	return bucketName, key
}

// responseWriter records the status and the bytes written, for the log
// and to know whether an error can still be sent as a response.
type responseWriter struct {
	http.ResponseWriter
	status  int
	written int64
}

func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingBody counts the request bytes read, for the log.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// middleware gives each request its IDs, authenticates it before any
// handler runs (so that a bad signature never reaches the store),
// recovers from panics and logs one line.
//
// "Expect: 100-continue" is answered once the request is authenticated,
// authorized and its headers checked (operation), just before its
// handler runs, and at once, as S3 does, even for an empty body: given a
// final status instead of the 100 on a connection it then reuses,
// botocore (aws CLI) misreads the next response and stalls until its
// 60 s read timeout. So a request refused before its 100 is answered
// with "Connection: close", and one refused after it (its body invited)
// has its body read, up to maxDrainOnError, before the answer: a client
// still sending would otherwise see the connection close under it (over
// TLS, an EOF instead of the S3 error).
func (s *server) middleware(routes *router, system http.Handler) http.Handler {
	preflightMetrics := s.opMetricsFor(preflightOp)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rq := &request{op: "Unknown"}
		rq.id, rq.hostID = newRequestIDs()
		rq.bucket, rq.key = splitPath(r.URL.Path)
		if r.URL.RawQuery != "" {
			rq.query = r.URL.Query()
		}
		w := &responseWriter{ResponseWriter: rw}
		body := &countingBody{ReadCloser: r.Body}
		if r.Body == nil {
			body.ReadCloser = http.NoBody
		}
		// A shallow copy: the server inspects its own Request's Body after
		// the handler (to skip "100 Continue" and close the connection when
		// the body was never read), so that one must stay untouched.
		r2 := *r
		r = &r2
		r.Body = body
		h := w.Header()
		rq.setHeader(h, "X-Amz-Request-Id", rq.id)
		rq.setHeader(h, "X-Amz-Id-2", rq.hostID)
		h["Server"] = serverHeader
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				rq.err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				if w.status == 0 {
					s.writeError(w, r, rq, &s3Error{code: "InternalError", cause: rq.err})
				} else {
					rq.errCode = "InternalError"
				}
			}
			took := time.Since(start)
			s.observe(rq, w, body.n, took)
			if strings.HasPrefix(rq.op, "Health") && rq.errCode == "" {
				return // probes come every few seconds: log only failures
			}
			s.logRequest(r, rq, w, body.n, took)
		}()
		if isSystemPath(r.URL.Path) {
			rq.bucket, rq.key = "", ""
			// The system router's handlers find rq in the context.
			system.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, rq))) // authenticates what needs it
			return
		}
		// CORS (cors.go): a browser's preflight is never signed and is
		// answered from the bucket's rules alone; any other request from
		// an allowed origin gets the rule's headers now, so that its
		// errors carry them too.
		if r.Method == http.MethodOptions {
			rq.op, rq.metrics, rq.anonymous = preflightOp, preflightMetrics, true
			s.preflight(w, r, rq)
			return
		}
		s.addCORSHeaders(h, r, rq.bucket)
		// A form upload is signed by its policy, inside the body: only its
		// handler authenticates it (operation refuses it to any other).
		// An unsigned request is anonymous: only a bucket policy can
		// allow it (authorize).
		if !isFormUpload(r) {
			auth, err := s.verifier.Verify(r)
			switch {
			case errors.Is(err, sigv4.ErrMissingAuth):
				s.setAnonymous(rq)
				err = nil
			case err == nil:
				err = s.identify(rq, auth)
			}
			if err != nil {
				s.writeError(w, r, rq, err)
				return
			}
		}
		if strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			rq.sendContinue = func() { rw.WriteHeader(http.StatusContinue) }
		}
		rt := routes.match(r, rq.query)
		s.serveOperation(w, r, rq, rt.name, rt.metrics, rt.handler)
	})
}

// operation adapts a handlerFunc of the system router, which finds the
// request's state in the context (middleware puts it there).
func (s *server) operation(name string, h handlerFunc) http.Handler {
	om := s.opMetricsFor(name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rq, ok := r.Context().Value(requestKey{}).(*request)
		if !ok { // only reachable if the router is used without middleware
			rq = &request{}
			rq.id, rq.hostID = newRequestIDs()
			rq.bucket, rq.key = splitPath(r.URL.Path)
		}
		s.serveOperation(w, r, rq, name, om, h)
	})
}

// serveOperation names the operation for the log and the metrics,
// refuses what its headers or the signer's policies do not allow, and
// turns an error the handler returns into the error response.
func (s *server) serveOperation(w http.ResponseWriter, r *http.Request, rq *request, name string, om *opMetrics, h handlerFunc) {
	rq.op = name
	rq.metrics = om
	system := isSystemPath(r.URL.Path)
	if rq.auth == nil && name != "PostObject" && !system {
		s.writeError(w, r, rq, sigv4.ErrMissingAuth)
		return
	}
	if !system {
		err := s.checkRequest(r, rq)
		if err == nil && !authorizedInHandler(name) {
			err = s.authorize(r, rq)
		}
		if err != nil {
			s.writeError(w, r, rq, err)
			return
		}
		// Admin handlers authenticate themselves: Go sends their 100 on
		// the first read.
		rq.continueBody()
	}
	if err := h(w, r, rq); err != nil {
		s.writeError(w, r, rq, err)
	}
}

// maxDrainOnError bounds the body read and dropped before an error
// answers a request whose body was invited by a 100 Continue.
const maxDrainOnError = 64 << 20

// continueBody sends the 100 Continue the client waits for, once.
func (rq *request) continueBody() {
	if rq.sendContinue != nil && !rq.continued {
		rq.continued = true
		rq.sendContinue()
	}
}

// settleBody prepares the connection for an error answer (see
// middleware): closed after it when the client was told to wait, the
// body drained when it was invited.
func (rq *request) settleBody(w http.ResponseWriter, r *http.Request) {
	switch {
	case rq.sendContinue == nil:
	case !rq.continued:
		w.Header().Set("Connection", "close")
	case r.Body != nil:
		io.CopyN(io.Discard, r.Body, maxDrainOnError)
	}
}

// errorBody is S3's XML error document.
type errorBody struct {
	XMLName   struct{} `xml:"Error"`
	Code      string
	Message   string
	Key       string `xml:",omitempty"`
	Bucket    string `xml:"BucketName,omitempty"`
	Resource  string
	RequestID string `xml:"RequestId"`
	HostID    string `xml:"HostId"`
}

// writeError sends err as an S3 error response (without a body for HEAD)
// unless the response has started, in which case it is only logged.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	e := toS3Error(err)
	rq.errCode, rq.err = e.code, err
	if rw, ok := w.(*responseWriter); ok && rw.status != 0 {
		return // the status line is gone; the client sees a short body
	}
	rq.settleBody(w, r)
	if isSystemPath(r.URL.Path) {
		rq.errCode = writeAdminError(w, r, err)
		return
	}
	var marker *store.MarkerError
	if errors.As(err, &marker) {
		// A delete marker answers for the version it is.
		h := w.Header()
		h.Set("X-Amz-Delete-Marker", "true")
		h.Set("X-Amz-Version-Id", marker.VersionID)
		if !marker.Latest {
			h.Set("Allow", "DELETE")
		}
	}
	status := e.Status()
	if r.Method == http.MethodHead || status == http.StatusNotModified {
		w.WriteHeader(status)
		return
	}
	body := errorBody{
		Code: e.code, Message: messageOf(e), Resource: r.URL.Path,
		RequestID: rq.id, HostID: rq.hostID,
	}
	switch e.code {
	case "NoSuchKey", "NoSuchVersion":
		body.Key = rq.key
	case "NoSuchBucket", "BucketNotEmpty", "BucketAlreadyOwnedByYou", "InvalidBucketName", "NoSuchCORSConfiguration", "NoSuchLifecycleConfiguration", "XFS3NeedsRepair":
		body.Bucket = rq.bucket
	}
	writeXML(w, status, body)
}

// statusOf is the status a response was (or will be) sent with.
func statusOf(w *responseWriter) int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// observe counts a finished request in its operation's metrics.
func (s *server) observe(rq *request, w *responseWriter, in int64, took time.Duration) {
	om := rq.metrics
	if om == nil {
		om = s.unknownOp // refused before an operation was chosen
	}
	if om != nil {
		om.observe(statusOf(w), in, w.written, took)
	}
}

// sampledOut reports whether a successful request's log line is skipped
// (Config.LogSampleEvery); failures are always logged.
func (s *server) sampledOut(rq *request) bool {
	return s.logSample > 1 && rq.errCode == "" && s.logged.Add(1)%s.logSample != 1
}

func (s *server) logRequest(r *http.Request, rq *request, w *responseWriter, in int64, took time.Duration) {
	if s.sampledOut(rq) {
		return
	}
	status := statusOf(w)
	level := zerolog.InfoLevel
	if rq.errCode == "InternalError" {
		level = zerolog.ErrorLevel
	}
	ev := s.log.WithLevel(level).
		Str("request_id", rq.id).
		Str("op", rq.op).
		Str("method", r.Method).
		Str("bucket", rq.bucket).
		Str("key", rq.key).
		Int("status", status).
		Int64("bytes_in", in).
		Int64("bytes_out", w.written).
		Dur("latency", took).
		Str("remote", r.RemoteAddr)
	switch {
	case rq.anonymous:
		ev = ev.Bool("anonymous", true)
	case rq.auth != nil:
		ev = ev.Str("access_key", rq.auth.AccessKey)
		if rq.root {
			ev = ev.Str("user", "root")
		} else if rq.ident != nil && rq.ident.User != "" {
			ev = ev.Str("user", rq.ident.User)
		}
	}
	if rq.errCode == "AccessDenied" && rq.decision.Effect != "" {
		ev = ev.Str("decision", rq.decision.String())
	}
	if rq.errCode != "" {
		ev = ev.Str("error_code", rq.errCode)
		if rq.err != nil {
			ev = ev.AnErr("error", rq.err)
		}
	}
	ev.Msg("request")
}

// body returns the request body checked as the signature demands, with
// an early end of the connection reported as errBodyTruncated (the store
// would otherwise take io.ErrUnexpectedEOF for the end of a body of
// unknown length).
func (rq *request) body(r *http.Request) (io.Reader, error) {
	b, err := rq.auth.Body(r.Body)
	if err != nil {
		return nil, err
	}
	return &truncationReader{r: b}, nil
}

type truncationReader struct{ r io.Reader }

func (t *truncationReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("%w: %w", errBodyTruncated, err)
	}
	return n, err
}

// trailer returns the aws-chunked trailer once the body read by rq.body
// has ended, or nil.
func trailerOf(body io.Reader) http.Header {
	if t, ok := body.(*truncationReader); ok {
		body = t.r
	}
	if c, ok := body.(*sigv4.ChunkedReader); ok {
		return c.Trailer()
	}
	return nil
}
