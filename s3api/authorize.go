package s3api

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/s3api/iam"
	"github.com/xfs3/xfs3/s3api/identity"
	"github.com/xfs3/xfs3/s3api/sigv4"
)

// Who signed a request decides how it is authorized:
//
//	root credentials (Config.Credentials)  everything, no policy consulted
//	a user or service account              its policies and the bucket's (identity.Decide)
//	no signature (anonymous)               the bucket's policy alone, principal "*"
//
// A request is authorized once its route is known and before its
// handler runs (operation), for each permission iam.Permissions lists.
// DeleteObjects is authorized key by key in its handler, ListBuckets
// filtered by bucket, PostObject once its form's signature is checked.

// identify sets who a verified request comes from; an access key that
// may not sign (disabled, expired, sealed) is refused here.
func (s *server) identify(rq *request, auth *sigv4.Auth) error {
	rq.auth = auth
	if _, ok := s.creds[auth.AccessKey]; ok {
		rq.root = true
		return nil
	}
	id, ok := s.identities.Lookup(auth.AccessKey)
	if !ok { // the verifier found a secret for it: removed meanwhile
		return errorf("InvalidAccessKeyId", "The access key %q does not exist.", auth.AccessKey)
	}
	if err := id.Usable(s.now()); err != nil {
		return &s3Error{code: "InvalidAccessKeyId", message: "The access key " + strconv.Quote(auth.AccessKey) + " cannot sign requests: " + err.Error() + ".", cause: err}
	}
	rq.ident = id
	rq.account = s.rootAccessKey()
	return nil
}

// setAnonymous marks a request without a signature.
func (s *server) setAnonymous(rq *request) {
	rq.auth = &sigv4.Auth{}
	rq.anonymous = true
	rq.account = s.rootAccessKey()
}

// authorize checks every permission the request's operation needs.
func (s *server) authorize(r *http.Request, rq *request) error {
	if rq.root {
		return nil
	}
	versioned := rq.version != ""
	var src copySource
	if rq.op == "CopyObject" || rq.op == "UploadPartCopy" {
		var err error
		if src, err = parseCopySource(r.Header.Get("X-Amz-Copy-Source")); err != nil {
			return err
		}
		versioned = src.version != ""
	}
	perms, ok := iam.Permissions(rq.op, versioned)
	if !ok {
		return s.denied(rq, iam.Decision{Effect: iam.Deny}, "no IAM action is defined for "+rq.op)
	}
	for _, p := range perms {
		bucket, resource := rq.bucket, iam.AllBucketsARN
		switch p.Target {
		case iam.TargetBucket:
			resource = iam.BucketARN(rq.bucket)
		case iam.TargetObject:
			resource = iam.ObjectARN(rq.bucket, rq.key)
		case iam.TargetSource: // decided by the source bucket's policy
			bucket, resource = src.bucket, iam.ObjectARN(src.bucket, src.key)
		}
		if err := s.allowed(r, rq, p.Action, bucket, resource); err != nil {
			return err
		}
	}
	return nil
}

// allowed decides one action on one resource of bucket.
func (s *server) allowed(r *http.Request, rq *request, action, bucket, resource string) error {
	if rq.root {
		return nil
	}
	d := s.decide(r, rq, action, bucket, resource)
	rq.decision = d
	if d.Allowed() {
		return nil
	}
	return s.denied(rq, d, action+" on "+resource)
}

// decide is the decision for one action, without side effects.
func (s *server) decide(r *http.Request, rq *request, action, bucket, resource string) iam.Decision {
	ba := s.bucketAuth(bucket)
	req := iam.Request{Action: action, Resource: resource}
	if usesContext(rq, ba.policy) {
		req.Context = rq.context(r, s)
		if s.needsExistingTags(rq, ba.policy) && resource == iam.ObjectARN(rq.bucket, rq.key) {
			s.addExistingTags(rq, req.Context)
		}
	}
	if rq.ident != nil {
		req.Principals = rq.ident.Principals()
		return rq.ident.Decide(req, ba.policy)
	}
	if ba.pab.RestrictPublicBuckets && ba.public {
		// A public policy serves only signed requests while the bucket
		// restricts public access.
		return iam.Decision{Effect: iam.Deny}
	}
	return iam.Evaluate(req, ba.policy)
}

// usesContext reports whether a policy in play may read the request's
// condition keys: building them costs more than deciding without them
// (docs/benchmarks.md, Authorize), so requests decided by policies
// without conditions or variables never do.
func usesContext(rq *request, bucketPolicy *iam.Policy) bool {
	if bucketPolicy.UsesContext() {
		return true
	}
	if id := rq.ident; id != nil {
		if id.Session.UsesContext() {
			return true
		}
		for _, p := range id.Policies {
			if p.UsesContext() {
				return true
			}
		}
	}
	return false
}

// existingTagsPrefix starts the condition keys of an object's tags.
const existingTagsPrefix = "s3:ExistingObjectTag/"

// existingObjectOps act on an object that exists, whose tags a policy
// may test with s3:ExistingObjectTag/<key>.
var existingObjectOps = []string{"GetObject", "HeadObject", "GetObjectAttributes", "DeleteObject",
	"GetObjectTagging", "PutObjectTagging", "DeleteObjectTagging", "GetObjectAcl", "PutObjectAcl"}

// needsExistingTags reports whether the decision may depend on the
// tags of the request's object and they are not yet in its context: only
// then are they read, so that other requests pay nothing for the key.
func (s *server) needsExistingTags(rq *request, bucketPolicy *iam.Policy) bool {
	if rq.tagsRead || !slices.Contains(existingObjectOps, rq.op) {
		return false
	}
	if bucketPolicy.UsesKeyPrefix(existingTagsPrefix) {
		return true
	}
	if id := rq.ident; id != nil {
		if id.Session.UsesKeyPrefix(existingTagsPrefix) {
			return true
		}
		for _, p := range id.Policies {
			if p.UsesKeyPrefix(existingTagsPrefix) {
				return true
			}
		}
	}
	return false
}

// addExistingTags puts the tags of the request's object (the version
// it names, if any) in its context. An object that cannot be read has
// none: the handler then answers for it.
func (s *server) addExistingTags(rq *request, ctx iam.Context) {
	rq.tagsRead = true
	tags, err := s.store.Versions().Tagging(rq.bucket, rq.key, rq.version)
	if err != nil {
		return
	}
	for _, t := range tags {
		ctx.Set(iam.ExistingObjectTagKey(t.Key), t.Value)
	}
}

// denied is AccessDenied, with the decision kept for the log.
func (s *server) denied(rq *request, d iam.Decision, what string) error {
	rq.decision = d
	return &s3Error{code: "AccessDenied", message: "Access Denied.", cause: accessDenied{what: what, decision: d}}
}

// accessDenied is the logged cause of an AccessDenied answer.
type accessDenied struct {
	what     string
	decision iam.Decision
}

func (e accessDenied) Error() string { return e.what + ": " + e.decision.String() }

// context is the request's condition keys, made on first use.
func (rq *request) context(r *http.Request, s *server) iam.Context {
	if rq.ctx != nil {
		return rq.ctx
	}
	ctx := make(iam.Context, 16)
	now := s.now().UTC()
	ctx.Set(iam.KeyCurrentTime, now.Format("2006-01-02T15:04:05Z"))
	ctx.Set(iam.KeyEpochTime, strconv.FormatInt(now.Unix(), 10))
	ctx.Set(iam.KeySecureTransport, strconv.FormatBool(r.TLS != nil))
	if ip := sourceIP(r); ip != "" {
		ctx.Set(iam.KeySourceIP, ip)
	}
	h := r.Header
	setHeader := func(key, name string) {
		if v := h.Get(name); v != "" {
			ctx.Set(key, v)
		}
	}
	setHeader(iam.KeyReferer, "Referer")
	setHeader(iam.KeyUserAgent, "User-Agent")
	setHeader(iam.KeyACL, "X-Amz-Acl")
	if !rq.anonymous {
		switch rq.auth.Kind {
		case sigv4.V2Header, sigv4.V2Presigned, sigv4.V2PostForm:
			ctx.Set(iam.KeySignatureVersion, "AWS")
		default:
			ctx.Set(iam.KeySignatureVersion, "AWS4-HMAC-SHA256")
		}
		switch {
		case rq.op == "PostObject":
			ctx.Set(iam.KeyAuthType, "POST")
		case rq.auth.Kind == sigv4.V4Presigned || rq.auth.Kind == sigv4.V2Presigned:
			ctx.Set(iam.KeyAuthType, "REST-QUERY-STRING")
		default:
			ctx.Set(iam.KeyAuthType, "REST-HEADER")
		}
		if rq.ident != nil && rq.ident.User != "" {
			ctx.Set(iam.KeyUsername, rq.ident.User)
			ctx.Set(iam.KeyUserID, rq.ident.AccessKey)
		}
	}
	q := rq.query
	if strings.HasPrefix(rq.op, "ListObject") {
		for key, param := range map[string]string{iam.KeyPrefix: "prefix", iam.KeyDelimiter: "delimiter", iam.KeyMaxKeys: "max-keys"} {
			if q.Has(param) {
				ctx.Set(key, q.Get(param))
			}
		}
	}
	if rq.version != "" {
		ctx.Set(iam.KeyVersionID, rq.version)
	}
	if tags := h.Get("X-Amz-Tagging"); tags != "" {
		setRequestTags(ctx, tags)
	}
	rq.ctx = ctx
	return ctx
}

// setRequestTags puts the tags of an x-amz-tagging header in the context.
func setRequestTags(ctx iam.Context, header string) {
	vals, err := url.ParseQuery(header)
	if err != nil {
		return // the handler refuses the header
	}
	var keys []string
	for k, v := range vals {
		keys = append(keys, k)
		ctx.Set(iam.RequestObjectTagKey(k), v...)
	}
	ctx.Set(iam.KeyRequestObjectTagKeys, keys...)
}

// sourceIP is the client's address without its port.
func sourceIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	return a.WithZone("").Unmap().String()
}

// secretOf is the secret key of the request's signer, which encrypts
// admin bodies; "" for anonymous requests.
func (s *server) secretOf(rq *request) string {
	if rq.anonymous || rq.auth == nil {
		return ""
	}
	if rq.root {
		return s.creds[rq.auth.AccessKey]
	}
	if rq.ident != nil {
		return rq.ident.SecretKey
	}
	return ""
}

// keyring is every key that may sign: the root credentials, then the
// users and service accounts.
type keyring struct {
	root sigv4.StaticCredentials
	dir  *identity.Directory
}

func (k keyring) SecretKey(ak string) (string, bool) {
	if sk, ok := k.root[ak]; ok {
		return sk, true
	}
	if id, ok := k.dir.Lookup(ak); ok && !id.Sealed {
		return id.SecretKey, true
	}
	return "", false
}
