package iam

// Condition keys the S3 server is expected to put in a request's
// Context, when the request has them. The evaluator knows none of them
// in particular: any key a policy names is looked up in the context,
// and a key the server leaves out is simply absent (see Null and
// IfExists).
const (
	// Every request.
	KeySourceIP         = "aws:SourceIp"        // client address, IPv4 or IPv6, without port
	KeySecureTransport  = "aws:SecureTransport" // "true" over TLS, else "false"
	KeyCurrentTime      = "aws:CurrentTime"     // request time, RFC 3339 in UTC
	KeyEpochTime        = "aws:EpochTime"       // request time, seconds since 1970
	KeyReferer          = "aws:Referer"         // the Referer header, if sent
	KeyUserAgent        = "aws:UserAgent"       // the User-Agent header, if sent
	KeySignatureVersion = "s3:signatureversion" // "AWS" (SigV2) or "AWS4-HMAC-SHA256" (SigV4); absent when anonymous
	KeyAuthType         = "s3:authType"         // "REST-HEADER", "REST-QUERY-STRING" (presigned) or "POST" (form)

	// Signed requests only; absent for anonymous ones.
	KeyUsername = "aws:username" // the user's name (a service account's parent's)
	KeyUserID   = "aws:userid"   // the user's unique ID: its access key

	// ListObjects, ListObjectsV2, ListObjectVersions: the query
	// parameters, when given.
	KeyPrefix    = "s3:prefix"
	KeyDelimiter = "s3:delimiter"
	KeyMaxKeys   = "s3:max-keys"

	// Object operations.
	KeyVersionID            = "s3:VersionId"            // the versionId query parameter
	KeyACL                  = "s3:x-amz-acl"            // the canned ACL header of a PUT or copy
	KeyRequestObjectTagKeys = "s3:RequestObjectTagKeys" // every tag key the request sets (several values)
)

// ExistingObjectTagKey is the key holding the value of tag on the object
// a request reads or changes, for operations on an existing object.
func ExistingObjectTagKey(tag string) string { return "s3:ExistingObjectTag/" + tag }

// RequestObjectTagKey is the key holding the value the request gives
// tag (PutObject with x-amz-tagging, PutObjectTagging).
func RequestObjectTagKey(tag string) string { return "s3:RequestObjectTag/" + tag }
