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
// Permissions maps each operation the server routes (S3 and admin) to
// the actions it needs and the ARN each is checked against: the bucket
// (BucketARN), the object (ObjectARN), a copy's source, or
// AllBucketsARN for ListBuckets and every admin call. With versionId a
// request needs the Version form of an object action (s3:GetObjectVersion).
// DeleteObjects is checked once per key, as DeleteObject. The table is
// actionTable; docs/s3-compatibility.md shows it to users, and tests keep
// every route in it and every action in that document.
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
