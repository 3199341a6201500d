package store

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// gcModes are the modes the delete benchmarks compare.
var gcModes = []gc.Mode{gc.PerCPU, gc.Sync, gc.Sweep}

// openBenchStore opens a store in mode on a fresh volume of size bytes.
func openBenchStore(b *testing.B, size int64, mode gc.Mode) *Store {
	b.Helper()
	img := filepath.Join(b.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: size}); err != nil {
		b.Fatal(err)
	}
	s, err := OpenWith(img, Options{GC: gc.Options{Mode: mode}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.CreateBucket("frag"); err != nil {
		b.Fatal(err)
	}
	return s
}

// fragmentedStore is openBenchStore whose bucket "frag" holds keys, each an
// object of extents one-block extents: the store PUTs them empty and is
// closed, the kernel fragments them (oracle.FragmentInImage), and the
// store opens again in mode.
func fragmentedStore(b *testing.B, size int64, mode gc.Mode, keys []string, extents int) *Store {
	b.Helper()
	img := filepath.Join(b.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: size}); err != nil {
		b.Fatal(err)
	}
	s, err := Open(img)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.CreateBucket("frag"); err != nil {
		b.Fatal(err)
	}
	var paths []string
	for _, key := range keys {
		if _, err := s.PutObject("frag", key, bytes.NewReader(nil), 0, Meta{}); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, path.Join("frag", key))
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	oracle.FragmentInImage(b, img, paths, extents)
	if s, err = OpenWith(img, Options{GC: gc.Options{Mode: mode}}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	for _, p := range paths {
		ino, err := s.v.Names().LookupPath(p, false)
		if err == nil {
			var st xfs.Stat
			if st, err = s.v.Stat(ino); err == nil && st.Extents != uint64(extents) {
				err = fmt.Errorf("%d extents, want %d", st.Extents, extents)
			}
		}
		if err != nil {
			b.Fatalf("%s: %v", p, err)
		}
	}
	return s
}

// benchKeys are the keys o0, o1, ... of n objects.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("o%d", i)
	}
	return keys
}

// BenchmarkDeleteLatency measures DeleteObject of objects of 1, 10,000
// and (with XFS3_BENCH_HUGE=1) 100,000 extents in each gc mode, and
// reports the median and the worst delete. In percpu and sweep modes a
// DELETE only unlinks; sync frees the extents inside the call.
//
//	go test -run '^$' -bench DeleteLatency -benchtime 1x ./store/
func BenchmarkDeleteLatency(b *testing.B) {
	sizes := []struct{ extents, objects int }{{1, 200}, {10000, 3}}
	if os.Getenv("XFS3_BENCH_HUGE") == "1" {
		sizes = append(sizes, struct{ extents, objects int }{100000, 2})
	}
	for _, sz := range sizes {
		for _, mode := range gcModes {
			b.Run(fmt.Sprintf("extents=%d/mode=%s", sz.extents, mode), func(b *testing.B) {
				volSize := max(int64(sz.extents)*int64(sz.objects)*3*4096, 256<<20)
				var lat []time.Duration
				b.StopTimer()
				for range b.N {
					s := fragmentedStore(b, volSize, mode, benchKeys(sz.objects), sz.extents)
					b.StartTimer()
					for i := range sz.objects {
						start := time.Now()
						if err := s.DeleteObject("frag", fmt.Sprintf("o%d", i)); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					b.StopTimer()
					drain := time.Now()
					if _, err := s.Volume().Space().Statfs(); err != nil { // flushes the gc
						b.Fatal(err)
					}
					b.ReportMetric(float64(time.Since(drain).Microseconds()), "drain-µs")
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			})
		}
	}
}

// BenchmarkPutDuringBigDeletes measures 4 KiB PUTs into one bucket while
// another goroutine deletes 10,000-extent objects from another, against
// the same PUTs with no deletes, in each gc mode: deferred inactivation
// must keep a big DELETE from stalling unrelated writes.
//
//	go test -run '^$' -bench PutDuringBigDeletes -benchtime 1x ./store/
func BenchmarkPutDuringBigDeletes(b *testing.B) {
	const bigObjects, extents, puts = 3, 10000, 600
	for _, mode := range gcModes {
		for _, deleting := range []bool{false, true} {
			b.Run(fmt.Sprintf("mode=%s/deletes=%v", mode, deleting), func(b *testing.B) {
				var lat []time.Duration
				b.StopTimer()
				for range b.N {
					s := fragmentedStore(b, 1<<30, mode, benchKeys(bigObjects), extents)
					if err := s.CreateBucket("small"); err != nil {
						b.Fatal(err)
					}
					data := bytes.Repeat([]byte("x"), 4096)
					var wg sync.WaitGroup
					stop := make(chan struct{})
					if deleting {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for i := range bigObjects {
								select {
								case <-stop:
									return
								default:
								}
								s.DeleteObject("frag", fmt.Sprintf("o%d", i))
							}
						}()
					}
					b.StartTimer()
					for i := range puts {
						start := time.Now()
						if _, err := s.PutObject("small", fmt.Sprintf("k%d", i), bytes.NewReader(data), int64(len(data)), Meta{}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					b.StopTimer()
					close(stop)
					wg.Wait()
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

// BenchmarkParallelDeletes deletes many 4 KiB objects spread over
// prefixes from 1, 2, 8 and 32 clients in each gc mode, and reports the
// delete rate and how long after the last DELETE a statfs shows all the
// space back (the statfs flushes the gc). BenchmarkKernelRm is the
// kernel unlinking the same number of files on a loop mount.
//
//	go test -run '^$' -bench 'ParallelDeletes|KernelRm' -benchtime 20000x ./store/
func BenchmarkParallelDeletes(b *testing.B) {
	for _, mode := range gcModes {
		for _, clients := range []int{1, 2, 8, 32} {
			b.Run(fmt.Sprintf("mode=%s/clients=%d", mode, clients), func(b *testing.B) {
				s := openBenchStore(b, 4<<30, mode)
				data := bytes.Repeat([]byte("x"), 4096)
				for i := range b.N {
					key := fmt.Sprintf("p%d/k%d", i%100, i)
					if _, err := s.PutObject("frag", key, bytes.NewReader(data), int64(len(data)), Meta{}); err != nil {
						b.Fatal(err)
					}
				}
				before, cpu := s.GCStats().ThrottleWaits, processCPU(b)
				runClients(b, clients, func(i int64) error {
					return s.DeleteObject("frag", fmt.Sprintf("p%d/k%d", (i-1)%100, i-1))
				})
				b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-us/op")
				b.ReportMetric(float64(s.GCStats().ThrottleWaits-before)/float64(b.N), "throttle-waits/op")
				start := time.Now()
				if _, err := s.Volume().Space().Statfs(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(time.Since(start).Milliseconds()), "space-back-ms")
			})
		}
	}
}

// BenchmarkKernelRm: the kernel unlinks b.N 4 KiB files spread over 100
// directories on a loop mount of the same kind of volume, from 1, 2, 8
// and 32 goroutines, then syncs.
func BenchmarkKernelRm(b *testing.B) {
	oracle.Require(b, oracle.ToolMount)
	for _, clients := range []int{1, 2, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			img := filepath.Join(b.TempDir(), "vol.xfs")
			if _, err := mkfs.Format(img, mkfs.Options{Size: 4 << 30}); err != nil {
				b.Fatal(err)
			}
			mnt := oracle.Mount(b, img, false)
			data := bytes.Repeat([]byte("x"), 4096)
			for d := range 100 {
				os.MkdirAll(filepath.Join(mnt, fmt.Sprintf("p%d", d)), 0o755)
			}
			for i := range b.N {
				if err := os.WriteFile(filepath.Join(mnt, fmt.Sprintf("p%d/k%d", i%100, i)), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			syncFS(b, mnt)
			runClients(b, clients, func(i int64) error {
				return os.Remove(filepath.Join(mnt, fmt.Sprintf("p%d/k%d", (i-1)%100, i-1)))
			})
			start := time.Now()
			syncFS(b, mnt)
			b.ReportMetric(float64(time.Since(start).Milliseconds()), "sync-ms")
		})
	}
}

// syncFS flushes the file system mounted at dir.
func syncFS(b *testing.B, dir string) {
	f, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
}
