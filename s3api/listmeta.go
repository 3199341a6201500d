package s3api

import (
	"encoding/xml"
	"net/textproto"
	"net/url"
	"sort"
	"strings"

	"github.com/xfs3/xfs3/store"
)

// Listings with metadata=true, MinIO's extension that minio-go asks for
// with ListObjectsOptions.WithMetadata, carry each object's metadata and
// tags:
//
//	<Contents>…<UserMetadata><X-Amz-Meta-Camera>x100</X-Amz-Meta-Camera>
//	<content-type>image/jpeg</content-type></UserMetadata>
//	<UserTags>k=v&amp;k2=v2</UserTags></Contents>
//
// Each object's metadata is read when the page is answered: an object
// replaced since the listing read it shows the new metadata, one deleted
// meanwhile none.

// listedMeta is one object's UserMetadata element: element names and
// values in order.
type listedMeta struct {
	names, values []string
}

func (m *listedMeta) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	for i, name := range m.names {
		if err := e.EncodeElement(m.values[i], xml.StartElement{Name: xml.Name{Local: name}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// xmlNameSafe reports whether a metadata name can be an element name as
// it is; other names (user metadata may hold any printable ASCII) are
// left out of listings.
func xmlNameSafe(name string) bool {
	if name == "" || !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// listedMetaOf is the UserMetadata of an object's metadata.
func listedMetaOf(m store.Meta) *listedMeta {
	out := &listedMeta{}
	users := make([]string, 0, len(m.User))
	for k := range m.User {
		users = append(users, k)
	}
	sort.Strings(users)
	for _, k := range users {
		if name := userMetaPrefix + textproto.CanonicalMIMEHeaderKey(k); xmlNameSafe(name) {
			out.names, out.values = append(out.names, name), append(out.values, m.User[k])
		}
	}
	for _, f := range []struct{ name, value string }{
		{"content-type", m.ContentType}, {"content-encoding", m.ContentEncoding},
		{"content-disposition", m.ContentDisposition}, {"content-language", m.ContentLanguage},
		{"cache-control", m.CacheControl}, {"expires", m.Expires},
	} {
		if f.value != "" {
			out.names, out.values = append(out.names, f.name), append(out.values, f.value)
		}
	}
	return out
}

// objectMeta is what metadata=true adds to one object of a listing.
type objectMeta struct {
	meta *listedMeta // nil: the object is gone
	tags string
}

// listedMetas reads the metadata and tags of a page's objects.
func (s *server) listedMetas(bucket string, page store.ListResult) []objectMeta {
	out := make([]objectMeta, len(page.Objects))
	for i, obj := range page.Objects {
		info, err := s.store.HeadObject(bucket, obj.Key)
		if err != nil {
			continue // gone since the listing read it
		}
		out[i] = objectMeta{meta: listedMetaOf(info.Meta), tags: encodeTagsQuery(info.Meta.Tags)}
	}
	return out
}

// encodeTagsQuery writes tags as x-amz-tagging does: k=v&k2=v2, each
// query-escaped.
func encodeTagsQuery(tags []store.Tag) string {
	var b strings.Builder
	for i, t := range tags {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(t.Key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(t.Value))
	}
	return b.String()
}
