package s3api

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/store"
)

// listFixture puts keys with known ETags; it returns the Last-Modified of
// each, formatted as in listings.
func listFixture(t *testing.T, ts *testServer, bucket string, keys ...string) map[string]string {
	t.Helper()
	mustBucket(t, ts, bucket)
	times := map[string]string{}
	for _, k := range keys {
		info := mustPut(t, ts, bucket, k, "x", store.Meta{})
		times[k] = isoTime(info.LastModified)
	}
	return times
}

const xEtag = "&#34;9dd4e461268c8034f5c8564e155c67a6&#34;"

func TestListObjectsV1Document(t *testing.T) {
	ts := newTestServer(t)
	lm := listFixture(t, ts, "docs", "a.txt", "dir/b.txt", "dir/c.txt", "z")
	resp, body := ts.do(t, "GET", "/docs?delimiter=/&max-keys=2", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml" {
		t.Fatalf("status %d %v", resp.StatusCode, resp.Header)
	}
	owner := fmt.Sprintf("<Owner><ID>%s</ID><DisplayName>%s</DisplayName></Owner>", ownerID(testAccessKey), testAccessKey)
	want := xml.Header + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Name>docs</Name><Prefix></Prefix><Marker></Marker><NextMarker>dir/</NextMarker><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>` +
		`<Contents><Key>a.txt</Key><LastModified>` + lm["a.txt"] + `</LastModified><ETag>` + xEtag + `</ETag><Size>1</Size>` + owner + `<StorageClass>STANDARD</StorageClass></Contents>` +
		`<CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes></ListBucketResult>`
	if string(body) != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}

	// Second page from the marker; no delimiter: no NextMarker even when
	// truncated.
	_, body = ts.do(t, "GET", "/docs?marker=dir/&max-keys=1", nil, nil)
	want = xml.Header + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Name>docs</Name><Prefix></Prefix><Marker>dir/</Marker><MaxKeys>1</MaxKeys><IsTruncated>true</IsTruncated>` +
		`<Contents><Key>dir/b.txt</Key><LastModified>` + lm["dir/b.txt"] + `</LastModified><ETag>` + xEtag + `</ETag><Size>1</Size>` + owner + `<StorageClass>STANDARD</StorageClass></Contents>` +
		`</ListBucketResult>`
	if string(body) != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}

	// Empty result, max-keys=0.
	_, body = ts.do(t, "GET", "/docs?max-keys=0&prefix=nothing", nil, nil)
	want = xml.Header + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Name>docs</Name><Prefix>nothing</Prefix><Marker></Marker><MaxKeys>0</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`
	if string(body) != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}
}

func TestListObjectsV2Document(t *testing.T) {
	ts := newTestServer(t)
	lm := listFixture(t, ts, "docs", "a.txt", "dir/b.txt", "dir/c.txt", "z")
	_, body := ts.do(t, "GET", "/docs?list-type=2&delimiter=/&max-keys=2", nil, nil)
	token := encodeContinuationToken("dir/")
	want := xml.Header + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Name>docs</Name><Prefix></Prefix><NextContinuationToken>` + token + `</NextContinuationToken><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>` +
		`<Contents><Key>a.txt</Key><LastModified>` + lm["a.txt"] + `</LastModified><ETag>` + xEtag + `</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>` +
		`<CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes></ListBucketResult>`
	if string(body) != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}

	_, body = ts.do(t, "GET", "/docs?list-type=2&delimiter=/&continuation-token="+url.QueryEscape(token)+"&start-after=a&fetch-owner=true", nil, nil)
	owner := fmt.Sprintf("<Owner><ID>%s</ID><DisplayName>%s</DisplayName></Owner>", ownerID(testAccessKey), testAccessKey)
	want = xml.Header + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Name>docs</Name><Prefix></Prefix><StartAfter>a</StartAfter><ContinuationToken>` + token + `</ContinuationToken><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>` +
		`<Contents><Key>z</Key><LastModified>` + lm["z"] + `</LastModified><ETag>` + xEtag + `</ETag><Size>1</Size>` + owner + `<StorageClass>STANDARD</StorageClass></Contents>` +
		`</ListBucketResult>`
	if string(body) != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}

	_, body = ts.do(t, "GET", "/docs?list-type=2&start-after=dir/c.txt&prefix=dir/", nil, nil)
	want = xml.Header + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		`<Name>docs</Name><Prefix>dir/</Prefix><StartAfter>dir/c.txt</StartAfter><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`
	if string(body) != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}
}

// oddKeys need escaping in XML or in URLs.
var oddKeys = []string{
	"a b", "a+b", "a%b", "a&b<c>", "caf\u00e9", "tab\tkey", "new\nline", "q?x=1", "hash#1", "semi;colon", "tilde~", "star*", "quote\"'",
	"dir with space/x", "\u65e5\u672c/\u8a9e",
}

func TestListEncodingURL(t *testing.T) {
	ts := newTestServer(t)
	listFixture(t, ts, "odd", oddKeys...)
	want := append([]string(nil), oddKeys...)
	sort.Strings(want)

	// minio-go lists with encoding-type=url and decodes.
	var got []string
	for o := range ts.client.ListObjects(ctx(t), "odd", minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		got = append(got, o.Key)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("minio-go keys\n%q\nwant\n%q", got, want)
	}

	// The raw document: every encoded field decodes back.
	_, body := ts.do(t, "GET", "/odd?list-type=2&encoding-type=url&delimiter=/&prefix="+url.QueryEscape("")+"&start-after="+url.QueryEscape("a b"), nil, nil)
	var doc listBucketResultV2
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.EncodingType != "url" || doc.StartAfter != "a%20b" || doc.Delimiter != "/" || doc.CommonPrefixes[0].Prefix != "dir%20with%20space/" {
		t.Errorf("document fields: %+v", doc)
	}
	var keys []string
	for _, c := range doc.Contents {
		k, err := url.QueryUnescape(c.Key)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(c.Key, " \n\t&<\"") {
			t.Errorf("key %q not encoded", c.Key)
		}
		keys = append(keys, k)
	}
	for _, p := range doc.CommonPrefixes {
		k, _ := url.QueryUnescape(p.Prefix)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var wantTop []string
	seen := map[string]bool{}
	for _, k := range want {
		if k <= "a b" {
			continue
		}
		if i := strings.Index(k, "/"); i >= 0 {
			k = k[:i+1]
		}
		if !seen[k] {
			seen[k] = true
			wantTop = append(wantTop, k)
		}
	}
	sort.Strings(wantTop)
	if strings.Join(keys, "|") != strings.Join(wantTop, "|") {
		t.Errorf("decoded\n%q\nwant\n%q", keys, wantTop)
	}

	// Without encoding-type, the XML escapes but keeps the key.
	_, body = ts.do(t, "GET", "/odd?prefix="+url.QueryEscape("a&b"), nil, nil)
	var v1 listBucketResult
	if err := xml.Unmarshal(body, &v1); err != nil || len(v1.Contents) != 1 || v1.Contents[0].Key != "a&b<c>" {
		t.Errorf("v1 raw: %+v %v", v1, err)
	}
}

func TestURLEncode(t *testing.T) {
	for in, want := range map[string]string{
		"plain/key.txt": "plain/key.txt", "a b": "a%20b", "a+b": "a%2Bb", "%": "%25", "\u00e9": "%C3%A9", "~*-_.": "~*-_.",
	} {
		if got := urlEncode(in); got != want {
			t.Errorf("urlEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestListPagination walks a few thousand keys page by page with v1
// markers and v2 continuation tokens, through minio-go and raw.
func TestListPagination(t *testing.T) {
	if testing.Short() {
		t.Skip("puts 3000 objects")
	}
	ts := newTestServer(t)
	mustBucket(t, ts, "many")
	var want []string
	for i := 0; i < 3000; i++ {
		k := fmt.Sprintf("d%d/k%04d", i%7, i)
		mustPut(t, ts, "many", k, "", store.Meta{})
		want = append(want, k)
	}
	sort.Strings(want)
	for _, v1 := range []bool{false, true} {
		var got []string
		for o := range ts.client.ListObjects(context.Background(), "many", minio.ListObjectsOptions{Recursive: true, UseV1: v1, MaxKeys: 700}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			got = append(got, o.Key)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("v1=%v: %d keys, want %d", v1, len(got), len(want))
		}
	}

	// Raw v2: tokens chain pages of 1000 with KeyCount and IsTruncated.
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("too many pages")
		}
		q := "/many?list-type=2"
		if token != "" {
			q += "&continuation-token=" + url.QueryEscape(token)
		}
		_, body := ts.do(t, "GET", q, nil, nil)
		var doc listBucketResultV2
		if err := xml.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.KeyCount != len(doc.Contents) || (doc.IsTruncated && doc.KeyCount != 1000) {
			t.Fatalf("page %d: KeyCount %d, %d contents, truncated %v", pages, doc.KeyCount, len(doc.Contents), doc.IsTruncated)
		}
		for _, c := range doc.Contents {
			got = append(got, c.Key)
		}
		if !doc.IsTruncated {
			if doc.NextContinuationToken != "" {
				t.Errorf("last page has a next token")
			}
			break
		}
		token = doc.NextContinuationToken
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("raw v2: %d keys, want %d", len(got), len(want))
	}

	// Delimited v1: common prefixes page too, with NextMarker.
	_, body := ts.do(t, "GET", "/many?delimiter=/&max-keys=3", nil, nil)
	var doc listBucketResult
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.CommonPrefixes) != 3 || doc.NextMarker != "d2/" || !doc.IsTruncated {
		t.Errorf("delimited page: %+v", doc)
	}
}
