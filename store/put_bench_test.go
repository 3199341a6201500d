package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs/mkfs"
)

// BenchmarkPut4K measures durable 4 KiB PUTs through the store alone (every
// returned PUT is on stable storage), spread over ten directories of one
// bucket, from one goroutine and from 32.
func BenchmarkPut4K(b *testing.B) {
	for _, clients := range []int{1, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			img := filepath.Join(b.TempDir(), "vol.xfs")
			if _, err := mkfs.Format(img, mkfs.Options{Size: 4 << 30}); err != nil {
				b.Fatal(err)
			}
			s, err := Open(img)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.CreateBucket("bench"); err != nil {
				b.Fatal(err)
			}
			data := bytes.Repeat([]byte("x"), 4096)
			var n atomic.Int64
			put := func() bool {
				i := n.Add(1)
				key := fmt.Sprintf("d%d/k%d", i%10, i)
				_, err := s.PutObject("bench", key, bytes.NewReader(data), int64(len(data)), Meta{ContentType: "text/plain"})
				if err != nil {
					b.Error(err)
				}
				return err == nil
			}
			b.ResetTimer()
			if clients == 1 {
				for i := 0; i < b.N && put(); i++ {
				}
			} else {
				b.SetParallelism(max(clients/runtime.GOMAXPROCS(0), 1))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() && put() {
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
		})
	}
}
