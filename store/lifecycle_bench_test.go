package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xfs3/xfs3/gc"
	"github.com/xfs3/xfs3/store/lifecycle"
	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// Shape of BenchmarkLifecyclePass. The environment changes the objects
// expired (XFS3_LIFECYCLE_BENCH_OBJECTS), the length of each phase
// (XFS3_LIFECYCLE_BENCH_WINDOW, a Go duration) and the rounds
// (XFS3_LIFECYCLE_BENCH_ROUNDS); XFS3_LIFECYCLE_BENCH_CONTROL=1 runs side
// B without its pass (an A/A control: the noise floor of the ratios).
const (
	lcBenchObjects = 100000
	lcBenchWindow  = 10 * time.Second
	lcBenchRounds  = 3
	lcBenchWriters = 8
	lcBenchPerDir  = 1000 // expiring objects per prefix, "logs/%04d/"
	lcBenchMaxBody = 1024 // their bodies are 0 to this many bytes
	lcBenchVolume  = 6 << 30
	lcBenchMaxLoss = 0.10 // writers' throughput lost during a pass, at most
	lcBenchOld     = "old"
	lcBenchLive    = "live"
	// lcBenchRules expires every object of "old" a day after it was
	// written.
	lcBenchRules = `<LifecycleConfiguration><Rule><ID>all</ID><Status>Enabled</Status><Filter></Filter><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`
)

// BenchmarkLifecyclePass measures what a lifecycle pass costs foreground
// writers: 8 clients PUT 4 KiB objects into bucket "live" for a window
// (10 s) alone (side A), and while a pass on demand expires the 100,000
// small objects (0 to 1 KiB, 1,000 a prefix) of bucket "old", all due
// (side B). The pass is paced as the store paces it by default
// (gc.LifecycleOptions: Busy is the store's count of finished changes).
//
// The populated volume is built once per run, then every phase opens a
// fresh sparse copy of it (synced to the host first), so each B phase has
// the whole population to expire and A and B start from the same state.
// The store's clock runs two days ahead of real time, so every object of
// "old" is due. A and B take turns over rounds, the order rotating (A,B
// then B,A), as docs/benchmarks.md asks on this noisy machine. Each round
// gives B/A for the PUT rate and for p99; the benchmark reports their
// medians and ranges, the objects the pass expired per second while
// paced, and, for context, two passes with no writers: one unpaced
// (Busy never moves) to the end, and one as the store runs it by default
// for one window.
//
//	go test ./store -run XXX -bench BenchmarkLifecyclePass -benchtime 1x -timeout 60m
func BenchmarkLifecyclePass(b *testing.B) {
	runPassBench(b, lifecycleBenchPass, "LIFECYCLE")
}

// benchPass is a paced background pass the benchmark measures against
// the writers: the lifecycle scanner's or the scrubber's.
type benchPass struct {
	name string // for the output
	unit string // what the pass does to an object: "expired", "checked"
	// options sets the pass's options in o: busy replaces the store's
	// count of finished changes when not nil; done is called when a
	// pass ends.
	options func(o *Options, busy func() uint64, done func())
	start   func(*Store) error
	// status is the pass under way, or else the last one.
	status func(*Store) (benchPassStatus, bool)
}

// benchPassStatus is what a pass had done.
type benchPassStatus struct {
	items, errors     int64 // objects expired or checked; errors
	batches, backoffs int64
	backoff           time.Duration
	running           bool
	err               string
}

var lifecycleBenchPass = benchPass{
	name: "lifecycle", unit: "expired",
	options: func(o *Options, busy func() uint64, done func()) {
		o.Lifecycle = gc.LifecycleOptions{Busy: busy, PassDone: func(gc.LifecyclePass) { done() }}
	},
	start: func(s *Store) error { _, err := s.Lifecycle().Start(); return err },
	status: func(s *Store) (benchPassStatus, bool) {
		return passStatusOf(s.Lifecycle().Status(), func(c LifecycleCounts) (int64, int64) { return c.Expired, c.Errors })
	},
}

// passStatusOf reads a worker's status through items, which picks the
// objects done and the errors out of its counts.
func passStatusOf[C any](st gc.Status[C], items func(C) (int64, int64)) (benchPassStatus, bool) {
	p := st.Current
	if p == nil {
		p = st.Last
	}
	if p == nil {
		return benchPassStatus{}, false
	}
	n, errs := items(p.Counts)
	return benchPassStatus{items: n, errors: errs, batches: p.Batches, backoffs: p.Backoffs, backoff: p.Backoff,
		running: p.Running, err: p.Err}, true
}

// runPassBench runs the rounds of a pass benchmark; env names its
// variables (XFS3_<env>_BENCH_OBJECTS, …).
func runPassBench(b *testing.B, kind benchPass, env string) {
	objects := lcEnvInt(b, "XFS3_"+env+"_BENCH_OBJECTS", lcBenchObjects)
	rounds := lcEnvInt(b, "XFS3_"+env+"_BENCH_ROUNDS", lcBenchRounds)
	window := lcBenchWindow
	if v := os.Getenv("XFS3_" + env + "_BENCH_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("XFS3_%s_BENCH_WINDOW=%q: want a positive duration (%v)", env, v, err)
		}
		window = d
	}
	control := os.Getenv("XFS3_"+env+"_BENCH_CONTROL") == "1"
	fmt.Printf("%s bench: %d objects, %d writers, %s phases, %d rounds, control %v, load %s\n",
		kind.name, objects, lcBenchWriters, window, rounds, control, oracle.LoadAverage())
	built := time.Now()
	img := lifecycleBenchImage(b, objects)
	fmt.Printf("populated image built in %s\n", time.Since(built).Round(time.Millisecond))

	var rows []lcBenchRound
	for r := range rounds {
		row := lcBenchRound{round: r + 1, passFirst: r%2 == 1}
		for _, withPass := range []bool{row.passFirst, !row.passFirst} {
			ph := passPhase(b, img, kind, window, lcBenchWriters, withPass && !control, nil)
			if withPass {
				row.pass = ph
			} else {
				row.alone = ph
			}
		}
		row.load = oracle.LoadAverage()
		fmt.Println(row.String())
		rows = append(rows, row)
	}
	// Context: the pass with the writers idle, unpaced (to the end), and
	// as the store paces it by default (for one window).
	var unpaced, idle lcPhase
	if !control {
		unpaced = passPhase(b, img, kind, 24*time.Hour, 0, true, func() uint64 { return 0 })
		fmt.Printf("idle, unpaced: %s\n", unpaced.passString())
		idle = passPhase(b, img, kind, window, 0, true, nil)
		fmt.Printf("idle, default pacing: %s\n", idle.passString())
		if unpaced.items < int64(objects) {
			b.Errorf("the unpaced pass %s %d objects of %d", kind.unit, unpaced.items, objects)
		}
	}

	var ratios, p99x, aloneRate, passRate, aloneP99, passP99, paced []float64
	for _, r := range rows {
		ratios = append(ratios, r.ratio())
		p99x = append(p99x, r.p99x())
		aloneRate = append(aloneRate, r.alone.rate())
		passRate = append(passRate, r.pass.rate())
		aloneP99 = append(aloneP99, lcMs(r.alone.p99))
		passP99 = append(passP99, lcMs(r.pass.p99))
		paced = append(paced, r.pass.itemRate())
	}
	b.ReportMetric(lcMedian(aloneRate), "alone-put/s")
	b.ReportMetric(lcMedian(passRate), "pass-put/s")
	b.ReportMetric(lcMedian(ratios), "ratio")
	b.ReportMetric(slices.Min(ratios), "ratio-min")
	b.ReportMetric(slices.Max(ratios), "ratio-max")
	b.ReportMetric(100*(1-lcMedian(ratios)), "loss-%")
	b.ReportMetric(lcMedian(aloneP99), "alone-p99-ms")
	b.ReportMetric(lcMedian(passP99), "pass-p99-ms")
	b.ReportMetric(lcMedian(p99x), "p99-x")
	b.ReportMetric(slices.Min(p99x), "p99-x-min")
	b.ReportMetric(slices.Max(p99x), "p99-x-max")
	b.ReportMetric(lcMedian(paced), "paced-"+kind.unit+"/s")
	b.ReportMetric(unpaced.passTime.Seconds(), "idle-unpaced-s")
	b.ReportMetric(unpaced.itemRate(), "idle-unpaced-"+kind.unit+"/s")
	b.ReportMetric(idle.itemRate(), "idle-default-"+kind.unit+"/s")
	verdict := "met"
	if 1-lcMedian(ratios) > lcBenchMaxLoss {
		verdict = "NOT met"
	}
	if control {
		verdict = "A/A control, no pass in B"
	}
	fmt.Printf("summary: B/A put/s median %.3f (%.3f–%.3f), loss %.1f%% (target ≤ %.0f%%: %s); p99 ×%.2f (×%.2f–%.2f); paced pass %.0f %s/s; unpaced idle pass %s for %d (%.0f/s); default-paced idle pass %.0f/s\n",
		lcMedian(ratios), slices.Min(ratios), slices.Max(ratios), 100*(1-lcMedian(ratios)), 100*lcBenchMaxLoss, verdict,
		lcMedian(p99x), slices.Min(p99x), slices.Max(p99x), lcMedian(paced), kind.unit,
		unpaced.passTime.Round(time.Millisecond), unpaced.items, unpaced.itemRate(), idle.itemRate())
}

// lifecycleBenchImage makes a volume with bucket "old" of objects small
// objects under a rule that expires them after a day, and bucket "live"
// with the writers' ten directories, closed cleanly; it returns its path.
// The objects are PUT from several goroutines, acknowledged before they
// are durable (the close makes them so): the population is not measured.
func lifecycleBenchImage(b *testing.B, objects int) string {
	b.Helper()
	img := filepath.Join(b.TempDir(), "lifecycle.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: lcBenchVolume}); err != nil {
		b.Fatal(err)
	}
	s, err := OpenWith(img, Options{AckBeforeDurable: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, bucket := range []string{lcBenchOld, lcBenchLive} {
		if err := s.CreateBucket(bucket); err != nil {
			b.Fatal(err)
		}
	}
	data := bytes.Repeat([]byte("x"), 4096)
	for d := range 10 { // the writers' directories exist, as in a bucket in use
		if _, err := s.PutObject(lcBenchLive, fmt.Sprintf("d%d/first", d), bytes.NewReader(data), int64(len(data)), Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := lifecycle.Parse([]byte(lcBenchRules))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.BucketConfigs().Put(lcBenchOld, LifecycleConfig, cfg.Encode()); err != nil {
		b.Fatal(err)
	}
	// A prefix at a time per goroutine, so they seldom meet at a directory.
	dirs := (objects + lcBenchPerDir - 1) / lcBenchPerDir
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := int(next.Add(1) - 1); d < dirs; d = int(next.Add(1) - 1) {
				for i := d * lcBenchPerDir; i < min((d+1)*lcBenchPerDir, objects); i++ {
					body := data[:i%(lcBenchMaxBody+1)]
					key := fmt.Sprintf("logs/%04d/%06d", d, i)
					if _, err := s.PutObject(lcBenchOld, key, bytes.NewReader(body), int64(len(body)), Meta{}); err != nil {
						errs <- fmt.Errorf("put %s: %w", key, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return img
}

// lcClock is the store's clock in the benchmark: real time moved ahead
// by hand. It keeps ticking (unlike testClock) because the lifecycle
// scanner's pacer reads the busy window off the same clock
// (LifecycleOptions.Now): a clock that stood still would keep the
// foreground "busy" forever after one change.
type lcClock struct{ ahead atomic.Int64 }

func (c *lcClock) now() time.Time          { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *lcClock) advance(d time.Duration) { c.ahead.Add(int64(d)) }

// lcPhase is what one phase did: the writers' PUTs, and what the pass
// (when one ran) had done when they stopped.
type lcPhase struct {
	puts     int64
	elapsed  time.Duration
	p50, p99 time.Duration
	ran      bool
	finished bool
	unit     string // what the pass did to items (benchPass.unit)
	items    int64
	errors   int64
	batches  int64
	backoffs int64
	backoff  time.Duration // the pass's pauses, summed
	passTime time.Duration // from Start to the end of the pass or of the phase
	load     string
}

func (p lcPhase) rate() float64 { return float64(p.puts) / p.elapsed.Seconds() }

func (p lcPhase) itemRate() float64 {
	if p.passTime <= 0 {
		return 0
	}
	return float64(p.items) / p.passTime.Seconds()
}

func (p lcPhase) passString() string {
	if !p.ran {
		return "no pass"
	}
	state := "still running"
	if p.finished {
		state = "finished"
	}
	var work time.Duration
	if p.batches > 0 {
		work = (p.passTime - p.backoff) / time.Duration(p.batches)
	}
	return fmt.Sprintf("%d %s (%.0f/s) in %s, %s; %d batches (%s each, pauses included: %s), %d pauses totalling %s (%.0f%% of the time); errors %d; load %s",
		p.items, p.unit, p.itemRate(), p.passTime.Round(time.Millisecond), state, p.batches, work.Round(time.Microsecond),
		(p.passTime / time.Duration(max(p.batches, 1))).Round(time.Microsecond), p.backoffs, p.backoff.Round(time.Millisecond),
		100*p.backoff.Seconds()/max(p.passTime.Seconds(), 1e-9), p.errors, p.load)
}

// passPhase opens a fresh copy of img with the clock two days ahead,
// starts kind's pass when withPass (busy, when not nil, replacing the
// store's count of finished changes), and runs writers clients PUTting
// 4 KiB objects into "live" for window (with no writers: until the pass
// ends or window passes). It returns what the writers and the pass did;
// the pass is stopped by the store's close.
func passPhase(b *testing.B, img string, kind benchPass, window time.Duration, writers int, withPass bool, busy func() uint64) lcPhase {
	b.Helper()
	path := copyImage(b, img)
	defer os.Remove(path)
	lcSyncFile(b, path) // the copy's write-back must not fall into the phase
	clock := &lcClock{}
	clock.advance(2 * DefaultLifecycleDay)
	ended := make(chan struct{})
	var endOnce sync.Once
	var endAt time.Time
	o := Options{Clock: clock.now}
	kind.options(&o, busy, func() { endOnce.Do(func() { endAt = time.Now(); close(ended) }) })
	s, err := OpenWith(path, o)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	}()
	ph := lcPhase{unit: kind.unit}
	start := time.Now()
	if withPass {
		if err := kind.start(s); err != nil {
			b.Fatal(err)
		}
	}
	if writers > 0 {
		lat := lcRunWriters(b, s, writers, window)
		ph.elapsed = time.Since(start)
		ph.puts = int64(len(lat))
		if len(lat) > 0 {
			ph.p50, ph.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
		}
	} else {
		select {
		case <-ended:
		case <-time.After(window):
		}
		ph.elapsed = time.Since(start)
	}
	ph.load = oracle.LoadAverage()
	if !withPass {
		return ph
	}
	p, ok := kind.status(s)
	if !ok {
		b.Fatal("the pass asked for never started")
	}
	ph.ran, ph.finished = true, !p.running
	ph.items, ph.errors, ph.batches, ph.backoffs, ph.backoff = p.items, p.errors, p.batches, p.backoffs, p.backoff
	ph.passTime = ph.elapsed
	if ph.finished {
		<-ended
		ph.passTime = endAt.Sub(start)
	}
	if p.err != "" {
		b.Errorf("pass: %s", p.err)
	}
	return ph
}

// lcRunWriters runs clients goroutines PUTting 4 KiB objects into "live"
// for window and returns every PUT's latency, sorted.
func lcRunWriters(b *testing.B, s *Store, clients int, window time.Duration) []time.Duration {
	b.Helper()
	all, _ := writerLatencies(b, clients, window, put4K(s, lcBenchLive))
	return all
}

// lcSyncFile makes the host write path's dirty pages back.
func lcSyncFile(b *testing.B, path string) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
}

// lcBenchRound is one round: both sides on fresh copies of the image.
type lcBenchRound struct {
	round       int
	passFirst   bool
	alone, pass lcPhase
	load        string
}

func (r lcBenchRound) ratio() float64 { return r.pass.rate() / r.alone.rate() }
func (r lcBenchRound) p99x() float64 {
	return float64(r.pass.p99) / float64(max(r.alone.p99, time.Microsecond))
}

func (r lcBenchRound) String() string {
	order := "A,B"
	if r.passFirst {
		order = "B,A"
	}
	return fmt.Sprintf("round %d (%s): alone %.0f PUT/s p50 %s p99 %s | with pass %.0f PUT/s p50 %s p99 %s | B/A %.3f (loss %.1f%%) p99 ×%.2f | pass: %s",
		r.round, order, r.alone.rate(), r.alone.p50.Round(time.Microsecond), r.alone.p99.Round(time.Microsecond),
		r.pass.rate(), r.pass.p50.Round(time.Microsecond), r.pass.p99.Round(time.Microsecond),
		r.ratio(), 100*(1-r.ratio()), r.p99x(), r.pass.passString())
}

// lcMedian is the median of xs (the mean of the middle two when even).
func lcMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func lcMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// lcEnvInt reads a positive integer from the environment (def when
// unset).
func lcEnvInt(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
