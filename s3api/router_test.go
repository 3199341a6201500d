package s3api

import (
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
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

// match routes r as the middleware does, its query parsed first.
func match(rt *router, r *http.Request) *routed {
	var q url.Values
	if r.URL.RawQuery != "" {
		q = r.URL.Query()
	}
	return rt.match(r, q)
}

// TestRouteTable: each request reaches its operation; the last ones
// reach none (the not-found and method-not-allowed handlers).
func TestRouteTable(t *testing.T) {
	router := (&server{}).router()
	for _, c := range routeCases {
		got := match(router, routeRequest(c.method, c.target, c.header)).name
		if got == "Unknown" {
			got = ""
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
	router := (&server{}).router()
	reqs := make([]*http.Request, len(routeCases))
	for i, c := range routeCases {
		reqs[i] = routeRequest(c.method, c.target, c.header)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		match(router, reqs[i%len(reqs)])
	}
}

// TestRouterAgreesWithMux: the router chooses what the gorilla/mux router
// it replaced chose (the same table, built as it was), over random
// requests: methods, paths at every level and their edges, query
// parameters from the table, the subresources and others, with and
// without the copy-source and content-type headers.
func TestRouterAgreesWithMux(t *testing.T) {
	s := &server{}
	ours, theirs := s.router(), muxRouter(s)
	methods := []string{"GET", "PUT", "POST", "DELETE", "HEAD", "PATCH", "OPTIONS"}
	paths := []string{"/", "/b", "/b/", "/b/k", "/b//", "/b/a//c", "//k", "", "b/k", "/b/k/"}
	var params []string
	for _, rt := range append(s.routes(), s.plainRoutes()...) {
		params = append(params, rt.query...)
	}
	params = append(params, unsupported...)
	params = append(params, "prefix", "versionId", "x-id", "list-type")
	headers := []string{"", "X-Amz-Copy-Source", "Content-Type"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 50000; i++ {
		target := paths[rng.Intn(len(paths))]
		var query []string
		for n := rng.Intn(4); n > 0; n-- {
			p := params[rng.Intn(len(params))]
			if rng.Intn(2) == 0 {
				p += "=v"
			}
			query = append(query, p)
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.Method = methods[rng.Intn(len(methods))]
		r.URL.Path, r.URL.RawQuery = target, strings.Join(query, "&")
		if h := headers[rng.Intn(len(headers))]; h != "" {
			r.Header.Set(h, "x")
		}
		want := "Unknown"
		var m mux.RouteMatch
		if theirs.Match(r, &m) && m.Route != nil {
			want = m.Route.GetName()
		}
		if got := match(ours, r).name; got != want {
			t.Fatalf("%s %s?%s (%v): router chose %q, gorilla/mux %q", r.Method, r.URL.Path, r.URL.RawQuery, r.Header, got, want)
		}
	}
}

// muxRouter is the gorilla/mux router this package used before its own.
func muxRouter(s *server) *mux.Router {
	r := mux.NewRouter()
	r.SkipClean(true)
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	add := func(rt route) {
		r.Methods(rt.method).MatcherFunc(func(r *http.Request, _ *mux.RouteMatch) bool {
			got, ok := levelOf(r.URL.Path)
			return ok && got == rt.level
		}).MatcherFunc(func(r *http.Request, _ *mux.RouteMatch) bool {
			if len(rt.query) > 0 && r.URL.RawQuery == "" {
				return false
			}
			q := r.URL.Query()
			for _, k := range rt.query {
				if !q.Has(k) {
					return false
				}
			}
			return rt.header == "" || r.Header.Get(rt.header) != ""
		}).Handler(noop).Name(rt.name)
	}
	for _, rt := range s.routes() {
		add(rt)
	}
	r.MatcherFunc(func(r *http.Request, _ *mux.RouteMatch) bool {
		return r.URL.RawQuery != "" && namesSubresource(r.URL.Query())
	}).Handler(noop).Name("Unsupported")
	for _, rt := range s.plainRoutes() {
		add(rt)
	}
	return r
}
