package sigv4

import (
	"fmt"
	"strings"
	"time"
)

// PostForm holds the signature fields of a browser form upload (S3's POST
// Object) signed with Signature Version 4. The form signs its policy
// document, not a canonical request: x-amz-signature is
// hex(HMAC(signing key, policy)), the policy as sent (base64).
type PostForm struct {
	Policy     string // the policy field, base64 as sent
	Algorithm  string // x-amz-algorithm
	Credential string // x-amz-credential
	Date       string // x-amz-date
	Signature  string // x-amz-signature
}

// VerifyPostForm checks a form's policy signature. There is no clock skew
// check: the policy's own expiration bounds the form's life, and the
// caller checks it. The returned Auth has no body to verify (the form
// body is not signed).
func (v *Verifier) VerifyPostForm(f PostForm) (*Auth, error) {
	if f.Algorithm != Algorithm {
		return nil, malformed("x-amz-algorithm %q is not %s", f.Algorithm, Algorithm)
	}
	c, err := parseCredential(f.Credential)
	if err != nil {
		return nil, err
	}
	if err := v.checkScope(c.Scope); err != nil {
		return nil, err
	}
	t, err := time.Parse(timeFormat, f.Date)
	if err != nil {
		return nil, malformed("x-amz-date %q", f.Date)
	}
	if t.Format(dateFormat) != c.Date {
		return nil, malformed("credential date is not the x-amz-date day")
	}
	sig, err := parseSignature(strings.ToLower(f.Signature))
	if err != nil {
		return nil, err
	}
	secret, err := v.secret(c.AccessKey)
	if err != nil {
		return nil, err
	}
	key := v.signingKey(secret, c.Scope)
	if !equalSig(sign(key, f.Policy), sig) {
		return nil, fmt.Errorf("%w: form policy", ErrSignatureMismatch)
	}
	return &Auth{Kind: V4PostForm, AccessKey: c.AccessKey, Scope: c.Scope, Time: t, Signature: sig,
		PayloadHash: UnsignedPayload, signingKey: key, decodedLen: -1}, nil
}

// SignPostPolicy is the client side of VerifyPostForm: the
// x-amz-signature of a base64 policy.
func SignPostPolicy(secret string, scope Scope, policy string) string {
	return sign(SigningKey(secret, scope), policy)
}
