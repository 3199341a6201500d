package s3api

import (
	"net/http"

	"github.com/xfs3/xfs3/store"
)

// Buckets are never versioned, so ListObjectVersions lists every object
// once, as its only version: VersionId "null", IsLatest true, no delete
// markers. It pages through the same store listing as ListObjects.

// listVersionsResult is ListObjectVersions' document, elements in the
// order S3 sends them.
type listVersionsResult struct {
	XMLName             struct{} `xml:"ListVersionsResult"`
	Xmlns               string   `xml:"xmlns,attr"`
	Name                string
	Prefix              string
	KeyMarker           string
	VersionIdMarker     string
	NextKeyMarker       string `xml:",omitempty"`
	NextVersionIdMarker string `xml:",omitempty"`
	MaxKeys             int
	Delimiter           string `xml:",omitempty"`
	EncodingType        string `xml:",omitempty"`
	IsTruncated         bool
	Versions            []versionEntry `xml:"Version"`
	CommonPrefixes      []commonPrefix
}

type versionEntry struct {
	Key          string
	VersionId    string
	IsLatest     bool
	LastModified string
	ETag         string
	Size         int64
	Owner        owner
	StorageClass string
}

// nullVersion is the ID of the one version every object has.
const nullVersion = "null"

// versionMarkerStart is where a page starts for key-marker and
// version-id-marker: after the key marker, whose only version is "null"
// (so "null" and an empty marker mean the same). A version marker needs a
// key marker, and names no version this server ever made unless "null".
func versionMarkerStart(keyMarker, versionMarker string) (string, error) {
	switch {
	case versionMarker == "":
		return keyMarker, nil
	case keyMarker == "":
		return "", errorf("InvalidArgument", "A version-id marker cannot be specified without a key marker.")
	case versionMarker != nullVersion:
		return "", errorf("InvalidArgument", "Invalid version id specified.")
	}
	return keyMarker, nil
}

func (s *server) listObjectVersions(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := r.URL.Query()
	lq, err := parseListQuery(q)
	if err != nil {
		return err
	}
	keyMarker, versionMarker := q.Get("key-marker"), q.Get("version-id-marker")
	from, err := versionMarkerStart(keyMarker, versionMarker)
	if err != nil {
		return err
	}
	page, err := s.list(rq.bucket, lq, from)
	if err != nil {
		return err
	}
	enc := encoder(lq.urlEncoding)
	out := listVersionsResult{
		Xmlns: xmlns, Name: rq.bucket, Prefix: enc(lq.prefix), KeyMarker: enc(keyMarker),
		VersionIdMarker: versionMarker, MaxKeys: lq.maxKeys, Delimiter: enc(lq.delimiter),
		IsTruncated: page.IsTruncated, Versions: versionEntries(page, enc, ownerOf(rq)),
	}
	if lq.urlEncoding {
		out.EncodingType = "url"
	}
	if page.IsTruncated {
		out.NextKeyMarker = enc(page.NextMarker)
		// A page that ends on a common prefix has no version to resume
		// after: the next page starts after the prefix.
		if !endsOnPrefix(page) {
			out.NextVersionIdMarker = nullVersion
		}
	}
	for _, p := range page.CommonPrefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, commonPrefix{Prefix: enc(p)})
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

func versionEntries(page store.ListResult, enc func(string) string, o owner) []versionEntry {
	out := make([]versionEntry, 0, len(page.Objects))
	for _, obj := range page.Objects {
		out = append(out, versionEntry{
			Key: enc(obj.Key), VersionId: nullVersion, IsLatest: true, LastModified: isoTime(obj.LastModified),
			ETag: quoted(obj.ETag), Size: obj.Size, Owner: o, StorageClass: storageClassOf(obj.Meta),
		})
	}
	return out
}

// endsOnPrefix reports whether a page's last entry is a common prefix (a
// key equal to a prefix of the same page cannot be listed: it would have
// been rolled into it).
func endsOnPrefix(page store.ListResult) bool {
	n := len(page.CommonPrefixes)
	return n > 0 && page.CommonPrefixes[n-1] == page.NextMarker
}
