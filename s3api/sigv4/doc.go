// Package sigv4 authenticates S3 requests: AWS Signature Version 4 (in the
// Authorization header or a presigned query), its payload forms (signed
// SHA-256, UNSIGNED-PAYLOAD, aws-chunked streaming with per-chunk
// signatures and optionally a signed trailer, unsigned streaming with
// trailers), and the legacy Signature Version 2 (header and presigned).
//
// The package is pure: it reads an *http.Request and wraps an io.Reader,
// never writes a response, never touches storage, and reports failures as
// the sentinel errors in errors.go, which the S3 layer maps to S3 codes.
//
//	request ──► Verifier.Verify ─┬─ Authorization: AWS4-HMAC-SHA256 … ─► ParseAuthorization
//	                             ├─ ?X-Amz-Algorithm=AWS4-HMAC-SHA256 … ─► ParsePresigned (expiry)
//	                             ├─ Authorization: AWS AK:sig ──────────► V2 string to sign
//	                             ├─ ?AWSAccessKeyId=…&Signature=… ──────► V2 presigned (expiry)
//	                             └─ none ─────────────────────────────► ErrMissingAuth
//	  V4: clock skew ─► secret lookup ─► canonical request ─► string to sign
//	      ─► signing key (HMAC chain over date/region/service) ─► constant-time compare
//	                             │
//	                             ▼ *Auth (who, scope, seed signature, payload mode)
//	body ──► Auth.Body(r) ─┬─ hex SHA-256 ──────────► SHA256Reader   (ErrContentSHA256Mismatch at EOF)
//	                       ├─ UNSIGNED-PAYLOAD ─────► r unchanged
//	                       ├─ STREAMING-AWS4-…  ────► ChunkedReader  (chunk signatures chained from the seed)
//	                       └─ STREAMING-UNSIGNED-… ─► ChunkedReader  (no signatures; trailers after EOF)
//
// Readers deliver a chunk's bytes as they stream and check its signature
// when the chunk ends, so memory stays flat whatever the object size. A
// failed check is returned instead of io.EOF: consumers must commit what
// they read only after seeing io.EOF.
//
// Verifier.VerifyPostForm checks a browser form upload's signature: the HMAC of
// its base64 policy with the SigV4 signing key; VerifyPostFormV2 that of
// a form signed with V2, the base64 HMAC-SHA1 of the policy with the
// secret key. The policy's conditions are the S3 layer's to check.
//
// A V4 signature is checked against the region its credential scope
// names, whatever the server's own: a Verifier with an empty Region
// accepts any. V2 signatures name no region. V2 clients differ in the
// canonicalized resource they sign (v2.go); the verifier accepts each
// form S3 accepts.
//
// Sign is the client side, for xfs3's own admin client: it signs a
// request with the same canonical request the Verifier checks, over the
// headers MinIO's admin client signs.
package sigv4
