package integration

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// awkwardKeys are keys that are not clean file paths, all valid in S3.
func awkwardKeys() []string {
	return []string{
		"a//b", "/lead", "x/../y", "..", ".", "./", "../z", "a/./b", "//", "/",
		"p", "p/q", "p/q/r", "m/", "m/in", // objects that are prefixes, a marker with content
		"long/" + strings.Repeat("L", 300) + "/end", strings.Repeat("é", 150), // components over 255 bytes
		strings.Repeat("k/", 511) + "zz", // 1024 bytes
		".xfs3.o.p", ".xfs3.e.", "日本/語 ", "trailing/.",
	}
}

// escapePath percent-encodes a key for a request path, component by
// component, so that the server sees it exactly.
func escapePath(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

type listV2 struct {
	Contents []struct {
		Key  string
		Size int64
	}
	CommonPrefixes        []struct{ Prefix string }
	IsTruncated           bool
	NextContinuationToken string
}

// TestAwkwardKeysThroughBinary puts, lists (every page size, with and
// without delimiter, continuation tokens), gets, copies and deletes keys
// that are not clean paths through the real binary, with raw signed HTTP
// and with the aws CLI.
func TestAwkwardKeysThroughBinary(t *testing.T) {
	s := startServer(t, "1G")
	if code, b := s.do(t, "PUT", "/keys", nil, nil, region); code != 200 {
		t.Fatalf("create bucket: %d %s", code, b)
	}
	body := func(k string) string { return fmt.Sprintf("body of %q", k) }
	keys := awkwardKeys()
	for _, k := range keys {
		if code, b := s.do(t, "PUT", "/keys/"+escapePath(k), []byte(body(k)), nil, region); code != 200 {
			t.Fatalf("PUT %q: %d %s", k, code, b)
		}
	}
	for _, k := range keys {
		if code, b := s.do(t, "GET", "/keys/"+escapePath(k), nil, nil, region); code != 200 || string(b) != body(k) {
			t.Errorf("GET %q: %d %q", k, code, b)
		}
	}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)

	list := func(query string) (keys, prefixes []string) {
		t.Helper()
		token := ""
		for pages := 0; ; pages++ {
			q := "/keys?list-type=2&encoding-type=url&" + query
			if token != "" {
				q += "&continuation-token=" + url.QueryEscape(token)
			}
			code, b := s.do(t, "GET", q, nil, nil, region)
			var page listV2
			if err := xml.Unmarshal(b, &page); code != 200 || err != nil {
				t.Fatalf("GET %s: %d %v %s", q, code, err, b)
			}
			for _, c := range page.Contents {
				k, err := url.QueryUnescape(c.Key)
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
			for _, p := range page.CommonPrefixes {
				k, err := url.QueryUnescape(p.Prefix)
				if err != nil {
					t.Fatal(err)
				}
				prefixes = append(prefixes, k)
			}
			if !page.IsTruncated {
				return keys, prefixes
			}
			if pages > 100 {
				t.Fatalf("GET %s: no end after 100 pages", q)
			}
			token = page.NextContinuationToken
		}
	}
	for _, max := range []int{1, 2, 3, 7, 1000} {
		got, _ := list(fmt.Sprintf("max-keys=%d", max))
		if !reflect.DeepEqual(got, sorted) {
			t.Errorf("max-keys=%d: listed\n%q\nwant\n%q", max, got, sorted)
		}
	}
	// With the delimiter "/": the keys without one, and one prefix per
	// first component.
	wantKeys, wantPrefixes := []string{}, []string{}
	for _, k := range sorted {
		if i := strings.Index(k, "/"); i >= 0 {
			if p := k[:i+1]; len(wantPrefixes) == 0 || wantPrefixes[len(wantPrefixes)-1] != p {
				wantPrefixes = append(wantPrefixes, p)
			}
		} else {
			wantKeys = append(wantKeys, k)
		}
	}
	for _, max := range []int{1, 4, 1000} {
		gotKeys, gotPrefixes := list(fmt.Sprintf("max-keys=%d&delimiter=%%2F", max))
		if !reflect.DeepEqual(gotKeys, wantKeys) || !reflect.DeepEqual(gotPrefixes, wantPrefixes) {
			t.Errorf("delimiter / max-keys=%d: %q %q, want %q %q", max, gotKeys, gotPrefixes, wantKeys, wantPrefixes)
		}
	}
	if got, prefixes := list("prefix=p%2F&delimiter=%2F"); !reflect.DeepEqual(got, []string{"p/q"}) || !reflect.DeepEqual(prefixes, []string{"p/q/"}) {
		t.Errorf("prefix p/: %q %q", got, prefixes)
	}
	if got, _ := list("prefix=" + url.QueryEscape("../")); !reflect.DeepEqual(got, []string{"../z"}) {
		t.Errorf("prefix ../: %q", got)
	}

	// Copy onto an awkward key, then delete every key: nothing is left,
	// so the bucket can go.
	h := map[string][]string{"X-Amz-Copy-Source": {"/keys/" + escapePath("x/../y")}}
	if code, b := s.do(t, "PUT", "/keys/"+escapePath("copy//."), nil, h, region); code != 200 {
		t.Fatalf("copy: %d %s", code, b)
	}
	if code, b := s.do(t, "GET", "/keys/"+escapePath("copy//."), nil, nil, region); code != 200 || string(b) != body("x/../y") {
		t.Errorf("GET copy: %d %q", code, b)
	}
	for _, k := range append(keys, "copy//.") {
		if code, b := s.do(t, "DELETE", "/keys/"+escapePath(k), nil, nil, region); code != 204 {
			t.Errorf("DELETE %q: %d %s", k, code, b)
		}
		if code, _ := s.do(t, "HEAD", "/keys/"+escapePath(k), nil, nil, region); code != 404 {
			t.Errorf("HEAD %q after delete: %d", k, code)
		}
	}
	if code, b := s.do(t, "DELETE", "/keys", nil, nil, region); code != 204 {
		t.Errorf("delete the emptied bucket: %d %s", code, b)
	}
	s.stop(t)
}

// TestAwkwardKeysAwsCLI: the aws CLI puts, lists and gets such keys.
func TestAwkwardKeysAwsCLI(t *testing.T) {
	s := startServer(t, "1G")
	aws, home := awsClient(t, s)
	aws.run("s3", "mb", "s3://cli")
	keys := []string{"a//b", "/lead", "x/../y", "..", "p", "p/q", "m/", "long/" + strings.Repeat("L", 300)}
	for i, k := range keys {
		f := filepath.Join(home, fmt.Sprint("in", i))
		if err := os.WriteFile(f, []byte("cli "+k), 0o644); err != nil {
			t.Fatal(err)
		}
		aws.run("s3api", "put-object", "--bucket", "cli", "--key", k, "--body", f)
	}
	var listed struct{ Contents []struct{ Key string } }
	decode(t, aws.run("s3api", "list-objects-v2", "--bucket", "cli", "--page-size", "2"), &listed)
	var got []string
	for _, c := range listed.Contents {
		got = append(got, c.Key)
	}
	want := append([]string(nil), keys...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("list-objects-v2: %q, want %q", got, want)
	}
	for i, k := range keys {
		out := filepath.Join(home, fmt.Sprint("out", i))
		aws.run("s3api", "get-object", "--bucket", "cli", "--key", k, out)
		if b, err := os.ReadFile(out); err != nil || string(b) != "cli "+k {
			t.Errorf("get-object %q: %q %v", k, b, err)
		}
		aws.run("s3api", "delete-object", "--bucket", "cli", "--key", k)
	}
	aws.run("s3", "rb", "s3://cli")
	s.stop(t)
}
