package sigv4

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"time"
)

// An aws-chunked body, signed (STREAMING-AWS4-HMAC-SHA256-PAYLOAD*):
//
//	hex-size;chunk-signature=SIG\r\n  data  \r\n   … repeated …
//	0;chunk-signature=SIG\r\n  \r\n                 (no trailer)
//	0;chunk-signature=SIG\r\n  name:value\r\n … x-amz-trailer-signature:SIG\r\n  \r\n
//	   (minio-go: name:value\n … \r\n x-amz-trailer-signature:SIG\r\n \r\n)
//
// unsigned (STREAMING-UNSIGNED-PAYLOAD-TRAILER):
//
//	hex-size\r\n  data  \r\n   … repeated …
//	0\r\n  name:value\r\n …  \r\n
//
// Chunk i's signature is HMAC(signing key, string to sign) over
//
//	AWS4-HMAC-SHA256-PAYLOAD \n time \n scope \n SIG(i-1) \n sha256("") \n sha256(data)
//
// with SIG(0) the seed signature of the Authorization header; the trailer
// signature chains from the final chunk's:
//
//	AWS4-HMAC-SHA256-TRAILER \n time \n scope \n SIG(last) \n sha256(trailer lines, each "name:value\n")
//
// Trailer lines may end in "\n" or "\r\n": SDKs differ.

const (
	chunkPayloadAlgorithm = "AWS4-HMAC-SHA256-PAYLOAD"
	chunkTrailerAlgorithm = "AWS4-HMAC-SHA256-TRAILER"
	chunkSigPrefix        = ";chunk-signature="
	trailerSigName        = "x-amz-trailer-signature"

	maxLine         = 4096      // longest chunk header or trailer line
	maxTrailerBytes = 16 << 10  // total of all trailer lines
	maxChunkSize    = 1<<40 - 1 // far above any SDK's, small enough never to overflow
)

// ChunkedConfig describes an aws-chunked body.
type ChunkedConfig struct {
	// Signed: every chunk carries a chunk-signature chained from
	// SeedSignature with SigningKey, Scope and Time.
	Signed        bool
	SigningKey    []byte
	Scope         Scope
	Time          time.Time
	SeedSignature string
	// Trailer: the final chunk is followed by trailer lines (signed with
	// x-amz-trailer-signature when Signed).
	Trailer bool
	// DecodedLength is x-amz-decoded-content-length, or -1 if unknown.
	DecodedLength int64
}

// ChunkedReader decodes an aws-chunked body, returning the payload bytes.
// It returns io.EOF only after the final chunk, every signature and the
// decoded length checked out; any other end is ErrIncompleteBody,
// ErrMalformed or ErrSignatureMismatch.
type ChunkedReader struct {
	cfg     ChunkedConfig
	br      *bufio.Reader
	prevSig string
	h       hash.Hash // SHA-256 of the current chunk's data

	inChunk   bool   // between a chunk header and its CRLF
	size      int64  // data bytes of the current chunk
	remaining int64  // data bytes left in the current chunk
	chunkSig  string // signature announced by the current chunk header
	total     int64  // payload bytes delivered
	trailer   http.Header
	err       error  // sticky: io.EOF once done, or the failure
	sts       []byte // the string to sign of the last chunk checked
}

// appendChunkStringToSign appends the string a chunk's or a trailer's
// signature signs: "algorithm \n time \n scope \n previous signature
// \n [hash of nothing \n] hex(sum)".
func appendChunkStringToSign(dst []byte, algorithm string, cfg ChunkedConfig, prevSig, emptyHash string, sum []byte) []byte {
	dst = append(dst, algorithm...)
	dst = append(dst, '\n')
	dst = cfg.Time.UTC().AppendFormat(dst, timeFormat)
	dst = append(dst, '\n')
	dst = appendScope(dst, cfg.Scope)
	dst = append(dst, '\n')
	dst = append(dst, prevSig...)
	dst = append(dst, '\n')
	if emptyHash != "" {
		dst = append(dst, emptyHash...)
		dst = append(dst, '\n')
	}
	return hex.AppendEncode(dst, sum)
}

// NewChunkedReader decodes r as described by c.
func NewChunkedReader(r io.Reader, c ChunkedConfig) *ChunkedReader {
	return &ChunkedReader{cfg: c, br: bufio.NewReaderSize(r, maxLine), prevSig: c.SeedSignature, h: sha256.New()}
}

// Trailer returns the trailer headers once Read has returned io.EOF, or
// nil before.
func (c *ChunkedReader) Trailer() http.Header {
	if c.err != io.EOF {
		return nil
	}
	return c.trailer
}

// Read implements io.Reader.
func (c *ChunkedReader) Read(p []byte) (int, error) {
	for c.err == nil {
		if c.inChunk && c.remaining > 0 {
			if len(p) == 0 {
				return 0, nil
			}
			n := int64(len(p))
			if n > c.remaining {
				n = c.remaining
			}
			m, err := c.br.Read(p[:n])
			c.h.Write(p[:m])
			c.remaining -= int64(m)
			c.total += int64(m)
			if err != nil {
				c.err = c.fail(err)
				if m > 0 {
					// The bytes of an unverified chunk are given out with its failure.
					return m, c.err
				}
				break
			}
			return m, nil
		}
		if c.inChunk {
			c.err = c.endChunk()
			continue
		}
		c.err = c.readHeader()
	}
	return 0, c.err
}

// fail turns an error of the underlying reader into the package's kinds.
func (c *ChunkedReader) fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: body ended after %d payload bytes", ErrIncompleteBody, c.total)
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		return malformed("chunk line longer than %d bytes", maxLine)
	}
	return err
}

// readLine returns the next line without its "\n" or "\r\n"; crlf says
// which ending it had.
func (c *ChunkedReader) readLine() (line []byte, crlf bool, err error) {
	l, err := c.br.ReadSlice('\n')
	if err != nil {
		return nil, false, c.fail(err)
	}
	l = l[:len(l)-1]
	if n := len(l); n > 0 && l[n-1] == '\r' {
		return l[:n-1], true, nil
	}
	return l, false, nil
}

// readHeader parses "hex[;chunk-signature=SIG]\r\n".
func (c *ChunkedReader) readHeader() error {
	line, crlf, err := c.readLine()
	if err != nil {
		return err
	}
	if !crlf {
		return malformed("chunk header not ended by CRLF")
	}
	sizeHex, sig := line, []byte(nil)
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		sizeHex = line[:i]
		rest, ok := bytes.CutPrefix(line[i:], []byte(chunkSigPrefix))
		if !ok || !c.cfg.Signed {
			return malformed("unexpected chunk extension %q", line[i:])
		}
		sig = rest
	}
	if c.cfg.Signed {
		if sig == nil {
			return malformed("chunk without chunk-signature")
		}
		s, err := parseSignature(string(sig))
		if err != nil {
			return err
		}
		c.chunkSig = s
	}
	if len(sizeHex) == 0 || len(sizeHex) > 16 {
		return malformed("chunk size %q", sizeHex)
	}
	size, err := strconv.ParseUint(string(sizeHex), 16, 64)
	if err != nil || size > maxChunkSize {
		return malformed("chunk size %q", sizeHex)
	}
	if d := c.cfg.DecodedLength; d >= 0 && c.total+int64(size) > d {
		return malformed("chunks exceed x-amz-decoded-content-length %d", d)
	}
	c.inChunk, c.size, c.remaining = true, int64(size), int64(size)
	c.h.Reset()
	return nil
}

// endChunk checks the chunk's signature and CRLF; after the final chunk
// it reads the trailer and the decoded length.
func (c *ChunkedReader) endChunk() error {
	c.inChunk = false
	if c.cfg.Signed {
		var sum [sha256.Size]byte
		c.sts = appendChunkStringToSign(c.sts[:0], chunkPayloadAlgorithm, c.cfg, c.prevSig, emptySHA256, c.h.Sum(sum[:0]))
		if !signatureIs(c.cfg.SigningKey, c.sts, c.chunkSig) {
			return fmt.Errorf("%w: chunk ending at payload byte %d", ErrSignatureMismatch, c.total)
		}
		c.prevSig = c.chunkSig
	}
	final := c.size == 0
	if !final || !c.cfg.Trailer {
		line, crlf, err := c.readLine()
		if err != nil {
			return err
		}
		if len(line) != 0 || !crlf {
			return malformed("chunk data not followed by CRLF")
		}
	}
	if !final {
		return nil
	}
	if c.cfg.Trailer {
		if err := c.readTrailer(); err != nil {
			return err
		}
	}
	if d := c.cfg.DecodedLength; d >= 0 && c.total != d {
		return fmt.Errorf("%w: %d of %d payload bytes", ErrIncompleteBody, c.total, d)
	}
	return c.expectEnd()
}

// expectEnd checks nothing follows the body but, after a trailer, one
// optional CRLF (minio-go ends its trailer with an extra one). The body is
// bounded by Content-Length, so reading here cannot wait for a client.
func (c *ChunkedReader) expectEnd() error {
	b, err := c.br.Peek(2)
	if len(b) == 0 && errors.Is(err, io.EOF) {
		return io.EOF
	}
	if c.cfg.Trailer && len(b) > 0 && b[0] == '\r' {
		if len(b) < 2 {
			return c.fail(err)
		}
		if b[1] == '\n' {
			c.br.Discard(2)
			if _, err := c.br.Peek(1); errors.Is(err, io.EOF) {
				return io.EOF
			}
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return malformed("data after the final chunk")
}

// readTrailer reads "name:value" lines up to an empty line, checking the
// trailer signature of a signed stream.
func (c *ChunkedReader) readTrailer() error {
	c.trailer = http.Header{}
	var canon []byte // "name:value\n" lines, as signed
	sig := ""
	blank := false
	for {
		line, _, err := c.readLine()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			// minio-go puts a blank line between the trailer and its
			// signature; the blank line ends a signed trailer only after
			// the signature.
			if c.cfg.Signed && sig == "" && !blank {
				blank = true
				continue
			}
			break
		}
		if sig != "" {
			return malformed("trailer line after the trailer signature")
		}
		if blank && !bytes.HasPrefix(bytes.ToLower(line), []byte(trailerSigName+":")) {
			return malformed("trailer line after a blank line")
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(name) == 0 || len(bytes.TrimSpace(name)) != len(name) {
			return malformed("trailer line %q", line)
		}
		lname := string(bytes.ToLower(name))
		value = bytes.TrimSpace(value)
		if lname == trailerSigName {
			if !c.cfg.Signed {
				return malformed("trailer signature in an unsigned stream")
			}
			if sig, err = parseSignature(string(value)); err != nil {
				return err
			}
			continue
		}
		canon = append(canon, lname...)
		canon = append(canon, ':')
		canon = append(canon, value...)
		canon = append(canon, '\n')
		if len(canon) > maxTrailerBytes {
			return malformed("trailer longer than %d bytes", maxTrailerBytes)
		}
		c.trailer.Add(lname, string(value))
	}
	if !c.cfg.Signed {
		return nil
	}
	if sig == "" {
		return malformed("signed trailer without %s", trailerSigName)
	}
	sum := sha256.Sum256(canon)
	c.sts = appendChunkStringToSign(c.sts[:0], chunkTrailerAlgorithm, c.cfg, c.prevSig, "", sum[:])
	if !signatureIs(c.cfg.SigningKey, c.sts, sig) {
		return fmt.Errorf("%w: trailer", ErrSignatureMismatch)
	}
	return nil
}
