package sigv4

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Signature Version 2 string to sign:
//
//	Method \n Content-MD5 \n Content-Type \n Date (or Expires when presigned) \n
//	CanonicalizedAmzHeaders (each "x-amz-name:v1,v2\n", sorted)
//	CanonicalizedResource   (path, then "?" and the sub-resources below, sorted)
//
// Clients write the resource in more than one way, and S3 accepts each:
//
//	                       sub-resources signed        path of GET /bucket?…
//	minio-go, MinIO, S3's  subResources                /bucket
//	botocore (boto3, CLI)  botocoreSubResources        /bucket/ (its auth_path)
//
// The verifier tries the forms a request can have, most common first:
// a second list only when the query holds a parameter that one list names
// and the other does not, a second path only for a bucket-level request.
// Every form signs the same method, headers and resource, so accepting
// several lets no signature stand for another request.

// subResources are the query parameters that take part in the V2
// canonicalized resource as S3 documents them, with those MinIO and
// minio-go add; sorted.
var subResources = []string{
	"acl", "cors", "delete", "encryption", "legal-hold", "lifecycle", "location",
	"logging", "notification", "partNumber", "policy", "replication", "requestPayment",
	"response-cache-control", "response-content-disposition", "response-content-encoding",
	"response-content-language", "response-content-type", "response-expires",
	"retention", "select", "select-type", "tagging", "torrent", "uploadId", "uploads",
	"versionId", "versioning", "versions", "website",
}

// botocoreSubResources are botocore's (HmacV1Auth.QSAOfInterest in
// botocore/auth.py), sorted: without encryption, legal-hold and
// retention, with a few S3 added later.
var botocoreSubResources = []string{
	"accelerate", "acl", "analytics", "cors", "defaultObjectAcl", "delete", "inventory",
	"lifecycle", "location", "logging", "metrics", "notification", "object-lock",
	"partNumber", "policy", "replication", "requestPayment",
	"response-cache-control", "response-content-disposition", "response-content-encoding",
	"response-content-language", "response-content-type", "response-expires",
	"restore", "select", "select-type", "storageClass", "tagging", "torrent",
	"uploadId", "uploads", "versionId", "versioning", "versions", "website",
}

// StringToSignV2 builds the V2 string to sign with S3's sub-resources and
// the path as sent; date is the Date header, or the Expires parameter of
// a presigned URL.
func StringToSignV2(r *http.Request, date string) (string, error) {
	pairs, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return "", malformed("query: %v", err)
	}
	return v2Head(r, date) + canonicalURI(r.URL) + subResourceQuery(pairs, subResources), nil
}

// stringsToSignV2 lists every string to sign a client may have signed r
// with (see the top of this file), StringToSignV2's first. dates are the
// candidates for the date line.
func stringsToSignV2(r *http.Request, dates ...string) ([]string, error) {
	pairs, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, malformed("query: %v", err)
	}
	paths := []string{canonicalURI(r.URL)}
	if isBucketPath(r.URL.Path) {
		paths = append(paths, paths[0]+"/")
	}
	resources := []string{subResourceQuery(pairs, subResources)}
	if b := subResourceQuery(pairs, botocoreSubResources); b != resources[0] {
		resources = append(resources, b)
	}
	var out []string
	for _, d := range dates {
		head := v2Head(r, d)
		for _, p := range paths {
			for _, q := range resources {
				out = append(out, head+p+q)
			}
		}
	}
	return out, nil
}

// v2Head is the string to sign up to the resource: method, Content-MD5,
// Content-Type, date and the x-amz-* headers. Header values are trimmed
// at their ends only: V2 clients keep the spaces inside a value.
func v2Head(r *http.Request, date string) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(r.Header.Get("Content-Md5") + "\n")
	b.WriteString(r.Header.Get("Content-Type") + "\n")
	b.WriteString(date + "\n")
	var names []string
	for k := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") {
			names = append(names, lk)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		b.WriteString(k + ":")
		for i, v := range r.Header.Values(k) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSpace(v))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// subResourceQuery is "?k1=v1&k2" for the parameters of pairs that list
// (sorted) names, in its order, each once with its first value; "" when
// there are none. Values are decoded, as clients sign them.
func subResourceQuery(pairs []queryPair, list []string) string {
	var b strings.Builder
	sep := byte('?')
	for _, sr := range list {
		i := slices.IndexFunc(pairs, func(p queryPair) bool { return p.key == sr })
		if i < 0 {
			continue
		}
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(sr)
		if v := pairs[i].value; v != "" {
			b.WriteString("=" + v)
		}
	}
	return b.String()
}

// isBucketPath reports a path that names a bucket alone: "/bucket".
func isBucketPath(p string) bool {
	return len(p) > 1 && p[0] == '/' && !strings.Contains(p[1:], "/")
}

func signV2(secret, sts string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// matchV2 reports whether sig signs one of the strings with secret.
func matchV2(secret string, stss []string, sig string) bool {
	for _, sts := range stss {
		if equalSig(signV2(secret, sts), sig) {
			return true
		}
	}
	return false
}

// v2Time reads the time of a V2 request: x-amz-date when the header is
// there (even empty), else Date; in any HTTP date form (RFC 1123 is what
// clients send) or V4's ISO 8601 form. S3 refuses a missing date, one
// that does not parse and one before 1970 with AccessDenied.
func v2Time(r *http.Request) (time.Time, error) {
	name := headerDate
	if len(r.Header.Values(headerDate)) == 0 {
		name = "Date"
	}
	s := r.Header.Get(name)
	if s == "" {
		return time.Time{}, fmt.Errorf("%w: no Date or x-amz-date header", ErrInvalidDate)
	}
	t, err := http.ParseTime(s)
	if err != nil {
		t, err = time.Parse(timeFormat, s)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s %q", ErrInvalidDate, name, s)
	}
	if t.Unix() < 0 {
		return time.Time{}, fmt.Errorf("%w: %s %q is before 1970", ErrInvalidDate, name, s)
	}
	return t, nil
}

func (v *Verifier) verifyV2Header(r *http.Request, authz string) (*Auth, error) {
	ak, sig, ok := strings.Cut(strings.TrimPrefix(authz, "AWS "), ":")
	if !ok || ak == "" || sig == "" {
		return nil, fmt.Errorf("%w: AWS authorization header is invalid.  Expected AwsAccessKeyId:signature", ErrInvalidArgument)
	}
	t, err := v2Time(r)
	if err != nil {
		return nil, err
	}
	if err := v.checkSkew(t); err != nil {
		return nil, err
	}
	secret, err := v.secret(ak)
	if err != nil {
		return nil, err
	}
	// The date line is the Date header as sent. S3 asks a client that
	// sends x-amz-date to leave the line empty; some sign both anyway.
	dates := []string{r.Header.Get("Date")}
	if dates[0] != "" && len(r.Header.Values(headerDate)) > 0 {
		dates = append(dates, "")
	}
	stss, err := stringsToSignV2(r, dates...)
	if err != nil {
		return nil, err
	}
	if !matchV2(secret, stss, sig) {
		return nil, ErrSignatureMismatch
	}
	return &Auth{Kind: V2Header, AccessKey: ak, Time: t, PayloadHash: UnsignedPayload, decodedLen: -1}, nil
}

// v2QueryKeys are the parameters of a V2 presigned URL.
var v2QueryKeys = []string{"AWSAccessKeyId", "Expires", "Signature"}

func (v *Verifier) verifyPresignedV2(r *http.Request) (*Auth, error) {
	q := r.URL.Query()
	for _, k := range v2QueryKeys {
		switch {
		case q.Get(k) == "":
			return nil, fmt.Errorf("%w: no %s", ErrIncompleteQuery, k)
		case len(q[k]) > 1:
			return nil, malformed("query parameter %s must appear once", k)
		}
	}
	exp, err := strconv.ParseInt(q.Get("Expires"), 10, 64)
	if err != nil || exp < 0 {
		return nil, fmt.Errorf("%w: %q", ErrInvalidExpires, q.Get("Expires"))
	}
	if !v.now().Before(time.Unix(exp, 0)) {
		return nil, fmt.Errorf("%w: expired at %d", ErrExpired, exp)
	}
	ak := q.Get("AWSAccessKeyId")
	secret, err := v.secret(ak)
	if err != nil {
		return nil, err
	}
	stss, err := stringsToSignV2(r, q.Get("Expires"))
	if err != nil {
		return nil, err
	}
	if !matchV2(secret, stss, q.Get("Signature")) {
		return nil, ErrSignatureMismatch
	}
	return &Auth{Kind: V2Presigned, AccessKey: ak, PayloadHash: UnsignedPayload, decodedLen: -1}, nil
}
