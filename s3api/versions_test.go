package s3api

import (
	"encoding/xml"
	"fmt"
	"math/rand"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/store"
)

func TestListObjectVersionsDocument(t *testing.T) {
	ts := newTestServer(t)
	lm := listFixture(t, ts, "docs", "a b.txt", "dir/b.txt", "dir/c.txt", "z")
	owner := fmt.Sprintf("<Owner><ID>%s</ID><DisplayName>%s</DisplayName></Owner>", ownerID(testAccessKey), testAccessKey)
	version := func(key, shown string) string {
		return `<Version><Key>` + shown + `</Key><VersionId>null</VersionId><IsLatest>true</IsLatest><LastModified>` + lm[key] +
			`</LastModified><ETag>` + xEtag + `</ETag><Size>1</Size>` + owner + `<StorageClass>STANDARD</StorageClass></Version>`
	}
	head := xml.Header + `<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>docs</Name>`
	for _, c := range []struct{ query, want string }{
		{"versions", head + `<Prefix></Prefix><KeyMarker></KeyMarker><VersionIdMarker></VersionIdMarker><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>` +
			version("a b.txt", "a b.txt") + version("dir/b.txt", "dir/b.txt") + version("dir/c.txt", "dir/c.txt") + version("z", "z") + `</ListVersionsResult>`},
		// A page ending on an object resumes after its "null" version...
		{"versions&max-keys=1&encoding-type=url", head + `<Prefix></Prefix><KeyMarker></KeyMarker><VersionIdMarker></VersionIdMarker>` +
			`<NextKeyMarker>a%20b.txt</NextKeyMarker><NextVersionIdMarker>null</NextVersionIdMarker><MaxKeys>1</MaxKeys><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>` +
			version("a b.txt", "a%20b.txt") + `</ListVersionsResult>`},
		// ...one ending on a common prefix after the prefix.
		{"versions&delimiter=/&key-marker=a+b.txt&version-id-marker=null&max-keys=1", head + `<Prefix></Prefix><KeyMarker>a b.txt</KeyMarker><VersionIdMarker>null</VersionIdMarker>` +
			`<NextKeyMarker>dir/</NextKeyMarker><MaxKeys>1</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>` +
			`<CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes></ListVersionsResult>`},
		{"versions&delimiter=/&key-marker=dir/", head + `<Prefix></Prefix><KeyMarker>dir/</KeyMarker><VersionIdMarker></VersionIdMarker>` +
			`<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>` + version("z", "z") + `</ListVersionsResult>`},
		{"versions&prefix=dir/&key-marker=dir/b.txt", head + `<Prefix>dir/</Prefix><KeyMarker>dir/b.txt</KeyMarker><VersionIdMarker></VersionIdMarker>` +
			`<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>` + version("dir/c.txt", "dir/c.txt") + `</ListVersionsResult>`},
		{"versions&max-keys=0", head + `<Prefix></Prefix><KeyMarker></KeyMarker><VersionIdMarker></VersionIdMarker><MaxKeys>0</MaxKeys><IsTruncated>false</IsTruncated></ListVersionsResult>`},
	} {
		resp, body := ts.do(t, "GET", "/docs?"+c.query, nil, nil)
		if resp.StatusCode != 200 || string(body) != c.want {
			t.Errorf("?%s: %d\n%s\nwant\n%s", c.query, resp.StatusCode, body, c.want)
		}
	}
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{"/docs?versions&version-id-marker=null", 400, "InvalidArgument"},
		{"/docs?versions&key-marker=z&version-id-marker=3HL4kqtJlcpXroDTDmJ%2BrmSpXd3dIbrHY", 400, "InvalidArgument"},
		{"/docs?versions&max-keys=-1", 400, "InvalidArgument"},
		{"/docs?versions&encoding-type=xml", 400, "InvalidArgument"},
		{"/nothere?versions", 404, "NoSuchBucket"},
		{"/nothere?versions&max-keys=0", 404, "NoSuchBucket"},
	} {
		resp, body := ts.do(t, "GET", c.path, nil, nil)
		wantError(t, resp, body, c.status, c.code)
	}
}

// modelListing is every entry of a whole listing, in order: "K:key" for
// keys, "P:prefix" for common prefixes.
func modelListing(keys []string, prefix, delimiter string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys { // sorted
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if i := strings.Index(k[len(prefix):], delimiter); delimiter != "" && i >= 0 {
			cp := k[:len(prefix)+i+len(delimiter)]
			if !seen[cp] {
				seen[cp] = true
				out = append(out, "P:"+cp)
			}
			continue
		}
		out = append(out, "K:"+k)
	}
	return out
}

// TestListObjectVersionsPagingRandom pages through random buckets with
// random prefixes, delimiters and page sizes, following NextKeyMarker and
// NextVersionIdMarker, and compares the whole walk with a model.
func TestListObjectVersionsPagingRandom(t *testing.T) {
	ts := newTestServer(t)
	mustBucket(t, ts, "rnd")
	rng := rand.New(rand.NewSource(2))
	parts := []string{"a", "b", "ab", "a.b", "b-a", "é"}
	var keys []string
	for range 150 {
		n := 1 + rng.Intn(3)
		comps := make([]string, n)
		for i := range comps {
			comps[i] = parts[rng.Intn(len(parts))]
		}
		k := strings.Join(comps, "/")
		if rng.Intn(8) == 0 {
			k += "/" // a folder marker
		}
		// Keys the store cannot hold yet (an object that is also a
		// prefix) are skipped: this test is about paging.
		if _, err := ts.store.PutObject("rnd", k, strings.NewReader(""), 0, store.Meta{}); err == nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	keys = slices.Compact(keys)
	prefixes := []string{"", "a", "a/", "ab/", "b", "é/", "zz"}
	delimiters := []string{"", "/", "b", "a/"}
	for round := range 60 {
		prefix, delim := prefixes[rng.Intn(len(prefixes))], delimiters[rng.Intn(len(delimiters))]
		maxKeys := 1 + rng.Intn(7)
		want := modelListing(keys, prefix, delim)
		var got []string
		keyMarker, versionMarker := "", ""
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("round %d: the walk does not end", round)
			}
			q := url.Values{"versions": {""}, "prefix": {prefix}, "delimiter": {delim}, "max-keys": {fmt.Sprint(maxKeys)},
				"key-marker": {keyMarker}, "version-id-marker": {versionMarker}, "encoding-type": {"url"}}
			resp, body := ts.do(t, "GET", "/rnd?"+q.Encode(), nil, nil)
			var doc versionsDoc
			if err := xml.Unmarshal(body, &doc); err != nil || resp.StatusCode != 200 {
				t.Fatalf("round %d: %d %s", round, resp.StatusCode, body)
			}
			// Entries come in key order, versions and prefixes mixed.
			var page []string
			for _, v := range doc.Versions {
				k, _ := url.QueryUnescape(v.Key)
				if v.VersionId != "null" || !v.IsLatest {
					t.Fatalf("round %d: version %+v", round, v)
				}
				page = append(page, "K:"+k)
			}
			for _, p := range doc.CommonPrefixes {
				k, _ := url.QueryUnescape(p.Prefix)
				page = append(page, "P:"+k)
			}
			sort.Slice(page, func(i, j int) bool { return page[i][2:] < page[j][2:] })
			got = append(got, page...)
			if len(page) > maxKeys || (doc.IsTruncated && len(page) != maxKeys) {
				t.Fatalf("round %d: page of %d, max %d, truncated %v", round, len(page), maxKeys, doc.IsTruncated)
			}
			if !doc.IsTruncated {
				if doc.NextKeyMarker != "" || doc.NextVersionIdMarker != "" {
					t.Errorf("round %d: last page has next markers", round)
				}
				break
			}
			keyMarker, _ = url.QueryUnescape(doc.NextKeyMarker)
			last := page[len(page)-1]
			if wantVM := map[bool]string{true: "null", false: ""}[last[0] == 'K']; doc.NextVersionIdMarker != wantVM || last[2:] != keyMarker {
				t.Fatalf("round %d: last entry %q, next markers %q %q", round, last, keyMarker, doc.NextVersionIdMarker)
			}
			versionMarker = doc.NextVersionIdMarker
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("round %d prefix %q delimiter %q max %d:\n got %q\nwant %q", round, prefix, delim, maxKeys, got, want)
		}
	}
}

// versionsDoc decodes a ListVersionsResult document.
type versionsDoc struct {
	XMLName             xml.Name `xml:"ListVersionsResult"`
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIdMarker string
	Versions            []versionEntry `xml:"Version"`
	DeleteMarkers       []versionEntry `xml:"DeleteMarker"`
	CommonPrefixes      []commonPrefix
}
