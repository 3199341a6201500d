package s3api

import (
	"encoding/xml"

	"github.com/xfs3/xfs3/store"
)

// The reference the hand-written listing documents (listxml.go) are held
// to: the conversion the handlers made before them, kept as it was, to
// be marshalled by writeXML. A change to a listing document changes this
// file and listxml.go together.

// reference is the value the ListObjects handlers gave writeXML.
func (l *objectListing) reference() any {
	lq, page := l.q, l.page
	enc := encoder(lq.urlEncoding)
	if !l.v2 {
		out := listBucketResult{
			Xmlns: xmlns, Name: l.bucket, Prefix: enc(lq.prefix), Marker: enc(l.marker),
			MaxKeys: lq.maxKeys, Delimiter: enc(lq.delimiter), IsTruncated: page.IsTruncated,
		}
		if lq.urlEncoding {
			out.EncodingType = "url"
		}
		if page.IsTruncated && lq.delimiter != "" {
			out.NextMarker = enc(page.NextMarker)
		}
		out.Contents, out.CommonPrefixes = referenceEntries(page, enc, l.owner)
		l.addMeta(out.Contents)
		return out
	}
	out := listBucketResultV2{
		Xmlns: xmlns, Name: l.bucket, Prefix: enc(lq.prefix), StartAfter: enc(l.marker),
		KeyCount: len(page.Objects) + len(page.CommonPrefixes), MaxKeys: lq.maxKeys,
		Delimiter: enc(lq.delimiter), IsTruncated: page.IsTruncated,
	}
	if l.token != "" {
		out.ContinuationToken = l.token
	}
	if page.IsTruncated {
		out.NextContinuationToken = encodeContinuationToken(page.NextMarker)
	}
	if lq.urlEncoding {
		out.EncodingType = "url"
	}
	out.Contents, out.CommonPrefixes = referenceEntries(page, enc, l.owner)
	l.addMeta(out.Contents)
	return out
}

// addMeta is what the handlers' addListedMeta filled in (it left both
// fields empty for an object gone since the listing).
func (l *objectListing) addMeta(contents []listEntry) {
	for i, m := range l.meta {
		contents[i].UserMetadata, contents[i].UserTags = m.meta, m.tags
	}
}

// referenceEntries converts a page; owner nil leaves Owner out.
func referenceEntries(page store.ListResult, enc func(string) string, o *owner) ([]listEntry, []commonPrefix) {
	contents := make([]listEntry, 0, len(page.Objects))
	for _, obj := range page.Objects {
		contents = append(contents, listEntry{
			Key: enc(obj.Key), LastModified: isoTime(obj.LastModified), ETag: quoted(obj.ETag),
			Size: obj.Size, Owner: o, StorageClass: storageClassOf(obj.Meta),
		})
	}
	prefixes := make([]commonPrefix, 0, len(page.CommonPrefixes))
	for _, p := range page.CommonPrefixes {
		prefixes = append(prefixes, commonPrefix{Prefix: enc(p)})
	}
	return contents, prefixes
}

// reference is the value listObjectVersions gave writeXML.
func (l *versionListing) reference() any {
	lq, page := l.q, l.page
	enc := encoder(lq.urlEncoding)
	out := listVersionsResult{
		Xmlns: xmlns, Name: l.bucket, Prefix: enc(lq.prefix), KeyMarker: enc(l.keyMarker),
		VersionIdMarker: l.versionMarker, MaxKeys: lq.maxKeys, Delimiter: enc(lq.delimiter),
		IsTruncated: page.IsTruncated, Entries: referenceVersionEntries(page, enc, l.owner),
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
	return out
}

func referenceVersionEntries(page store.VersionListResult, enc func(string) string, o owner) []versionEntry {
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
