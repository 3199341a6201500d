package s3api

import (
	"encoding/base64"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/xfs3/xfs3/store"
)

// The listing documents (ListObjects v1 and v2, ListObjectVersions) are
// written by hand into a pooled buffer: through encoding/xml's reflection
// a page of 1000 keys cost about 7 µs a key, several times what the store
// spent finding them. They are, byte for byte, what xml.Marshal writes of
// listBucketResult, listBucketResultV2 and listVersionsResult, which stay
// as the schema and as the reference TestListXMLDifferential holds this
// file to. One document, wrapped here but written on one line:
//
//	<?xml version="1.0" encoding="UTF-8"?>⏎              xml.Header
//	<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
//	 <Name>b</Name><Prefix></Prefix>                       empty: both tags, never <Prefix/>
//	 v1: <Marker>m</Marker>[<NextMarker>]                  [ ]: only when not empty
//	 v2: [<StartAfter>][<ContinuationToken>][<NextContinuationToken>]<KeyCount>n</KeyCount>
//	 <MaxKeys>1000</MaxKeys>[<Delimiter>][<EncodingType>url</EncodingType>]
//	 <IsTruncated>false</IsTruncated>
//	 <Contents><Key>k</Key><LastModified>2006-01-02T15:04:05.000Z</LastModified>
//	  <ETag>&#34;md5&#34;</ETag><Size>4096</Size>[<Owner><ID>…</ID><DisplayName>…</DisplayName></Owner>]
//	  <StorageClass>STANDARD</StorageClass>[<UserMetadata>…</UserMetadata>][<UserTags>]</Contents>…
//	 <CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes>…
//	</ListBucketResult>
//
//	(below, <X/> is short for <X>…</X>, which is what is written)
//	<ListVersionsResult xmlns="…"><Name/><Prefix/><KeyMarker/><VersionIdMarker/>
//	 [<NextKeyMarker>][<NextVersionIdMarker>]<MaxKeys/>[<Delimiter>][<EncodingType>]<IsTruncated/>
//	 <Version><Key/><VersionId/><IsLatest/><LastModified/><ETag/><Size/><Owner>…</Owner><StorageClass/></Version>
//	 <DeleteMarker><Key/><VersionId/><IsLatest/><LastModified/><Owner>…</Owner></DeleteMarker>…
//	 <CommonPrefixes>…</ListVersionsResult>
//
// Text is escaped as encoding/xml escapes it (appendXMLText). Keys,
// prefixes, delimiters and key markers are URL-encoded instead with
// encoding-type=url; version IDs and continuation tokens never are.

// objectListing is one ListObjects page with what its request asked:
// everything the v1 and v2 documents say.
type objectListing struct {
	v2     bool
	bucket string
	q      listQuery
	marker string // v1: marker; v2: start-after; as sent
	token  string // v2: continuation-token as sent, "" for none
	owner  *owner // nil leaves Owner out (v2 without fetch-owner)
	page   store.ListResult
	meta   []objectMeta // metadata=true: page.Objects' metadata, in order
}

func (l *objectListing) appendXML(b []byte) []byte {
	u := l.q.urlEncoding
	b = append(b, `<ListBucketResult xmlns="`+xmlns+`">`...)
	b = appendElement(b, "Name", l.bucket, false)
	b = appendElement(b, "Prefix", l.q.prefix, u)
	if l.v2 {
		b = appendNonEmpty(b, "StartAfter", l.marker, u)
		b = appendNonEmpty(b, "ContinuationToken", l.token, false)
		if l.page.IsTruncated && l.page.NextMarker != "" {
			// Base64 needs no escaping.
			b = append(b, "<NextContinuationToken>"...)
			b = base64.StdEncoding.AppendEncode(b, []byte(l.page.NextMarker))
			b = append(b, "</NextContinuationToken>"...)
		}
		b = appendInt(b, "KeyCount", int64(len(l.page.Objects)+len(l.page.CommonPrefixes)))
	} else {
		b = appendElement(b, "Marker", l.marker, u)
		// S3 sends NextMarker only with a delimiter; without one clients
		// use the last key.
		if l.page.IsTruncated && l.q.delimiter != "" {
			b = appendNonEmpty(b, "NextMarker", l.page.NextMarker, u)
		}
	}
	b = l.q.appendTail(b, l.page.IsTruncated)
	var ownerXML []byte
	if l.owner != nil {
		ownerXML = l.owner.appendXML(nil)
	}
	for i := range l.page.Objects {
		obj := &l.page.Objects[i]
		b = append(b, "<Contents>"...)
		b = appendElement(b, "Key", obj.Key, u)
		b = appendObjectFacts(b, obj, ownerXML)
		if l.meta != nil {
			b = l.meta[i].appendXML(b)
		}
		b = append(b, "</Contents>"...)
	}
	b = appendCommonPrefixes(b, l.page.CommonPrefixes, u)
	return append(b, "</ListBucketResult>"...)
}

// appendObjectFacts writes what follows a Contents' Key and a Version's
// IsLatest: LastModified, ETag, Size, Owner (ownerXML, nil for none),
// StorageClass.
func appendObjectFacts(b []byte, obj *store.ObjectInfo, ownerXML []byte) []byte {
	b = appendLastModified(b, obj)
	// quoted(ETag) escaped: '"' is one byte that cannot continue a UTF-8
	// sequence, so escaping the parts is escaping the whole.
	b = append(b, "<ETag>&#34;"...)
	b = appendXMLText(b, obj.ETag)
	b = append(b, "&#34;</ETag>"...)
	b = appendInt(b, "Size", obj.Size)
	b = append(b, ownerXML...)
	return appendElement(b, "StorageClass", storageClassOf(obj.Meta), false)
}

func appendLastModified(b []byte, obj *store.ObjectInfo) []byte {
	// Digits, '-', ':', '.', 'T' and 'Z': nothing to escape.
	b = append(b, "<LastModified>"...)
	b = appendISOTime(b, obj.LastModified)
	return append(b, "</LastModified>"...)
}

// appendISOTime appends isoTime(t). Years 0 to 9999 are written here, as
// the layout writes them (four digits, milliseconds truncated); others
// through AppendFormat, whose reading of the layout was half the cost of
// a listing's entry.
func appendISOTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, isoLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// appendTail writes the elements both listing documents end their head
// with: MaxKeys, Delimiter, EncodingType, IsTruncated.
func (q *listQuery) appendTail(b []byte, truncated bool) []byte {
	b = appendInt(b, "MaxKeys", int64(q.maxKeys))
	b = appendNonEmpty(b, "Delimiter", q.delimiter, q.urlEncoding)
	if q.urlEncoding {
		b = append(b, "<EncodingType>url</EncodingType>"...)
	}
	return appendBool(b, "IsTruncated", truncated)
}

func appendCommonPrefixes(b []byte, prefixes []string, u bool) []byte {
	for _, p := range prefixes {
		b = append(b, "<CommonPrefixes>"...)
		b = appendElement(b, "Prefix", p, u)
		b = append(b, "</CommonPrefixes>"...)
	}
	return b
}

func (o *owner) appendXML(b []byte) []byte {
	b = append(b, "<Owner>"...)
	b = appendElement(b, "ID", o.ID, false)
	b = appendElement(b, "DisplayName", o.DisplayName, false)
	return append(b, "</Owner>"...)
}

// appendXML writes UserMetadata (when the object was still there) and
// UserTags (when it has tags), as listedMeta.MarshalXML and omitempty do.
func (m *objectMeta) appendXML(b []byte) []byte {
	if m.meta != nil {
		// The names passed xmlNameSafe: they are written as they are.
		b = append(b, "<UserMetadata>"...)
		for i, name := range m.meta.names {
			b = appendElement(b, name, m.meta.values[i], false)
		}
		b = append(b, "</UserMetadata>"...)
	}
	return appendNonEmpty(b, "UserTags", m.tags, false)
}

// versionListing is one ListObjectVersions page with what its request
// asked.
type versionListing struct {
	bucket                   string
	q                        listQuery
	keyMarker, versionMarker string // as sent
	owner                    owner
	page                     store.VersionListResult
}

func (l *versionListing) appendXML(b []byte) []byte {
	u := l.q.urlEncoding
	b = append(b, `<ListVersionsResult xmlns="`+xmlns+`">`...)
	b = appendElement(b, "Name", l.bucket, false)
	b = appendElement(b, "Prefix", l.q.prefix, u)
	b = appendElement(b, "KeyMarker", l.keyMarker, u)
	b = appendElement(b, "VersionIdMarker", l.versionMarker, false)
	if l.page.IsTruncated {
		b = appendNonEmpty(b, "NextKeyMarker", l.page.NextKeyMarker, u)
		b = appendNonEmpty(b, "NextVersionIdMarker", l.page.NextVersionIDMarker, false)
	}
	b = l.q.appendTail(b, l.page.IsTruncated)
	ownerXML := l.owner.appendXML(nil)
	for i := range l.page.Versions {
		v := &l.page.Versions[i]
		name := "Version"
		if v.DeleteMarker {
			name = "DeleteMarker"
		}
		b = append(b, '<')
		b = append(b, name...)
		b = append(b, '>')
		b = appendElement(b, "Key", v.Key, u)
		b = appendElement(b, "VersionId", v.VersionID, false)
		b = appendBool(b, "IsLatest", v.IsLatest)
		if v.DeleteMarker {
			// No ETag, Size or StorageClass.
			b = appendLastModified(b, v)
			b = append(b, ownerXML...)
		} else {
			b = appendObjectFacts(b, v, ownerXML)
		}
		b = append(b, "</"...)
		b = append(b, name...)
		b = append(b, '>')
	}
	b = appendCommonPrefixes(b, l.page.CommonPrefixes, u)
	return append(b, "</ListVersionsResult>"...)
}

// appendElement writes <name>s</name>, s URL-encoded when url is set and
// escaped otherwise. An empty s still gets both tags, as encoding/xml
// writes it.
func appendElement(b []byte, name, s string, url bool) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	if url {
		b = appendURLEncoded(b, s) // its output needs no escaping
	} else {
		b = appendXMLText(b, s)
	}
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendNonEmpty is appendElement for an omitempty field: nothing for an
// empty s (URL-encoding keeps empty strings empty, and others not).
func appendNonEmpty(b []byte, name, s string, url bool) []byte {
	if s == "" {
		return b
	}
	return appendElement(b, name, s, url)
}

func appendInt(b []byte, name string, n int64) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = strconv.AppendInt(b, n, 10)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

func appendBool(b []byte, name string, v bool) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = strconv.AppendBool(b, v)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendXMLText appends s escaped as encoding/xml escapes text (its
// EscapeText, and the printer's EscapeString that Marshal uses), so that
// a hand-written document is the bytes xml.Marshal writes:
//
//   - double and single quotes become &#34; and &#39; (encoding/xml's
//     choice, shorter than &quot; and &apos;); '&', '<' and '>' the
//     named entities;
//   - '\t', '\n' and '\r' become &#x9;, &#xA; and &#xD;;
//   - each byte of invalid UTF-8, and each character XML 1.0 cannot hold
//     (the other C0 controls, U+FFFE, U+FFFF), becomes U+FFFD. A valid
//     U+FFFD is kept, which writes the same three bytes.
//
// Everything else is copied. TestXMLTextEscape checks it against
// xml.EscapeText on every string of one and two bytes and every rune.
func appendXMLText(b []byte, s string) []byte {
	last := 0 // s[last:i] is still to copy
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			if esc := xmlTextEscapes[c]; esc != "" {
				b = append(b, s[last:i-1]...)
				b = append(b, esc...)
				last = i
			}
			continue
		}
		r, width := utf8.DecodeRuneInString(s[i:])
		i += width
		// Outside ASCII, width 1 is invalid UTF-8 (encoding/xml's
		// "r == 0xFFFD && width == 1"). A valid rune is never a surrogate
		// and never above U+10FFFF, so of isInCharacterRange only U+FFFE
		// and U+FFFF are left to refuse.
		if width == 1 || r == 0xFFFE || r == 0xFFFF {
			b = append(b, s[last:i-width]...)
			b = append(b, "\uFFFD"...)
			last = i
		}
	}
	return append(b, s[last:]...)
}

// xmlTextEscapes is what each ASCII byte becomes in text, "" for itself.
var xmlTextEscapes = func() (t [utf8.RuneSelf]string) {
	for c := range 0x20 {
		t[c] = "\uFFFD" // not a character XML 1.0 allows
	}
	t['\t'], t['\n'], t['\r'] = "&#x9;", "&#xA;", "&#xD;"
	t['"'], t['\''] = "&#34;", "&#39;"
	t['&'], t['<'], t['>'] = "&amp;", "&lt;", "&gt;"
	return t
}()
