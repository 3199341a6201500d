package s3api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/xfs3/xfs3/store"
)

// BenchmarkEdge measures what the handler costs per 4 KiB request when
// no network is involved: signed requests (made once, replayed) served by
// the handler the binary uses, metrics on, into a response writer that
// keeps nothing. The store's own work is included and does not change
// between edge revisions, so a before/after pair of this benchmark shows
// the edge's share; allocs/op is the edge's almost entirely. Run it:
//
//	go test -run '^$' -bench Edge -benchmem ./s3api/
func BenchmarkEdge(b *testing.B) {
	h, st := newBenchHandler(b, MetricsRoot, store.Options{})
	body := bytes.Repeat([]byte{'e'}, 4096)
	sum := sha256.Sum256(body)
	const keys = 256
	for i := range keys {
		if _, err := st.PutObject("bench", edgeKey(i), bytes.NewReader(body), int64(len(body)), store.Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		method, query string
		body          []byte
		want          int
	}{
		{http.MethodHead, "", nil, http.StatusOK},
		{http.MethodGet, "", nil, http.StatusOK},
		{http.MethodPut, "", body, http.StatusOK},
		{http.MethodGet, "?list-type=2&prefix=d1%2F&max-keys=10", nil, http.StatusOK},
	} {
		name := c.method
		if c.query != "" {
			name = "LIST"
		}
		b.Run(name, func(b *testing.B) {
			reqs := make([]*http.Request, keys)
			for i := range reqs {
				target := "http://127.0.0.1/bench/" + edgeKey(i)
				if c.query != "" {
					target = "http://127.0.0.1/bench" + c.query
				}
				r, err := http.NewRequest(c.method, target, nil)
				if err != nil {
					b.Fatal(err)
				}
				hash := emptySHA256
				if c.body != nil {
					hash = hex.EncodeToString(sum[:])
					r.ContentLength = int64(len(c.body))
				}
				r.Header.Set("X-Amz-Content-Sha256", hash)
				reqs[i] = signer.SignV4(*r, testAccessKey, testSecretKey, "", testRegion)
			}
			w := &discardWriter{header: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := *reqs[i%keys]
				r.Body = io.NopCloser(bytes.NewReader(c.body))
				clear(w.header)
				w.status = 0
				h.ServeHTTP(w, &r)
				if w.status != c.want {
					b.Fatalf("%s: status %d", name, w.status)
				}
			}
		})
	}
}

func edgeKey(i int) string { return fmt.Sprintf("d%d/k%04d", i%4, i) }

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
