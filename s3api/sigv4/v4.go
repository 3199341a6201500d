package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Names and constants of Signature Version 4.
const (
	Algorithm        = "AWS4-HMAC-SHA256"
	scopeTerminator  = "aws4_request"
	timeFormat       = "20060102T150405Z"
	dateFormat       = "20060102"
	emptySHA256      = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	headerDate       = "X-Amz-Date"
	headerContentSHA = "X-Amz-Content-Sha256"
)

// Values of x-amz-content-sha256 other than a hex digest.
const (
	UnsignedPayload          = "UNSIGNED-PAYLOAD"
	StreamingPayload         = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingPayloadTrailer  = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

// Scope is the credential scope: the day, region and service a signing
// key is valid for.
type Scope struct {
	Date    string // YYYYMMDD
	Region  string
	Service string
}

// String returns "date/region/service/aws4_request".
func (s Scope) String() string {
	return string(appendScope(nil, s))
}

func appendScope(dst []byte, s Scope) []byte {
	dst = append(dst, s.Date...)
	dst = append(dst, '/')
	dst = append(dst, s.Region...)
	dst = append(dst, '/')
	dst = append(dst, s.Service...)
	dst = append(dst, '/')
	return append(dst, scopeTerminator...)
}

// Credential is the parsed Credential= element: an access key and a scope.
type Credential struct {
	AccessKey string
	Scope
}

// AuthHeader is a parsed "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
// Signature=…" Authorization header.
type AuthHeader struct {
	Credential    Credential
	SignedHeaders []string // lower case, sorted, as sent
	Signature     string   // 64 lower-case hex digits
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// parseCredential parses "AK/YYYYMMDD/region/service/aws4_request". The
// access key may itself contain '/', so the scope is taken from the right.
func parseCredential(s string) (Credential, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 5 {
		return Credential{}, malformed("credential %q has too few parts", s)
	}
	n := len(parts)
	c := Credential{
		AccessKey: strings.Join(parts[:n-4], "/"),
		Scope:     Scope{Date: parts[n-4], Region: parts[n-3], Service: parts[n-2]},
	}
	if parts[n-1] != scopeTerminator {
		return Credential{}, malformed("credential scope must end in %s", scopeTerminator)
	}
	if c.AccessKey == "" {
		return Credential{}, malformed("credential has no access key")
	}
	if _, err := time.Parse(dateFormat, c.Date); err != nil || len(c.Date) != 8 {
		return Credential{}, malformed("credential date %q", c.Date)
	}
	if c.Service == "" {
		return Credential{}, malformed("credential has an empty service")
	}
	return c, nil
}

// parseSignedHeaders parses "host;x-amz-date": lower case, sorted, no
// empty names, host included.
func parseSignedHeaders(s string) ([]string, error) {
	if s == "" {
		return nil, malformed("empty SignedHeaders")
	}
	hs := strings.Split(s, ";")
	host := false
	for i, h := range hs {
		if h == "" || h != strings.ToLower(h) || strings.TrimSpace(h) != h {
			return nil, malformed("signed header %q", h)
		}
		if i > 0 && hs[i-1] >= h {
			return nil, malformed("SignedHeaders not sorted or repeated")
		}
		host = host || h == "host"
	}
	if !host {
		return nil, malformed("host is not a signed header")
	}
	return hs, nil
}

// parseSignature checks a V4 signature is 64 lower-case hex digits.
func parseSignature(s string) (string, error) {
	if len(s) != 64 {
		return "", malformed("signature must be 64 hex digits")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", malformed("signature must be lower-case hex")
		}
	}
	return s, nil
}

// ParseAuthorization parses a V4 Authorization header value. Elements are
// separated by ',' with optional spaces, in any order, each exactly once.
func ParseAuthorization(v string) (AuthHeader, error) {
	rest, ok := strings.CutPrefix(v, Algorithm)
	if !ok {
		return AuthHeader{}, malformed("algorithm is not %s", Algorithm)
	}
	if rest == "" || rest[0] != ' ' {
		return AuthHeader{}, malformed("no space after algorithm")
	}
	var a AuthHeader
	var seen [3]bool
	for _, el := range strings.Split(rest, ",") {
		el = strings.TrimSpace(el)
		k, val, ok := strings.Cut(el, "=")
		if !ok {
			return AuthHeader{}, malformed("element %q has no '='", el)
		}
		var err error
		switch k {
		case "Credential":
			if seen[0] {
				return AuthHeader{}, malformed("Credential repeated")
			}
			seen[0] = true
			a.Credential, err = parseCredential(val)
		case "SignedHeaders":
			if seen[1] {
				return AuthHeader{}, malformed("SignedHeaders repeated")
			}
			seen[1] = true
			a.SignedHeaders, err = parseSignedHeaders(val)
		case "Signature":
			if seen[2] {
				return AuthHeader{}, malformed("Signature repeated")
			}
			seen[2] = true
			a.Signature, err = parseSignature(val)
		default:
			return AuthHeader{}, malformed("unknown element %q", k)
		}
		if err != nil {
			return AuthHeader{}, err
		}
	}
	if !seen[0] || !seen[1] || !seen[2] {
		return AuthHeader{}, malformed("missing Credential, SignedHeaders or Signature")
	}
	return a, nil
}

// appendHeaderValues appends the canonical value of a signed header:
// its values trimmed and joined with ','. Go moves Host out of r.Header,
// Content-Length into r.ContentLength and Transfer-Encoding into
// r.TransferEncoding when it parses a request, so those are read back
// from there. ok is false when the header is absent.
func appendHeaderValues(dst []byte, r *http.Request, name string) (_ []byte, ok bool) {
	switch name {
	case "host":
		if r.Host != "" {
			return appendTrimmed(dst, r.Host), true
		}
		if r.URL != nil && r.URL.Host != "" {
			return appendTrimmed(dst, r.URL.Host), true
		}
	case "content-length":
		if len(r.Header.Values("Content-Length")) > 0 {
			break
		}
		if r.ContentLength > 0 || r.ContentLength == 0 && r.Body != nil && r.Body != http.NoBody {
			return strconv.AppendInt(dst, r.ContentLength, 10), true
		}
		return dst, false
	case "transfer-encoding":
		if len(r.TransferEncoding) > 0 {
			return append(dst, strings.Join(r.TransferEncoding, ",")...), true
		}
	}
	vs := r.Header.Values(name)
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendTrimmed(dst, v)
	}
	return dst, len(vs) > 0
}

// CanonicalRequest builds the V4 canonical request:
//
//	Method \n CanonicalURI \n CanonicalQuery \n CanonicalHeaders \n SignedHeaders \n PayloadHash
//
// skipQuery names a query key left out (X-Amz-Signature for presigned
// requests), or is empty.
func CanonicalRequest(r *http.Request, signedHeaders []string, payloadHash, skipQuery string) (string, error) {
	b, err := appendCanonicalRequest(nil, r, signedHeaders, payloadHash, skipQuery, true)
	return string(b), err
}

// appendCanonicalRequest appends the canonical request to dst; byValue
// is canonicalQueryOrder's.
func appendCanonicalRequest(dst []byte, r *http.Request, signedHeaders []string, payloadHash, skipQuery string, byValue bool) ([]byte, error) {
	dst = append(dst, r.Method...)
	dst = append(dst, '\n')
	if r.URL.Path == "" {
		dst = append(dst, '/')
	} else {
		dst = appendURIEncoded(dst, r.URL.Path, true)
	}
	dst = append(dst, '\n')
	if r.URL.RawQuery != "" {
		pairs, err := parseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, malformed("query: %v", err)
		}
		dst = append(dst, canonicalQueryOrder(pairs, func(k string) bool { return k == skipQuery }, byValue)...)
	}
	dst = append(dst, '\n')
	for _, h := range signedHeaders {
		dst = append(dst, h...)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = appendHeaderValues(dst, r, h); !ok {
			return nil, fmt.Errorf("%w: signed header %q is absent", ErrSignatureMismatch, h)
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, '\n')
	for i, h := range signedHeaders {
		if i > 0 {
			dst = append(dst, ';')
		}
		dst = append(dst, h...)
	}
	dst = append(dst, '\n')
	return append(dst, payloadHash...), nil
}

// StringToSign is "AWS4-HMAC-SHA256 \n time \n scope \n hex(sha256(canonical))".
func StringToSign(t time.Time, scope Scope, canonical string) string {
	return string(appendStringToSign(nil, Algorithm, t, scope, sha256.Sum256([]byte(canonical))))
}

// appendStringToSign appends "algorithm \n time \n scope \n hex(sum)".
func appendStringToSign(dst []byte, algorithm string, t time.Time, scope Scope, sum [sha256.Size]byte) []byte {
	dst = append(dst, algorithm...)
	dst = append(dst, '\n')
	dst = t.UTC().AppendFormat(dst, timeFormat)
	dst = append(dst, '\n')
	dst = appendScope(dst, scope)
	dst = append(dst, '\n')
	return hex.AppendEncode(dst, sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// SigningKey derives the V4 signing key:
// HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request").
func SigningKey(secret string, scope Scope) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), scope.Date)
	k = hmacSHA256(k, scope.Region)
	k = hmacSHA256(k, scope.Service)
	return hmacSHA256(k, scopeTerminator)
}

// canonBufs are the buffers checkV4 builds a canonical request and its
// string to sign in: a request's are a few hundred bytes, made and
// dropped on every request.
var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// checkV4 compares sig with the signature of r, computed with the AWS
// query order and, when repeated keys were sent unsorted, with the order
// as sent.
func checkV4(r *http.Request, key []byte, t time.Time, scope Scope, signedHeaders []string, payloadHash, skipQuery, sig string) error {
	buf := canonBufs.Get().(*[]byte)
	defer canonBufs.Put(buf)
	for _, byValue := range []bool{true, false} {
		canon, err := appendCanonicalRequest((*buf)[:0], r, signedHeaders, payloadHash, skipQuery, byValue)
		if err != nil {
			return err
		}
		both := appendStringToSign(canon, Algorithm, t, scope, sha256.Sum256(canon))
		*buf = both[:0] // keep the larger buffer if it grew
		if signatureIs(key, both[len(canon):], sig) {
			return nil
		}
		if r.URL.RawQuery == "" {
			break
		}
		if pairs, _ := parseQuery(r.URL.RawQuery); !repeatedUnsorted(pairs) {
			break
		}
	}
	return ErrSignatureMismatch
}

// sign returns hex(HMAC(key, s)).
func sign(key []byte, s string) string {
	return hex.EncodeToString(hmacSHA256(key, s))
}

// signatureIs reports, in constant time, whether sig is hex(HMAC(key,
// msg)).
func signatureIs(key, msg []byte, sig string) bool {
	m := macs.Get().(*mac)
	defer macs.Put(m)
	var sum [sha256.Size]byte
	m.sum(sum[:0], key, msg)
	var want [2 * sha256.Size]byte
	hex.Encode(want[:], sum[:])
	if len(sig) != len(want) {
		return false
	}
	var diff byte
	for i := range want {
		diff |= want[i] ^ sig[i]
	}
	return diff == 0
}

// mac computes HMAC-SHA256 with a digest and pad kept between uses
// (pooled in macs), for keys of at most a block: signing keys are 32
// bytes.
type mac struct {
	h     hash.Hash
	pad   [sha256.BlockSize]byte
	inner [sha256.Size]byte
}

var macs = sync.Pool{New: func() any { return &mac{h: sha256.New()} }}

// sum appends HMAC(key, msg) to dst (RFC 2104).
func (m *mac) sum(dst, key, msg []byte) []byte {
	if len(key) > sha256.BlockSize {
		panic("sigv4: mac key longer than a block")
	}
	m.keyPad(key, 0x36)
	m.h.Reset()
	m.h.Write(m.pad[:])
	m.h.Write(msg)
	inner := m.h.Sum(m.inner[:0])
	m.keyPad(key, 0x5c)
	m.h.Reset()
	m.h.Write(m.pad[:])
	m.h.Write(inner)
	return m.h.Sum(dst)
}

func (m *mac) keyPad(key []byte, x byte) {
	for i := range m.pad {
		m.pad[i] = x
	}
	for i, k := range key {
		m.pad[i] ^= k
	}
}

// equalSig compares two signatures in constant time.
func equalSig(a, b string) bool {
	return hmac.Equal([]byte(a), []byte(b))
}
