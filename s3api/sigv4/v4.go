package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
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
	return s.Date + "/" + s.Region + "/" + s.Service + "/" + scopeTerminator
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

// headerValues returns the values of a signed header. Go moves Host out of
// r.Header, and Content-Length into r.ContentLength when it parses a
// request, so both are read back from there.
func headerValues(r *http.Request, name string) []string {
	switch name {
	case "host":
		if r.Host != "" {
			return []string{r.Host}
		}
		if r.URL != nil && r.URL.Host != "" {
			return []string{r.URL.Host}
		}
	case "content-length":
		if vs := r.Header.Values("Content-Length"); len(vs) > 0 {
			return vs
		}
		if r.ContentLength > 0 || r.ContentLength == 0 && r.Body != nil && r.Body != http.NoBody {
			return []string{fmt.Sprint(r.ContentLength)}
		}
		return nil
	case "transfer-encoding":
		if len(r.TransferEncoding) > 0 {
			return []string{strings.Join(r.TransferEncoding, ",")}
		}
	}
	return r.Header.Values(name)
}

// CanonicalRequest builds the V4 canonical request:
//
//	Method \n CanonicalURI \n CanonicalQuery \n CanonicalHeaders \n SignedHeaders \n PayloadHash
//
// skipQuery names a query key left out (X-Amz-Signature for presigned
// requests), or is empty.
func CanonicalRequest(r *http.Request, signedHeaders []string, payloadHash, skipQuery string) (string, error) {
	return canonicalRequest(r, signedHeaders, payloadHash, skipQuery, true)
}

func canonicalRequest(r *http.Request, signedHeaders []string, payloadHash, skipQuery string, byValue bool) (string, error) {
	pairs, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return "", malformed("query: %v", err)
	}
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(canonicalURI(r.URL))
	b.WriteByte('\n')
	b.WriteString(canonicalQueryOrder(pairs, func(k string) bool { return k == skipQuery }, byValue))
	b.WriteByte('\n')
	for _, h := range signedHeaders {
		vs := headerValues(r, h)
		if vs == nil {
			return "", fmt.Errorf("%w: signed header %q is absent", ErrSignatureMismatch, h)
		}
		b.WriteString(h)
		b.WriteByte(':')
		for i, v := range vs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(trimAll(v))
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String(), nil
}

// StringToSign is "AWS4-HMAC-SHA256 \n time \n scope \n hex(sha256(canonical))".
func StringToSign(t time.Time, scope Scope, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return Algorithm + "\n" + t.UTC().Format(timeFormat) + "\n" + scope.String() + "\n" + hex.EncodeToString(sum[:])
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

// checkV4 compares sig with the signature of r, computed with the AWS
// query order and, when repeated keys were sent unsorted, with the order
// as sent.
func checkV4(r *http.Request, key []byte, t time.Time, scope Scope, signedHeaders []string, payloadHash, skipQuery, sig string) error {
	for _, byValue := range []bool{true, false} {
		canon, err := canonicalRequest(r, signedHeaders, payloadHash, skipQuery, byValue)
		if err != nil {
			return err
		}
		if equalSig(sign(key, StringToSign(t, scope, canon)), sig) {
			return nil
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

// equalSig compares two signatures in constant time.
func equalSig(a, b string) bool {
	return hmac.Equal([]byte(a), []byte(b))
}
