// Package s3api is the HTTP edge of xfs3: an S3-compatible http.Handler
// over a store.Store, made by New from a Config.
//
//	request ─► middleware (request.go): request IDs (x-amz-request-id,
//	   │       x-amz-id-2), sigv4.Verifier on headers and URL only, so a bad
//	   │       signature never reaches the store and "Expect: 100-continue"
//	   │       is never answered for it; one log line per request
//	   ▼
//	route table (router.go, gorilla/mux, first match wins): operations
//	   │       chosen by a query parameter or header, then unsupported
//	   │       subresources (501), then the plain operations
//	   ▼
//	handler ─► body: sigv4 Auth.Body (payload hash, chunk signatures)
//	   │       ─► verifyingReader (Content-MD5, x-amz-checksum-*, trailers;
//	   │          verifyChecksum for bodies whose checksum comes otherwise)
//	   │       ─► store, streamed; a mismatch is returned instead of io.EOF,
//	   ▼       so the store abandons the write
//	errors.go: every error becomes one S3 code, status and XML body
//
// # Addressing
//
// Path style only: http://host/bucket/key. Virtual-host style
// (bucket.host) is not recognised: such a request is read as path style.
// Paths are not cleaned: this handler is the server's only one (no mux in
// front of it redirects "a//b", "./" or "../"), so such keys reach the
// store, which stores every S3 key as sent ("a//b", "/lead", "x/../y",
// "..", components over 255 bytes, keys up to 1024 bytes, an object that
// is also a prefix, folder markers with content; see store/doc.go).
//
// Nothing a client sends can name anything outside the addressed bucket:
// the store maps "", "." and ".." components (of keys and of listing
// prefixes) to reserved names inside the bucket, markers and continuation
// tokens are only compared, never resolved, and upload IDs are looked up
// in an index of the bucket's own uploads.
//
// # The server's own endpoints: /minio/
//
// Everything that is not S3 lives under /minio/ (system.go), as in MinIO,
// so probes and admin tools written for MinIO work unchanged. The bucket
// name "minio" is reserved: CreateBucket refuses it (a PUT /minio is a
// /minio/ request, answered 404), and ListBuckets never shows it.
//
//	GET|HEAD /minio/health/live     200 while the process serves requests
//	GET|HEAD /minio/health/ready    200 while the volume accepts changes,
//	                                503 once a failed write shut it down
//	/minio/admin/v3/...             admin API: SigV4-signed by a configured
//	                                key, service s3, with or without a region
//	                                (mc signs with an empty one); answers and
//	                                errors are JSON {"Code": ..., "Message": ...}.
//	                                GET /minio/admin/v3/info (mc admin info) and
//	                                every endpoint not built yet: 501 NotImplemented
//	GET  /minio/admin/v3/xfs3/gc    the inode garbage collector's counters
//	GET  /minio/admin/v3/xfs3/info  the server at a glance (admin.Info; below)
//	GET  /minio/metrics/v3          Prometheus metrics (below)
//	POST, GET, DELETE /minio/admin/v3/xfs3/trim
//	                                trim: start, follow, cancel a pass (below)
//	/minio/admin/v3/set-bucket-quota, get-bucket-quota, xfs3/quota,
//	xfs3/quota/grace                bucket quotas (below)
//
// Probes need no signature and are logged only when they fail. Any other
// path under /minio/ is 404 XMinioUnknownAPIRequest, in JSON.
//
// # Bucket quotas
//
// Every bucket is an XFS project whose limits the engine enforces in the
// transaction of each write (package store); a write over a limit is 400
// XMinioAdminBucketQuotaExceeded ("Bucket quota exceeded", the code mc
// and minio-go know) and leaves nothing behind. The documents and rules
// are package admin's, shared with the xfs3 command. Byte limits are
// kept in whole filesystem blocks, rounded up, and answered so. Objects
// are counted as inodes: the bucket's directory, each object, each prefix
// directory and each upload in progress.
//
// MinIO's endpoints, as mc sends them (admin-wire.md):
//
//	PUT /minio/admin/v3/set-bucket-quota?bucket=B     mc quota set / clear
//	    {"quota":N,"size":N,"rate":0,"requests":0,"quotatype":"hard"}
//	    The limit is size when non-zero, else quota; it becomes the hard
//	    byte limit and the limits only xfs3 has (soft bytes, objects) stay.
//	    Both zero clears every limit of the bucket. 200, empty body.
//	    quotatype other than "hard" or empty, rate or requests other than
//	    0, a limit above 1 EiB, or a body that is not such a JSON object:
//	    400 XMinioAdminInvalidArgument. Unknown fields are ignored.
//	GET /minio/admin/v3/get-bucket-quota?bucket=B     mc quota info
//	    {"quota":N,"size":N,"rate":0,"requests":0,"quotatype":"hard"};
//	    404 XMinioAdminNoSuchQuotaConfiguration without a hard byte limit.
//
// xfs3's own, for what MinIO's lack (soft limits, object limits, grace
// periods, exact usage); their bodies refuse unknown fields:
//
//	GET /minio/admin/v3/xfs3/quota[?bucket=B]   the grace periods and every
//	    bucket (or the one named), by name:
//	    {"bytes_grace_seconds":604800,"objects_grace_seconds":604800,
//	     "buckets":[{"bucket":"photos","project":3,"bytes":4202496,"objects":3,
//	       "hard_bytes":8388608,"soft_bytes":4194304,"hard_objects":0,"soft_objects":0,
//	       "bytes_grace_ends":"2026-12-08T18:00:00Z"}]}
//	    bytes and objects are the usage the engine charges; a limit of 0 is
//	    none; *_grace_ends (RFC 3339, absent when none runs) is when a passed
//	    soft limit starts refusing writes; project is the XFS project ID
//	    (xfs_quota and xfs_db show the same numbers).
//	PUT /minio/admin/v3/xfs3/quota?bucket=B     change some limits:
//	    {"hard_bytes":N,"soft_bytes":N,"hard_objects":N,"soft_objects":N}
//	    An absent field keeps its limit, 0 removes it. Answers the bucket's
//	    entry as GET shows it.
//	PUT /minio/admin/v3/xfs3/quota/grace        how long a soft limit may be
//	    passed: {"bytes_grace_seconds":N,"objects_grace_seconds":N}, 1 to
//	    2^32-1 seconds; absent or 0 keeps one (the default is 7 days, as
//	    the kernel's). Grace periods are the volume's, for every bucket.
//	    Answers both.
//
// Errors: no ?bucket= where one is needed, or a bad body: 400
// XMinioAdminInvalidArgument; a bucket that does not exist: 404
// NoSuchBucket; an invalid bucket name: 400 InvalidBucketName; a body
// that does not match X-Amz-Content-Sha256: 400 XAmzContentSHA256Mismatch.
//
// # Metrics and the info document (metrics*.go)
//
// GET /minio/metrics/v3 is the Prometheus text exposition of a registry of
// the server's own (never the global one). Request series are kept on the
// request path: the middleware, once a request's answer is done, makes
// one histogram observation and three counter adds on series its
// operation resolved on its first request (labels op and status; a
// status code's counter is found in a copy-on-write map read without a
// lock), allocating nothing. Requests refused before an operation is
// chosen count as op "Unknown". Every other series is read when scraped
// (storeCollector): store.GCStats, the trimmer's status, store.VolumeStats
// (statfs, log counters and space, buffer cache), store.BucketQuotas;
// gc's first, since reading the volume's space drains its queues. A
// series that cannot be read makes the scrape report it and go on.
//
// Access (Config.Metrics): MetricsRoot (the default) takes the bearer
// token admin.MetricsToken of a configured key ("Authorization: Bearer
// AK:HEX", compared in constant time) or a request signed as admin
// requests are; a bad one is 403 AccessDenied in JSON. MetricsPublic
// takes anything; MetricsOff keeps no series and answers 404.
//
// GET /minio/admin/v3/xfs3/info answers admin.Info (the README shows
// it): Config.Version, start and uptime, durability, whether the volume
// is writable, geometry and usage, gc mode and backlog, trim schedule with
// the current and last pass, and every bucket with its creation time and
// quota entry.
//
// Measured on 2 cores shared with other work (load average 10-17):
// BenchmarkMetricsObserve, the whole per-request cost, 133-209 ns and 0
// allocations from 1, 2 and 8 goroutines on one series; a 4 KiB PUT
// through the handler (BenchmarkPut4KMetricsRequest) takes about 6 ms
// and 1,394-1,396 allocations, on and off alike. BenchmarkPut4KMetricsRatio
// (4 KiB PUTs over loopback, rounds alternating between the sides over
// one store), on/off of the PUT rate in four runs durable on
// acknowledgement: 0.900, 1.037, 0.852, 0.882 at 8 clients and 0.919,
// 0.960, 1.080, 1.025 at 32; in two runs durable within 1 s: 1.058,
// 0.997 at 8 and 0.909, 0.938 at 32. Single pairs of rounds range from
// 0.55 to 2.3 and CPU per PUT (1-2 ms, client included) differs by up to
// 7% either way. The control (XFS3_METRICS_BENCH_CONTROL=1: metrics off
// on both sides) gave 0.917 and 1.120 (on-ack), 0.998 and 1.057
// (within 1 s) with the same spread: under that load the noise is
// hundreds of times the metrics' 0.2 us in a request of 1 ms of CPU, and
// these runs cannot show the 0.98 target either way; what the parts add
// up to is a cost below 0.1%.
//
// # Trim
//
// Space freed by deletes is given back to the storage under the volume
// (holes punched in a volume file, BLKDISCARD on a block device) by
// passes over the free-space trees: periodic ones (trim_interval) and
// passes on demand. The scheduler is package gc's, the documents package
// admin's, shared with 'xfs3 trim'. Every answer is the status document
// ("last" is the last pass that ended, "last_on_demand" the last one
// started on demand, which periodic passes do not hide):
//
//	{"current":{PASS},"last":{PASS},"last_on_demand":{PASS},"counters":{
//	   "interval_seconds":60,"pass_bytes":4294967296,"passes":12,
//	   "on_demand":1,"canceled":0,"failed":0,"examined_bytes":N,
//	   "discarded_bytes":N,"discarded_extents":N,"batches":N,"errors":0,
//	   "lock_hold_max_us":N,"lock_hold_p99_us":N,"backoffs":N,
//	   "backoff_us":N,"unsupported":false,"backlog_bytes":N}}
//	PASS = {"id":3,"scheduled":false,"request":{"offset":0,"length":0,"minlen":0},
//	   "started":"2026-12-01T18:00:00Z","ended":"...","running":false,
//	   "canceled":false,"error":"...","ag":2,"offset":N,"from":N,"to":N,
//	   "examined_bytes":N,"examined_extents":N,"busy_bytes":N,"short_bytes":N,
//	   "discarded_bytes":N,"discarded_extents":N,"requests":N,"errors":0,
//	   "first_error":"...","unsupported":false,"batches":N,
//	   "lock_hold_max_us":N,"lock_hold_p99_us":N,"elapsed_us":N,
//	   "backoffs":N,"backoff_us":N,"next":N}
//
// current is the pass under way (absent when none), last the one that
// ended last; ended, error and first_error are absent when empty. Bytes
// are bytes of the volume; offset/next is where the walk is or stopped;
// lock_hold_* is how long a batch held an AG's free-space lock (a
// scheduled pass makes one engine pass per AG: its p99 is the largest of
// theirs); backoffs count the pauses for foreground writes;
// backlog_bytes is what was freed since last trimmed (an upper bound).
//
//	POST   /minio/admin/v3/xfs3/trim   start a pass on demand; body
//	    optional: {"offset":N,"length":N,"minlen":N} (bytes; length 0: to
//	    the end; unknown fields refused). It cancels a periodic pass under
//	    way (which resumes at the next interval) and answers once its first
//	    batch is done. 409 XFS3TrimRunning while another pass on demand
//	    runs; 501 XFS3TrimUnsupported when the storage cannot discard; 400
//	    XMinioAdminInvalidArgument for a range outside the volume or a bad
//	    body.
//	GET    /minio/admin/v3/xfs3/trim   progress and counters
//	DELETE /minio/admin/v3/xfs3/trim   cancel the pass under way (none: a
//	    no-op); it stops after its current batch ("canceled":true).
//
// # Operations
//
//	GET    /                                  ListBuckets (prefix, max-buckets 1..10000,
//	                                          continuation-token, bucket-region: see below)
//	PUT    /b                                 CreateBucket (a CreateBucketConfiguration
//	                                          body is accepted; its LocationConstraint ignored);
//	                                          200 for a bucket you own in us-east-1
//	HEAD   /b                                 HeadBucket
//	DELETE /b                                 DeleteBucket (aborts uploads in progress)
//	GET    /b?location                        GetBucketLocation (empty for us-east-1)
//	GET    /b?versioning                      GetBucketVersioning (never enabled)
//	GET    /b?acl, /b/k?acl                   canned ACL: the owner has FULL_CONTROL
//	PUT    /b?acl, /b/k?acl                   Put{Bucket,Object}Acl: accepted when it changes
//	                                          nothing (acl.go), else AccessControlListNotSupported
//	GET|PUT|DELETE /b?tagging                 Get/Put/DeleteBucketTagging (up to 50 tags;
//	                                          GET of none: 404 NoSuchTagSet; PUT answers 204)
//	POST   /b (multipart/form-data)           PostObject: a browser form upload (below)
//	GET    /b                                 ListObjects (v1)
//	GET    /b?list-type=2                     ListObjectsV2
//	GET    /b?versions                        ListObjectVersions (every object once, "null")
//	GET    /b?uploads                         ListMultipartUploads
//	POST   /b?delete                          DeleteObjects (1 to 1000 keys, Quiet)
//	PUT    /b/k                               PutObject (If-None-Match: *, If-Match: below)
//	PUT    /b/k + x-amz-copy-source           CopyObject
//	GET    /b/k, HEAD /b/k                    GetObject, HeadObject (?partNumber=N: one
//	                                          part of a multipart object, see below)
//	DELETE /b/k                               DeleteObject
//	POST   /b/k?uploads                       CreateMultipartUpload
//	PUT    /b/k?partNumber&uploadId           UploadPart (UploadPartCopy with
//	                                          x-amz-copy-source[-range])
//	POST   /b/k?uploadId                      CompleteMultipartUpload
//	DELETE /b/k?uploadId                      AbortMultipartUpload
//	GET    /b/k?uploadId                      ListParts
//	GET|PUT|DELETE /b/k?tagging               Get/Put/DeleteObjectTagging
//	GET    /b/k?attributes                    GetObjectAttributes
//
// Any other subresource (policy, lifecycle, cors, versioning writes,
// object lock, website, notification, replication, select, restore, ...) is 501
// NotImplemented; other methods are 405 MethodNotAllowed.
//
// # Browser form uploads (postform.go, policy.go)
//
// POST /b with a multipart/form-data body and no query is authenticated by
// the form, not the request: the middleware lets exactly such requests
// through unverified, and every operation but PostObject refuses a request
// without a signature. The fields come first, the "file" field last;
// fields after it are not read. Field names are matched without case.
//   - Signature: x-amz-algorithm AWS4-HMAC-SHA256, x-amz-credential,
//     x-amz-date (its day must be the credential's) and x-amz-signature =
//     hex HMAC of the base64 policy with the SigV4 signing key
//     (sigv4.VerifyPostForm). No clock-skew check: the policy's expiration
//     bounds the form. A form without a policy is anonymous: 403
//     AccessDenied. SigV2 forms (AWSAccessKeyId): 501.
//   - Policy: {"expiration": ISO 8601 UTC, "conditions": [...]}, each
//     condition {"field": "value"} (exact), ["eq", "$field", "value"],
//     ["starts-with", "$field", "prefix"] ("" allows any value; for
//     Content-Type each comma-separated type must match) or
//     ["content-length-range", min, max]. $key is matched after
//     ${filename} is replaced by the file's name; $bucket is the addressed
//     bucket. Every field but policy, x-amz-signature, file and x-ignore-*
//     must be named by a condition (S3's rule). A policy that is not such a
//     document: 400 InvalidPolicyDocument; expired, a failed condition or
//     an unnamed field: 403 AccessDenied "Invalid according to Policy: ..."
//     naming it.
//   - Object: key (with ${filename}), the standard content fields
//     (Content-Type; without one, the file part's own type), x-amz-meta-*,
//     acl, x-amz-storage-class, tagging (a Tagging XML document),
//     Content-MD5 and x-amz-checksum-* (x-amz-checksum-algorithm names the
//     one to compute) go through the same header rules, metadata and
//     verification as PutObject.
//   - Bounds: each field at most 64 KiB, all fields before the file 1 MiB,
//     at most 1000 of them (400 MaxPostPreDataLengthExceededError); a body
//     that is not multipart/form-data: 400 MalformedPOSTRequest; no file or
//     no key: 400 InvalidArgument. The file streams to the store; past
//     content-length-range's max it is 400 EntityTooLarge, short of its
//     min 400 EntityTooSmall, and nothing is stored.
//   - Answer: success_action_redirect (or redirect), when an http(s) URL:
//     303 to it with bucket, key and etag added to its query; else
//     success_action_status 200 (empty), 201 (a PostResponse document with
//     Location, Bucket, Key, ETag) or 204 (the default, also for any other
//     value). ETag and Location headers always.
//
// # Conditional writes (condwrite.go)
//
// PutObject and CompleteMultipartUpload take If-None-Match: * (only when
// no object has the key) and If-Match: "etag" (only when the object has
// that ETag; without an object, 404 NoSuchKey). The condition is checked
// before the body is read (failing: 412 PreconditionFailed, nothing read)
// and again by the store under its namespace lock, in the step that
// renames the new object into place. Failing only there means a
// concurrent write got in while this one streamed: 409
// ConditionalRequestConflict (S3's answer to a conflicting operation
// during the upload); of racing If-None-Match writers exactly one wins. A
// completion refused up front keeps its upload; one refused at the rename
// has consumed its parts, as S3's 409 tells the client to upload again.
// If-None-Match with an ETag is 501, as in S3; conditional CopyObject and
// CreateMultipartUpload are 501.
//
// # Semantics worth knowing
//
//   - Authentication: SigV4 (header, presigned, aws-chunked with and without
//     trailers) and SigV2 (header, presigned), by sigv4.Verifier. Presigned
//     URLs: X-Amz-Expires outside 1..604800 or not a number is 400
//     AuthorizationQueryParametersError; at or past X-Amz-Date + expires,
//     403 AccessDenied "Request has expired"; dated more than 15 minutes
//     ahead of the server, 403 AccessDenied "Request is not yet valid". The region
//     in an S3 request's credential scope must be present but is not
//     checked against ours: there is one region. Admin requests may leave
//     it empty, as mc does. Anonymous
//     requests get AccessDenied.
//   - GET/HEAD: one byte range (bytes=a-b, a-, -n) gives 206; a syntax S3
//     ignores (several ranges, another unit, last before first) gives the
//     whole object; an unsatisfiable one 416 InvalidRange with Content-Range
//     "bytes */size". Preconditions follow RFC 7232 section 6 (If-Match, else
//     If-Unmodified-Since; then If-None-Match, else If-Modified-Since); 304
//     carries ETag and Last-Modified. response-* parameters override the
//     stored headers. Objects stored without a Content-Type are served as
//     binary/octet-stream.
//   - Checksums (checksum.go; algorithms and multipart math in
//     store/checksum): Content-MD5 (BadDigest; InvalidDigest when
//     malformed) and one of x-amz-checksum-crc32, -crc32c, -crc64nvme,
//     -sha1, -sha256 (base64 of the big-endian digest), sent as a header
//     or an aws-chunked trailer (x-amz-trailer; signed or unsigned
//     streaming), or only named by x-amz-sdk-checksum-algorithm, are
//     computed while streaming and checked at the end of the body of
//     PutObject, UploadPart and XML request bodies. A mismatch is 400
//     BadDigest ("The CRC32 you specified did not match the calculated
//     checksum.") and nothing is stored. 400 InvalidRequest, before the
//     body is read: a value that is not the base64 of a digest of the
//     algorithm's size, an x-amz-checksum-<name> header or trailer of no
//     algorithm, two checksums, an unknown algorithm name, a missing or
//     malformed trailer value at the end. The checksum is stored and sent
//     back on the upload's response, and on GET and HEAD of the whole
//     object (not a range) with x-amz-checksum-mode: ENABLED, with
//     x-amz-checksum-type (FULL_OBJECT for a PUT). Objects put without a
//     checksum get none: S3 now adds a CRC64NVME to such objects; this
//     server does not, to keep PUTs at disk speed.
//   - Multipart checksums: CreateMultipartUpload takes
//     x-amz-checksum-algorithm and x-amz-checksum-type (default COMPOSITE,
//     FULL_OBJECT for CRC64NVME) and answers both; FULL_OBJECT with SHA1 or
//     SHA256, COMPOSITE with CRC64NVME, a type without an algorithm or an
//     unknown one are 400 InvalidRequest. Parts must then carry that
//     algorithm's checksum (another one: InvalidRequest "Checksum Type
//     mismatch occurred"); a part that brings none, and every
//     UploadPartCopy, gets it computed here. Parts of an upload without an
//     algorithm may carry any checksum (SDKs send CRC32 by default): it is
//     verified and listed, and the object gets none. Complete checks each
//     part checksum its list gives against the stored one (InvalidPart),
//     needs every part's for a COMPOSITE checksum (InvalidRequest, as S3),
//     computes the object's (COMPOSITE: base64(H(digest 1 ‖ … ‖ digest
//     N)) + "-N"; FULL_OBJECT: the CRCs of the parts combined with their
//     sizes, x^(8·len) mod P, no byte read again), checks an
//     x-amz-checksum-<algorithm> the request sends (with or without "-N";
//     BadDigest) and an x-amz-checksum-type (InvalidRequest if it is not
//     the upload's), and answers ChecksumX and ChecksumType. ListParts
//     shows each part's checksum and the upload's ChecksumAlgorithm and
//     ChecksumType.
//   - CopyObject keeps the source's checksum, unless
//     x-amz-checksum-algorithm names one (computed while copying) or the
//     source's is COMPOSITE (it describes parts the copy does not have:
//     the copy gets a FULL_OBJECT checksum of the same algorithm);
//     CopyObjectResult and CopyPartResult carry the checksum.
//   - GetObjectAttributes (GET /b/k?attributes): x-amz-object-attributes
//     lists ETag, Checksum, ObjectParts, StorageClass, ObjectSize (one
//     header or several, comma-separated; missing, empty or another name:
//     400 InvalidArgument); ObjectParts pages with x-amz-max-parts (1 to
//     1000, default 1000) and x-amz-part-number-marker, and is sent for
//     multipart objects only, with each part's size and checksum (the
//     numbers, sizes, ETags and checksums of the parts are kept on the
//     object at completion). The ETag is unquoted and a composite checksum
//     has no "-N", as S3 answers; Last-Modified is a header.
//   - A full volume is 507 InsufficientStorage (not an AWS code), and the
//     write leaves nothing.
//   - ListObjects: v1 sends NextMarker only with a delimiter; v2's
//     continuation token is the base64 of the last key or prefix of the page;
//     max-keys above 1000 is 1000, 0 gives an empty page; encoding-type=url
//     escapes keys, prefixes, delimiter and markers (space as '+', '/'
//     kept). Owner is in every v1 entry, and in v2 with fetch-owner=true.
//   - Copies: x-amz-copy-source is URL-encoded; its ?versionId follows the
//     version rule below.
//     x-amz-metadata-directive and x-amz-tagging-directive default to COPY;
//     copying an object onto itself needs a REPLACE. The copy-source
//     preconditions all fail with 412.
//   - Versions: buckets are never versioned, so every object's version ID
//     is "null". ListObjectVersions lists each object once (VersionId
//     null, IsLatest true, no delete markers) through the ListObjects
//     walk, with prefix, delimiter, max-keys and encoding-type as there;
//     key-marker starts after that key (its one version); version-id-marker
//     may be empty or "null", needs a key marker (else 400
//     InvalidArgument), and any other value names no version this server
//     made: 400 InvalidArgument "Invalid version id specified" (S3's answer
//     for a marker it cannot resolve). A truncated page sends NextKeyMarker
//     and, when it ends on an object, NextVersionIdMarker "null"; one that
//     ends on a common prefix sends no version marker (the next page
//     starts after the prefix). versionId=null names the object on GetObject, HeadObject,
//     DeleteObject, the object tagging operations, GetObjectAcl, copy
//     sources and DeleteObjects entries; any other ID is 404 NoSuchVersion
//     (400 InvalidArgument when empty, over 1024 bytes, or holding other
//     than letters, digits and "._-+=/"), and nothing is read or deleted.
//   - Buckets: CreateBucket of a bucket that exists answers 200 when the
//     server's region is us-east-1 (S3's legacy behaviour there: one owner
//     owns every bucket) and 409 BucketAlreadyOwnedByYou in any other
//     region. DeleteBucket of a bucket holding only uploads in progress
//     aborts them and succeeds; with an object it is 409 BucketNotEmpty.
//     ListBuckets returns every bucket without max-buckets; with it, pages
//     of that many (1 to 10000, else 400 InvalidArgument), a
//     ContinuationToken (the base64 of the page's last name) when more
//     follow, prefix filtering and echoed, and each bucket's BucketRegion;
//     bucket-region other than the server's region lists none.
//   - Multipart: CompleteMultipartUpload sent again after it succeeded
//     (same upload ID, same part numbers and ETags) answers 200 with the
//     same document, as long as the object at the key is still the one
//     that upload made; otherwise 404 NoSuchUpload. GET/HEAD ?partNumber=N
//     of a multipart object serves part N (the number it was completed
//     with; S3 keeps those numbers, so a gap names no part) with 206,
//     Content-Range and x-amz-mp-parts-count (the number of parts); an
//     object stored whole is part 1 (206, no count header); a part the
//     object lacks is 416 InvalidPartNumber; an empty part answers 200
//     with no bytes (no Content-Range can name none). Checksum headers are
//     sent only for whole objects. partNumber with Range is 400
//     InvalidRequest.
//   - XML request bodies are read through the signature check, verified
//     against Content-MD5 when sent, and bounded (2 MiB; 64 KiB for Tagging).
//   - Errors: Code, Message, Resource, RequestId and HostId (plus Key or
//     BucketName where S3 sends them); HEAD errors have no body. Keys are
//     1 to 1024 bytes of UTF-8 (else KeyTooLongError or InvalidArgument);
//     any other key is stored, control characters and NUL included (XML
//     cannot carry those: listings show them only with encoding-type=url,
//     as in S3). A name on the volume that is neither file nor directory
//     (made by other tools) where the store needs one gives
//     InvalidArgument. Errors the edge does not know are InternalError and
//     logged.
//   - Objects are streamed both ways: upload bodies are readers handed to the
//     store, downloads are io.Copy from the store's reader.
//
// # Headers that change S3 semantics
//
// Each is honoured or refused, never dropped; semantics.go checks them
// before any handler runs, so no operation can forget one:
//
//	x-amz-bucket-object-lock-enabled: true   501: object lock is not supported; no bucket is made
//	x-amz-object-lock-mode, -retain-until-date, -legal-hold
//	                                         501 on PUT, copy, CreateMultipartUpload
//	x-amz-server-side-encryption (any value, AES256 too: objects are stored
//	unencrypted), -aws-kms-key-id, -context, -bucket-key-enabled,
//	-customer-* (SSE-C, also on GET/HEAD/UploadPart), x-amz-copy-source-
//	server-side-encryption-customer-*        501
//	x-amz-website-redirect-location          501
//	If-Match, If-None-Match on copy, CreateMultipartUpload
//	                                         501 (PUT and Complete honour them)
//	x-amz-write-offset-bytes                 501 (appends)
//	x-amz-mfa on DeleteObject(s)             501 (MFA delete)
//	x-amz-checksum-type                      COMPOSITE or FULL_OBJECT on
//	                                         CreateMultipartUpload and Complete
//	                                         (see Multipart checksums); else 400
//	                                         InvalidRequest
//	x-amz-acl (PUT, copy, CreateMultipart-   private, bucket-owner-full-control accepted
//	Upload, CreateBucket, PUT ?acl, form     (buckets are "bucket owner enforced": ACLs
//	field acl)                               disabled); other canned ACLs 400
//	                                         AccessControlListNotSupported; unknown 400
//	                                         InvalidArgument
//	x-amz-grant-*                            400 AccessControlListNotSupported
//	x-amz-object-ownership                   BucketOwnerEnforced accepted; the others 501
//	x-amz-storage-class                      every S3 class accepted and stored
//	                                         (user.xfs3.storage-class), sent back as
//	                                         x-amz-storage-class on GET/HEAD (not for
//	                                         STANDARD, as S3) and as StorageClass in
//	                                         listings and uploads; a copy takes the
//	                                         request's class (default STANDARD), and a
//	                                         copy onto itself may change only it. All
//	                                         classes are stored alike and stay readable
//	                                         (no restore needed). Anything else 400
//	                                         InvalidStorageClass
//	x-amz-expected-bucket-owner,             must equal the requester's owner ID (the ID
//	x-amz-source-expected-bucket-owner       in ListBuckets' Owner), else 403 AccessDenied
//	x-amz-request-payer                      accepted: no bucket is requester-pays, so the
//	                                         acknowledgement changes nothing
//	CreateBucketConfiguration                LocationConstraint may name the server's
//	                                         region; any other is 400
//	                                         IllegalLocationConstraintException
//
// Honoured by their handlers: Content-MD5 and the checksum headers,
// x-amz-meta-*, the standard content headers, x-amz-tagging and the
// metadata and tagging directives, conditional reads, copy-source
// conditions and ranges, response-* overrides, x-amz-checksum-algorithm
// (multipart, copies), x-amz-checksum-mode.
//
// # Logging
//
// One zerolog event per request at info level (error level for
// InternalError): request_id, op, method, bucket, key, status, bytes_in,
// bytes_out, latency, remote, access_key, and error_code with the error
// when the request failed. The logger's level decides what is written;
// with Config.LogSampleEvery N > 1 only one in N successful requests is
// logged (a shared counter), every failed one is. Panics are recovered,
// logged with their stack and answered with InternalError.
//
// s3api imports only store, s3api/sigv4 and s3api/admin from this module.
package s3api
