package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// putClients are the concurrencies of the small-PUT benchmarks.
var putClients = []int{1, 8, 32}

// BenchmarkPut4K measures durable 4 KiB PUTs through the store alone (every
// returned PUT is on stable storage), spread over ten directories of one
// bucket, with the device flushes, log bytes and transactions per PUT:
// new keys, and overwrites of 1000 existing ones (a new body through a
// staging file and a rename). BenchmarkKernelCreateFsync4K is the kernel
// doing the new keys' work (create, write 4 KiB, fsync) on a loop mount
// of the same kind of volume; run both in one command to compare:
//
//	go test -run '^$' -bench '4K$' -benchtime 2000x ./store/
func BenchmarkPut4K(b *testing.B) {
	const overwritten = 1000
	for _, kind := range []string{"new", "overwrite"} {
		for _, clients := range putClients {
			b.Run(fmt.Sprintf("%s/clients=%d", kind, clients), func(b *testing.B) {
				s, _ := newStoreOfSize(b, 4<<30)
				if err := s.CreateBucket("bench"); err != nil {
					b.Fatal(err)
				}
				// The directories exist, as in a bucket in use, and so
				// do the keys to overwrite.
				put := put4K(s, "bench")
				for i := range int64(overwritten) {
					if err := put(i); err != nil {
						b.Fatal(err)
					}
				}
				op := func(i int64) error { return put(overwritten + i) }
				if kind == "overwrite" {
					op = func(i int64) error { return put(i % overwritten) }
				}
				before := s.Volume().LogStats()
				runClients(b, clients, op)
				after := s.Volume().LogStats()
				n := float64(b.N)
				b.ReportMetric(float64(after.Flushes-before.Flushes)/n, "flushes/op")
				b.ReportMetric(float64(after.Writes-before.Writes)/n, "logWrites/op")
				b.ReportMetric(float64(after.Bytes-before.Bytes)/n, "logB/op")
				b.ReportMetric(float64(after.Commits-before.Commits)/n, "commits/op")
			})
		}
	}
}

func BenchmarkKernelCreateFsync4K(b *testing.B) {
	oracle.Require(b, oracle.ToolMount)
	for _, clients := range putClients {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			img := filepath.Join(b.TempDir(), "vol.xfs")
			if _, err := mkfs.Format(img, mkfs.Options{Size: 4 << 30}); err != nil {
				b.Fatal(err)
			}
			mnt := oracle.Mount(b, img, false)
			for d := 0; d < 10; d++ {
				if err := os.MkdirAll(filepath.Join(mnt, "bench", fmt.Sprintf("d%d", d)), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			runClients(b, clients, kernelCreateFsync4K(filepath.Join(mnt, "bench")))
		})
	}
}

// kernelCreateFsync4K returns an operation that creates file d(i%10)/k(i)
// under dir, writes 4 KiB to it and fsyncs it: the kernel's side of a
// durable 4 KiB PUT.
func kernelCreateFsync4K(dir string) func(i int64) error {
	data := bytes.Repeat([]byte("x"), 4096)
	return func(i int64) error {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("d%d/k%d", i%10, i)))
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

// put4K returns an operation that PUTs 4 KiB object d(i%10)/k(i) into
// bucket.
func put4K(s *Store, bucket string) func(i int64) error {
	data := bytes.Repeat([]byte("x"), 4096)
	return func(i int64) error {
		key := fmt.Sprintf("d%d/k%d", i%10, i)
		_, err := s.PutObject(bucket, key, bytes.NewReader(data), int64(len(data)), Meta{ContentType: "text/plain"})
		return err
	}
}

// runClients runs b.N calls of op (numbered from 1) from clients
// goroutines and reports operations per second and the 99th percentile
// latency.
func runClients(b *testing.B, clients int, op func(i int64) error) {
	var n atomic.Int64
	lat := make([]time.Duration, b.N)
	call := func() bool {
		i := n.Add(1)
		start := time.Now()
		err := op(i)
		if i <= int64(len(lat)) {
			lat[i-1] = time.Since(start)
		}
		if err != nil {
			b.Error(err)
		}
		return err == nil
	}
	b.ResetTimer()
	if clients == 1 {
		for i := 0; i < b.N && call(); i++ {
		}
	} else {
		b.SetParallelism(max(clients/runtime.GOMAXPROCS(0), 1))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() && call() {
			}
		})
	}
	b.StopTimer()
	done := lat[:min(int(n.Load()), len(lat))]
	slices.Sort(done)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	if len(done) > 0 {
		b.ReportMetric(float64(done[len(done)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkPut4KQuota is BenchmarkPut4K into a bucket with a hard limit
// (never reached), against the same with quotas off altogether
// (Options.NoQuota): what keeping and checking a bucket's quota costs.
// The two stores take turns, a round of PUTs each (which goes first
// alternates), so that a change in the machine's load falls on both
// alike; it reports each one's rate and on/off, the ratio the issue sets
// at 0.95 or more for 32 clients.
//
//	go test -run '^$' -bench 'Put4KQuota' -benchtime 3000x -count 3 ./store/
func BenchmarkPut4KQuota(b *testing.B) {
	for _, clients := range putClients {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			stores := [2]*Store{quotaBenchStore(b, false), quotaBenchStore(b, true)}
			data := bytes.Repeat([]byte("x"), 4096)
			var elapsed, cpu [2]time.Duration
			var next [2]int64
			round := clients * 16
			logBefore := [2]int64{stores[0].Volume().LogStats().Bytes, stores[1].Volume().LogStats().Bytes}
			b.ResetTimer()
			for done, r := 0, 0; done < b.N; r++ {
				n := min(round, b.N-done)
				for k := 0; k < 2; k++ {
					which := (r + k) % 2
					s := stores[which]
					start, startCPU := time.Now(), processCPU(b)
					err := runConcurrently(clients, n, func() error {
						i := atomic.AddInt64(&next[which], 1)
						key := fmt.Sprintf("d%d/k%d", i%10, i)
						_, err := s.PutObject("bench", key, bytes.NewReader(data), int64(len(data)), Meta{ContentType: "text/plain"})
						return err
					})
					elapsed[which] += time.Since(start)
					cpu[which] += processCPU(b) - startCPU
					if err != nil {
						b.Fatal(err)
					}
				}
				done += n
			}
			b.StopTimer()
			off, on := float64(b.N)/elapsed[0].Seconds(), float64(b.N)/elapsed[1].Seconds()
			b.ReportMetric(off, "off-ops/s")
			b.ReportMetric(on, "on-ops/s")
			b.ReportMetric(on/off, "on/off")
			// CPU time a PUT costs, which the machine's load hardly moves.
			b.ReportMetric(float64(cpu[0].Microseconds())/float64(b.N), "off-cpu-us/op")
			b.ReportMetric(float64(cpu[1].Microseconds())/float64(b.N), "on-cpu-us/op")
			// What the records add to the log: a load-independent cost.
			n := float64(b.N)
			b.ReportMetric(float64(stores[0].Volume().LogStats().Bytes-logBefore[0])/n, "off-logB/op")
			b.ReportMetric(float64(stores[1].Volume().LogStats().Bytes-logBefore[1])/n, "on-logB/op")
		})
	}
}

// quotaBenchStore opens a store on a fresh volume with a bucket "bench"
// whose directories exist, with quotas on (and a hard limit that is never
// reached) or off.
func quotaBenchStore(b *testing.B, quota bool) *Store {
	img := filepath.Join(b.TempDir(), "vol.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 4 << 30}); err != nil {
		b.Fatal(err)
	}
	s, err := OpenWith(img, Options{NoQuota: !quota})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.CreateBucket("bench"); err != nil {
		b.Fatal(err)
	}
	if quota {
		if err := s.quotas().Set("bench", BucketQuota{HardBytes: 3 << 30}); err != nil {
			b.Fatal(err)
		}
	}
	data := bytes.Repeat([]byte("x"), 4096)
	for d := 0; d < 10; d++ {
		if _, err := s.PutObject("bench", fmt.Sprintf("d%d/first", d), bytes.NewReader(data), int64(len(data)), Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// runConcurrently makes n calls of op from clients goroutines and returns
// the first error.
func runConcurrently(clients, n int, op func() error) error {
	var left atomic.Int64
	left.Store(int64(n))
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		go func() {
			var err error
			for err == nil && left.Add(-1) >= 0 {
				err = op()
			}
			errs <- err
		}()
	}
	var first error
	for c := 0; c < clients; c++ {
		if err := <-errs; first == nil {
			first = err
		}
	}
	return first
}

// processCPU is the CPU time (user and system) the process has used so
// far: the engine's background work included, the device's not.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
