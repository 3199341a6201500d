package iam

// Target is the resource a permission is checked against.
type Target int

const (
	TargetAll    Target = iota // no bucket in particular: AllBucketsARN
	TargetBucket               // the bucket: BucketARN(bucket)
	TargetObject               // the object: ObjectARN(bucket, key)
	TargetSource               // a copy's source object: ObjectARN(its bucket, its key)
)

func (t Target) String() string {
	switch t {
	case TargetAll:
		return AllBucketsARN
	case TargetBucket:
		return "bucket"
	case TargetObject:
		return "object"
	case TargetSource:
		return "copy source"
	}
	return "unknown"
}

// AllBucketsARN is the resource of requests that name no bucket
// (ListBuckets). Policies grant them with Resource "*" or
// "arn:aws:s3:::*".
const AllBucketsARN = "arn:aws:s3:::*"

// BucketARN is the resource of operations on a bucket.
func BucketARN(bucket string) string { return "arn:aws:s3:::" + bucket }

// ObjectARN is the resource of operations on an object.
func ObjectARN(bucket, key string) string { return "arn:aws:s3:::" + bucket + "/" + key }

// Permission is one action a request needs on one resource.
type Permission struct {
	Action string
	Target Target
}

// rule is a line of the action table: the action an operation needs,
// the one it needs instead when the request names a version (versionId,
// or for copies the source's versionId), and on what.
type rule struct {
	operation string
	action    string
	versioned string // "" when a version changes nothing
	target    Target
}

// actionTable maps every S3 operation the server routes (s3api/router.go),
// and the bucket policy operations it will route, to IAM actions, as the
// S3 API reference names them. An operation with several rules needs
// all of them. docs/s3-compatibility.md shows it to users; a test keeps
// every action named there.
var actionTable = []rule{
	{"ListBuckets", "s3:ListAllMyBuckets", "", TargetAll},

	{"CreateBucket", "s3:CreateBucket", "", TargetBucket},
	{"DeleteBucket", "s3:DeleteBucket", "", TargetBucket},
	{"HeadBucket", "s3:ListBucket", "", TargetBucket},
	{"ListObjects", "s3:ListBucket", "", TargetBucket},
	{"ListObjectsV2", "s3:ListBucket", "", TargetBucket},
	{"ListObjectVersions", "s3:ListBucketVersions", "", TargetBucket},
	{"ListMultipartUploads", "s3:ListBucketMultipartUploads", "", TargetBucket},
	{"GetBucketLocation", "s3:GetBucketLocation", "", TargetBucket},
	{"GetBucketVersioning", "s3:GetBucketVersioning", "", TargetBucket},
	{"PutBucketVersioning", "s3:PutBucketVersioning", "", TargetBucket},
	{"GetBucketAcl", "s3:GetBucketAcl", "", TargetBucket},
	{"PutBucketAcl", "s3:PutBucketAcl", "", TargetBucket},
	{"GetBucketTagging", "s3:GetBucketTagging", "", TargetBucket},
	{"PutBucketTagging", "s3:PutBucketTagging", "", TargetBucket},
	{"DeleteBucketTagging", "s3:PutBucketTagging", "", TargetBucket}, // S3 has no DeleteBucketTagging action
	{"GetBucketPolicy", "s3:GetBucketPolicy", "", TargetBucket},
	{"PutBucketPolicy", "s3:PutBucketPolicy", "", TargetBucket},
	{"DeleteBucketPolicy", "s3:DeleteBucketPolicy", "", TargetBucket},
	{"GetBucketPolicyStatus", "s3:GetBucketPolicyStatus", "", TargetBucket},
	{"GetPublicAccessBlock", "s3:GetBucketPublicAccessBlock", "", TargetBucket},
	{"PutPublicAccessBlock", "s3:PutBucketPublicAccessBlock", "", TargetBucket},
	{"DeletePublicAccessBlock", "s3:PutBucketPublicAccessBlock", "", TargetBucket}, // S3 has no delete action of its own
	{"GetBucketCors", "s3:GetBucketCORS", "", TargetBucket},
	{"PutBucketCors", "s3:PutBucketCORS", "", TargetBucket},
	{"DeleteBucketCors", "s3:PutBucketCORS", "", TargetBucket}, // S3 has no DeleteBucketCORS action
	{"GetBucketLifecycleConfiguration", "s3:GetLifecycleConfiguration", "", TargetBucket},
	{"PutBucketLifecycleConfiguration", "s3:PutLifecycleConfiguration", "", TargetBucket},
	{"DeleteBucketLifecycle", "s3:PutLifecycleConfiguration", "", TargetBucket}, // S3 has no DeleteLifecycleConfiguration action
	{"GetObjectLockConfiguration", "s3:GetBucketObjectLockConfiguration", "", TargetBucket},
	{"PutObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration", "", TargetBucket},

	{"GetObject", "s3:GetObject", "s3:GetObjectVersion", TargetObject},
	{"HeadObject", "s3:GetObject", "s3:GetObjectVersion", TargetObject},
	{"GetObjectAttributes", "s3:GetObject", "s3:GetObjectVersion", TargetObject},
	{"GetObjectAttributes", "s3:GetObjectAttributes", "s3:GetObjectVersionAttributes", TargetObject},
	{"PutObject", "s3:PutObject", "", TargetObject},
	{"PostObject", "s3:PutObject", "", TargetObject},
	{"CopyObject", "s3:PutObject", "", TargetObject},
	{"CopyObject", "s3:GetObject", "s3:GetObjectVersion", TargetSource},
	{"DeleteObject", "s3:DeleteObject", "s3:DeleteObjectVersion", TargetObject},
	{"DeleteObjects", "s3:DeleteObject", "s3:DeleteObjectVersion", TargetObject}, // checked for each key
	{"CreateMultipartUpload", "s3:PutObject", "", TargetObject},
	{"UploadPart", "s3:PutObject", "", TargetObject},
	{"UploadPartCopy", "s3:PutObject", "", TargetObject},
	{"UploadPartCopy", "s3:GetObject", "s3:GetObjectVersion", TargetSource},
	{"CompleteMultipartUpload", "s3:PutObject", "", TargetObject},
	{"AbortMultipartUpload", "s3:AbortMultipartUpload", "", TargetObject},
	{"ListParts", "s3:ListMultipartUploadParts", "", TargetObject},
	{"GetObjectTagging", "s3:GetObjectTagging", "s3:GetObjectVersionTagging", TargetObject},
	{"PutObjectTagging", "s3:PutObjectTagging", "s3:PutObjectVersionTagging", TargetObject},
	{"DeleteObjectTagging", "s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging", TargetObject},
	{"GetObjectAcl", "s3:GetObjectAcl", "s3:GetObjectVersionAcl", TargetObject},
	{"PutObjectAcl", "s3:PutObjectAcl", "s3:PutObjectVersionAcl", TargetObject},
	// AWS has one action for a version's lock and the current one's.
	{"GetObjectRetention", "s3:GetObjectRetention", "s3:GetObjectRetention", TargetObject},
	{"PutObjectRetention", "s3:PutObjectRetention", "s3:PutObjectRetention", TargetObject},
	{"GetObjectLegalHold", "s3:GetObjectLegalHold", "s3:GetObjectLegalHold", TargetObject},
	{"PutObjectLegalHold", "s3:PutObjectLegalHold", "s3:PutObjectLegalHold", TargetObject},

	// Admin API (s3api/system.go, s3api/identities.go): MinIO's action
	// names where MinIO has the call; every one is checked against
	// AllBucketsARN, so "Resource": "*" or "arn:aws:s3:::*" grants it.
	{"AdminInfo", "admin:ServerInfo", "", TargetAll},
	{"AdminXFS3Info", "admin:ServerInfo", "", TargetAll},
	{"AdminHealth", "admin:ServerInfo", "", TargetAll},
	{"AdminGCStats", "admin:ServerInfo", "", TargetAll},
	{"AdminTrimStatus", "admin:ServerInfo", "", TargetAll},
	{"Metrics", "admin:Prometheus", "", TargetAll}, // a signed scrape or mc's token (metrics_http.go)
	{"MetricsV2", "admin:Prometheus", "", TargetAll},
	{"AdminTrimStart", "admin:Trim", "", TargetAll},
	{"AdminTrimCancel", "admin:Trim", "", TargetAll},
	{"AdminLifecycleStatus", "admin:ServerInfo", "", TargetAll},
	{"AdminLifecycleStart", "admin:Lifecycle", "", TargetAll},
	{"AdminScrubStatus", "admin:ServerInfo", "", TargetAll},
	{"AdminScrubStart", "admin:Scrub", "", TargetAll},
	{"AdminSetBucketQuota", "admin:SetBucketQuota", "", TargetAll},
	{"AdminSetQuota", "admin:SetBucketQuota", "", TargetAll},
	{"AdminSetQuotaGrace", "admin:SetBucketQuota", "", TargetAll},
	{"AdminGetBucketQuota", "admin:GetBucketQuota", "", TargetAll},
	{"AdminQuotaReport", "admin:GetBucketQuota", "", TargetAll},
	{"AdminAddUser", "admin:CreateUser", "", TargetAll},
	{"AdminRemoveUser", "admin:DeleteUser", "", TargetAll},
	{"AdminListUsers", "admin:ListUsers", "", TargetAll},
	{"AdminUserInfo", "admin:GetUser", "", TargetAll},
	{"AdminEnableUser", "admin:EnableUser", "", TargetAll},
	{"AdminDisableUser", "admin:DisableUser", "", TargetAll},
	{"AdminListAccessKeys", "admin:ListServiceAccounts", "", TargetAll},
	{"AdminAddPolicy", "admin:CreatePolicy", "", TargetAll},
	{"AdminRemovePolicy", "admin:DeletePolicy", "", TargetAll},
	{"AdminListPolicies", "admin:ListUserPolicies", "", TargetAll},
	{"AdminPolicyInfo", "admin:GetPolicy", "", TargetAll},
	{"AdminAttachPolicy", "admin:AttachUserOrGroupPolicy", "", TargetAll},
	{"AdminDetachPolicy", "admin:AttachUserOrGroupPolicy", "", TargetAll},
	{"AdminPolicyEntities", "admin:ListUserPolicies", "", TargetAll},
	{"AdminAddServiceAccount", "admin:CreateServiceAccount", "", TargetAll},
	{"AdminUpdateServiceAccount", "admin:UpdateServiceAccount", "", TargetAll},
	{"AdminServiceAccountInfo", "admin:ListServiceAccounts", "", TargetAll},
	{"AdminListServiceAccounts", "admin:ListServiceAccounts", "", TargetAll},
	{"AdminDeleteServiceAccount", "admin:RemoveServiceAccount", "", TargetAll},
}

// Permissions returns what an S3 operation (a route name, e.g.
// "GetObject") needs: every permission listed must be allowed. versionID
// says whether the request names a version of the object it reads,
// deletes or tags (for CopyObject and UploadPartCopy: of the source).
// ok is false for an operation the table does not know.
func Permissions(operation string, versionID bool) (perms []Permission, ok bool) {
	for _, r := range actionTable {
		if r.operation != operation {
			continue
		}
		action := r.action
		if versionID && r.versioned != "" {
			action = r.versioned
		}
		perms = append(perms, Permission{Action: action, Target: r.target})
	}
	return perms, perms != nil
}
