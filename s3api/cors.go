package s3api

import (
	"encoding/xml"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/xfs3/xfs3/store"
)

// Bucket CORS, as S3 does it:
//
//	PUT/GET/DELETE /b?cors ─► the bucket's CORSConfiguration, checked by
//	   parseCORS and kept in canonical form (store.ConfigCORS)
//
//	OPTIONS /b[/k] (a preflight, never signed) ─► middleware ─► preflight:
//	   Origin, Access-Control-Request-Method and every name of
//	   Access-Control-Request-Headers must match one rule ─► 200 with the
//	   rule's Access-Control-* headers, else 403 AccessForbidden
//
//	any other request to /b[/k] with an Origin ─► middleware ─► the first
//	   rule matching the origin and the method adds its headers before
//	   the request is authenticated, so that errors carry them too
//
// The first matching rule decides, as in S3. An origin or header pattern
// holds at most one '*', which matches any run of bytes, the empty one
// included. Origins are compared with case (browsers send them in lower
// case), header names without it. The parsed rules are cached by bucket
// until the store's configuration generation moves, as bucket policies
// are (bucketpolicy.go).

const (
	// maxCORSRules is S3's limit on the rules of a configuration.
	maxCORSRules = 100
	// maxCORSIDLen is S3's limit on a rule's ID, in characters.
	maxCORSIDLen = 255
	// maxRequestedHeaders bounds the names of one
	// Access-Control-Request-Headers that are matched against the rules;
	// a preflight naming more is refused, so that one request cannot make
	// the server compare a megabyte of names with every pattern.
	maxRequestedHeaders = 1000
)

// corsMethods are the methods a rule may allow.
var corsMethods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodHead}

// corsVary is the Vary sent with CORS headers: the answer depends on them.
const corsVary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

// corsDocument is the CORSConfiguration document as it travels. ID and
// MaxAgeSeconds are slices so that a rule repeating them is caught.
type corsDocument struct {
	XMLName struct{}           `xml:"CORSConfiguration"`
	Xmlns   string             `xml:"xmlns,attr,omitempty"`
	Rules   []corsDocumentRule `xml:"CORSRule"`
}

// corsDocumentRule is one CORSRule, its elements in the order S3 answers them.
type corsDocumentRule struct {
	AllowedHeaders []string `xml:"AllowedHeader"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader"`
	ID             []string `xml:"ID"`
	MaxAgeSeconds  []string `xml:"MaxAgeSeconds"`
}

// parseCORS decodes a PutBucketCors body and checks it as S3 does: an
// error is MalformedXML for a document its schema refuses, InvalidRequest
// for values it refuses. MaxAgeSeconds comes back in canonical form.
func parseCORS(data []byte) (*corsDocument, error) {
	var doc corsDocument
	if err := decodeXML(data, &doc); err != nil {
		return nil, err
	}
	switch {
	case len(doc.Rules) == 0:
		return nil, &s3Error{code: "MalformedXML"}
	case len(doc.Rules) > maxCORSRules:
		return nil, errorf("MalformedXML", "The CORS configuration has %d rules: at most %d are allowed.", len(doc.Rules), maxCORSRules)
	}
	for i := range doc.Rules {
		if err := checkCORSRule(&doc.Rules[i]); err != nil {
			return nil, err
		}
	}
	return &doc, nil
}

// checkCORSRule checks one rule and makes its MaxAgeSeconds canonical.
func checkCORSRule(r *corsDocumentRule) error {
	if len(r.AllowedOrigins) == 0 || len(r.AllowedMethods) == 0 || len(r.ID) > 1 || len(r.MaxAgeSeconds) > 1 {
		return &s3Error{code: "MalformedXML"} // S3's schema: each at least (at most) once
	}
	for _, m := range r.AllowedMethods {
		if !isCORSMethod(m) {
			return errorf("InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is %s", m)
		}
	}
	for _, o := range r.AllowedOrigins {
		if strings.Count(o, "*") > 1 {
			return errorf("InvalidRequest", "AllowedOrigin %q can not have more than one wildcard.", o)
		}
	}
	for _, h := range r.AllowedHeaders {
		if strings.Count(h, "*") > 1 {
			return errorf("InvalidRequest", "AllowedHeader %q can not have more than one wildcard.", h)
		}
	}
	for _, h := range r.ExposeHeaders {
		if strings.Contains(h, "*") {
			return errorf("InvalidRequest", "ExposeHeader %q contains wildcard. We currently do not support wildcard for ExposeHeader.", h)
		}
	}
	if len(r.ID) == 1 && utf8.RuneCountInString(r.ID[0]) > maxCORSIDLen {
		return errorf("InvalidRequest", "The ID of a CORSRule cannot be longer than %d characters.", maxCORSIDLen)
	}
	if len(r.MaxAgeSeconds) == 1 {
		n, err := strconv.ParseInt(strings.TrimSpace(r.MaxAgeSeconds[0]), 10, 32)
		if err != nil {
			return &s3Error{code: "MalformedXML", cause: err}
		}
		if n < 0 {
			return errorf("InvalidRequest", "MaxAgeSeconds cannot be negative.")
		}
		r.MaxAgeSeconds[0] = strconv.FormatInt(n, 10)
	}
	return nil
}

func isCORSMethod(m string) bool { return slices.Contains(corsMethods, m) }

// marshal is the canonical form of a checked document, which the store
// keeps and GetBucketCors answers.
func (d *corsDocument) marshal() ([]byte, error) {
	d.Xmlns = xmlns
	return xml.Marshal(d)
}

// corsConfig is a bucket's checked configuration, ready to match.
type corsConfig struct {
	rules []corsRule
}

// corsRule is one rule with its answers joined once.
type corsRule struct {
	origins      []string
	methods      []string
	headers      []string // lower case
	allowMethods string   // Access-Control-Allow-Methods
	expose       string   // Access-Control-Expose-Headers, "" for none
	maxAge       string   // Access-Control-Max-Age, "" for none
}

// compile makes a checked document ready to match.
func (d *corsDocument) compile() *corsConfig {
	c := &corsConfig{rules: make([]corsRule, len(d.Rules))}
	for i, r := range d.Rules {
		rule := corsRule{
			origins:      r.AllowedOrigins,
			methods:      r.AllowedMethods,
			headers:      make([]string, len(r.AllowedHeaders)),
			allowMethods: strings.Join(r.AllowedMethods, ", "),
			expose:       strings.Join(r.ExposeHeaders, ", "),
		}
		for j, h := range r.AllowedHeaders {
			rule.headers[j] = strings.ToLower(h)
		}
		if len(r.MaxAgeSeconds) == 1 {
			rule.maxAge = r.MaxAgeSeconds[0]
		}
		c.rules[i] = rule
	}
	return c
}

// wildcardMatch reports whether s matches pattern, whose one '*' (if
// any) stands for any run of bytes.
func wildcardMatch(pattern, s string) bool {
	before, after, star := strings.Cut(pattern, "*")
	if !star {
		return s == pattern
	}
	return len(s) >= len(before)+len(after) && strings.HasPrefix(s, before) && strings.HasSuffix(s, after)
}

// match finds the first rule allowing origin, method and every one of
// headers (lower case), and the Access-Control-Allow-Origin it answers:
// "*" when the origin matched the pattern "*", the origin itself
// otherwise.
func (c *corsConfig) match(origin, method string, headers []string) (*corsRule, string) {
	for i := range c.rules {
		r := &c.rules[i]
		allow, ok := r.allowOrigin(origin)
		if ok && r.allowsMethod(method) && r.allowsHeaders(headers) {
			return r, allow
		}
	}
	return nil, ""
}

func (r *corsRule) allowOrigin(origin string) (string, bool) {
	for _, p := range r.origins {
		if p == "*" {
			return "*", true
		}
		if wildcardMatch(p, origin) {
			return origin, true
		}
	}
	return "", false
}

func (r *corsRule) allowsMethod(method string) bool { return slices.Contains(r.methods, method) }

func (r *corsRule) allowsHeaders(names []string) bool {
next:
	for _, name := range names {
		for _, p := range r.headers {
			if wildcardMatch(p, name) {
				continue next
			}
		}
		return false
	}
	return true
}

// setHeaders writes the rule's answer; allowHeaders is the
// Access-Control-Allow-Headers of a preflight ("" for none).
func (r *corsRule) setHeaders(h http.Header, allowOrigin, allowHeaders string) {
	h.Set("Access-Control-Allow-Origin", allowOrigin)
	if allowOrigin != "*" {
		// S3 allows credentials to every origin it names.
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", r.allowMethods)
	if allowHeaders != "" {
		h.Set("Access-Control-Allow-Headers", allowHeaders)
	}
	if r.expose != "" {
		h.Set("Access-Control-Expose-Headers", r.expose)
	}
	if r.maxAge != "" {
		h.Set("Access-Control-Max-Age", r.maxAge)
	}
	h.Add("Vary", corsVary)
}

// requestedHeaders splits Access-Control-Request-Headers into lower-case
// names; ok is false past maxRequestedHeaders.
func requestedHeaders(v string) (names []string, ok bool) {
	for part := range strings.SplitSeq(v, ",") {
		name := strings.ToLower(strings.Trim(part, " \t"))
		if name == "" {
			continue
		}
		if len(names) == maxRequestedHeaders {
			return nil, false
		}
		names = append(names, name)
	}
	return names, true
}

// corsConfigs caches parsed configurations by bucket name: a nil entry
// is a bucket without one. Buckets that cannot be read (missing ones
// included) are not cached, so requests naming random buckets cannot
// grow it.
type corsConfigs struct {
	mu  sync.RWMutex
	gen uint64 // the store's configuration generation m was read at
	m   map[string]*corsConfig
}

// bucketCORS returns a bucket's configuration (nil: none), from the
// cache when nothing changed since it was read.
func (s *server) bucketCORS(bucket string) (*corsConfig, error) {
	cfgs := s.store.BucketConfigs()
	gen := cfgs.Generation()
	c := &s.cors
	c.mu.RLock()
	cc, ok := c.m[bucket]
	fresh := c.gen == gen
	c.mu.RUnlock()
	if ok && fresh {
		return cc, nil
	}
	doc, err := cfgs.Get(bucket, store.ConfigCORS)
	switch {
	case errors.Is(err, store.ErrNoSuchConfig):
		cc = nil
	case err != nil:
		return nil, err
	default:
		cc = s.loadCORS(bucket, doc)
	}
	c.mu.Lock()
	if c.gen != gen || c.m == nil {
		c.gen, c.m = gen, map[string]*corsConfig{}
	}
	c.m[bucket] = cc
	c.mu.Unlock()
	return cc, nil
}

// loadCORS parses a stored configuration. Only checked ones are stored;
// one that no longer parses (damage, a newer build's) allows nothing.
func (s *server) loadCORS(bucket string, doc []byte) *corsConfig {
	d, err := parseCORS(doc)
	if err != nil {
		s.log.Error().Str("bucket", bucket).Err(err).Msg("stored CORS configuration does not parse; ignored")
		return nil
	}
	return d.compile()
}

func (s *server) putBucketCors(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, int64(store.ConfigCORS.MaxSize()))
	if err != nil {
		return err
	}
	d, err := parseCORS(data)
	if err != nil {
		return err
	}
	doc, err := d.marshal()
	if err != nil {
		return err
	}
	return s.putCanonical(w, rq, store.ConfigCORS, "CORS", doc)
}

func (s *server) getBucketCors(w http.ResponseWriter, r *http.Request, rq *request) error {
	return s.getCanonical(w, rq, store.ConfigCORS, "NoSuchCORSConfiguration", "The CORS configuration does not exist")
}

func (s *server) deleteBucketCors(w http.ResponseWriter, r *http.Request, rq *request) error {
	return s.deleteConfig(w, rq, store.ConfigCORS)
}

// addCORSHeaders answers a request that is not a preflight: when it has
// an Origin and a rule of its bucket allows that origin and its method
// (Access-Control-Request-Method when sent, as S3 reads it), the rule's
// headers. Request headers are not checked: that is the preflight's job.
// Without a match nothing is added, and the request is served as usual.
func (s *server) addCORSHeaders(h http.Header, r *http.Request, bucket string) {
	origin := r.Header.Get("Origin")
	if origin == "" || bucket == "" {
		return
	}
	cc, err := s.bucketCORS(bucket)
	if err != nil || cc == nil {
		return // the operation reports a bucket it cannot read
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if method == "" {
		method = r.Method
	}
	if rule, allow := cc.match(origin, method, nil); rule != nil {
		rule.setHeaders(h, allow, "")
	}
}

// corsErrorBody is the error document of a refused preflight, its
// elements in S3's order.
type corsErrorBody struct {
	XMLName      struct{} `xml:"Error"`
	Code         string
	Message      string
	Method       string `xml:",omitempty"`
	ResourceType string `xml:",omitempty"`
	RequestID    string `xml:"RequestId"`
	HostID       string `xml:"HostId"`
}

// S3's messages for refused preflights ("evalution" is S3's spelling).
const (
	corsNoOrigin   = "Insufficient information. Origin request header needed."
	corsNoBucket   = "CORSResponse: Bucket not found"
	corsNotEnabled = "CORSResponse: CORS is not enabled for this bucket."
	corsNotAllowed = "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."
)

// preflightOp names preflights in the log and the metrics.
const preflightOp = "PreflightCORS"

// preflight answers an OPTIONS request, which browsers send unsigned
// before a cross-origin request: no policy applies (the request it
// announces is authorized when it comes). It decides in S3's order: an
// Origin, a bucket, a configuration, a method, then a rule allowing all
// of them.
func (s *server) preflight(w http.ResponseWriter, r *http.Request, rq *request) {
	origin := r.Header.Get("Origin")
	method, hasMethod := r.Header.Get("Access-Control-Request-Method"), r.Header["Access-Control-Request-Method"] != nil
	shown := method // the Method of an error: OPTIONS when none was asked
	if !hasMethod {
		shown = http.MethodOptions
	}
	if origin == "" {
		s.refusePreflight(w, rq, errorf("BadRequest", corsNoOrigin), "", "")
		return
	}
	var cc *corsConfig
	var err error
	if rq.bucket != "" {
		cc, err = s.bucketCORS(rq.bucket)
	}
	switch {
	case rq.bucket == "", errors.Is(err, store.ErrNoSuchBucket), errors.Is(err, store.ErrInvalidBucketName):
		s.refusePreflight(w, rq, errorf("AccessForbidden", corsNoBucket), shown, "BUCKET")
		return
	case err != nil:
		s.writeError(w, r, rq, err)
		return
	case cc == nil:
		s.refusePreflight(w, rq, errorf("AccessForbidden", corsNotEnabled), shown, "BUCKET")
		return
	}
	if !isCORSMethod(method) {
		name := method
		if !hasMethod {
			name = "null"
		}
		s.refusePreflight(w, rq, errorf("BadRequest", "Invalid Access-Control-Request-Method: %s", name), "", "")
		return
	}
	resource := "BUCKET"
	if rq.key != "" {
		resource = "OBJECT"
	}
	headers, ok := requestedHeaders(strings.Join(r.Header.Values("Access-Control-Request-Headers"), ","))
	var rule *corsRule
	var allow string
	if ok {
		rule, allow = cc.match(origin, method, headers)
	}
	if rule == nil {
		s.refusePreflight(w, rq, errorf("AccessForbidden", corsNotAllowed), shown, resource)
		return
	}
	rule.setHeaders(w.Header(), allow, strings.Join(headers, ", "))
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// refusePreflight answers a preflight with an error document that names
// the method asked for and the kind of resource, as S3's does.
func (s *server) refusePreflight(w http.ResponseWriter, rq *request, e *s3Error, method, resourceType string) {
	rq.errCode, rq.err = e.code, e
	writeXML(w, e.Status(), corsErrorBody{
		Code: e.code, Message: e.Message(), Method: method, ResourceType: resourceType,
		RequestID: rq.id, HostID: rq.hostID,
	})
}
