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
//	   │       ─► verifyingReader (Content-MD5, x-amz-checksum-*, trailers)
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
// # Trim
//
// Space freed by deletes is given back to the storage under the volume
// (holes punched in a volume file, BLKDISCARD on a block device) by
// passes over the free-space trees: periodic ones (trim_interval) and
// passes on demand. The scheduler is package gc's, the documents package
// admin's, shared with 'xfs3 trim'. Every answer is the status document:
//
//	{"current":{PASS},"last":{PASS},"counters":{
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
//	GET    /                                  ListBuckets
//	PUT    /b                                 CreateBucket (a CreateBucketConfiguration
//	                                          body is accepted; its LocationConstraint ignored)
//	HEAD   /b                                 HeadBucket
//	DELETE /b                                 DeleteBucket
//	GET    /b?location                        GetBucketLocation (empty for us-east-1)
//	GET    /b?versioning                      GetBucketVersioning (never enabled)
//	GET    /b?acl, /b/k?acl                   canned ACL: the owner has FULL_CONTROL
//	GET    /b                                 ListObjects (v1)
//	GET    /b?list-type=2                     ListObjectsV2
//	GET    /b?uploads                         ListMultipartUploads
//	POST   /b?delete                          DeleteObjects (1 to 1000 keys, Quiet)
//	PUT    /b/k                               PutObject
//	PUT    /b/k + x-amz-copy-source           CopyObject
//	GET    /b/k, HEAD /b/k                    GetObject, HeadObject (?partNumber=1 is the
//	                                          whole object: part boundaries are not kept)
//	DELETE /b/k                               DeleteObject
//	POST   /b/k?uploads                       CreateMultipartUpload
//	PUT    /b/k?partNumber&uploadId           UploadPart (UploadPartCopy with
//	                                          x-amz-copy-source[-range])
//	POST   /b/k?uploadId                      CompleteMultipartUpload
//	DELETE /b/k?uploadId                      AbortMultipartUpload
//	GET    /b/k?uploadId                      ListParts
//	GET|PUT|DELETE /b/k?tagging               Get/Put/DeleteObjectTagging
//
// Any other subresource (acl writes, policy, lifecycle, cors, versions,
// object lock, bucket tagging, website, notification, replication, select,
// restore, ...) is 501 NotImplemented; other methods are
// 405 MethodNotAllowed. POST form uploads are not supported.
//
// # Semantics worth knowing
//
//   - Authentication: SigV4 (header, presigned, aws-chunked with and without
//     trailers) and SigV2 (header, presigned), by sigv4.Verifier. The region
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
//   - Checksums: Content-MD5 (BadDigest; InvalidDigest when malformed) and
//     x-amz-checksum-crc32, -crc32c, -sha1, -sha256, -crc64nvme, sent as a
//     header or an aws-chunked trailer, or named by
//     x-amz-sdk-checksum-algorithm, are computed while streaming and checked
//     at the end. Checksums sent as headers or trailers, and those only
//     named by the algorithm header (computed here), are stored (the body
//     reader reports them to the store at its end) and returned on GET and
//     HEAD of the whole object with x-amz-checksum-mode: ENABLED.
//     CRC-64/NVME is verified, never stored. A full volume is 507
//     InsufficientStorage (not an AWS code), and the write leaves nothing.
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
//     is "null". versionId=null names the object on GetObject, HeadObject,
//     DeleteObject, the object tagging operations, GetObjectAcl, copy
//     sources and DeleteObjects entries; any other ID is 404 NoSuchVersion
//     (400 InvalidArgument when empty, over 1024 bytes, or holding other
//     than letters, digits and "._-+=/"), and nothing is read or deleted.
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
//	If-Match, If-None-Match on PUT, copy, CreateMultipartUpload, Complete
//	                                         501 (conditional writes)
//	x-amz-write-offset-bytes                 501 (appends)
//	x-amz-mfa on DeleteObject(s)             501 (MFA delete)
//	x-amz-checksum-type                      COMPOSITE accepted (each part's
//	                                         checksum is verified); FULL_OBJECT 501
//	x-amz-acl                                private, bucket-owner-full-control accepted
//	                                         (buckets are "bucket owner enforced": ACLs
//	                                         disabled); other canned ACLs 400
//	                                         AccessControlListNotSupported; unknown 400
//	                                         InvalidArgument
//	x-amz-grant-*                            400 AccessControlListNotSupported
//	x-amz-object-ownership                   BucketOwnerEnforced accepted; the others 501
//	x-amz-storage-class                      STANDARD accepted; S3's other classes 501;
//	                                         anything else 400 InvalidStorageClass
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
// conditions and ranges, response-* overrides. Known gap (the S3
// conformance issue): a multipart upload's parts are verified against
// x-amz-checksum-algorithm, but no checksum of the whole object is kept.
//
// # Logging
//
// One zerolog event per request at info level (error level for
// InternalError): request_id, op, method, bucket, key, status, bytes_in,
// bytes_out, latency, remote, access_key, and error_code with the error
// when the request failed. Panics are recovered, logged with their stack
// and answered with InternalError.
//
// s3api imports only store, s3api/sigv4 and s3api/admin from this module.
package s3api
