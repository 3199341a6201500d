package s3api

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/store"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// BenchmarkDeleteLatency measures DELETE through HTTP (minio-go on
// loopback, signed, durable before the 200) of objects of 1, 10,000 and
// 100,000 extents in each gc mode, and reports the median, the 99th
// percentile and the worst delete, then how long a statfs takes to show
// the space back (it flushes the gc). In percpu and sweep modes a DELETE
// only unlinks; sync frees the extents inside the request. The objects
// are fragmented by the kernel (oracle.FragmentInImage).
//
//	go test -run '^$' -bench DeleteLatency -benchtime 1x ./s3api/
func BenchmarkDeleteLatency(b *testing.B) {
	oracle.Require(b, oracle.ToolMount)
	type size struct{ extents, objects int }
	for _, sz := range []size{{1, 200}, {10000, 10}, {100000, 3}} {
		for _, mode := range []gc.Mode{gc.PerCPU, gc.Sync, gc.Sweep} {
			b.Run(fmt.Sprintf("extents=%d/mode=%s", sz.extents, mode), func(b *testing.B) {
				volSize := max(int64(sz.extents)*int64(sz.objects)*3*4096, 512<<20)
				keys := make([]string, sz.objects)
				for i := range keys {
					keys[i] = fmt.Sprintf("o%d", i)
				}
				var lat []time.Duration
				for range b.N {
					b.StopTimer()
					ts := fragmentedBucket(b, volSize, mode, "frag", keys, sz.extents)
					b.StartTimer()
					for _, key := range keys {
						start := time.Now()
						if err := ts.client.RemoveObject(b.Context(), "frag", key, minio.RemoveObjectOptions{}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					b.StopTimer()
					drain := time.Now()
					if _, err := ts.store.Volume().Space().Statfs(); err != nil {
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

// fragmentedBucket makes a volume of size bytes whose bucket holds keys,
// each an object of extents one-block extents, and serves it with a store
// collecting inodes in mode. The store PUTs each key empty, so it has an
// object's metadata, then the kernel fragments it (oracle.FragmentInImage):
// its extents read as zeros and its ETag is the empty one, which DELETE
// never reads.
func fragmentedBucket(b *testing.B, size int64, mode gc.Mode, bucket string, keys []string, extents int) *testServer {
	b.Helper()
	img := filepath.Join(b.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: size}); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(img)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.CreateBucket(bucket); err != nil {
		b.Fatal(err)
	}
	paths := make([]string, len(keys))
	for i, key := range keys {
		if _, err := st.PutObject(bucket, key, bytes.NewReader(nil), 0, store.Meta{}); err != nil {
			b.Fatal(err)
		}
		paths[i] = bucket + "/" + key
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	oracle.FragmentInImage(b, img, paths, extents)
	if st, err = store.OpenWith(img, store.Options{GC: gc.Options{Mode: mode}}); err != nil {
		b.Fatal(err)
	}
	ts := newTestServerOn(b, st)
	v := st.Volume()
	for _, key := range keys {
		ino, err := v.Names().LookupPath(bucket+"/"+key, false)
		if err != nil {
			b.Fatal(err)
		}
		if s, err := v.Stat(ino); err != nil || s.Extents != uint64(extents) {
			b.Fatalf("%s has %d extents (%v), want %d", key, s.Extents, err, extents)
		}
	}
	return ts
}
