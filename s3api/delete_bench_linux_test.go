package s3api

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sys/unix"

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
// are fragmented by the kernel (kernelFragment), as a long-lived bucket
// would be; the engine would take minutes per 10,000-extent object.
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

// fragmentedBucket makes a volume of size bytes whose bucket holds keys,
// each an object of extents one-block extents, and serves it with a store
// collecting inodes in mode. The store PUTs each key empty (so it has an
// object's metadata), then the kernel fragments it (kernelFragment); the
// objects' extents are unwritten, read as zeros between holes, and their stored ETag
// is the empty one: DELETE reads neither.
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
	for _, key := range keys {
		if _, err := st.PutObject(bucket, key, bytes.NewReader(nil), 0, store.Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	mnt := oracle.Mount(b, img, false)
	for _, key := range keys {
		kernelFragment(b, filepath.Join(mnt, bucket, key), extents)
	}
	oracle.Unmount(b, mnt)
	// The loop device wrote through the page cache: flush it now, or the
	// first log force of the store pays for the kernel's writes.
	if f, err := os.Open(img); err != nil {
		b.Fatal(err)
	} else if err := errors.Join(f.Sync(), f.Close()); err != nil {
		b.Fatal(err)
	}
	st, err = store.OpenWith(img, store.Options{GC: gc.Options{Mode: mode}})
	if err != nil {
		b.Fatal(err)
	}
	ts := newTestServerOn(b, st)
	v := st.Volume()
	dir, err := v.Lookup(v.Root(), bucket)
	if err != nil {
		b.Fatal(err)
	}
	for _, key := range keys {
		ino, err := v.Lookup(dir, key)
		if err != nil {
			b.Fatal(err)
		}
		if s, err := v.Stat(ino); err != nil || int(s.Extents) < extents {
			b.Fatalf("%s has %d extents (%v), want %d", key, s.Extents, err, extents)
		}
	}
	return ts
}

// kernelFragment gives the file at path extents one-block extents through
// the mounted kernel: it allocates twice as many blocks (fallocate) and
// punches out every other one, so no two that remain can merge.
func kernelFragment(b *testing.B, path string, extents int) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const block = 4096
	fd := int(f.Fd())
	if err := unix.Fallocate(fd, 0, 0, 2*int64(extents)*block); err != nil {
		b.Fatalf("fallocate %s: %v", path, err)
	}
	for i := range int64(extents) {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, (2*i+1)*block, block); err != nil {
			b.Fatalf("punch %s: %v", path, err)
		}
	}
}
