package s3api

import (
	"math/rand"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/gorilla/mux"
)

// routeCases are requests and the operation each must reach: the common
// object and bucket calls, subresources, and paths at the edges of the
// three levels.
var routeCases = []struct {
	method, target, header, want string
}{
	{"GET", "/", "", "ListBuckets"},
	{"PUT", "/b", "", "CreateBucket"},
	{"PUT", "/b/", "", "CreateBucket"},
	{"HEAD", "/b", "", "HeadBucket"},
	{"GET", "/b?list-type=2&prefix=x", "", "ListObjectsV2"},
	{"GET", "/b/", "", "ListObjects"},
	{"GET", "/b?location", "", "GetBucketLocation"},
	{"POST", "/b?delete", "", "DeleteObjects"},
	{"DELETE", "/b", "", "DeleteBucket"},
	{"PUT", "/b/k", "", "PutObject"},
	{"PUT", "/b//", "", "PutObject"},
	{"PUT", "/b/a//b/", "", "PutObject"},
	{"PUT", "/b/k", "X-Amz-Copy-Source", "CopyObject"},
	{"GET", "/b/k", "", "GetObject"},
	{"GET", "/b/k?partNumber=2", "", "GetObject"},
	{"HEAD", "/b/k", "", "HeadObject"},
	{"DELETE", "/b/k", "", "DeleteObject"},
	{"DELETE", "/b/k?tagging", "", "DeleteObjectTagging"},
	{"PUT", "/b/k?partNumber=1&uploadId=u", "", "UploadPart"},
	{"PUT", "/b/k?partNumber=1&uploadId=u", "X-Amz-Copy-Source", "UploadPartCopy"},
	{"POST", "/b/k?uploads", "", "CreateMultipartUpload"},
	{"PUT", "/b/k?policy", "", "Unsupported"},
	{"PUT", "/b/k?renameObject", "", "Unsupported"},
	{"GET", "/b?session", "", "Unsupported"},
	{"GET", "/b?cors", "", "GetBucketCors"},
	{"DELETE", "/b/?cors", "", "DeleteBucketCors"},
	{"PUT", "/b/k?cors", "", "Unsupported"},
	{"POST", "/b?cors", "", "Unsupported"},
	{"DELETE", "/", "", ""},
	{"GET", "//k", "", ""},
	{"PATCH", "/b/k", "", ""},
}

func routeRequest(method, target, header string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	if header != "" {
		r.Header.Set(header, "/src/key")
	}
	return r
}

// TestRouteTable: each request reaches its operation; the last ones
// reach none (the not-found and method-not-allowed handlers).
func TestRouteTable(t *testing.T) {
	router := (&server{}).router().(*mux.Router)
	for _, c := range routeCases {
		var m mux.RouteMatch
		ok := router.Match(routeRequest(c.method, c.target, c.header), &m)
		got := ""
		if ok && m.Route != nil {
			got = m.Route.GetName()
		}
		if got != c.want {
			t.Errorf("%s %s (%s): routed to %q, want %q", c.method, c.target, c.header, got, c.want)
		}
	}
}

// TestLevelOfMatchesPatterns: levelOf agrees with the path patterns the
// router used before it (gorilla/mux path templates, as regular
// expressions) on random paths over an alphabet of slashes and a few
// other bytes.
func TestLevelOfMatchesPatterns(t *testing.T) {
	patterns := map[level]*regexp.Regexp{
		service: regexp.MustCompile(`^/$`),
		bucket:  regexp.MustCompile(`^/[^/]+/?$`),
		object:  regexp.MustCompile(`^/[^/]+/[\s\S]+$`),
	}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("/ab.\n%")
	for i := 0; i < 200000; i++ {
		p := make([]byte, rng.Intn(7))
		for j := range p {
			p[j] = alphabet[rng.Intn(len(alphabet))]
		}
		path := string(p)
		got, ok := levelOf(path)
		for l, re := range patterns {
			if re.MatchString(path) != (ok && got == l) {
				t.Fatalf("levelOf(%q) = %v, %v; pattern of level %v says %v", path, got, ok, l, re.MatchString(path))
			}
		}
	}
}

// BenchmarkRouteMatch is the router's cost per request over the cases.
func BenchmarkRouteMatch(b *testing.B) {
	router := (&server{}).router().(*mux.Router)
	reqs := make([]*http.Request, len(routeCases))
	for i, c := range routeCases {
		reqs[i] = routeRequest(c.method, c.target, c.header)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var m mux.RouteMatch
		router.Match(reqs[i%len(reqs)], &m)
	}
}
