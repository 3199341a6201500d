// Package iam is AWS's IAM policy language for S3, as a pure package:
// it parses and checks policy documents, writes them back in canonical
// form, and decides requests against them. It does no I/O and keeps no
// state; the S3 server stores users, their policies and bucket policies,
// and asks Evaluate before each operation.
//
//	policy JSON ──► Parse(doc, kind, limit) ──► *Policy ──► MarshalJSON (canonical)
//	                  size ─► shape (decode) ─► meaning (Validate)
//
//	S3 operation ──► Permissions(operation, versionID) ──► []Permission{Action, Target}
//	                  server: Target ─► ARN (BucketARN, ObjectARN, AllBucketsARN),
//	                          principals and Context from the request
//	                                      │
//	                                      ▼
//	Evaluate(Request{Action, Resource, Principals, Context},
//	         identity policies of the requester..., bucket policy)
//	  each statement applies when Principal ─► Action ─► Resource ─► every Condition match
//	  a Deny applies ─► Deny │ else an Allow applies ─► Allow │ else ─► Deny (implicit)
//	                                      │
//	                                      ▼
//	Decision{Effect, Matched, Policy, Sid, Index} ─► allow or AccessDenied; audit log
//
// # Model
//
// A Policy has a Version (Version2012, or Version2008 whose only
// difference is that policy variables are plain text), an optional Id
// and one or more Statements. A Statement has an Effect (Allow or
// Deny), an optional Sid, unique within the policy, and:
//
//   - Principal or NotPrincipal, in bucket policies only (Kind Bucket):
//     "*" or {"AWS": name or [names]}, kept as a sorted set of names.
//     "*" is everyone, anonymous requests included; an anonymous
//     request matches nothing else. Identity policies (Kind Identity)
//     name no principal: they speak for the identity they are attached
//     to, and the server passes only the requester's own.
//   - Action or NotAction: "*" or "service:name" patterns, matched
//     without case: "s3:GetObject", "s3:Get*", "s3:*".
//   - Resource or NotResource: "*" or ARN patterns, matched with case
//     against the whole ARN: "arn:aws:s3:::photos", "arn:aws:s3:::photos/2024/*".
//   - Condition: operator → key → value or [values].
//
// In patterns '*' matches any run of characters, '/' included, and '?'
// exactly one. A Not element makes the statement apply to everything
// the list does not match.
//
// # Evaluation
//
// Evaluate follows AWS's rules for requests within one account: every
// applicable statement of every policy given is found; an explicit Deny
// wins over any Allow; an Allow in any policy (an identity policy or the
// bucket policy) allows; without either the request is denied
// implicitly. An operation needing several permissions (Permissions
// lists them) is allowed only if each is.
//
// # Conditions
//
// Operators: StringEquals, StringNotEquals, StringEqualsIgnoreCase,
// StringNotEqualsIgnoreCase, StringLike, StringNotLike, NumericEquals,
// NumericNotEquals, NumericLessThan, NumericLessThanEquals,
// NumericGreaterThan, NumericGreaterThanEquals, DateEquals,
// DateNotEquals, DateLessThan, DateLessThanEquals, DateGreaterThan,
// DateGreaterThanEquals, Bool, IpAddress, NotIpAddress and Null. Each
// but Null takes the prefix ForAnyValue: or ForAllValues: and the
// suffix IfExists. Their values are checked on parse: numbers for
// Numeric*, ISO 8601 dates or epoch seconds for Date*, "true"/"false"
// for Bool and Null, addresses or CIDR blocks (IPv4 and IPv6) for
// IpAddress.
//
// All operators and keys of a Condition block must hold (AND); the
// values given for one key are alternatives (OR), and a negated
// operator (StringNotEquals, NotIpAddress, ...) holds when none
// matches. Keys are matched without case, values with case except by
// the IgnoreCase operators. When the request has several values for a
// key, a plain operator holds if any value matches; ForAnyValue: the
// same; ForAllValues: only if every value does. When the request lacks
// the key:
//
//	plain operator        false          negated operator     true
//	...IfExists           true           ForAllValues:        true
//	ForAnyValue:          false          Null "true"          true ("false": false)
//
// # Policy variables
//
// In Version2012 policies, Resource, NotResource and the values of
// String operators may hold ${key}: the value of that context key in
// the request, e.g. "arn:aws:s3:::home/${aws:username}/*". ${key,
// 'default'} falls back to the quoted text; ${*}, ${?} and ${$} stand
// for those characters taken literally. What a variable produces never
// acts as a wildcard. A variable whose key is absent or has several
// values, and no default, makes its resource or value match nothing.
//
// # Request context
//
// Context maps condition keys to values. The evaluator knows no key in
// particular; keys.go lists those the server is expected to fill:
// aws:SourceIp, aws:SecureTransport, aws:CurrentTime, aws:EpochTime,
// aws:Referer, aws:UserAgent, aws:username, aws:userid, s3:prefix,
// s3:delimiter, s3:max-keys, s3:VersionId, s3:x-amz-acl,
// s3:signatureversion, s3:authType, s3:RequestObjectTagKeys,
// s3:ExistingObjectTag/<tag> and s3:RequestObjectTag/<tag>.
//
// # Actions of S3 operations
//
// Permissions maps each operation the server routes (and the bucket
// policy operations it is to route) to the actions it needs, and to the ARN each is checked against ("bucket" is
// BucketARN, "object" ObjectARN, "copy source" the ObjectARN of the
// copy's source). With versionId: the action when the request names a
// version. DeleteObjects is checked once per key, as DeleteObject.
//
//	| Operation               | Action                        | With versionId                | Resource       |
//	| ----------------------- | ----------------------------- | ----------------------------- | -------------- |
//	| ListBuckets             | s3:ListAllMyBuckets           |                               | arn:aws:s3:::* |
//	| CreateBucket            | s3:CreateBucket               |                               | bucket         |
//	| DeleteBucket            | s3:DeleteBucket               |                               | bucket         |
//	| HeadBucket              | s3:ListBucket                 |                               | bucket         |
//	| ListObjects             | s3:ListBucket                 |                               | bucket         |
//	| ListObjectsV2           | s3:ListBucket                 |                               | bucket         |
//	| ListObjectVersions      | s3:ListBucketVersions         |                               | bucket         |
//	| ListMultipartUploads    | s3:ListBucketMultipartUploads |                               | bucket         |
//	| GetBucketLocation       | s3:GetBucketLocation          |                               | bucket         |
//	| GetBucketVersioning     | s3:GetBucketVersioning        |                               | bucket         |
//	| PutBucketVersioning     | s3:PutBucketVersioning        |                               | bucket         |
//	| GetBucketAcl            | s3:GetBucketAcl               |                               | bucket         |
//	| PutBucketAcl            | s3:PutBucketAcl               |                               | bucket         |
//	| GetBucketTagging        | s3:GetBucketTagging           |                               | bucket         |
//	| PutBucketTagging        | s3:PutBucketTagging           |                               | bucket         |
//	| DeleteBucketTagging     | s3:PutBucketTagging           |                               | bucket         |
//	| GetBucketPolicy         | s3:GetBucketPolicy            |                               | bucket         |
//	| PutBucketPolicy         | s3:PutBucketPolicy            |                               | bucket         |
//	| DeleteBucketPolicy      | s3:DeleteBucketPolicy         |                               | bucket         |
//	| GetBucketPolicyStatus   | s3:GetBucketPolicyStatus      |                               | bucket         |
//	| GetPublicAccessBlock    | s3:GetBucketPublicAccessBlock |                               | bucket         |
//	| PutPublicAccessBlock    | s3:PutBucketPublicAccessBlock |                               | bucket         |
//	| DeletePublicAccessBlock | s3:PutBucketPublicAccessBlock |                               | bucket         |
//	| GetBucketCors           | s3:GetBucketCORS              |                               | bucket         |
//	| PutBucketCors           | s3:PutBucketCORS              |                               | bucket         |
//	| DeleteBucketCors        | s3:PutBucketCORS              |                               | bucket         |
//	| GetObject               | s3:GetObject                  | s3:GetObjectVersion           | object         |
//	| HeadObject              | s3:GetObject                  | s3:GetObjectVersion           | object         |
//	| GetObjectAttributes     | s3:GetObject                  | s3:GetObjectVersion           | object         |
//	| GetObjectAttributes     | s3:GetObjectAttributes        | s3:GetObjectVersionAttributes | object         |
//	| PutObject               | s3:PutObject                  |                               | object         |
//	| PostObject              | s3:PutObject                  |                               | object         |
//	| CopyObject              | s3:PutObject                  |                               | object         |
//	| CopyObject              | s3:GetObject                  | s3:GetObjectVersion           | copy source    |
//	| DeleteObject            | s3:DeleteObject               | s3:DeleteObjectVersion        | object         |
//	| DeleteObjects           | s3:DeleteObject               | s3:DeleteObjectVersion        | object         |
//	| CreateMultipartUpload   | s3:PutObject                  |                               | object         |
//	| UploadPart              | s3:PutObject                  |                               | object         |
//	| UploadPartCopy          | s3:PutObject                  |                               | object         |
//	| UploadPartCopy          | s3:GetObject                  | s3:GetObjectVersion           | copy source    |
//	| CompleteMultipartUpload | s3:PutObject                  |                               | object         |
//	| AbortMultipartUpload    | s3:AbortMultipartUpload       |                               | object         |
//	| ListParts               | s3:ListMultipartUploadParts   |                               | object         |
//	| GetObjectTagging        | s3:GetObjectTagging           | s3:GetObjectVersionTagging    | object         |
//	| PutObjectTagging        | s3:PutObjectTagging           | s3:PutObjectVersionTagging    | object         |
//	| DeleteObjectTagging     | s3:DeleteObjectTagging        | s3:DeleteObjectVersionTagging | object         |
//	| GetObjectAcl            | s3:GetObjectAcl               | s3:GetObjectVersionAcl        | object         |
//	| PutObjectAcl            | s3:PutObjectAcl               | s3:PutObjectVersionAcl        | object         |
//	| AdminInfo               | admin:ServerInfo              |                               | arn:aws:s3:::* |
//	| AdminXFS3Info           | admin:ServerInfo              |                               | arn:aws:s3:::* |
//	| AdminGCStats            | admin:ServerInfo              |                               | arn:aws:s3:::* |
//	| AdminTrimStatus         | admin:ServerInfo              |                               | arn:aws:s3:::* |
//	| Metrics                 | admin:Prometheus              |                               | arn:aws:s3:::* |
//	| MetricsV2               | admin:Prometheus              |                               | arn:aws:s3:::* |
//	| AdminTrimStart          | admin:Trim                    |                               | arn:aws:s3:::* |
//	| AdminTrimCancel         | admin:Trim                    |                               | arn:aws:s3:::* |
//	| AdminSetBucketQuota     | admin:SetBucketQuota          |                               | arn:aws:s3:::* |
//	| AdminSetQuota           | admin:SetBucketQuota          |                               | arn:aws:s3:::* |
//	| AdminSetQuotaGrace      | admin:SetBucketQuota          |                               | arn:aws:s3:::* |
//	| AdminGetBucketQuota     | admin:GetBucketQuota          |                               | arn:aws:s3:::* |
//	| AdminQuotaReport        | admin:GetBucketQuota          |                               | arn:aws:s3:::* |
//	| AdminAddUser            | admin:CreateUser              |                               | arn:aws:s3:::* |
//	| AdminRemoveUser         | admin:DeleteUser              |                               | arn:aws:s3:::* |
//	| AdminListUsers          | admin:ListUsers               |                               | arn:aws:s3:::* |
//	| AdminUserInfo           | admin:GetUser                 |                               | arn:aws:s3:::* |
//	| AdminEnableUser         | admin:EnableUser              |                               | arn:aws:s3:::* |
//	| AdminDisableUser        | admin:DisableUser             |                               | arn:aws:s3:::* |
//	| AdminListAccessKeys     | admin:ListServiceAccounts     |                               | arn:aws:s3:::* |
//	| AdminAddPolicy          | admin:CreatePolicy            |                               | arn:aws:s3:::* |
//	| AdminRemovePolicy       | admin:DeletePolicy            |                               | arn:aws:s3:::* |
//	| AdminListPolicies       | admin:ListUserPolicies        |                               | arn:aws:s3:::* |
//	| AdminPolicyInfo         | admin:GetPolicy               |                               | arn:aws:s3:::* |
//	| AdminAttachPolicy       | admin:AttachUserOrGroupPolicy |                               | arn:aws:s3:::* |
//	| AdminDetachPolicy       | admin:AttachUserOrGroupPolicy |                               | arn:aws:s3:::* |
//	| AdminPolicyEntities     | admin:ListUserPolicies        |                               | arn:aws:s3:::* |
//	| AdminAddServiceAccount  | admin:CreateServiceAccount    |                               | arn:aws:s3:::* |
//	| AdminUpdateServiceAccount | admin:UpdateServiceAccount    |                               | arn:aws:s3:::* |
//	| AdminServiceAccountInfo | admin:ListServiceAccounts     |                               | arn:aws:s3:::* |
//	| AdminListServiceAccounts | admin:ListServiceAccounts     |                               | arn:aws:s3:::* |
//	| AdminDeleteServiceAccount | admin:RemoveServiceAccount    |                               | arn:aws:s3:::* |
//
// # Canned policies
//
// Canned returns the built-in policies MinIO users expect: readwrite
// (s3:* on every bucket), readonly (s3:GetBucketLocation and
// s3:GetObject), writeonly (s3:PutObject), diagnostics (the admin
// actions that observe the server: ServerInfo, Profiling, ServerTrace,
// ConsoleLog, OBDInfo, TopLocksInfo, BandwidthMonitor, Prometheus) and
// consoleAdmin (admin:*, kms:* and s3:*).
//
// # Not supported
//
// Principal types other than AWS (Service, Federated, CanonicalUser);
// the Arn* and Binary* operators; matching an ARN segment by segment as
// AWS does (patterns here match the whole ARN, which gives the same
// answers for S3's ARNs, whose other segments are fixed); permissions
// boundaries, session and SCP policies, and cross-account rules;
// checking that a bucket policy's resources lie in its bucket (the
// server's job, which knows the bucket); extra permissions some requests
// need in AWS beyond their operation's (s3:PutObjectTagging for a PUT
// with x-amz-tagging, s3:PutObjectAcl for one with x-amz-acl).
package iam
