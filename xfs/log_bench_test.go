package xfs_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
	"github.com/xfs3/xfs3/xfs/mkfs"
)

// BenchmarkGroupCommit creates empty files from 1 to 32 goroutines, each
// in its own directory, on a volume file (every commit is durable: a log
// write and an fdatasync, shared by whoever commits at the same time). It
// reports commits per second and flushes per commit.
//
// Commits hold their buffers until their log write is durable, so
// creates that share an AGI (the inode allocation) still take turns; the
// directories spread over the volume's AGs.
func BenchmarkGroupCommit(b *testing.B) {
	for _, workers := range []int{1, 4, 32} {
		b.Run(fmt.Sprintf("committers=%d", workers), func(b *testing.B) {
			img := filepath.Join(b.TempDir(), "bench.img")
			if _, err := mkfs.Format(img, mkfs.Options{Size: 1 << 30}); err != nil {
				b.Fatal(err)
			}
			v, err := xfs.Open(img, xfs.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close()
			dirs := make([]uint64, workers)
			for i := range dirs {
				d, err := v.Names().Mkdir(v.Root(), fmt.Sprintf("d%d", i), xfs.Attrs{Mode: 0o755})
				if err != nil {
					b.Fatal(err)
				}
				dirs[i] = uint64(d)
			}
			before := v.LogStats()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						if _, err := v.Names().Create(format.Ino(dirs[w]), fmt.Sprintf("f%d", n), xfs.Attrs{Mode: 0o644}); err != nil {
							b.Error(err)
							return
						}
					}
				}(w)
			}
			wg.Wait()
			b.StopTimer()
			st := v.LogStats()
			commits := float64(st.Commits - before.Commits)
			b.ReportMetric(commits/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
			b.ReportMetric(float64(st.Flushes-before.Flushes)/commits, "flushes/commit")
			b.ReportMetric(float64(st.Writes-before.Writes)/commits, "logwrites/commit")
		})
	}
}
