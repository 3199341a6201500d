package s3api

import (
	"net/http"
	"net/url"
	"strings"
)

// handlerFunc serves one S3 operation. A returned error becomes the XML
// error response (or, once the body has started, only a log entry).
type handlerFunc func(w http.ResponseWriter, r *http.Request, rq *request) error

// level is the part of the path an operation addresses.
type level int

const (
	service level = iota // "/"
	bucket               // "/bucket" or "/bucket/"
	object               // "/bucket/key..."
)

// levelOf is the level a request path addresses: "/", "/bucket" with an
// optional slash, or "/bucket/" and a key of one byte or more (which may
// hold more slashes, even empty segments). ok is false for anything else
// ("//key", a path not starting with a slash). Handlers split the path
// themselves (splitPath); routing only needs the level, and a few string
// operations cost far less than a regular expression per route tried.
func levelOf(path string) (l level, ok bool) {
	if path == "/" {
		return service, true
	}
	rest, found := strings.CutPrefix(path, "/")
	if !found {
		return 0, false
	}
	name, key, slash := strings.Cut(rest, "/")
	switch {
	case name == "":
		return 0, false
	case !slash || key == "":
		return bucket, true
	}
	return object, true
}

// route is one line of the route table: a method, a path level, the query
// parameters (and optionally a header) that must be present.
type route struct {
	name    string
	method  string
	level   level
	query   []string
	header  string
	handler handlerFunc
}

// routes is the route table. The router takes the first match, so
// operations selected by a query parameter or header come before the
// plain ones on the same path, and unsupported subresources before the
// plain ones too.
func (s *server) routes() []route {
	return []route{
		{name: "ListBuckets", method: http.MethodGet, level: service, handler: s.listBuckets},

		{name: "GetBucketLocation", method: http.MethodGet, level: bucket, query: []string{"location"}, handler: s.getBucketLocation},
		{name: "GetBucketVersioning", method: http.MethodGet, level: bucket, query: []string{"versioning"}, handler: s.getBucketVersioning},
		{name: "PutBucketVersioning", method: http.MethodPut, level: bucket, query: []string{"versioning"}, handler: s.putBucketVersioning},
		{name: "GetBucketAcl", method: http.MethodGet, level: bucket, query: []string{"acl"}, handler: s.getACL},
		{name: "GetBucketTagging", method: http.MethodGet, level: bucket, query: []string{"tagging"}, handler: s.getBucketTagging},
		{name: "PutBucketTagging", method: http.MethodPut, level: bucket, query: []string{"tagging"}, handler: s.putBucketTagging},
		{name: "DeleteBucketTagging", method: http.MethodDelete, level: bucket, query: []string{"tagging"}, handler: s.deleteBucketTagging},
		{name: "PutBucketAcl", method: http.MethodPut, level: bucket, query: []string{"acl"}, handler: s.putACL},
		{name: "GetBucketPolicy", method: http.MethodGet, level: bucket, query: []string{"policy"}, handler: s.getBucketPolicy},
		{name: "PutBucketPolicy", method: http.MethodPut, level: bucket, query: []string{"policy"}, handler: s.putBucketPolicy},
		{name: "DeleteBucketPolicy", method: http.MethodDelete, level: bucket, query: []string{"policy"}, handler: s.deleteBucketPolicy},
		{name: "GetBucketPolicyStatus", method: http.MethodGet, level: bucket, query: []string{"policyStatus"}, handler: s.getBucketPolicyStatus},
		{name: "GetPublicAccessBlock", method: http.MethodGet, level: bucket, query: []string{"publicAccessBlock"}, handler: s.getPublicAccessBlock},
		{name: "PutPublicAccessBlock", method: http.MethodPut, level: bucket, query: []string{"publicAccessBlock"}, handler: s.putPublicAccessBlock},
		{name: "DeletePublicAccessBlock", method: http.MethodDelete, level: bucket, query: []string{"publicAccessBlock"}, handler: s.deletePublicAccessBlock},
		{name: "GetBucketCors", method: http.MethodGet, level: bucket, query: []string{"cors"}, handler: s.getBucketCors},
		{name: "PutBucketCors", method: http.MethodPut, level: bucket, query: []string{"cors"}, handler: s.putBucketCors},
		{name: "DeleteBucketCors", method: http.MethodDelete, level: bucket, query: []string{"cors"}, handler: s.deleteBucketCors},
		{name: "GetBucketLifecycleConfiguration", method: http.MethodGet, level: bucket, query: []string{"lifecycle"}, handler: s.getBucketLifecycle},
		{name: "PutBucketLifecycleConfiguration", method: http.MethodPut, level: bucket, query: []string{"lifecycle"}, handler: s.putBucketLifecycle},
		{name: "DeleteBucketLifecycle", method: http.MethodDelete, level: bucket, query: []string{"lifecycle"}, handler: s.deleteBucketLifecycle},
		{name: "ListObjectVersions", method: http.MethodGet, level: bucket, query: []string{"versions"}, handler: s.listObjectVersions},
		{name: "ListMultipartUploads", method: http.MethodGet, level: bucket, query: []string{"uploads"}, handler: s.listMultipartUploads},
		{name: "DeleteObjects", method: http.MethodPost, level: bucket, query: []string{"delete"}, handler: s.deleteObjects},
		{name: "GetObjectLockConfiguration", method: http.MethodGet, level: bucket, query: []string{"object-lock"}, handler: s.getObjectLockConfig},
		{name: "PutObjectLockConfiguration", method: http.MethodPut, level: bucket, query: []string{"object-lock"}, handler: s.putObjectLockConfig},

		{name: "UploadPartCopy", method: http.MethodPut, level: object, query: []string{"partNumber", "uploadId"}, header: "X-Amz-Copy-Source", handler: s.uploadPartCopy},
		{name: "UploadPart", method: http.MethodPut, level: object, query: []string{"partNumber", "uploadId"}, handler: s.uploadPart},
		{name: "ListParts", method: http.MethodGet, level: object, query: []string{"uploadId"}, handler: s.listParts},
		{name: "CompleteMultipartUpload", method: http.MethodPost, level: object, query: []string{"uploadId"}, handler: s.completeMultipartUpload},
		{name: "AbortMultipartUpload", method: http.MethodDelete, level: object, query: []string{"uploadId"}, handler: s.abortMultipartUpload},
		{name: "CreateMultipartUpload", method: http.MethodPost, level: object, query: []string{"uploads"}, handler: s.createMultipartUpload},
		{name: "GetObjectTagging", method: http.MethodGet, level: object, query: []string{"tagging"}, handler: s.getObjectTagging},
		{name: "PutObjectTagging", method: http.MethodPut, level: object, query: []string{"tagging"}, handler: s.putObjectTagging},
		{name: "DeleteObjectTagging", method: http.MethodDelete, level: object, query: []string{"tagging"}, handler: s.deleteObjectTagging},
		{name: "GetObjectAcl", method: http.MethodGet, level: object, query: []string{"acl"}, handler: s.getACL},
		{name: "GetObjectAttributes", method: http.MethodGet, level: object, query: []string{"attributes"}, handler: s.getObjectAttributes},
		{name: "GetObjectRetention", method: http.MethodGet, level: object, query: []string{"retention"}, handler: s.getObjectRetention},
		{name: "PutObjectRetention", method: http.MethodPut, level: object, query: []string{"retention"}, handler: s.putObjectRetention},
		{name: "GetObjectLegalHold", method: http.MethodGet, level: object, query: []string{"legal-hold"}, handler: s.getObjectLegalHold},
		{name: "PutObjectLegalHold", method: http.MethodPut, level: object, query: []string{"legal-hold"}, handler: s.putObjectLegalHold},
		{name: "PutObjectAcl", method: http.MethodPut, level: object, query: []string{"acl"}, handler: s.putACL},
		{name: "GetObject", method: http.MethodGet, level: object, query: []string{"partNumber"}, handler: s.getObject},
		{name: "HeadObject", method: http.MethodHead, level: object, query: []string{"partNumber"}, handler: s.headObject},
		{name: "CopyObject", method: http.MethodPut, level: object, header: "X-Amz-Copy-Source", handler: s.copyObject},
	}
}

// plainRoutes are the operations without a selecting query parameter;
// they come after the check for unsupported subresources.
func (s *server) plainRoutes() []route {
	return []route{
		{name: "ListObjectsV2", method: http.MethodGet, level: bucket, query: []string{"list-type"}, handler: s.listObjectsV2},
		{name: "ListObjects", method: http.MethodGet, level: bucket, handler: s.listObjectsV1},
		{name: "HeadBucket", method: http.MethodHead, level: bucket, handler: s.headBucket},
		{name: "CreateBucket", method: http.MethodPut, level: bucket, handler: s.createBucket},
		{name: "DeleteBucket", method: http.MethodDelete, level: bucket, handler: s.deleteBucket},
		{name: "PostObject", method: http.MethodPost, level: bucket, header: "Content-Type", handler: s.postObject},

		{name: "PutObject", method: http.MethodPut, level: object, handler: s.putObject},
		{name: "GetObject", method: http.MethodGet, level: object, handler: s.getObject},
		{name: "HeadObject", method: http.MethodHead, level: object, handler: s.headObject},
		{name: "DeleteObject", method: http.MethodDelete, level: object, handler: s.deleteObject},
	}
}

// unsupported are S3 subresources this server does not implement; a
// request naming one gets NotImplemented rather than being mistaken for a
// plain GET or PUT (a PUT ?policy must not overwrite an object).
var unsupported = []string{
	"accelerate", "acl", "analytics", "attributes", "cors", "encryption",
	"intelligent-tiering", "inventory", "legal-hold", "lifecycle", "logging",
	"metrics", "notification", "object-lock", "ownershipControls", "policy",
	"policyStatus", "publicAccessBlock", "replication", "requestPayment",
	"restore", "retention", "select", "tagging", "torrent", "versioning",
	"versions", "website", "uploads", "uploadId", "partNumber", "delete",
	"location",
	// S3 Express and bucket metadata operations: a PUT ?renameObject
	// taken for a PutObject would replace the object with an empty one.
	"renameObject", "session", "metadataTable", "metadataConfiguration",
}

// router picks the operation of an S3 request: the first line of the
// route table whose method, level, query parameters and header match,
// else Unsupported when the query names a subresource this server does
// not serve, else the first matching plain route, else Unknown (answered
// MethodNotAllowed). The query is parsed once per request, not once per
// line tried, and nothing is allocated to pass the choice on.
type router struct {
	first, plain []routed
	unsupported  routed
	unknown      routed
}

// routed is a route with what serving it needs.
type routed struct {
	route
	metrics *opMetrics
}

func (s *server) router() *router {
	compile := func(rts []route) []routed {
		out := make([]routed, len(rts))
		for i, rt := range rts {
			out[i] = routed{rt, s.opMetricsFor(rt.name)}
		}
		return out
	}
	one := func(name string, h handlerFunc) routed {
		return routed{route{name: name, handler: h}, s.opMetricsFor(name)}
	}
	return &router{
		first:       compile(s.routes()),
		plain:       compile(s.plainRoutes()),
		unsupported: one("Unsupported", s.notImplemented),
		unknown:     one("Unknown", s.methodNotAllowed),
	}
}

// match returns the route that serves r, whose query is q.
func (rt *router) match(r *http.Request, q url.Values) *routed {
	l, ok := levelOf(r.URL.Path)
	if ok {
		if m := matchIn(rt.first, r, l, q); m != nil {
			return m
		}
	}
	if namesSubresource(q) {
		return &rt.unsupported
	}
	if ok {
		if m := matchIn(rt.plain, r, l, q); m != nil {
			return m
		}
	}
	return &rt.unknown
}

func matchIn(routes []routed, r *http.Request, l level, q url.Values) *routed {
	for i := range routes {
		rt := &routes[i]
		if rt.method == r.Method && rt.level == l && rt.requiredIn(r, q) {
			return rt
		}
	}
	return nil
}

// requiredIn reports whether the request carries every query parameter
// the route names and, if it names one, its header.
func (rt *route) requiredIn(r *http.Request, q url.Values) bool {
	for _, k := range rt.query {
		if !q.Has(k) {
			return false
		}
	}
	return rt.header == "" || r.Header.Get(rt.header) != ""
}

// authorizedInHandler are the operations whose handler authorizes them
// (authorize.go): DeleteObjects key by key, ListBuckets bucket by
// bucket, PostObject once its form is read; the refusals change nothing.
func authorizedInHandler(op string) bool {
	switch op {
	case "DeleteObjects", "ListBuckets", "PostObject", "Unsupported", "Unknown":
		return true
	}
	return false
}

// namesSubresource reports whether the query names a subresource this
// server does not serve.
func namesSubresource(q url.Values) bool {
	for _, k := range unsupported {
		if q.Has(k) {
			return true
		}
	}
	return false
}

func (s *server) notImplemented(w http.ResponseWriter, r *http.Request, rq *request) error {
	return errorf("NotImplemented", "This server does not implement %s of this resource.", r.Method)
}

func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request, rq *request) error {
	return &s3Error{code: "MethodNotAllowed"}
}
