package s3api

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/xfstest"
)

// BenchmarkDeleteLatency measures DELETE through HTTP (minio-go on
// loopback, signed, durable before the 200) of objects of 1 and 10,000
// extents, and 100,000 with XFS3_BENCH_HUGE=1, in each gc mode, and
// reports the median, the 99th percentile and the worst delete, then how
// long a statfs takes to show the space back (it flushes the gc). In
// percpu and sweep modes a DELETE only unlinks; sync frees the extents
// inside the request.
//
//	XFS3_BENCH_HUGE=1 go test -run '^$' -bench DeleteLatency -benchtime 1x ./s3api/
func BenchmarkDeleteLatency(b *testing.B) {
	type size struct{ extents, objects int }
	sizes := []size{{1, 200}, {10000, 5}}
	if os.Getenv("XFS3_BENCH_HUGE") == "1" {
		sizes = append(sizes, size{100000, 2})
	}
	for _, sz := range sizes {
		for _, mode := range []gc.Mode{gc.PerCPU, gc.Sync, gc.Sweep} {
			b.Run(fmt.Sprintf("extents=%d/mode=%s", sz.extents, mode), func(b *testing.B) {
				volSize := max(int64(sz.extents)*int64(sz.objects)*3*4096, 512<<20)
				var lat []time.Duration
				for range b.N {
					b.StopTimer()
					ts := newModeServer(b, volSize, mode)
					mustBucketTB(b, ts, "frag")
					for i := range sz.objects {
						fragmentedObject(b, ts, "frag", fmt.Sprintf("o%d", i), sz.extents)
					}
					b.StartTimer()
					for i := range sz.objects {
						start := time.Now()
						if err := ts.client.RemoveObject(b.Context(), "frag", fmt.Sprintf("o%d", i), minio.RemoveObjectOptions{}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					b.StopTimer()
					drain := time.Now()
					if _, err := ts.store.Volume().Statfs(); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(time.Since(drain).Microseconds()), "drain-µs")
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			})
		}
	}
}

// newModeServer is a test server on a fresh volume of size bytes whose
// store collects inodes in mode.
func newModeServer(b *testing.B, size int64, mode gc.Mode) *testServer {
	b.Helper()
	img := filepath.Join(b.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: size}); err != nil {
		b.Fatal(err)
	}
	st, err := store.OpenWith(img, store.Options{GC: gc.Options{Mode: mode}})
	if err != nil {
		b.Fatal(err)
	}
	return newTestServerOn(b, st)
}

func mustBucketTB(tb testing.TB, ts *testServer, name string) {
	tb.Helper()
	if err := ts.store.CreateBucket(name); err != nil {
		tb.Fatal(err)
	}
}

// fragmentedObject makes key an object of extents one-block extents
// (xfstest.FragmentedFile). Its metadata (ETag, content type) is copied from an empty object PUT
// through the store, so HEAD and GET see an object; only its size and
// ETag disagree, which DELETE never reads.
func fragmentedObject(b *testing.B, ts *testServer, bucket, key string, extents int) {
	b.Helper()
	v, s := ts.store.Volume(), ts.store
	donor := key + ".meta"
	if _, err := s.PutObject(bucket, donor, bytes.NewReader(nil), 0, store.Meta{}); err != nil {
		b.Fatal(err)
	}
	dir, err := v.Lookup(v.Root(), bucket)
	if err != nil {
		b.Fatal(err)
	}
	dino, err := v.Lookup(dir, donor)
	if err != nil {
		b.Fatal(err)
	}
	meta, err := v.ListXattr(dino)
	if err != nil {
		b.Fatal(err)
	}
	ino, err := xfstest.FragmentedFile(v, dir, key, extents)
	if err != nil {
		b.Fatal(err)
	}
	if err := v.SetXattrs(ino, meta); err != nil {
		b.Fatal(err)
	}
	if err := s.DeleteObject(bucket, donor); err != nil {
		b.Fatal(err)
	}
	if err := v.Sync(); err != nil {
		b.Fatal(err)
	}
}
