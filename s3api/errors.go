package s3api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/xfs3/xfs3/s3api/sigv4"
	"github.com/xfs3/xfs3/store"
)

// codeInfo is the HTTP status and default message of one S3 error code.
type codeInfo struct {
	status  int
	message string
}

// codes is the one table of S3 error codes this server sends.
var codes = map[string]codeInfo{
	"AccessControlListNotSupported":     {http.StatusBadRequest, "The bucket does not allow ACLs."},
	"AccessDenied":                      {http.StatusForbidden, "Access Denied."},
	"AccessForbidden":                   {http.StatusForbidden, "CORSResponse: This CORS request is not allowed."}, // a refused CORS preflight (cors.go)
	"AuthorizationHeaderMalformed":      {http.StatusBadRequest, "The authorization header is malformed."},
	"AuthorizationQueryParametersError": {http.StatusBadRequest, "The query parameters that authenticate this request are not valid."},
	"BadRequest":                        {http.StatusBadRequest, "Bad request."},
	"BadDigest":                         {http.StatusBadRequest, "The Content-MD5 or checksum you specified did not match what we received."},
	"BucketAlreadyOwnedByYou":           {http.StatusConflict, "Your previous request to create the named bucket succeeded and you already own it."},
	"BucketNotEmpty":                    {http.StatusConflict, "The bucket you tried to delete is not empty."},
	// ClientDisconnected is only logged: the response had started.
	"ClientDisconnected":                      {499, "The client closed the connection."},
	"ConditionalRequestConflict":              {http.StatusConflict, "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part."},
	"EntityTooLarge":                          {http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed object size."},
	"EntityTooSmall":                          {http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed object size."},
	"IllegalLocationConstraintException":      {http.StatusBadRequest, "The location constraint is incompatible with this server's region."},
	"InvalidLocationConstraint":               {http.StatusBadRequest, "The specified location-constraint is not valid."},
	"IllegalVersioningConfigurationException": {http.StatusBadRequest, "The versioning configuration specified in the request is invalid."},
	"IncompleteBody":                          {http.StatusBadRequest, "You did not provide the number of bytes specified by the Content-Length HTTP header."},
	"InternalError":                           {http.StatusInternalServerError, "We encountered an internal error. Please try again."},
	// InsufficientStorage is not an AWS code (S3 never fills up); 507 tells
	// clients the request may succeed once space is freed.
	"InsufficientStorage": {http.StatusInsufficientStorage, "The volume has no space left for this request."},
	// MinIO's code for a write over a bucket quota, which its clients
	// (mc, minio-go) already know.
	"XMinioAdminBucketQuotaExceeded":       {http.StatusBadRequest, "Bucket quota exceeded"},
	"InvalidAccessKeyId":                   {http.StatusForbidden, "The AWS access key ID you provided does not exist in our records."},
	"InvalidArgument":                      {http.StatusBadRequest, "Invalid argument."},
	"InvalidBucketName":                    {http.StatusBadRequest, "The specified bucket is not valid."},
	"InvalidBucketState":                   {http.StatusConflict, "The request is not valid with the current state of the bucket."},
	"NoSuchObjectLockConfiguration":        {http.StatusNotFound, "The specified object does not have a ObjectLock configuration."},
	"ObjectLockConfigurationNotFoundError": {http.StatusNotFound, "Object Lock configuration does not exist for this bucket."},
	"InvalidDigest":                        {http.StatusBadRequest, "The Content-MD5 you specified is not valid."},
	"InvalidPart":                          {http.StatusBadRequest, "One or more of the specified parts could not be found or its entity tag did not match."},
	"InvalidPartOrder":                     {http.StatusBadRequest, "The list of parts was not in ascending order."},
	"InvalidPartNumber":                    {http.StatusRequestedRangeNotSatisfiable, "The requested partnumber is not satisfiable."},
	"InvalidRange":                         {http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable."},
	"InvalidRequest":                       {http.StatusBadRequest, "Invalid request."},
	"InvalidStorageClass":                  {http.StatusBadRequest, "The storage class you specified is not valid."},
	"InvalidTag":                           {http.StatusBadRequest, "The tag provided was not a valid tag."},
	"KeyTooLongError":                      {http.StatusBadRequest, "Your key is too long."},
	"MalformedACLError":                    {http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema."},
	"MalformedPOSTRequest":                 {http.StatusBadRequest, "The body of your POST request is not well-formed multipart/form-data."},
	"MissingSecurityHeader":                {http.StatusBadRequest, "Your request is missing a required header."},
	"UnexpectedContent":                    {http.StatusBadRequest, "This request does not support content."},
	"InvalidPolicyDocument":                {http.StatusBadRequest, "The content of the form does not meet the conditions specified in the policy document."},
	"MaxPostPreDataLengthExceededError":    {http.StatusBadRequest, "Your POST request fields preceding the upload file were too large."},
	"MalformedPolicy":                      {http.StatusBadRequest, "Policies must be valid JSON and the first byte must be '{'."},
	"MalformedXML":                         {http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema."},
	"MaxMessageLengthExceeded":             {http.StatusBadRequest, "Your request was too big."},
	"MetadataTooLarge":                     {http.StatusBadRequest, "Your metadata headers exceed the maximum allowed metadata size."},
	"MethodNotAllowed":                     {http.StatusMethodNotAllowed, "The specified method is not allowed against this resource."},
	"MissingContentLength":                 {http.StatusLengthRequired, "You must provide the Content-Length HTTP header."},
	"NoSuchBucket":                         {http.StatusNotFound, "The specified bucket does not exist."},
	"NoSuchBucketPolicy":                   {http.StatusNotFound, "The bucket policy does not exist."},
	"NoSuchCORSConfiguration":              {http.StatusNotFound, "The CORS configuration does not exist"},
	"NoSuchPublicAccessBlockConfiguration": {http.StatusNotFound, "The public access block configuration was not found."},
	"NoSuchKey":                            {http.StatusNotFound, "The specified key does not exist."},
	"NoSuchLifecycleConfiguration":         {http.StatusNotFound, "The lifecycle configuration does not exist"},
	"NoSuchTagSet":                         {http.StatusNotFound, "The TagSet does not exist."},
	"NoSuchUpload":                         {http.StatusNotFound, "The specified multipart upload does not exist."},
	"NoSuchVersion":                        {http.StatusNotFound, "The specified version does not exist."},
	"NotImplemented":                       {http.StatusNotImplemented, "A header or query you provided implies functionality that is not implemented."},
	"NotModified":                          {http.StatusNotModified, "Not Modified."},
	"PreconditionFailed":                   {http.StatusPreconditionFailed, "At least one of the preconditions you specified did not hold."},
	"RequestTimeTooSkewed":                 {http.StatusForbidden, "The difference between the request time and the server's time is too large."},
	"ServiceUnavailable":                   {http.StatusServiceUnavailable, "The service is shutting down."},
	"SignatureDoesNotMatch":                {http.StatusForbidden, "The request signature we calculated does not match the signature you provided."},
	"XAmzContentSHA256Mismatch":            {http.StatusBadRequest, "The provided 'x-amz-content-sha256' header does not match what was computed."},
	// XFS3NeedsRepair is ours: the request needs metadata that failed
	// verification (store.ErrSick); nothing was changed, and the volume
	// needs xfs_repair (docs/operations.md, "Damaged metadata").
	"XFS3NeedsRepair": {http.StatusInternalServerError, "The bucket needs repair: metadata this request needs failed verification; changes to it are refused until the stopped volume is repaired with xfs_repair."},
	// XFS3ObjectCorrupt is ours: a scrub found the object's bytes no
	// longer match its stored checksums (store.ErrObjectCorrupt).
	"XFS3ObjectCorrupt": {http.StatusInternalServerError, "The object's data is corrupt: its bytes no longer match the checksums stored with it. Restore it from a copy or delete it."},
}

// s3Error is an error decided at the edge: an S3 code, an optional
// specific message and the cause, if any.
type s3Error struct {
	code    string
	message string
	cause   error
}

func (e *s3Error) Error() string {
	msg := e.Message()
	if e.cause != nil {
		return e.code + ": " + msg + ": " + e.cause.Error()
	}
	return e.code + ": " + msg
}

func (e *s3Error) Unwrap() error { return e.cause }

// Message is the text sent in the XML body.
func (e *s3Error) Message() string {
	if e.message != "" {
		return e.message
	}
	return codes[e.code].message
}

// Status is the HTTP status of the code.
func (e *s3Error) Status() int {
	if c, ok := codes[e.code]; ok {
		return c.status
	}
	return http.StatusInternalServerError
}

// errorf makes an s3Error with a specific message.
func errorf(code, format string, args ...any) *s3Error {
	return &s3Error{code: code, message: fmt.Sprintf(format, args...)}
}

// errBodyTruncated: the client's connection ended inside the body.
var errBodyTruncated = errors.New("request body ended early")

// kinds maps error kinds of the lower layers to S3 codes. The first match
// wins, so a wrapped error is classified by its most specific kind.
var kinds = []struct {
	kind error
	code string
}{
	{store.ErrSick, "XFS3NeedsRepair"}, // without a *store.SickError
	{store.ErrObjectCorrupt, "XFS3ObjectCorrupt"},
	{store.ErrNoSuchBucket, "NoSuchBucket"},
	{store.ErrNoSuchKey, "NoSuchKey"},
	{store.ErrNoSuchVersion, "NoSuchVersion"},
	{store.ErrMethodNotAllowed, "MethodNotAllowed"},
	{store.ErrInvalidVersion, "InvalidArgument"},
	{store.ErrInvalidVersioning, "IllegalVersioningConfigurationException"},
	{store.ErrBucketNotEmpty, "BucketNotEmpty"},
	{store.ErrBucketExists, "BucketAlreadyOwnedByYou"},
	{store.ErrInvalidBucketName, "InvalidBucketName"},
	{store.ErrKeyTooLong, "KeyTooLongError"},
	{store.ErrInvalidKey, "InvalidArgument"},
	{store.ErrKeyConflict, "InvalidArgument"},
	{store.ErrInvalidMetadata, "InvalidArgument"},
	{store.ErrMetadataTooLarge, "MetadataTooLarge"},
	{store.ErrIncompleteBody, "IncompleteBody"},
	{store.ErrInvalidRange, "InvalidRange"},
	{store.ErrClosed, "ServiceUnavailable"},
	{store.ErrNoSuchUpload, "NoSuchUpload"},
	{store.ErrInvalidPart, "InvalidPart"},
	{store.ErrInvalidPartOrder, "InvalidPartOrder"},
	{store.ErrEntityTooSmall, "EntityTooSmall"},
	{store.ErrObjectSizeMismatch, "InvalidRequest"},
	{store.ErrEntityTooLarge, "EntityTooLarge"},
	{store.ErrInvalidTag, "InvalidTag"},
	{store.ErrBadDigest, "BadDigest"},
	{store.ErrInvalidChecksum, "InvalidRequest"},
	{store.ErrPreconditionFailed, "PreconditionFailed"},
	{store.ErrNoSuchTagSet, "NoSuchTagSet"},
	{store.ErrNotImplemented, "NotImplemented"},
	{store.ErrQuotaExceeded, "XMinioAdminBucketQuotaExceeded"},
	{store.ErrNoSpace, "InsufficientStorage"},
	{store.ErrNoSuchConfig, "NoSuchBucketPolicy"},
	{store.ErrConfigTooLarge, "InvalidRequest"},
	{store.ErrObjectLocked, "AccessDenied"},
	{store.ErrImmutable, "AccessDenied"},
	{store.ErrNoLockConfig, "InvalidRequest"},
	{store.ErrInvalidRetention, "InvalidArgument"},
	{store.ErrInvalidBucketState, "InvalidBucketState"},
	{sigv4.ErrMissingAuth, "AccessDenied"},
	{sigv4.ErrExpired, "AccessDenied"},
	{sigv4.ErrNotYetValid, "AccessDenied"},
	{sigv4.ErrExpiresRange, "AuthorizationQueryParametersError"},
	{sigv4.ErrInvalidAccessKey, "InvalidAccessKeyId"},
	{sigv4.ErrSignatureMismatch, "SignatureDoesNotMatch"},
	{sigv4.ErrRequestTimeTooSkewed, "RequestTimeTooSkewed"},
	{sigv4.ErrContentSHA256Mismatch, "XAmzContentSHA256Mismatch"},
	{sigv4.ErrIncompleteBody, "IncompleteBody"},
	{sigv4.ErrInvalidArgument, "InvalidArgument"},
	{sigv4.ErrInvalidDate, "AccessDenied"},
	{sigv4.ErrInvalidExpires, "AccessDenied"},
	{sigv4.ErrIncompleteQuery, "AccessDenied"},
	{sigv4.ErrMalformed, "AuthorizationHeaderMalformed"},
	{errBodyTruncated, "IncompleteBody"},
}

// kindMessages are the messages S3 sends for some kinds, where the code's
// own would be less precise.
var kindMessages = map[error]string{
	store.ErrObjectLocked:       "Access Denied because object protected by object lock.",
	store.ErrImmutable:          "Access Denied because the object's inode is immutable on the volume.",
	store.ErrNoLockConfig:       "Bucket is missing Object Lock Configuration",
	store.ErrInvalidBucketState: "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.",
	sigv4.ErrExpired:            "Request has expired",
	sigv4.ErrNotYetValid:        "Request is not yet valid",
	// S3's words for V2 requests without a date or with a bad one.
	sigv4.ErrInvalidDate:     "AWS authentication requires a valid Date or x-amz-date header",
	sigv4.ErrInvalidExpires:  "Invalid date (should be seconds since epoch)",
	sigv4.ErrIncompleteQuery: "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters",
}

// toS3Error decides the S3 code of any error: an s3Error is kept, a known
// kind is mapped through kinds, anything else is an InternalError.
func toS3Error(err error) *s3Error {
	var se *s3Error
	if errors.As(err, &se) {
		return se
	}
	var sick *store.SickError
	if errors.As(err, &sick) {
		return &s3Error{code: "XFS3NeedsRepair", message: sick.Message(), cause: err}
	}
	for _, k := range kinds {
		if errors.Is(err, k.kind) {
			return &s3Error{code: k.code, message: kindMessages[k.kind], cause: err}
		}
	}
	return &s3Error{code: "InternalError", cause: err}
}

// messageOf is the text of err for the XML body: the edge's own message,
// or the default of its code. Causes from lower layers are logged, not
// sent, except for the sentinels whose text helps a client.
func messageOf(e *s3Error) string {
	if e.message != "" || e.cause == nil || e.code == "InternalError" {
		return e.Message()
	}
	switch e.code {
	case "InvalidArgument", "AuthorizationHeaderMalformed", "AuthorizationQueryParametersError", "InvalidTag", "KeyTooLongError", "MetadataTooLarge", "InvalidRequest", "InvalidPart":
		return e.cause.Error()
	}
	return e.Message()
}
