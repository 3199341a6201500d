package sigv4

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxSkew is the largest difference S3 accepts between the request time
// and its own clock.
const MaxSkew = 15 * time.Minute

// MaxPresignExpiry is the longest validity of a V4 presigned URL.
const MaxPresignExpiry = 7 * 24 * time.Hour

// Credentials looks up the secret key of an access key.
type Credentials interface {
	SecretKey(accessKey string) (secret string, ok bool)
}

// StaticCredentials maps access keys to secret keys.
type StaticCredentials map[string]string

// SecretKey implements Credentials.
func (c StaticCredentials) SecretKey(ak string) (string, bool) {
	s, ok := c[ak]
	return s, ok
}

// Kind says how a request was authenticated.
type Kind int

// Authentication kinds.
const (
	V4Header Kind = iota + 1
	V4Presigned
	V2Header
	V2Presigned
	V4PostForm // a browser form upload's signed policy (VerifyPostForm)
	V2PostForm // the same, signed with Signature Version 2 (VerifyPostFormV2)
)

func (k Kind) String() string {
	switch k {
	case V4Header:
		return "v4-header"
	case V4Presigned:
		return "v4-presigned"
	case V2Header:
		return "v2-header"
	case V2Presigned:
		return "v2-presigned"
	case V4PostForm:
		return "v4-post-form"
	case V2PostForm:
		return "v2-post-form"
	}
	return "unknown"
}

// Verifier authenticates requests. The zero Now means time.Now, a zero
// MaxSkew means MaxSkew, and an empty Region accepts any region in the
// credential scope.
type Verifier struct {
	Credentials Credentials
	Now         func() time.Time
	MaxSkew     time.Duration
	Region      string
	// AllowEmptyRegion accepts a credential scope with an empty region
	// ("KEY/DATE//s3/aws4_request"), which MinIO's admin client sends; S3
	// itself refuses it.
	AllowEmptyRegion bool

	keys keyCache
}

// keyCache keeps derived signing keys: a key depends only on the secret,
// the day, the region and the service, and deriving it costs four HMACs,
// as much as checking the signature itself.
type keyCache struct {
	mu   sync.Mutex
	keys map[keyID][]byte
}

// keyID is what a signing key is derived from, field by field: no
// joined string, in which two secrets and scopes could read the same.
type keyID struct {
	secret string
	scope  Scope
}

// keyCacheMax bounds the cache; past it the cache starts again empty.
const keyCacheMax = 256

// signingKey returns SigningKey(secret, scope), from the cache when it
// was derived before. The key is shared: callers must not change it.
func (v *Verifier) signingKey(secret string, scope Scope) []byte {
	c := &v.keys
	id := keyID{secret, scope}
	c.mu.Lock()
	key, ok := c.keys[id]
	c.mu.Unlock()
	if ok {
		return key
	}
	key = SigningKey(secret, scope)
	c.mu.Lock()
	if c.keys == nil || len(c.keys) >= keyCacheMax {
		c.keys = make(map[keyID][]byte)
	}
	c.keys[id] = key
	c.mu.Unlock()
	return key
}

// checkScope requires the service "s3", a region (unless AllowEmptyRegion)
// and, when configured, the region.
func (v *Verifier) checkScope(s Scope) error {
	if s.Service != "s3" {
		return malformed("service %q in the credential scope is not s3", s.Service)
	}
	if s.Region == "" && !v.AllowEmptyRegion {
		return malformed("credential has an empty region")
	}
	if v.Region != "" && s.Region != v.Region {
		return malformed("region %q is wrong; expecting %q", s.Region, v.Region)
	}
	return nil
}

// Auth is what a successful verification established. Its Body method
// wraps the request body so that the payload is checked as it streams.
type Auth struct {
	Kind      Kind
	AccessKey string
	// The fields below are set for V4 only.
	Scope       Scope
	Time        time.Time // X-Amz-Date (or Date)
	Signature   string    // the request (seed) signature
	PayloadHash string    // x-amz-content-sha256 as sent, or UNSIGNED-PAYLOAD
	signingKey  []byte
	decodedLen  int64 // x-amz-decoded-content-length, -1 if absent
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) skew() time.Duration {
	if v.MaxSkew > 0 {
		return v.MaxSkew
	}
	return MaxSkew
}

func (v *Verifier) secret(ak string) (string, error) {
	if v.Credentials != nil {
		if s, ok := v.Credentials.SecretKey(ak); ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrInvalidAccessKey, ak)
}

// Verify authenticates r by whichever scheme it uses. It reads headers,
// URL and Host only, never the body: wrap the body with Auth.Body.
func (v *Verifier) Verify(r *http.Request) (*Auth, error) {
	authz := r.Header.Get("Authorization")
	var q url.Values // nil, and so empty, without a query
	if r.URL.RawQuery != "" {
		q = r.URL.Query()
	}
	if authz != "" && (q.Has("X-Amz-Credential") || q.Has("AWSAccessKeyId")) {
		return nil, fmt.Errorf("%w: only one auth mechanism allowed: an Authorization header or a presigned query", ErrInvalidArgument)
	}
	switch {
	case strings.HasPrefix(authz, Algorithm):
		return v.verifyV4Header(r, authz)
	case strings.HasPrefix(authz, "AWS "):
		return v.verifyV2Header(r, authz)
	case authz != "":
		return nil, malformed("unsupported authorization scheme")
	case q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Credential") || q.Has("X-Amz-Signature"):
		return v.verifyPresignedV4(r)
	case q.Has("AWSAccessKeyId") || q.Has("Signature"):
		return v.verifyPresignedV2(r)
	}
	return nil, ErrMissingAuth
}

// requestTime reads X-Amz-Date, or Date in RFC 1123 form. Without a
// valid one S3 answers 403 AccessDenied, as for V2 (ErrInvalidDate).
func requestTime(r *http.Request) (time.Time, error) {
	if s := r.Header.Get(headerDate); s != "" {
		t, err := parseAmzTime(s)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: X-Amz-Date %q", ErrInvalidDate, s)
		}
		return t, nil
	}
	if s := r.Header.Get("Date"); s != "" {
		t, err := http.ParseTime(s)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: Date %q", ErrInvalidDate, s)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%w: no X-Amz-Date or Date header", ErrInvalidDate)
}

// parseAmzTime parses an X-Amz-Date ("20060102T150405Z") as
// time.Parse(timeFormat, s) does, digit by digit when it has that exact
// shape: this runs on every request.
func parseAmzTime(s string) (time.Time, error) {
	if len(s) != len(timeFormat) || s[8] != 'T' || s[15] != 'Z' {
		return time.Parse(timeFormat, s)
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(4, 2), num(6, 2)
	hour, minute, second := num(9, 2), num(11, 2), num(13, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
		minute < 0 || minute > 59 || second < 0 || second > 59 {
		return time.Parse(timeFormat, s) // its error, or its reading of an odd date
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	if t.Day() != day { // 31 April, 29 February of a common year
		return time.Parse(timeFormat, s)
	}
	return t, nil
}

func (v *Verifier) checkSkew(t time.Time) error {
	d := v.now().Sub(t)
	if d > v.skew() || d < -v.skew() {
		return fmt.Errorf("%w: request time %s", ErrRequestTimeTooSkewed, t.UTC().Format(timeFormat))
	}
	return nil
}

// payloadHash validates x-amz-content-sha256: a 64-digit hex SHA-256 or
// one of the named forms. V4 header requests must send it (S3 requires
// it); presigned ones default to UNSIGNED-PAYLOAD.
func payloadHash(r *http.Request, presigned bool) (string, error) {
	h := r.Header.Get(headerContentSHA)
	switch h {
	case "":
		if presigned {
			return UnsignedPayload, nil
		}
		return "", malformed("missing x-amz-content-sha256")
	case UnsignedPayload, StreamingPayload, StreamingPayloadTrailer, StreamingUnsignedTrailer:
		if presigned && h != UnsignedPayload {
			return "", malformed("streaming payload in a presigned request")
		}
		return h, nil
	}
	if _, err := parseSignature(strings.ToLower(h)); err != nil {
		return "", malformed("x-amz-content-sha256 %q", h)
	}
	return strings.ToLower(h), nil
}

func (v *Verifier) verifyV4Header(r *http.Request, authz string) (*Auth, error) {
	a, err := ParseAuthorization(authz)
	if err != nil {
		return nil, err
	}
	t, err := requestTime(r)
	if err != nil {
		return nil, err
	}
	var day [len(dateFormat)]byte
	if string(t.UTC().AppendFormat(day[:0], dateFormat)) != a.Credential.Date {
		return nil, malformed("credential date %s is not the request date", a.Credential.Date)
	}
	if err := v.checkScope(a.Credential.Scope); err != nil {
		return nil, err
	}
	if err := v.checkSkew(t); err != nil {
		return nil, err
	}
	ph, err := payloadHash(r, false)
	if err != nil {
		return nil, err
	}
	secret, err := v.secret(a.Credential.AccessKey)
	if err != nil {
		return nil, err
	}
	key := v.signingKey(secret, a.Credential.Scope)
	if err := checkV4(r, key, t, a.Credential.Scope, a.SignedHeaders, ph, "", a.Signature); err != nil {
		return nil, err
	}
	auth := &Auth{
		Kind: V4Header, AccessKey: a.Credential.AccessKey, Scope: a.Credential.Scope,
		Time: t, Signature: a.Signature, PayloadHash: ph, signingKey: key, decodedLen: -1,
	}
	if s := r.Header.Get("X-Amz-Decoded-Content-Length"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, malformed("x-amz-decoded-content-length %q", s)
		}
		auth.decodedLen = n
	} else if ph == StreamingPayload || ph == StreamingPayloadTrailer {
		return nil, malformed("streaming upload without x-amz-decoded-content-length")
	}
	return auth, nil
}

// Body wraps the request body according to the payload mode: SHA-256
// checked at EOF, chunked decoding with signatures, or unchanged. The
// wrapped reader returns io.EOF only when the whole payload checked out.
func (a *Auth) Body(body io.Reader) (io.Reader, error) {
	switch a.PayloadHash {
	case "", UnsignedPayload:
		return body, nil
	case StreamingPayload, StreamingPayloadTrailer, StreamingUnsignedTrailer:
		return a.ChunkedReader(body), nil
	}
	return NewSHA256Reader(body, a.PayloadHash)
}

// ChunkedReader decodes an aws-chunked body with the signing state of a.
func (a *Auth) ChunkedReader(body io.Reader) *ChunkedReader {
	c := ChunkedConfig{DecodedLength: a.decodedLen}
	switch a.PayloadHash {
	case StreamingPayload:
		c.Signed = true
	case StreamingPayloadTrailer:
		c.Signed, c.Trailer = true, true
	case StreamingUnsignedTrailer:
		c.Trailer = true
	}
	if c.Signed {
		c.SigningKey, c.Scope, c.Time, c.SeedSignature = a.signingKey, a.Scope, a.Time, a.Signature
	}
	return NewChunkedReader(body, c)
}
