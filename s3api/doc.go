// Package s3api is the HTTP edge of xfs3: an S3-compatible handler over a
// store.Store.
//
//	request ─► middleware: request IDs, sigv4.Verifier (headers only, body
//	   │       untouched, so a bad signature never reaches the store and
//	   │       "Expect: 100-continue" is never answered for it), log line
//	   ▼
//	gorilla/mux route table (router.go; first match wins: operations chosen
//	   │       by a query parameter or header first, then unsupported
//	   │       subresources → 501, then the plain operations)
//	   ▼
//	handler ─► body: signature check (sigv4 Auth.Body) ─► checksums
//	   │       (Content-MD5, x-amz-checksum-*, trailers) ─► store, streamed;
//	   │       a mismatch ends the body with an error, so the store abandons
//	   ▼       the write
//	errors.go: every error becomes one S3 code, status and XML body there
//
// Work in progress; see the commit log for what is supported.
package s3api
