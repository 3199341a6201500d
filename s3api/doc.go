// Package s3api is the HTTP edge of xfs3: an S3-compatible http.Handler
// over a store.Store, made by New from a Config. It speaks S3 (path-style
// routing, SigV4 authentication, XML documents, S3 error codes) and the
// server's own endpoints under /minio/ (health probes, metrics, the admin
// API), and turns each request into calls of package store.
//
// The full list of operations, headers, refusals and limits, as a client
// sees them, is docs/s3-compatibility.md; the admin endpoints are in
// docs/operations.md; measurements in docs/benchmarks.md.
//
// # Request flow
//
//	connection ─► s3api/h1 (xfs3 serve's server): HTTP/1.1 framing,
//	   │       keep-alive, TLS; a small response leaves in one write
//	   ▼
//	request ─► middleware (request.go): request IDs (x-amz-request-id,
//	   │       x-amz-id-2); sigv4.Verifier on headers and URL only, so a
//	   │       bad signature never reaches the store; one log line and
//	   │       one metrics observation per request; CORS (cors.go):
//	   │       an OPTIONS preflight is answered here, unsigned, from the
//	   │       bucket's rules, and a request with an Origin gets its
//	   │       rule's headers before it is authenticated
//	   ├─► /minio/... ─► systemRouter (system.go): probes, metrics, admin
//	   ▼
//	router (router.go, a table, first match wins): operations chosen
//	   │       by a query parameter or header, then S3 subresources this
//	   │       server does not serve (501), then the plain operations
//	   ▼
//	operation: headerRules (semantics.go) refuse or check every header
//	   │       that changes S3 semantics; authorize (authorize.go) checks
//	   │       the signer's policies and the bucket's; only then is
//	   │       "Expect: 100-continue" answered and the handler run
//	   ▼
//	handler ─► body: sigv4 Auth.Body (payload hash, chunk signatures)
//	   │       ─► verifyingReader (checksum.go: Content-MD5,
//	   │          x-amz-checksum-*, trailers) ─► store, streamed
//	   ▼
//	errors.go: every error becomes one S3 code, status and XML body
//
// Bodies stream both ways: an upload is a reader handed to the store,
// which reads it in chunks; a download is a copy from the store's
// reader. Memory per request does not grow with the object.
//
// Errors are decided once, in errors.go. Handlers return either an
// s3Error (a code chosen at the edge, with a message) or an error of a
// lower layer; toS3Error maps the sentinel kinds of package store and
// package sigv4 (tested with errors.Is, the first match in the table
// wins) to S3 codes. Anything else is InternalError, logged with its
// cause. The codes and their HTTP statuses are one table (codes). Under
// /minio/ the same errors are sent as JSON {"Code", "Message"}, as
// MinIO's admin API sends them.
//
// # Invariants
//
//   - Nothing a request sends reaches outside its bucket. Paths are not
//     cleaned (this handler is the server's only one, so "a//b" and
//     "../x" reach the store as keys), and the store maps "", "." and
//     ".." components of keys and prefixes to reserved names inside the
//     bucket. Markers and continuation tokens are only compared, never
//     resolved; upload IDs are looked up in the bucket's own uploads.
//   - No header that changes S3 semantics is accepted and dropped. Each
//     is honoured by its handler or refused by headerRules before any
//     handler runs, so no operation can forget one; subresources the
//     server does not serve are 501, never read as the plain operation.
//     The exceptions known today are listed in docs/s3-compatibility.md,
//     "Known gaps".
//   - A failing request leaves nothing. A body is checked while it
//     streams (signature, payload hash, chunk signatures, checksums);
//     a mismatch is returned by the reader instead of io.EOF, so the
//     store abandons the write and removes what it staged. Conditions
//     (If-None-Match, If-Match) are checked before the body is read and
//     again by the store, atomically with the rename that places the
//     object.
//   - Every S3 request is authenticated before it reaches the store,
//     by the middleware. A browser form upload (POST /bucket, multipart
//     form data, no query) carries its signature in its body, as a
//     signed policy: the middleware lets exactly such requests through,
//     PostObject verifies the form before it calls the store, and every
//     other operation refuses a request without a verified signature.
//     CORS is the one read before authentication: a preflight (OPTIONS,
//     which browsers never sign) and the CORS headers of any request
//     come from the bucket's CORS rules, read through a cache; nothing
//     else of the store is reached.
//
// # The server's own endpoints
//
// Everything that is not S3 lives under /minio/ (system.go), as in
// MinIO, so probes and admin tools written for MinIO work unchanged; the
// bucket name "minio" is reserved (store.ReservedBucket). Health probes
// need no signature and are logged only when they fail. Admin requests
// are verified by a second Verifier that also accepts the empty region
// MinIO's admin client signs with. The documents and rules of the admin
// endpoints (bucket quotas, trim, info) belong to package admin, shared
// with the xfs3 command; this package only routes them.
//
// Metrics (metrics*.go) go to a registry of the server's own. Request
// series are the only ones kept on the request path: once a request's
// answer is done, the middleware makes one histogram observation and
// three counter adds on series its operation resolved on its first
// request (a status code's counter is found in a copy-on-write map read
// without a lock), allocating nothing. Every other series is read from
// the store when scraped. Config.Metrics says who may scrape.
//
// # Logging
//
// One zerolog event per request, at info level (error for
// InternalError): request_id, op, method, bucket, key, status, bytes_in,
// bytes_out, latency, remote, access_key, and error_code with the error
// when the request failed. With Config.LogSampleEvery N > 1 only one in
// N successful requests is logged; every failed one is. Panics are
// recovered, logged with their stack and answered with InternalError. An
// error after the response has started cannot change its status: it is
// only logged, and the client sees a short body.
//
// # Concurrency
//
// The handler is safe for any number of concurrent requests. Per-request
// state lives in a request value carried by the request's context. The
// server value is read-only after New, except for the log-sampling
// counter (atomic), the metrics series (read without a lock; a mutex
// only the first time an operation or a status code is seen) and the
// Verifiers' cache of signing keys (a short mutex). Handlers hold no
// lock of their own across store calls: ordering between requests
// (conditional writes, multipart completion, bucket deletion) is the
// store's.
//
// s3api imports only store, store/checksum, store/lifecycle, s3api/sigv4
// and s3api/admin from this module.
package s3api
