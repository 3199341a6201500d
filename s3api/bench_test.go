package s3api

import (
	"bytes"
	"io"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/store"
)

// BenchmarkPutObject and BenchmarkGetObject measure the whole edge (auth,
// checksums, routing, logging) plus the store, through minio-go on
// loopback, for 1 MiB objects.
func BenchmarkPutObject(b *testing.B) {
	ts := newTestServer(b)
	ts.store.CreateBucket("bench")
	data := pattern(1<<20, 9)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ts.client.PutObject(b.Context(), "bench", "k", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetObject(b *testing.B) {
	ts := newTestServer(b)
	ts.store.CreateBucket("bench")
	data := pattern(1<<20, 9)
	if _, err := ts.client.PutObject(b.Context(), "bench", "k", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, err := ts.client.GetObject(b.Context(), "bench", "k", minio.GetObjectOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, o); err != nil {
			b.Fatal(err)
		}
		o.Close()
	}
}

// BenchmarkStorePutObject is the store alone, for comparison.
func BenchmarkStorePutObject(b *testing.B) {
	ts := newTestServer(b)
	ts.store.CreateBucket("bench")
	data := pattern(1<<20, 9)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ts.store.PutObject("bench", "k", bytes.NewReader(data), int64(len(data)), store.Meta{}); err != nil {
			b.Fatal(err)
		}
	}
}
