package s3api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/checksum"
)

// Headers that change what an S3 operation means are never dropped: each
// one this server receives is honoured or refused with an error naming it.
// The ones honoured by their handlers (checksums, metadata and tagging
// directives, conditionals on reads and copy sources, ...) are listed in
// docs/s3-compatibility.md; headerRules refuses, or checks, the rest before any handler
// runs, so no operation can forget one.

// Operation sets the rules apply to.
var (
	objectWrites = []string{"PutObject", "CopyObject", "CreateMultipartUpload"}
	// objectData are the operations that read or write an object's bytes,
	// for which S3 takes SSE-C keys.
	objectData = []string{"PutObject", "CopyObject", "CreateMultipartUpload", "UploadPart", "UploadPartCopy",
		"GetObject", "HeadObject", "CompleteMultipartUpload"}
	copies = []string{"CopyObject", "UploadPartCopy"}
	// aclOps are the operations that take a canned ACL or grants.
	aclOps = append([]string{"CreateBucket", "PutBucketAcl", "PutObjectAcl"}, objectWrites...)
	// unconditionalWrites are the writes S3 may make conditional on
	// If-Match and If-None-Match but this server does not (PutObject and
	// CompleteMultipartUpload honour them: condwrite.go).
	unconditionalWrites = []string{"CopyObject", "CreateMultipartUpload"}
)

// headerRule checks one request header on the operations named (all of
// them when ops is nil); check returns nil to accept the value.
type headerRule struct {
	header string
	ops    []string
	check  func(s *server, rq *request, value string) error
}

func refuse(code, format string, args ...any) func(*server, *request, string) error {
	return func(*server, *request, string) error { return errorf(code, format, args...) }
}

var headerRules = []headerRule{
	{"X-Amz-Bucket-Object-Lock-Enabled", []string{"CreateBucket"}, checkObjectLockEnabled},

	{"X-Amz-Server-Side-Encryption", objectWrites, refuse("NotImplemented",
		"Server-side encryption is not supported: objects are stored unencrypted on the volume.")},
	{"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", objectWrites, refuseSSE},
	{"X-Amz-Server-Side-Encryption-Context", objectWrites, refuseSSE},
	{"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled", objectWrites, refuseSSE},
	{"X-Amz-Server-Side-Encryption-Customer-Algorithm", objectData, refuseSSE},
	{"X-Amz-Server-Side-Encryption-Customer-Key", objectData, refuseSSE},
	{"X-Amz-Server-Side-Encryption-Customer-Key-Md5", objectData, refuseSSE},
	{"X-Amz-Copy-Source-Server-Side-Encryption-Customer-Algorithm", copies, refuseSSE},
	{"X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key", copies, refuseSSE},
	{"X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key-Md5", copies, refuseSSE},

	{"X-Amz-Website-Redirect-Location", objectWrites, refuse("NotImplemented",
		"Website redirects (x-amz-website-redirect-location) are not supported.")},
	{"If-Match", unconditionalWrites, refuseConditionalWrite},
	{"If-None-Match", unconditionalWrites, refuseConditionalWrite},
	{"X-Amz-Write-Offset-Bytes", []string{"PutObject"}, refuse("NotImplemented",
		"Appending to an object (x-amz-write-offset-bytes) is not supported.")},
	{"X-Amz-Mfa", []string{"DeleteObject", "DeleteObjects"}, refuse("NotImplemented",
		"MFA delete (x-amz-mfa) is not supported.")},
	{"If-Match", []string{"DeleteObject"}, refuseConditionalDelete},
	{"X-Amz-If-Match-Last-Modified-Time", []string{"DeleteObject"}, refuseConditionalDelete},
	{"X-Amz-If-Match-Size", []string{"DeleteObject"}, refuseConditionalDelete},
	{"X-Amz-Checksum-Type", []string{"CreateMultipartUpload", "CompleteMultipartUpload"}, checkChecksumType},

	{"X-Amz-Acl", aclOps, checkCannedACL},
	{"X-Amz-Grant-Full-Control", aclOps, refuseGrant},
	{"X-Amz-Grant-Read", aclOps, refuseGrant},
	{"X-Amz-Grant-Read-Acp", aclOps, refuseGrant},
	{"X-Amz-Grant-Write", []string{"CreateBucket", "PutBucketAcl"}, refuseGrant},
	{"X-Amz-Grant-Write-Acp", aclOps, refuseGrant},
	{"X-Amz-Object-Ownership", []string{"CreateBucket"}, checkObjectOwnership},
	{"X-Amz-Storage-Class", objectWrites, checkStorageClass},

	{"X-Amz-Expected-Bucket-Owner", nil, checkBucketOwner},
	{"X-Amz-Source-Expected-Bucket-Owner", copies, checkBucketOwner},
}

// checkRequest refuses an S3 request for operation rq.op that asks for
// what this server does not do: a header of headerRules or a version.
func (s *server) checkRequest(r *http.Request, rq *request) error {
	if err := s.checkHeaders(r, rq); err != nil {
		return err
	}
	return checkVersionQuery(r, rq)
}

// checkHeaders applies headerRules to a request for operation rq.op.
func (s *server) checkHeaders(r *http.Request, rq *request) error {
	for _, rule := range headerRules {
		vals, sent := r.Header[rule.header]
		if !sent || rule.ops != nil && !slices.Contains(rule.ops, rq.op) {
			continue
		}
		if err := rule.check(s, rq, strings.TrimSpace(strings.Join(vals, ","))); err != nil {
			return err
		}
	}
	return nil
}

func checkObjectLockEnabled(_ *server, _ *request, v string) error {
	switch strings.ToLower(v) {
	case "false", "true":
		return nil
	}
	return errorf("InvalidArgument", "x-amz-bucket-object-lock-enabled must be true or false, not %q.", v)
}

func refuseSSE(*server, *request, string) error {
	return errorf("NotImplemented", "Server-side encryption (SSE-KMS and SSE-C) is not supported.")
}

func refuseConditionalWrite(*server, *request, string) error {
	return errorf("NotImplemented", "Conditional writes (If-Match, If-None-Match) are supported on PutObject and CompleteMultipartUpload only.")
}

func refuseConditionalDelete(*server, *request, string) error {
	return errorf("NotImplemented", "Conditional deletes (If-Match, x-amz-if-match-last-modified-time, x-amz-if-match-size) are not supported.")
}

// checkChecksumType accepts S3's two checksum types; whether the
// algorithm has the one named is the handler's to check.
func checkChecksumType(_ *server, _ *request, v string) error {
	if _, ok := checksum.ParseType(v); !ok {
		return errorf("InvalidRequest", "Value for x-amz-checksum-type header is invalid.")
	}
	return nil
}

// Buckets behave as S3 buckets whose object ownership is "bucket owner
// enforced": ACLs are disabled, and only the canned ACLs that grant the
// owner alone full control are accepted.
func checkCannedACL(_ *server, _ *request, v string) error {
	switch v {
	case "private", "bucket-owner-full-control":
		return nil
	case "public-read", "public-read-write", "authenticated-read", "aws-exec-read", "bucket-owner-read", "log-delivery-write":
		return errorf("AccessControlListNotSupported", "The bucket does not allow ACLs: canned ACL %q is refused.", v)
	}
	return errorf("InvalidArgument", "Unknown canned ACL %q.", v)
}

func refuseGrant(*server, *request, string) error {
	return errorf("AccessControlListNotSupported", "The bucket does not allow ACLs: x-amz-grant-* headers are refused.")
}

func checkObjectOwnership(_ *server, _ *request, v string) error {
	switch v {
	case "BucketOwnerEnforced":
		return nil
	case "BucketOwnerPreferred", "ObjectWriter":
		return errorf("NotImplemented", "Object ownership %s needs ACLs, which are not supported; buckets are BucketOwnerEnforced.", v)
	}
	return errorf("InvalidArgument", "Unknown object ownership %q.", v)
}

// storageClasses are S3's storage classes. Each is accepted, stored with
// the object and returned; the bytes are kept the same way whatever the
// class, and stay readable (no class needs a restore here).
var storageClasses = []string{"STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
	"GLACIER", "DEEP_ARCHIVE", "OUTPOSTS", "GLACIER_IR", "SNOW", "EXPRESS_ONEZONE"}

func checkStorageClass(_ *server, _ *request, v string) error {
	if !slices.Contains(storageClasses, v) {
		return errorf("InvalidStorageClass", "The storage class %q is not valid.", v)
	}
	return nil
}

// storedClass is the store's form of an x-amz-storage-class value: ""
// for STANDARD, the default.
func storedClass(v string) string {
	if v == "STANDARD" {
		return ""
	}
	return v
}

// storageClassOf is the class listings show for an object or upload.
func storageClassOf(m store.Meta) string {
	if m.StorageClass == "" {
		return "STANDARD"
	}
	return m.StorageClass
}

// checkBucketOwner refuses a request whose expected bucket owner is not
// the requester, the owner of every bucket (S3 answers 403).
func checkBucketOwner(_ *server, rq *request, v string) error {
	if v != ownerOf(rq).ID {
		return errorf("AccessDenied", "The bucket is not owned by the expected owner %q.", v)
	}
	return nil
}

// versionedOps take a versionId query parameter in S3.
var versionedOps = []string{"GetObject", "HeadObject", "DeleteObject",
	"GetObjectTagging", "PutObjectTagging", "DeleteObjectTagging", "GetObjectAcl", "PutObjectAcl", "GetObjectAttributes",
	"GetObjectRetention", "PutObjectRetention", "GetObjectLegalHold", "PutObjectLegalHold"}

// checkVersionQuery checks the versionId of a request for one of
// versionedOps and keeps it in rq.version.
func checkVersionQuery(r *http.Request, rq *request) error {
	q := rq.query
	if !q.Has("versionId") || !slices.Contains(versionedOps, rq.op) {
		return nil
	}
	id := q.Get("versionId")
	if err := checkVersionID(id); err != nil {
		return err
	}
	rq.version = id
	return nil
}

// checkVersionID accepts "null" and the IDs the store makes; anything
// else is malformed (InvalidArgument), as S3 answers an ID it could not
// have made.
func checkVersionID(id string) error {
	switch {
	case id == "":
		return errorf("InvalidArgument", "Version id cannot be the empty string.")
	case store.CheckVersionID(id) != nil:
		return errorf("InvalidArgument", "Invalid version id specified.")
	}
	return nil
}
