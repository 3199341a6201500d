package sigv4

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Signature Version 2 string to sign:
//
//	Method \n Content-MD5 \n Content-Type \n Date (or Expires when presigned) \n
//	CanonicalizedAmzHeaders (each "x-amz-name:v1,v2\n", sorted)
//	CanonicalizedResource   (path, then "?" and the sub-resources below, sorted)

// subResources are the query parameters that take part in the V2
// canonicalized resource, in sort order.
var subResources = []string{
	"acl", "cors", "delete", "encryption", "legal-hold", "lifecycle", "location",
	"logging", "notification", "partNumber", "policy", "replication", "requestPayment",
	"response-cache-control", "response-content-disposition", "response-content-encoding",
	"response-content-language", "response-content-type", "response-expires",
	"retention", "select", "select-type", "tagging", "torrent", "uploadId", "uploads",
	"versionId", "versioning", "versions", "website",
}

// StringToSignV2 builds the V2 string to sign; date is the Date header,
// or the Expires parameter of a presigned URL.
func StringToSignV2(r *http.Request, date string) (string, error) {
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
	sort.Strings(names)
	for _, k := range names {
		b.WriteString(k + ":")
		for i, v := range r.Header.Values(k) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(trimAll(v))
		}
		b.WriteByte('\n')
	}
	b.WriteString(canonicalURI(r.URL))
	pairs, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return "", malformed("query: %v", err)
	}
	sep := byte('?')
	for _, sr := range subResources {
		for _, p := range pairs {
			if p.key != sr {
				continue
			}
			b.WriteByte(sep)
			sep = '&'
			b.WriteString(sr)
			if p.value != "" {
				b.WriteString("=" + p.value)
			}
			break
		}
	}
	return b.String(), nil
}

func signV2(secret, sts string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func (v *Verifier) verifyV2Header(r *http.Request, authz string) (*Auth, error) {
	ak, sig, ok := strings.Cut(strings.TrimPrefix(authz, "AWS "), ":")
	if !ok || ak == "" || sig == "" {
		return nil, malformed("V2 Authorization must be \"AWS AK:signature\"")
	}
	t, err := requestTime(r)
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
	sts, err := StringToSignV2(r, r.Header.Get("Date"))
	if err != nil {
		return nil, err
	}
	if !equalSig(signV2(secret, sts), sig) {
		return nil, ErrSignatureMismatch
	}
	return &Auth{Kind: V2Header, AccessKey: ak, Time: t, PayloadHash: UnsignedPayload, decodedLen: -1}, nil
}

func (v *Verifier) verifyPresignedV2(r *http.Request) (*Auth, error) {
	q := r.URL.Query()
	for _, k := range []string{"AWSAccessKeyId", "Expires", "Signature"} {
		if len(q[k]) != 1 || q.Get(k) == "" {
			return nil, malformed("query parameter %s must appear once", k)
		}
	}
	exp, err := strconv.ParseInt(q.Get("Expires"), 10, 64)
	if err != nil || exp < 0 {
		return nil, malformed("Expires %q", q.Get("Expires"))
	}
	if !v.now().Before(time.Unix(exp, 0)) {
		return nil, fmt.Errorf("%w: expired at %d", ErrExpired, exp)
	}
	ak := q.Get("AWSAccessKeyId")
	secret, err := v.secret(ak)
	if err != nil {
		return nil, err
	}
	sts, err := StringToSignV2(r, q.Get("Expires"))
	if err != nil {
		return nil, err
	}
	if !equalSig(signV2(secret, sts), q.Get("Signature")) {
		return nil, ErrSignatureMismatch
	}
	return &Auth{Kind: V2Presigned, AccessKey: ak, PayloadHash: UnsignedPayload, decodedLen: -1}, nil
}
