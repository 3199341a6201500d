package sigv4

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Presigned is a parsed V4 presigned query.
type Presigned struct {
	Credential    Credential
	Time          time.Time     // X-Amz-Date
	Expires       time.Duration // X-Amz-Expires, 1 s to 7 days
	SignedHeaders []string
	Signature     string
}

// presignKeys are the query parameters a V4 presigned URL must carry once.
var presignKeys = []string{
	"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date",
	"X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature",
}

// ParsePresigned parses the X-Amz-* parameters of a V4 presigned URL.
func ParsePresigned(q url.Values) (Presigned, error) {
	for _, k := range presignKeys {
		if len(q[k]) != 1 {
			return Presigned{}, malformed("query parameter %s must appear once", k)
		}
	}
	if q.Get("X-Amz-Algorithm") != Algorithm {
		return Presigned{}, malformed("X-Amz-Algorithm is not %s", Algorithm)
	}
	var p Presigned
	var err error
	if p.Credential, err = parseCredential(q.Get("X-Amz-Credential")); err != nil {
		return Presigned{}, err
	}
	if p.Time, err = time.Parse(timeFormat, q.Get("X-Amz-Date")); err != nil {
		return Presigned{}, malformed("X-Amz-Date %q", q.Get("X-Amz-Date"))
	}
	if p.Time.Format(dateFormat) != p.Credential.Date {
		return Presigned{}, malformed("credential date is not the X-Amz-Date day")
	}
	secs, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	switch {
	case err != nil:
		return Presigned{}, fmt.Errorf("%w: X-Amz-Expires should be a number", ErrExpiresRange)
	case secs < 1:
		return Presigned{}, fmt.Errorf("%w: X-Amz-Expires must be positive", ErrExpiresRange)
	case secs > int64(MaxPresignExpiry/time.Second):
		return Presigned{}, fmt.Errorf("%w: X-Amz-Expires must be less than a week (in seconds) that is %d", ErrExpiresRange, int64(MaxPresignExpiry/time.Second))
	}
	p.Expires = time.Duration(secs) * time.Second
	if p.SignedHeaders, err = parseSignedHeaders(q.Get("X-Amz-SignedHeaders")); err != nil {
		return Presigned{}, err
	}
	if p.Signature, err = parseSignature(q.Get("X-Amz-Signature")); err != nil {
		return Presigned{}, err
	}
	return p, nil
}

func (v *Verifier) verifyPresignedV4(r *http.Request) (*Auth, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, malformed("query: %v", err)
	}
	p, err := ParsePresigned(q)
	if err != nil {
		return nil, err
	}
	if err := v.checkScope(p.Credential.Scope); err != nil {
		return nil, err
	}
	now := v.now()
	if p.Time.Sub(now) > v.skew() {
		return nil, fmt.Errorf("%w: dated %s", ErrNotYetValid, p.Time.UTC().Format(timeFormat))
	}
	if !now.Before(p.Time.Add(p.Expires)) {
		return nil, fmt.Errorf("%w: expired at %s", ErrExpired, p.Time.Add(p.Expires).UTC().Format(timeFormat))
	}
	ph, err := payloadHash(r, true)
	if err != nil {
		return nil, err
	}
	secret, err := v.secret(p.Credential.AccessKey)
	if err != nil {
		return nil, err
	}
	key := v.signingKey(secret, p.Credential.Scope)
	if err := checkV4(r, key, p.Time, p.Credential.Scope, p.SignedHeaders, UnsignedPayload, "X-Amz-Signature", p.Signature); err != nil {
		return nil, err
	}
	return &Auth{
		Kind: V4Presigned, AccessKey: p.Credential.AccessKey, Scope: p.Credential.Scope,
		Time: p.Time, Signature: p.Signature, PayloadHash: ph, signingKey: key, decodedLen: -1,
	}, nil
}
