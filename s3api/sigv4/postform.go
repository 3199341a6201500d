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

// PostFormV2 holds the signature fields of a form upload signed with
// Signature Version 2, as older SDKs, boto3's generate_presigned_post
// with signature version "s3" and ceph's tests send them: signature is
// base64(HMAC-SHA1(secret key, policy)), the policy as sent (base64).
type PostFormV2 struct {
	Policy    string // the policy field, base64 as sent
	AccessKey string // AWSAccessKeyId
	Signature string // signature
}

// VerifyPostFormV2 checks a V2 form's policy signature. As with
// VerifyPostForm, the policy's expiration, which the caller checks, is
// the form's only clock.
func (v *Verifier) VerifyPostFormV2(f PostFormV2) (*Auth, error) {
	if f.AccessKey == "" || f.Signature == "" {
		return nil, fmt.Errorf("%w: a version 2 form needs AWSAccessKeyId and signature", ErrInvalidArgument)
	}
	secret, err := v.secret(f.AccessKey)
	if err != nil {
		return nil, err
	}
	if !equalSig(signV2(secret, f.Policy), f.Signature) {
		return nil, fmt.Errorf("%w: form policy", ErrSignatureMismatch)
	}
	return &Auth{Kind: V2PostForm, AccessKey: f.AccessKey, PayloadHash: UnsignedPayload, decodedLen: -1}, nil
}

// SignPostPolicyV2 is the client side of VerifyPostFormV2: the signature
// field of a base64 policy.
func SignPostPolicyV2(secret, policy string) string {
	return signV2(secret, policy)
}
