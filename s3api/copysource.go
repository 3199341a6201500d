package s3api

import (
	"net/url"
	"strings"
)

// copySource is a parsed x-amz-copy-source.
type copySource struct {
	bucket, key string
}

// parseCopySource parses "[/]bucket/key[?versionId=id]" (only the version
// "null" exists: see checkVersionID) with bucket and key
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
		}
	}
	return cs, nil
}
