package s3api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/store/checksum"
)

// objectAttributes are the names x-amz-object-attributes may list.
var objectAttributes = []string{"ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"}

// getObjectAttributesResponse is GetObjectAttributes' answer: only the
// attributes asked for are filled.
type getObjectAttributesResponse struct {
	XMLName      struct{}         `xml:"GetObjectAttributesResponse"`
	Xmlns        string           `xml:"xmlns,attr"`
	ETag         string           `xml:",omitempty"`
	Checksum     *xmlAttrChecksum `xml:",omitempty"`
	ObjectParts  *xmlObjectParts  `xml:",omitempty"`
	StorageClass string           `xml:",omitempty"`
	ObjectSize   *int64           `xml:",omitempty"`
}

type xmlAttrChecksum struct {
	xmlChecksums
	ChecksumType string
}

type xmlObjectParts struct {
	PartsCount           int
	PartNumberMarker     int
	NextPartNumberMarker int
	MaxParts             int
	IsTruncated          bool
	Parts                []xmlObjectPart `xml:"Part"`
}

type xmlObjectPart struct {
	PartNumber int
	Size       int64
	xmlChecksums
}

// requestedAttributes reads x-amz-object-attributes (one header or
// several, comma-separated names).
func requestedAttributes(h http.Header) (map[string]bool, error) {
	want := map[string]bool{}
	for _, v := range h.Values("X-Amz-Object-Attributes") {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(objectAttributes, name) {
				return nil, errorf("InvalidArgument", "Invalid attribute name specified.")
			}
			want[name] = true
		}
	}
	if len(want) == 0 {
		return nil, errorf("InvalidArgument", "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty")
	}
	return want, nil
}

// headerInt reads a non-negative integer header (def when absent).
func headerInt(h http.Header, name string, def int) (int, error) {
	v := h.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errorf("InvalidArgument", "%s must be a non-negative integer.", strings.ToLower(name))
	}
	return n, nil
}

// getObjectAttributes answers GET /b/k?attributes: the attributes named
// by x-amz-object-attributes, with ObjectParts paged by x-amz-max-parts
// and x-amz-part-number-marker. ObjectParts is sent for multipart objects
// only; a composite checksum is given without its "-N", as S3 does.
func (s *server) getObjectAttributes(w http.ResponseWriter, r *http.Request, rq *request) error {
	want, err := requestedAttributes(r.Header)
	if err != nil {
		return err
	}
	maxParts, err := headerInt(r.Header, "X-Amz-Max-Parts", 1000)
	if err != nil {
		return err
	}
	marker, err := headerInt(r.Header, "X-Amz-Part-Number-Marker", 0)
	if err != nil {
		return err
	}
	maxParts = min(max(maxParts, 1), 1000)
	res, err := s.store.Versions().Parts(rq.bucket, rq.key, rq.version, store.ListPartsOptions{PartNumberMarker: marker, MaxParts: maxParts})
	if err != nil {
		return err
	}
	info := res.Object
	setVersionID(w.Header(), info.VersionID)
	out := getObjectAttributesResponse{Xmlns: xmlns}
	if want["ETag"] {
		out.ETag = info.ETag
	}
	sums := info.Meta.Checksums
	if want["Checksum"] && sums != (store.Checksums{}) {
		c := &xmlAttrChecksum{ChecksumType: checksumType(sums)}
		for _, alg := range checksum.All {
			if v := sums.Value(alg); v != "" {
				sums.Set(alg, checksum.WithoutPartCount(v))
			}
		}
		c.xmlChecksums = toXMLChecksums(sums)
		out.Checksum = c
	}
	if want["ObjectParts"] && res.Count > 0 {
		parts := &xmlObjectParts{PartsCount: res.Count, PartNumberMarker: marker, NextPartNumberMarker: res.NextPartNumberMarker,
			MaxParts: maxParts, IsTruncated: res.IsTruncated}
		alg := objectAlgorithm(info.Meta.Checksums)
		for _, p := range res.Parts {
			var c store.Checksums
			if alg != nil && p.Checksum != "" {
				c.Set(alg, p.Checksum)
			}
			parts.Parts = append(parts.Parts, xmlObjectPart{PartNumber: p.PartNumber, Size: p.Size, xmlChecksums: toXMLChecksums(c)})
		}
		out.ObjectParts = parts
	}
	if want["StorageClass"] {
		out.StorageClass = storageClassOf(info.Meta)
	}
	if want["ObjectSize"] {
		size := info.Size
		out.ObjectSize = &size
	}
	w.Header().Set("Last-Modified", info.LastModified.UTC().Format(http.TimeFormat))
	writeXML(w, http.StatusOK, out)
	return nil
}

// objectAlgorithm is the algorithm of an object's checksum, nil for none.
func objectAlgorithm(c store.Checksums) *checksum.Algorithm {
	for _, alg := range checksum.All {
		if c.Value(alg) != "" {
			return alg
		}
	}
	return nil
}
