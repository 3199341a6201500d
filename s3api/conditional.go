package s3api

import (
	"net/http"
	"strings"
	"time"

	"github.com/xfs3/xfs3/store"
)

// etagMatches reports whether an If-Match / If-None-Match list names etag
// ("*" names any). Weak validators compare by their opaque part, as S3
// does.
func etagMatches(list, etag string) bool {
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == "*" {
			return true
		}
		v = strings.TrimPrefix(v, "W/")
		if strings.Trim(v, `"`) == etag {
			return true
		}
	}
	return false
}

// httpTime parses an HTTP date; ok is false for an invalid one, which the
// RFC says to ignore.
func httpTime(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	t, err := http.ParseTime(v)
	return t, err == nil
}

// modifiedAfter compares at the one-second resolution of HTTP dates.
func modifiedAfter(lastModified, t time.Time) bool {
	return lastModified.Truncate(time.Second).After(t)
}

// conditions are the four preconditions, under their request or
// copy-source header names.
type conditions struct {
	ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince string
}

func requestConditions(h http.Header) conditions {
	return conditions{
		ifMatch: h.Get("If-Match"), ifNoneMatch: h.Get("If-None-Match"),
		ifModifiedSince: h.Get("If-Modified-Since"), ifUnmodifiedSince: h.Get("If-Unmodified-Since"),
	}
}

func copySourceConditions(h http.Header) conditions {
	return conditions{
		ifMatch:           h.Get("X-Amz-Copy-Source-If-Match"),
		ifNoneMatch:       h.Get("X-Amz-Copy-Source-If-None-Match"),
		ifModifiedSince:   h.Get("X-Amz-Copy-Source-If-Modified-Since"),
		ifUnmodifiedSince: h.Get("X-Amz-Copy-Source-If-Unmodified-Since"),
	}
}

// evaluate applies c to an object in RFC 7232 order (section 6): If-Match,
// else If-Unmodified-Since; then If-None-Match, else If-Modified-Since.
// A failed If-None-Match or If-Modified-Since is notModified (304 for
// GET and HEAD; copies report 412 for every failure).
func (c conditions) evaluate(info store.ObjectInfo) (preconditionFailed, notModified bool) {
	if c.ifMatch != "" {
		if !etagMatches(c.ifMatch, info.ETag) {
			return true, false
		}
	} else if t, ok := httpTime(c.ifUnmodifiedSince); ok && modifiedAfter(info.LastModified, t) {
		return true, false
	}
	if c.ifNoneMatch != "" {
		if etagMatches(c.ifNoneMatch, info.ETag) {
			return false, true
		}
	} else if t, ok := httpTime(c.ifModifiedSince); ok && !modifiedAfter(info.LastModified, t) {
		return false, true
	}
	return false, false
}
