package s3api

import (
	"encoding/xml"
	"net/http"

	"github.com/xfs3/xfs3/store"
)

// listVersionsResult is ListObjectVersions' document, elements in the
// order S3 sends them. Versions and delete markers are one sequence in
// key order, each key's newest first, as S3 interleaves them.
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
	enc := encoder(lq.urlEncoding)
	out := listVersionsResult{
		Xmlns: xmlns, Name: rq.bucket, Prefix: enc(lq.prefix), KeyMarker: enc(keyMarker),
		VersionIdMarker: versionMarker, MaxKeys: lq.maxKeys, Delimiter: enc(lq.delimiter),
		IsTruncated: page.IsTruncated, Entries: versionEntries(page, enc, ownerOf(rq)),
	}
	if lq.urlEncoding {
		out.EncodingType = "url"
	}
	if page.IsTruncated {
		out.NextKeyMarker = enc(page.NextKeyMarker)
		out.NextVersionIdMarker = page.NextVersionIDMarker
	}
	for _, p := range page.CommonPrefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, commonPrefix{Prefix: enc(p)})
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

func versionEntries(page store.VersionListResult, enc func(string) string, o owner) []versionEntry {
	out := make([]versionEntry, 0, len(page.Versions))
	for _, v := range page.Versions {
		e := versionEntry{
			XMLName: xml.Name{Local: "Version"}, Key: enc(v.Key), VersionId: v.VersionID,
			IsLatest: v.IsLatest, LastModified: isoTime(v.LastModified), Owner: o,
		}
		if v.DeleteMarker {
			e.XMLName.Local = "DeleteMarker"
		} else {
			size := v.Size
			e.ETag, e.Size, e.StorageClass = quoted(v.ETag), &size, storageClassOf(v.Meta)
		}
		out = append(out, e)
	}
	return out
}
