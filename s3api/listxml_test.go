package s3api

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xfs3/xfs3/store"
)

// escapeReference is xml.EscapeText's output for s.
func escapeReference(s string) string {
	var buf bytes.Buffer
	xml.EscapeText(&buf, []byte(s))
	return buf.String()
}

// TestXMLTextEscape holds appendXMLText to xml.EscapeText on every string
// of one and two bytes, every rune alone and between ASCII, and random
// byte soup.
func TestXMLTextEscape(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := string(appendXMLText(nil, s)), escapeReference(s); got != want {
			t.Fatalf("escape %q: got %q, want %q", s, got, want)
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	var buf [2*utf8.UTFMax + 2]byte
	for r := rune(0); r <= utf8.MaxRune; r++ {
		s := append(buf[:0], 'a')
		s = utf8.AppendRune(s, r) // surrogates come out as U+FFFD
		s = append(s, '>')
		check(string(s))
	}
	// Truncated and overlong sequences, surrogates and runes above
	// U+10FFFF, spelled in bytes, among other bytes.
	rng := rand.New(rand.NewPCG(1, 2))
	soup := []byte("\x00\x09\x0a\x0d\x1f a&<>\"'\x7f\x80\xbf\xc0\xc2\xdf\xe0\xed\xef\xf0\xf4\xf5\xff\xa0\xbe")
	for range 200000 {
		s := make([]byte, rng.IntN(9))
		for i := range s {
			s[i] = soup[rng.IntN(len(soup))]
		}
		check(string(s))
	}
}

// TestISOTime holds appendISOTime to isoTime on random instants in and
// around years 0 to 9999, in many zones, and on the edges of each field.
func TestISOTime(t *testing.T) {
	check := func(tm time.Time) {
		t.Helper()
		if got, want := string(appendISOTime(nil, tm)), isoTime(tm); got != want {
			t.Fatalf("%v: got %s, want %s", tm, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	first, last := time.Date(-20, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(10020, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 200000 {
		zone := time.FixedZone("z", rng.IntN(100000)-50000)
		check(time.Unix(first+rng.Int64N(last-first), rng.Int64N(1e9)).In(zone))
	}
	for _, year := range []int{-1, 0, 1, 9, 10, 99, 100, 999, 1000, 1969, 1970, 2038, 9999, 10000} {
		for _, ns := range []int{0, 999999, 1000000, 999999999} {
			check(time.Date(year, 1, 1, 0, 0, 0, ns, time.UTC))
			check(time.Date(year, 12, 31, 23, 59, 59, ns, time.UTC))
		}
	}
	check(time.Time{})
}

// FuzzXMLText holds appendXMLText to xml.EscapeText.
func FuzzXMLText(f *testing.F) {
	for _, s := range listXMLPieces {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendXMLText(nil, s)), escapeReference(s); got != want {
			t.Fatalf("escape %q: got %q, want %q", s, got, want)
		}
	})
}

// listXMLPieces are what random listing strings are made of: one of each
// kind of byte the escaper or the URL encoding treats differently.
var listXMLPieces = []string{
	// ASCII kept as it is, and URL-encoded or kept by encoding-type=url.
	"a", "Z", "0", "/", "-", "_", ".", "~", "*", " ", "%", "+", "=", "?", "#", ";", ":",
	// Escaped by XML.
	"&", "<", ">", "\"", "'", "]]>", "&amp;",
	// Controls: three are escaped, the others are not XML characters.
	"\t", "\n", "\r", "\r\n", "\x00", "\x01", "\x08", "\x0b", "\x1f", "\x7f",
	// Multi-byte UTF-8, valid, at the edges of XML's character range.
	"é", "日本", "𝄞", "\u0085", "\u2028", "\ud7ff", "\ue000", "\ufffd", "\ufffe", "\uffff", "\U00010000", "\U0010ffff",
	// Invalid UTF-8: a lone continuation, truncated sequences, an
	// encoded surrogate, a rune above U+10FFFF, an overlong '/', 0xff.
	"\x80", "\xc3", "\xe6\x97", "\xf0\x9d\x84", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xff",
}

// listXMLGen makes random listings.
type listXMLGen struct{ r *rand.Rand }

// text is a random string, empty a quarter of the time.
func (g listXMLGen) text() string {
	if g.r.IntN(4) == 0 {
		return ""
	}
	var b strings.Builder
	for range 1 + g.r.IntN(10) {
		b.WriteString(listXMLPieces[g.r.IntN(len(listXMLPieces))])
	}
	return b.String()
}

// oneOf is one of choices, or random text a quarter of the time.
func (g listXMLGen) oneOf(choices ...string) string {
	if g.r.IntN(4) == 0 {
		return g.text()
	}
	return choices[g.r.IntN(len(choices))]
}

func (g listXMLGen) time() time.Time {
	switch g.r.IntN(10) {
	case 0:
		return time.Time{}
	case 1: // years of five digits and before year 0
		return time.Date(9990+g.r.IntN(20), 12, 31, 23, 59, 59, g.r.IntN(1e9), time.UTC)
	case 2:
		return time.Date(-g.r.IntN(2000), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	zone := time.FixedZone("z", (g.r.IntN(49)-24)*1800)
	return time.Unix(g.r.Int64N(4e9), g.r.Int64N(1e9)).In(zone)
}

func (g listXMLGen) query(metadata bool) listQuery {
	return listQuery{
		prefix: g.oneOf("", "photos/", "a"), delimiter: g.oneOf("", "", "/", "-"),
		maxKeys: g.r.IntN(1001), urlEncoding: g.r.IntN(2) == 0, metadata: metadata && g.r.IntN(3) == 0,
	}
}

func (g listXMLGen) owner() owner {
	ak := g.oneOf("AKIAIOSFODNN7EXAMPLE", "")
	return owner{ID: g.oneOf(ownerID(ak), ""), DisplayName: ak}
}

func (g listXMLGen) object() store.ObjectInfo {
	sizes := []int64{0, 1, 4096, 1 << 40, -1, 1<<63 - 1}
	size := sizes[g.r.IntN(len(sizes))]
	if g.r.IntN(2) == 0 {
		size = g.r.Int64()
	}
	return store.ObjectInfo{
		Key: g.text(), Size: size, LastModified: g.time(),
		ETag:         g.oneOf("9dd4e461268c8034f5c8564e155c67a6", "d41d8cd98f00b204e9800998ecf8427e-3", ""),
		Meta:         store.Meta{StorageClass: g.oneOf("", "", "STANDARD", "GLACIER")},
		VersionID:    g.oneOf("null", "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY", ""),
		IsLatest:     g.r.IntN(2) == 0,
		DeleteMarker: g.r.IntN(3) == 0,
	}
}

func (g listXMLGen) prefixes() []string {
	var out []string
	for range g.r.IntN(4) * g.r.IntN(4) {
		out = append(out, g.text())
	}
	return out
}

// meta is what metadata=true found of an object: nothing (gone), or its
// metadata and tags through the functions the handler uses.
func (g listXMLGen) meta() objectMeta {
	if g.r.IntN(4) == 0 {
		return objectMeta{}
	}
	m := store.Meta{User: map[string]string{}, ContentType: g.oneOf("", "image/jpeg")}
	for range g.r.IntN(4) {
		m.User[g.oneOf("camera", "x_y", "a.b", "9lives")] = g.text()
	}
	for range g.r.IntN(3) {
		m.Tags = append(m.Tags, store.Tag{Key: g.text(), Value: g.text()})
	}
	return objectMeta{meta: listedMetaOf(m), tags: encodeTagsQuery(m.Tags)}
}

func (g listXMLGen) objectListing(v2 bool) *objectListing {
	l := &objectListing{v2: v2, bucket: g.oneOf("bucket", "my.bucket-1"), q: g.query(true), marker: g.text()}
	o := g.owner()
	if !v2 || g.r.IntN(2) == 0 { // v1 always has Owner, v2 with fetch-owner
		l.owner = &o
	}
	if v2 && g.r.IntN(2) == 0 {
		l.token = g.oneOf(encodeContinuationToken("photos/2024/"), "AAAA")
	}
	for range g.r.IntN(12) {
		l.page.Objects = append(l.page.Objects, g.object())
	}
	l.page.CommonPrefixes = g.prefixes()
	l.page.IsTruncated = g.r.IntN(2) == 0
	l.page.NextMarker = g.text()
	if l.q.metadata {
		l.meta = make([]objectMeta, len(l.page.Objects))
		for i := range l.meta {
			l.meta[i] = g.meta()
		}
	}
	return l
}

func (g listXMLGen) versionListing() *versionListing {
	l := &versionListing{
		bucket: g.oneOf("bucket"), q: g.query(false), keyMarker: g.text(),
		versionMarker: g.oneOf("", "null", "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY"), owner: g.owner(),
	}
	for range g.r.IntN(12) {
		l.page.Versions = append(l.page.Versions, g.object())
	}
	l.page.CommonPrefixes = g.prefixes()
	l.page.IsTruncated = g.r.IntN(2) == 0
	l.page.NextKeyMarker, l.page.NextVersionIDMarker = g.text(), g.oneOf("", "null", "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY")
	return l
}

// listXMLSeed seeds TestListXMLDifferential; case i uses (listXMLSeed, i).
const listXMLSeed = 20261207

// TestListXMLDifferential writes random ListObjects v1, v2 and
// ListObjectVersions pages both ways, the reference's conversion through
// writeXML (encoding/xml) and the hand-written documents through
// writeXMLDoc, and wants the same status, headers and bytes.
func TestListXMLDifferential(t *testing.T) {
	const cases = 6000
	seen := map[string]int{}
	for i := range cases {
		g := listXMLGen{rand.New(rand.NewPCG(listXMLSeed, uint64(i)))}
		var doc xmlDoc
		var ref any
		switch i % 3 {
		case 0, 1:
			l := g.objectListing(i%3 == 1)
			doc, ref = l, l.reference()
			seen["v2"] += b2i(l.v2)
			seen["v1"] += b2i(!l.v2)
			seen["no owner"] += b2i(l.owner == nil)
			seen["token"] += b2i(l.token != "")
			seen["metadata"] += b2i(l.meta != nil)
			seen["truncated with delimiter"] += b2i(l.page.IsTruncated && l.q.delimiter != "")
			for _, obj := range l.page.Objects {
				seen["invalid UTF-8 key"] += b2i(!utf8.ValidString(obj.Key))
			}
		case 2:
			l := g.versionListing()
			doc, ref = l, l.reference()
			seen["versions"]++
			seen["truncated versions"] += b2i(l.page.IsTruncated)
			for _, v := range l.page.Versions {
				seen["delete marker"] += b2i(v.DeleteMarker)
			}
		}
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		writeXML(want, http.StatusOK, ref)
		writeXMLDoc(got, http.StatusOK, doc)
		if g, w := got.Body.Bytes(), want.Body.Bytes(); !bytes.Equal(g, w) {
			n := commonPrefixLen(g, w)
			t.Fatalf("case %d: documents differ at byte %d:\ngot  %q\nwant %q\nwhole reference:\n%q",
				i, n, g[max(0, n-80):min(len(g), n+80)], w[max(0, n-80):min(len(w), n+80)], w)
		}
		if got.Code != want.Code || !equalHeaders(got.Header(), want.Header()) {
			t.Fatalf("case %d: status %d %v, want %d %v", i, got.Code, got.Header(), want.Code, want.Header())
		}
	}
	// The generator reaches every branch it should.
	for _, k := range []string{"v1", "v2", "versions", "no owner", "token", "metadata",
		"truncated with delimiter", "truncated versions", "delete marker", "invalid UTF-8 key"} {
		if seen[k] == 0 {
			t.Errorf("no case with %s", k)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") || len(v) != len(b[k]) {
			return false
		}
	}
	return true
}

func commonPrefixLen(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
