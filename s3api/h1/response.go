package h1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// pendingMax is the most body held back, before its header is written,
// to learn its length: a response no longer than this, headers
// included, goes out in one write.
const pendingMax = 4 << 10

// response is the http.ResponseWriter of one request.
type response struct {
	c      *conn
	req    *http.Request
	header http.Header
	body   *requestBody // nil for a request without a body
	head   bool

	mu           sync.Mutex // orders a 100 Continue against the final header
	committed    bool       // the status line and header are in the buffer
	continueSent bool

	status   int   // 0 until WriteHeader or Write
	declared int64 // the handler's Content-Length, -1 if none
	written  int64 // body bytes the handler wrote (or HEAD's eaten)
	chunked  bool
	pending  []byte // body held while !committed and the length is unknown

	closeAfter bool        // "Connection: close"
	err        error       // the first write error: the connection is lost
	done       atomic.Bool // the handler returned: the buffers are the next request's
}

// errAfterHandler answers a write made after the handler returned.
var errAfterHandler = errors.New("h1: response used after its handler returned")

func newResponse(c *conn, req *http.Request) *response {
	w := &response{c: c, req: req, header: make(http.Header, 8), head: req.Method == http.MethodHead, declared: -1}
	w.pending = c.pending[:0]
	if req.Body != nil && req.Body != http.NoBody {
		w.body = &requestBody{w: w, rc: req.Body}
		w.body.expected = req.ProtoAtLeast(1, 1) && req.ContentLength != 0 && req.Header["Expect"] != nil
		w.body.wantContinue = w.body.expected
		req.Body = w.body
	}
	return w
}

func (w *response) Header() http.Header { return w.header }

// WriteHeader sets the status; the header is written with the first
// body bytes, or when the handler returns. A 1xx status is sent at once.
func (w *response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.informational(code)
		return
	}
	if w.status == 0 {
		w.status = code
	}
}

// informational sends a 1xx response ahead of the final one: a "100
// Continue" once, any other with the header as it stands.
func (w *response) informational(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.committed || w.done.Load() || w.err != nil || code == http.StatusContinue && w.continueSent {
		return
	}
	bw := w.c.bw
	bw.WriteString(statusLine(code))
	if code == http.StatusContinue {
		w.continueSent = true
	} else {
		w.writeFields(bw)
	}
	bw.WriteString("\r\n")
	w.fail(bw.Flush())
}

func (w *response) Write(p []byte) (int, error) {
	if w.done.Load() {
		return 0, errAfterHandler
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	switch {
	case w.err != nil:
		return 0, w.err
	case !bodyAllowed(w.status):
		return 0, http.ErrBodyNotAllowed
	case len(p) == 0:
		return 0, nil
	}
	if !w.committed {
		if n, ok := w.declaredLength(); ok {
			sniff := p
			if w.written+int64(len(p)) > n {
				sniff = nil // refused below: nothing to sniff
			}
			w.commit(n, sniff)
		} else if len(w.pending)+len(p) <= pendingMax {
			w.pending = append(w.pending, p...)
			w.written += int64(len(p))
			return len(p), nil
		} else {
			sniff := w.pending
			if len(sniff) == 0 {
				sniff = p
			}
			w.commit(-1, sniff)
			w.flushPending()
		}
	}
	if w.head {
		w.written += int64(len(p))
		return len(p), nil
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		w.closeAfter = true // a handler out of step with its length (net/http's rule)
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	return w.send(p)
}

// send writes body bytes after the header, framed as the header says.
func (w *response) send(p []byte) (int, error) {
	bw := w.c.bw
	if w.chunked {
		var size [20]byte
		bw.Write(strconv.AppendInt(size[:0], int64(len(p)), 16))
		bw.WriteString("\r\n")
		bw.Write(p)
		_, err := bw.WriteString("\r\n")
		if w.fail(err) {
			return 0, err
		}
		return len(p), nil
	}
	n, err := bw.Write(p)
	w.fail(err)
	return n, err
}

// flushPending sends the body held back once the header is written.
func (w *response) flushPending() {
	if len(w.pending) > 0 && !w.head {
		p := w.pending
		if w.declared >= 0 && int64(len(p)) > w.declared {
			p = p[:w.declared] // the handler declared less than it wrote
		}
		w.send(p)
	}
	w.pending = nil
}

// Flush sends what is buffered, the header first; a body of unknown
// length becomes chunked.
func (w *response) Flush() { w.FlushError() }

// FlushError is Flush for http.ResponseController.
func (w *response) FlushError() error {
	if w.done.Load() {
		return errAfterHandler
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.committed {
		n, _ := w.declaredLength()
		w.commit(n, w.pending)
		w.flushPending()
	}
	if w.err != nil {
		return w.err
	}
	err := w.c.bw.Flush()
	w.fail(err)
	return err
}

// finish completes the response once the handler returned and flushes
// it: one write for a response the buffer holds.
func (w *response) finish() {
	w.done.Store(true)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.committed {
		n, ok := w.declaredLength()
		if !ok && bodyAllowed(w.status) {
			n = w.written // for HEAD, the length of what it would have sent
			if n == 0 && w.head {
				n = -1
			}
		}
		w.commit(n, w.pending)
		w.flushPending()
	}
	if w.chunked {
		w.c.bw.WriteString("0\r\n\r\n")
	}
	if w.declared >= 0 && w.written < w.declared && !w.head && bodyAllowed(w.status) {
		w.closeAfter = true // the client still waits for bytes that never come
	}
	w.fail(w.c.bw.Flush())
	if w.body != nil {
		w.body.closed = true // its reader is the next request's
	}
}

func (w *response) fail(err error) bool {
	if err != nil && w.err == nil {
		w.err = err
		w.closeAfter = true
	}
	return err != nil
}

// declaredLength is the Content-Length the handler set, if valid.
func (w *response) declaredLength() (int64, bool) {
	v := w.header["Content-Length"]
	if len(v) != 1 {
		return -1, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
	if err != nil || n < 0 {
		return -1, false
	}
	return n, true
}

// commit writes the status line and header into the buffer. length is
// the body's, -1 if unknown (then chunked, or delimited by closing for
// HTTP/1.0); sniff is the body's start, for a missing Content-Type.
func (w *response) commit(length int64, sniff []byte) {
	w.mu.Lock()
	w.committed = true
	w.mu.Unlock()
	w.settleBody()
	if w.req.Close || !w.req.ProtoAtLeast(1, 1) || w.c.s.closing.Load() || headerHas(w.header, "Connection", "close") {
		w.closeAfter = true
	}
	bw := w.c.bw
	bw.WriteString(statusLine(w.status))
	w.writeFields(bw)
	if bodyAllowed(w.status) {
		if _, typed := w.header["Content-Type"]; !typed && len(sniff) > 0 {
			bw.WriteString("Content-Type: ")
			bw.WriteString(http.DetectContentType(sniff))
			bw.WriteString("\r\n")
		}
		switch {
		case length >= 0:
			w.declared = length
			bw.WriteString("Content-Length: ")
			var num [20]byte
			bw.Write(strconv.AppendInt(num[:0], length, 10))
			bw.WriteString("\r\n")
		case w.head:
		case w.req.ProtoAtLeast(1, 1):
			w.chunked = true
			bw.WriteString("Transfer-Encoding: chunked\r\n")
		default:
			w.closeAfter = true // HTTP/1.0: the end of the connection ends the body
		}
	}
	if _, dated := w.header["Date"]; !dated {
		bw.Write(dateLine())
	}
	if w.closeAfter {
		bw.WriteString("Connection: close\r\n")
	}
	bw.WriteString("\r\n")
}

// writeFields writes the handler's header fields but those the server
// frames the message with; names that are not tokens are dropped and
// line breaks in values become spaces, as net/http does.
func (w *response) writeFields(bw *bufio.Writer) {
	for k, vs := range w.header {
		switch k {
		case "Content-Length", "Transfer-Encoding", "Connection", "Content-Type":
			if k != "Content-Type" || !bodyAllowed(w.status) || w.status < 200 {
				continue
			}
		}
		if !validFieldName(k) {
			continue
		}
		for _, v := range vs {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(cleanValue(v))
			bw.WriteString("\r\n")
		}
	}
}

// settleBody decides, before the header is written, what happens to a
// request body the handler did not read to its end: read and dropped
// if short, else the connection closes after the response. A client
// that waits for a 100 Continue never sent has not sent its body.
func (w *response) settleBody() {
	b := w.body
	if b == nil || b.eof {
		return
	}
	// Whether or not its 100 went out, a client that asked for one may
	// hold its body back: what follows on the wire is unknown (net/http's
	// rule).
	if b.err != nil || b.expected {
		w.closeAfter = true
		return
	}
	_, err := io.CopyN(io.Discard, b.rc, maxDrain+1)
	if err == io.EOF {
		b.eof = true
		return
	}
	w.closeAfter = true
}

// requestBody is a request's body as the handler sees it: the first
// read sends the 100 Continue the client waits for.
type requestBody struct {
	w            *response
	rc           io.ReadCloser
	expected     bool // "Expect: 100-continue" on a request with a body
	wantContinue bool // expected, and not read yet
	eof          bool
	closed       bool
	err          error
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.eof {
		return 0, io.EOF
	}
	if b.wantContinue {
		b.wantContinue = false
		b.w.informational(http.StatusContinue)
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil:
		b.err = err
	}
	return n, err
}

// Close ends the handler's reading; what is left is the server's to
// settle.
func (b *requestBody) Close() error {
	b.closed = true
	return nil
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h[name] {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// validFieldName reports whether k is an HTTP token.
func validFieldName(k string) bool { return k != "" && alnumOr(k, "!#$%&'*+-.^_`|~") }

// alnumOr reports whether every byte of s is a letter, a digit or one
// of extra.
func alnumOr(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if !alnum && strings.IndexByte(extra, b) < 0 {
			return false
		}
	}
	return true
}

// cleanValue turns line breaks into spaces and trims the value's ends.
func cleanValue(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
	}
	if v != "" && (v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = strings.Trim(v, " \t")
	}
	return v
}

// statusLines holds "HTTP/1.1 code text\r\n" for every code with a text.
var statusLines = func() (lines [600]string) {
	for code := range lines {
		if text := http.StatusText(code); text != "" {
			lines[code] = "HTTP/1.1 " + itoa(code) + " " + text + "\r\n"
		}
	}
	return lines
}()

func statusLine(code int) string {
	if code < len(statusLines) && statusLines[code] != "" {
		return statusLines[code]
	}
	return "HTTP/1.1 " + itoa(code) + " status code " + itoa(code) + "\r\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

// dateLine is the "Date" field of this second, formatted once a second.
func dateLine() []byte {
	now := time.Now().Unix()
	if d := lastDate.Load(); d != nil && d.sec == now {
		return d.line
	}
	d := &datedLine{sec: now, line: []byte("Date: " + time.Unix(now, 0).UTC().Format(http.TimeFormat) + "\r\n")}
	lastDate.Store(d)
	return d.line
}

type datedLine struct {
	sec  int64
	line []byte
}

var lastDate atomic.Pointer[datedLine]
