package store

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMixedReadsUnderPuts measures how much PUTs into one bucket slow
// readers of another: 8 GET clients read 4 KiB objects and 2 LIST clients
// page (100 keys a page) through bucket "read" while 0 or 8 PUT clients
// write 4 KiB objects into bucket "write". b.N counts GETs; the LIST and
// PUT clients run until the GETs are done. It reports GET and LIST p99
// latencies and the rates of all three:
//
//	go test -run '^$' -bench MixedReadsUnderPuts -benchtime 20000x ./store/
func BenchmarkMixedReadsUnderPuts(b *testing.B) {
	const readKeys = 2000
	for _, putters := range []int{0, 8} {
		b.Run(fmt.Sprintf("puts=%d", putters), func(b *testing.B) {
			s, _ := newStoreOfSize(b, 4<<30)
			data := bytes.Repeat([]byte("r"), 4096)
			for _, bucket := range []string{"read", "write"} {
				if err := s.CreateBucket(bucket); err != nil {
					b.Fatal(err)
				}
			}
			for i := range readKeys {
				if _, err := s.PutObject("read", mixedKey(i), bytes.NewReader(data), int64(len(data)), Meta{}); err != nil {
					b.Fatal(err)
				}
			}
			var (
				gets           atomic.Int64
				done           = make(chan struct{})
				wg             sync.WaitGroup
				mu             sync.Mutex
				getLat, lstLat []time.Duration
				puts, pages    atomic.Int64
			)
			get := func(seed uint64) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, 1))
				var lat []time.Duration
				buf := make([]byte, len(data))
				for gets.Add(1) <= int64(b.N) {
					start := time.Now()
					o, err := s.GetObject("read", mixedKey(rng.IntN(readKeys)))
					if err == nil {
						_, err = io.ReadFull(o.Reader(), buf)
						o.Close()
					}
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Error(err)
						return
					}
				}
				mu.Lock()
				getLat = append(getLat, lat...)
				mu.Unlock()
			}
			list := func() {
				defer wg.Done()
				var lat []time.Duration
				opt := ListOptions{MaxKeys: 100}
				for {
					select {
					case <-done:
						mu.Lock()
						lstLat = append(lstLat, lat...)
						mu.Unlock()
						return
					default:
					}
					start := time.Now()
					page, err := s.ListObjects("read", opt)
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Error(err)
						return
					}
					pages.Add(1)
					opt.StartAfter = page.NextMarker
					if !page.IsTruncated {
						opt.StartAfter = ""
					}
				}
			}
			put := func(client int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					key := fmt.Sprintf("c%d/d%d/k%d", client, i%10, i)
					if _, err := s.PutObject("write", key, bytes.NewReader(data), int64(len(data)), Meta{}); err != nil {
						b.Error(err)
						return
					}
					puts.Add(1)
				}
			}
			b.ResetTimer()
			var getters sync.WaitGroup
			for c := range putters {
				wg.Add(1)
				go put(c)
			}
			for range 2 {
				wg.Add(1)
				go list()
			}
			for c := range 8 {
				getters.Add(1)
				wg.Add(1)
				go func() { defer getters.Done(); get(uint64(c)) }()
			}
			getters.Wait()
			b.StopTimer()
			close(done)
			wg.Wait()
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/secs, "gets/s")
			b.ReportMetric(float64(pages.Load())/secs, "lists/s")
			b.ReportMetric(float64(puts.Load())/secs, "puts/s")
			b.ReportMetric(float64(percentile(getLat, 99).Microseconds()), "get-p99-µs")
			b.ReportMetric(float64(percentile(lstLat, 99).Microseconds()), "list-p99-µs")
		})
	}
}

// mixedKey spreads the read bucket's keys over 20 directories.
func mixedKey(i int) string { return fmt.Sprintf("d%02d/k%05d", i%20, i) }

// percentile returns the p-th percentile of lat (sorting it).
func percentile(lat []time.Duration, p int) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[len(lat)*p/100]
}
