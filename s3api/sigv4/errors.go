package sigv4

import "errors"

// Error kinds. Every error returned by this package wraps exactly one of
// them; the S3 layer chooses the S3 code with errors.Is.
var (
	// ErrMissingAuth: the request carries no signature at all (anonymous).
	ErrMissingAuth = errors.New("sigv4: request is not signed")
	// ErrMalformed: the Authorization header, the presigned query or a
	// chunked body cannot be parsed, or names an unsupported algorithm.
	ErrMalformed = errors.New("sigv4: malformed authentication")
	// ErrInvalidAccessKey: the access key is unknown.
	ErrInvalidAccessKey = errors.New("sigv4: unknown access key")
	// ErrSignatureMismatch: the signature of the request or of a chunk
	// does not match the one computed with the stored secret.
	ErrSignatureMismatch = errors.New("sigv4: signature does not match")
	// ErrRequestTimeTooSkewed: the request time is too far from the clock.
	ErrRequestTimeTooSkewed = errors.New("sigv4: request time too skewed")
	// ErrExpired: a presigned request is past its expiry.
	ErrExpired = errors.New("sigv4: request has expired")
	// ErrNotYetValid: a presigned request is dated further in the future
	// than the allowed clock skew.
	ErrNotYetValid = errors.New("sigv4: request is not yet valid")
	// ErrExpiresRange: X-Amz-Expires of a presigned URL is not a number
	// of seconds from 1 to 604800 (seven days).
	ErrExpiresRange = errors.New("sigv4: X-Amz-Expires out of range")
	// ErrContentSHA256Mismatch: the body's SHA-256 differs from the one in
	// x-amz-content-sha256.
	ErrContentSHA256Mismatch = errors.New("sigv4: content sha256 mismatch")
	// ErrIncompleteBody: the body ended before its declared length or
	// before the final chunk.
	ErrIncompleteBody = errors.New("sigv4: incomplete body")
	// ErrInvalidArgument: authentication S3 refuses as an invalid
	// argument rather than a malformed header: a V2 Authorization that
	// is not "AWS AK:signature", a request with both an Authorization
	// header and a presigned query, a V2 form without its access key or
	// signature.
	ErrInvalidArgument = errors.New("sigv4: invalid authentication argument")
	// ErrInvalidDate: a signed request with no Date or x-amz-date header,
	// or one that does not parse (V2: or falls before 1970).
	ErrInvalidDate = errors.New("sigv4: no valid date")
	// ErrInvalidExpires: a V2 presigned URL whose Expires is not a
	// number of seconds since 1970.
	ErrInvalidExpires = errors.New("sigv4: Expires is not seconds since the epoch")
	// ErrIncompleteQuery: a V2 presigned URL without one of
	// AWSAccessKeyId, Expires and Signature.
	ErrIncompleteQuery = errors.New("sigv4: incomplete presigned query")
)
