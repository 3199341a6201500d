package s3api

import (
	"encoding/xml"
	"net/http"

	"github.com/xfs3/xfs3/store"
)

// listVersionsResult is ListObjectVersions' document, elements in the
// order S3 sends them. Versions and delete markers are one sequence in
// key order, each key's newest first, as S3 interleaves them. Like
// listBucketResult, it is the schema of a document written by hand
// (listxml.go).
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
	Entries             []versionEntry
	CommonPrefixes      []commonPrefix
}

// versionEntry is a Version element, or a DeleteMarker element, which
// has no ETag, Size or StorageClass.
type versionEntry struct {
	XMLName      xml.Name
	Key          string
	VersionId    string
	IsLatest     bool
	LastModified string
	ETag         string `xml:",omitempty"`
	Size         *int64 `xml:",omitempty"`
	Owner        owner
	StorageClass string `xml:",omitempty"`
}

// checkVersionMarker checks version-id-marker: it needs a key marker,
// and names "null" or an ID the store makes.
func checkVersionMarker(keyMarker, versionMarker string) error {
	switch {
	case versionMarker == "":
		return nil
	case keyMarker == "":
		return errorf("InvalidArgument", "A version-id marker cannot be specified without a key marker.")
	case store.CheckVersionID(versionMarker) != nil:
		return errorf("InvalidArgument", "Invalid version id specified.")
	}
	return nil
}

func (s *server) listObjectVersions(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := rq.query
	lq, err := parseListQuery(q)
	if err != nil {
		return err
	}
	keyMarker, versionMarker := q.Get("key-marker"), q.Get("version-id-marker")
	if err := checkVersionMarker(keyMarker, versionMarker); err != nil {
		return err
	}
	var page store.VersionListResult
	if lq.maxKeys == 0 {
		_, err = s.store.HeadBucket(rq.bucket)
	} else {
		page, err = s.store.Versions().List(rq.bucket, store.VersionListOptions{
			Prefix: lq.prefix, Delimiter: lq.delimiter, KeyMarker: keyMarker,
			VersionIDMarker: versionMarker, MaxKeys: lq.maxKeys,
		})
	}
	if err != nil {
		return err
	}
	writeXMLDoc(w, http.StatusOK, &versionListing{
		bucket: rq.bucket, q: lq, keyMarker: keyMarker, versionMarker: versionMarker,
		owner: ownerOf(rq), page: page,
	})
	return nil
}
