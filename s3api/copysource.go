package s3api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/xfs3/xfs3/store"
)

// copySource is a parsed x-amz-copy-source.
type copySource struct {
	bucket, key string
	version     string // "" for the current version
}

// setCopySourceVersion sends the version a copy read, when its bucket
// has versioning.
func setCopySourceVersion(h http.Header, id string) {
	if id != "" {
		h.Set("X-Amz-Copy-Source-Version-Id", id)
	}
}

// copySourceError is the answer for a source version that is a delete
// marker: S3 refuses to copy it (400 InvalidRequest), where a read of
// it would be 405.
func copySourceError(err error) error {
	var marker *store.MarkerError
	if errors.As(err, &marker) && !marker.Latest {
		return errorf("InvalidRequest", "The source of a copy request may not specifically refer to a delete marker by version id.")
	}
	return err
}

// parseCopySource parses "[/]bucket/key[?versionId=id]" with bucket and key
// URL-encoded (a literal '?' in the key arrives as %3F, so the first '?' of
// the raw value starts the query).
func parseCopySource(v string) (copySource, error) {
	raw, query, _ := strings.Cut(v, "?")
	path, err := url.PathUnescape(raw)
	if err != nil {
		return copySource{}, errorf("InvalidArgument", "Copy Source is not URL-encoded correctly.")
	}
	path = strings.TrimPrefix(path, "/")
	b, k, ok := strings.Cut(path, "/")
	if !ok || b == "" || k == "" {
		return copySource{}, errorf("InvalidArgument", "Copy Source must mention the source bucket and key: sourcebucket/sourcekey.")
	}
	cs := copySource{bucket: b, key: k}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return copySource{}, errorf("InvalidArgument", "Copy Source has a malformed query.")
		}
		for name := range q {
			if name != "versionId" {
				return copySource{}, errorf("InvalidArgument", "Copy Source query parameter %q is not supported.", name)
			}
		}
		if q.Has("versionId") {
			if err := checkVersionID(q.Get("versionId")); err != nil {
				return copySource{}, err
			}
			cs.version = q.Get("versionId")
		}
	}
	return cs, nil
}
