package xlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xfs3/xfs3/xfs/dev"
	"github.com/xfs3/xfs3/xfs/format"
)

// BenchmarkWriterCommit measures group commit alone: committers that
// share no buffers log a 4 KiB block each into a log on a real file, every
// commit durable (fdatasync), from 1 to 32 goroutines.
func BenchmarkWriterCommit(b *testing.B) {
	for _, workers := range []int{1, 4, 32} {
		b.Run(fmt.Sprintf("committers=%d", workers), func(b *testing.B) {
			const blocks = 1 << 17 // 64 MiB
			path := filepath.Join(b.TempDir(), "log")
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Truncate(path, testLogStart+blocks*format.BBSize); err != nil {
				b.Fatal(err)
			}
			d, err := dev.Open(path, false)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			rec, _ := format.UnmountRecord([16]byte{1}, 1, 0, format.MakeLSN(1, 0), 0, format.LogMkfsUnmountTid)
			d.WriteAt(rec, testLogStart)
			l := &Log{R: d, Start: testLogStart, Blocks: blocks}
			w := NewWriter(d, l, [16]byte{1}, 1, 2, 0)
			data := make([]byte, 4096)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for g := 0; g < workers; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						it, _ := BufItem(format.Daddr(8*g), data, nil)
						if _, err := w.Commit([]Item{it}); err != nil {
							b.Error(err)
							return
						}
					}
				}(g)
			}
			wg.Wait()
			b.StopTimer()
			st := w.Stats()
			b.ReportMetric(float64(st.Commits)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(float64(st.Flushes)/float64(st.Commits), "flushes/commit")
		})
	}
}

// BenchmarkCommitBesideBacklog commits one small transaction at a time,
// each durable, while earlier commits wait in the write-back backlog (up
// to its default megabyte): the writer finds the tail among hundreds of
// live commits for every batch, as a busy server's does.
//
//	go test -run '^$' -bench CommitBesideBacklog ./xfs/xlog/
func BenchmarkCommitBesideBacklog(b *testing.B) {
	_, _, w := newTestLogOn(b, 1<<16, true)
	w.SetIdleWriteBack(0)
	data := make([]byte, 512)
	writeBack := func(own, durable Ticket) error { return nil }
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		it, _ := BufItem(format.Daddr(8*(i%64)), data, nil)
		t, err := w.Queue([]Item{it}, writeBack)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Force(t); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	w.mu.Lock()
	b.ReportMetric(float64(len(w.live)), "live-commits")
	w.mu.Unlock()
}
