package xfs_test

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs"
	"github.com/xfs3/xfs3/xfs/format"
)

// BenchmarkColdCacheReclaim creates files from parallel goroutines, each
// in its own directory, then reopens the volume (the caches start cold)
// and deletes them in parallel, through caches far smaller than the
// work: one reclaimer at a time against every goroutine reclaiming by
// itself (the behaviour before, kept behind SetParallelReclaim). The two
// take turns on fresh volumes in one run, which goes first alternating,
// so that the machine's load falls on both alike. It reports each one's
// operations per second and CPU time (user and system, getrusage) per
// operation:
//
//	go test -run '^$' -bench ColdCacheReclaim -benchtime 3x ./xfs/
func BenchmarkColdCacheReclaim(b *testing.B) {
	const (
		workers = 8
		files   = 1500 // per worker
		budget  = 1 << 20
	)
	var total [2]reclaimRun // single runner, parallel
	for i := 0; i < b.N; i++ {
		for k := 0; k < 2; k++ {
			parallel := (i+k)%2 == 1
			r := runReclaimRound(b, workers, files, budget, parallel)
			w := 0
			if parallel {
				w = 1
			}
			total[w].add(r)
		}
	}
	n := float64(b.N * workers * files)
	for w, name := range []string{"single", "parallel"} {
		t := total[w]
		b.ReportMetric(n/t.createWall.Seconds(), name+"-creates/s")
		b.ReportMetric(n/t.deleteWall.Seconds(), name+"-deletes/s")
		b.ReportMetric(float64(t.createCPU.Microseconds())/n, name+"-create-cpu-µs/op")
		b.ReportMetric(float64(t.deleteCPU.Microseconds())/n, name+"-delete-cpu-µs/op")
		b.ReportMetric(float64(t.runs)/float64(b.N), name+"-reclaim-runs")
		b.ReportMetric(float64(t.waits)/float64(b.N), name+"-reclaim-waits")
		b.ReportMetric(float64(t.misses)/n, name+"-misses/op")
	}
}

// reclaimRun is what one round measured.
type reclaimRun struct {
	createWall, deleteWall time.Duration
	createCPU, deleteCPU   time.Duration
	runs, waits            uint64 // reclaim runs and waits for them, both caches and phases
	misses                 uint64 // cache misses, both caches and phases
}

func (r *reclaimRun) add(o reclaimRun) {
	r.createWall += o.createWall
	r.deleteWall += o.deleteWall
	r.createCPU += o.createCPU
	r.deleteCPU += o.deleteCPU
	r.runs += o.runs
	r.waits += o.waits
	r.misses += o.misses
}

func runReclaimRound(b *testing.B, workers, files, budget int, parallel bool) reclaimRun {
	img := newBenchImage(b, 1<<30)
	open := func() *xfs.Volume {
		v, err := xfs.Open(img, xfs.Options{LazyCommits: true, CacheBytes: budget})
		if err != nil {
			b.Fatal(err)
		}
		xfs.SetParallelReclaim(v, parallel)
		return v
	}
	var r reclaimRun
	v := open()
	dirs := make([]format.Ino, workers)
	for w := range dirs {
		var err error
		if dirs[w], err = v.Names().Mkdir(v.Root(), fmt.Sprintf("w%02d", w), xfs.Attrs{Mode: 0o755}); err != nil {
			b.Fatal(err)
		}
	}
	r.createWall, r.createCPU = timed(b, workers, eachFile(dirs, files, func(dir format.Ino, name string) error {
		_, err := v.Names().Create(dir, name, xfs.Attrs{Mode: 0o644})
		return err
	}), v.Sync)
	r.countReclaim(v)
	if err := v.Close(); err != nil {
		b.Fatal(err)
	}
	v = open()
	r.deleteWall, r.deleteCPU = timed(b, workers, eachFile(dirs, files, func(dir format.Ino, name string) error {
		return v.Names().Unlink(dir, name)
	}), v.Sync)
	r.countReclaim(v)
	if err := v.Close(); err != nil {
		b.Fatal(err)
	}
	return r
}

// eachFile returns the work of worker w: op on each of the files of its
// directory.
func eachFile(dirs []format.Ino, files int, op func(dir format.Ino, name string) error) func(w int) error {
	return func(w int) error {
		for f := 0; f < files; f++ {
			if err := op(dirs[w], fmt.Sprintf("object-%06d", f)); err != nil {
				return err
			}
		}
		return nil
	}
}

func (r *reclaimRun) countReclaim(v *xfs.Volume) {
	st := v.CacheStats()
	r.runs += st.Buffers.Runs + st.Inodes.Runs
	r.waits += st.Buffers.Waits + st.Inodes.Waits
	r.misses += st.Buffers.Misses + st.Inodes.Misses
}

// timed runs work(w) for each worker in parallel, then end, and returns
// the wall time and the process's CPU time (user and system) it took.
func timed(b *testing.B, workers int, work func(w int) error, end func() error) (wall, cpu time.Duration) {
	cpu0 := cpuTime(b)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = work(w)
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := end(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), cpuTime(b) - cpu0
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
