package s3api

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/rs/zerolog"

	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// FuzzRange: any header against any size resolves to a range inside the
// object or to "no range" / InvalidRange, never a panic.
func FuzzRange(f *testing.F) {
	for _, h := range []string{"bytes=0-0", "bytes=5-", "bytes=-5", "bytes=3-2", "bytes=0-1,2-3", "bytes=-0", "bytes=99999999999999999999-"} {
		f.Add(h, int64(10))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			size = -size
			if size < 0 {
				return
			}
		}
		br, ranged, err := requestRange(h, size)
		switch {
		case err != nil:
			if ranged || toS3Error(err).code != "InvalidRange" {
				t.Fatalf("%q/%d: %v", h, size, err)
			}
		case ranged:
			if br.first < 0 || br.first > br.last || br.last >= size || br.length() <= 0 {
				t.Fatalf("%q/%d: %+v outside the object", h, size, br)
			}
		}
	})
}

// FuzzCompleteBody: a Complete document decodes into 1 to 10,000 parts
// with valid numbers, or fails with an S3 error.
func FuzzCompleteBody(f *testing.F) {
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"a"</ETag></Part></CompleteMultipartUpload>`))
	f.Add([]byte(`<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></CompleteMultipartUpload>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		parts, err := parseCompleteMultipartUpload(data)
		if err != nil {
			if _, ok := codes[toS3Error(err).code]; !ok {
				t.Fatalf("unknown code for %v", err)
			}
			return
		}
		if len(parts) == 0 || len(parts) > store.MaxPartNumber {
			t.Fatalf("%d parts", len(parts))
		}
		for _, p := range parts {
			if p.PartNumber < 1 || p.PartNumber > store.MaxPartNumber {
				t.Fatalf("part number %d", p.PartNumber)
			}
		}
	})
}

// FuzzDeleteBody: a Delete document names 1 to 1000 objects, or fails
// with an S3 error.
func FuzzDeleteBody(f *testing.F) {
	f.Add([]byte(`<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<Delete><Object><Key>a</Key><VersionId>null</VersionId></Object><Object><Key>b</Key></Object></Delete>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := parseDeleteRequest(data)
		if err != nil {
			if _, ok := codes[toS3Error(err).code]; !ok {
				t.Fatalf("unknown code for %v", err)
			}
			return
		}
		if n := len(req.Objects); n == 0 || n > maxDeleteObjects {
			t.Fatalf("%d objects", n)
		}
	})
}

// FuzzTaggingBody: a Tagging document gives at most 10 valid tags, sorted
// and unique, or fails with an S3 error.
func FuzzTaggingBody(f *testing.F) {
	f.Add([]byte(`<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>`))
	f.Add([]byte(`<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet></TagSet></Tagging>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tags, err := parseTagging(data)
		if err != nil {
			if _, ok := codes[toS3Error(err).code]; !ok {
				t.Fatalf("unknown code for %v", err)
			}
			return
		}
		if len(tags) > store.MaxTags {
			t.Fatalf("%d tags", len(tags))
		}
		if !sort.SliceIsSorted(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key }) {
			t.Fatalf("unsorted %v", tags)
		}
		for i, tg := range tags {
			if tg.Key == "" || !utf8.ValidString(tg.Key) || !utf8.ValidString(tg.Value) || (i > 0 && tags[i-1].Key == tg.Key) {
				t.Fatalf("bad tag %q", tg)
			}
		}
	})
}

// FuzzCopySource: a parsed source has a bucket and a key, and escaping
// them again parses back to the same pair.
func FuzzCopySource(f *testing.F) {
	for _, s := range []string{"/b/k", "b/k?versionId=null", "b/a%2Fb%3Fc", "/b", "b/%zz", "b/k?x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := parseCopySource(s)
		if err != nil {
			if toS3Error(err).code != "InvalidArgument" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if cs.bucket == "" || cs.key == "" {
			t.Fatalf("%q: %+v", s, cs)
		}
		again, err := parseCopySource(url.PathEscape(cs.bucket) + "/" + url.PathEscape(cs.key))
		if err != nil || again.bucket != cs.bucket || again.key != cs.key {
			t.Fatalf("%q: %+v then %+v, %v", s, cs, again, err)
		}
	})
}

// sharedHandler is one handler on one volume for all inputs of a fuzz
// target: a fresh volume per input would make fuzzing crawl.
type sharedHandler struct {
	once sync.Once
	h    http.Handler
	log  *syncBuffer
	err  error
	dir  string
	st   *store.Store
}

// fuzzHandler serves FuzzHandler, confinedHandler FuzzConfinement.
var fuzzHandler, confinedHandler sharedHandler

// get makes the handler on first use, filling its store with fill.
func (sh *sharedHandler) get(t *testing.T, fill func(*store.Store) error) http.Handler {
	sh.once.Do(func() {
		sh.dir, sh.err = os.MkdirTemp("", "s3api-fuzz-")
		if sh.err != nil {
			return
		}
		img := filepath.Join(sh.dir, "vol.xfs")
		if _, sh.err = mkfs.Format(img, mkfs.Options{Size: 256 << 20}); sh.err != nil {
			return
		}
		if sh.st, sh.err = store.Open(img); sh.err != nil {
			return
		}
		if sh.err = fill(sh.st); sh.err != nil {
			return
		}
		sh.log = &syncBuffer{}
		sh.h, sh.err = New(Config{Store: sh.st, Credentials: map[string]string{testAccessKey: testSecretKey}, Logger: zerolog.New(sh.log)})
	})
	if sh.err != nil {
		t.Fatal(sh.err)
	}
	return sh.h
}

func (sh *sharedHandler) close() {
	if sh.st != nil {
		sh.st.Close()
	}
	if sh.dir != "" {
		os.RemoveAll(sh.dir)
	}
}

// TestMain removes the volumes the fuzz targets share across inputs.
func TestMain(m *testing.M) {
	code := m.Run()
	fuzzHandler.close()
	confinedHandler.close()
	os.Exit(code)
}

// FuzzHandler sends signed requests with fuzzed method, path, query,
// one header and body through the whole handler: nothing may panic (the
// middleware would turn a panic into a logged InternalError) and every
// error body must be an S3 error document.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(0), "/fuzz/k", "", "Range", "bytes=0-1", []byte(nil))
	f.Add(uint8(1), "/fuzz/k", "tagging", "Content-Type", "text/plain", []byte("<Tagging/>"))
	f.Add(uint8(2), "/fuzz", "delete", "Content-MD5", "xx", []byte("<Delete><Object><Key>k</Key></Object></Delete>"))
	f.Add(uint8(3), "/fuzz/k", "uploads", "X-Amz-Copy-Source", "/fuzz/k", []byte(nil))
	f.Add(uint8(1), "/fuzz/k", "partNumber=1&uploadId=x", "X-Amz-Copy-Source-Range", "bytes=0-0", []byte(nil))
	f.Fuzz(func(t *testing.T, method uint8, path, query, hname, hvalue string, body []byte) {
		h := fuzzHandler.get(t, func(st *store.Store) error {
			if err := st.CreateBucket("fuzz"); err != nil {
				return err
			}
			_, err := st.PutObject("fuzz", "k", strings.NewReader("0123456789"), 10, store.Meta{})
			return err
		})
		methods := []string{"GET", "PUT", "POST", "DELETE", "HEAD"}
		if !strings.HasPrefix(path, "/") || !utf8.ValidString(path) || len(body) > 1<<16 {
			return
		}
		hname = http.CanonicalHeaderKey(hname)
		if hname == "" || !validHeader(hname, hvalue) || hname == "Authorization" || strings.HasPrefix(hname, "X-Amz-Content-") ||
			hname == "X-Amz-Date" || hname == "Content-Length" || hname == "Host" || hname == "Transfer-Encoding" {
			return
		}
		req := &http.Request{
			Method: methods[int(method)%len(methods)], URL: &url.URL{Scheme: "http", Host: "fuzz.test", Path: path, RawQuery: query},
			Host: "fuzz.test", Header: http.Header{hname: {hvalue}}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Body: httpBody(body), ContentLength: int64(len(body)),
		}
		req.Header.Set("X-Amz-Content-Sha256", hexSHA256(body))
		req = signer.SignV4(*req, testAccessKey, testSecretKey, "", testRegion)
		req.Body = httpBody(body)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if strings.Contains(fuzzHandler.log.String(), "panic") {
			t.Fatalf("panic serving %s %s?%s %s=%q: %s", req.Method, path, query, hname, hvalue, fuzzHandler.log.String())
		}
		if rec.Code >= 400 && req.Method != "HEAD" && isSystemPath(path) {
			var e struct{ Code, Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == "" || e.Code == "InternalError" {
				t.Fatalf("%s %s?%s: status %d, body %q", req.Method, path, query, rec.Code, rec.Body.Bytes())
			}
		} else if rec.Code >= 400 && req.Method != "HEAD" {
			var e errorBody
			if err := xml.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == "" || e.RequestID == "" {
				t.Fatalf("%s %s?%s: status %d, body %q", req.Method, path, query, rec.Code, rec.Body.Bytes())
			}
			if e.Code == "InternalError" {
				t.Fatalf("%s %s?%s %s=%q: InternalError: %s", req.Method, path, query, hname, hvalue, fuzzHandler.log.String())
			}
		}
	})
}

func validHeader(name, value string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return strings.TrimSpace(value) == value
}

func httpBody(b []byte) *readCloser { return &readCloser{bytes.NewReader(b)} }

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
