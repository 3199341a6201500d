package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

func TestIsStoreFunc(t *testing.T) {
	for fn, want := range map[string]bool{
		"github.com/xfs3/xfs3/store.(*Store).PutObject":                        true,
		"github.com/xfs3/xfs3/store.(*Store).PutObject.func2":                  true,
		"github.com/xfs3/xfs3/gc.(*worker).run":                                true,
		"github.com/xfs3/xfs3/xfs.(*Volume).Create":                            true,
		"github.com/xfs3/xfs3/xfs/btree.(*Cursor).Lookup":                      true,
		"github.com/xfs3/xfs3/xfs/xlog.(*Log).commit":                          true,
		"github.com/xfs3/xfs3/xfs/btree.walk[go.shape.uint64]":                 true,
		"github.com/xfs3/xfs3/xfs/reclaim.(*Cache[go.shape.uint64]).Get":       true,
		"github.com/xfs3/xfs3/s3api.(*Server).putObject":                       false,
		"github.com/xfs3/xfs3/s3api/sigv4.Verify":                              false,
		"github.com/xfs3/xfs3/store/checksum.Compute":                          false, // what a client asks of an upload
		"github.com/xfs3/xfs3/store/lifecycle.(*Rules).Expire":                 true,
		"github.com/xfs3/xfs3/gcx.F":                                           false,
		"github.com/xfs3/xfs3/xfsutil.F":                                       false,
		"github.com/xfs3/xfs3/s3api.handle[github.com/xfs3/xfs3/store.Object]": false,
		"main.(*logBuffer).Flush":                                              false,
		"net/http.(*conn).serve":                                               false,
		"runtime.mallocgc":                                                     false,
		"gopkg.in/yaml.v3.Unmarshal":                                           false,
		"":                                                                     false,
	} {
		if got := isStoreFunc(fn); got != want {
			t.Errorf("isStoreFunc(%q) = %v, want %v", fn, got, want)
		}
	}
}

// stackSample is a sample of a synthetic CPU profile: its stack, leaf
// first, where "a|b" is one location with a inlined into b.
type stackSample struct {
	stack []string
	cpu   time.Duration
}

// syntheticCPUProfile builds the profile Go's runtime writes, with the
// given samples.
func syntheticCPUProfile(samples ...stackSample) *profile.Profile {
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        int64(10 * time.Millisecond),
		DurationNanos: int64(time.Second),
	}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "x.go"}
		p.Function = append(p.Function, f)
		funcs[name] = f
		return f
	}
	for _, s := range samples {
		smp := &profile.Sample{Value: []int64{int64(s.cpu / (10 * time.Millisecond)), int64(s.cpu)}}
		for _, frame := range s.stack {
			loc := &profile.Location{ID: uint64(len(p.Location) + 1)}
			for _, name := range strings.Split(frame, "|") {
				loc.Line = append(loc.Line, profile.Line{Function: fn(name), Line: 1})
			}
			p.Location = append(p.Location, loc)
			smp.Location = append(smp.Location, loc)
		}
		p.Sample = append(p.Sample, smp)
	}
	return p
}

func TestSplitProfile(t *testing.T) {
	const ms = time.Millisecond
	p := syntheticCPUProfile(
		// A PUT down into the engine: the store's, whatever is above.
		stackSample{[]string{"github.com/xfs3/xfs3/xfs/btree.(*Cursor).Lookup", "github.com/xfs3/xfs3/store.(*Store).PutObject",
			"github.com/xfs3/xfs3/s3api.(*Server).putObject", "net/http.(*conn).serve"}, 40 * ms},
		// Hashing the signature: the edge's.
		stackSample{[]string{"crypto/sha256.block", "github.com/xfs3/xfs3/s3api/sigv4.Verify", "net/http.(*conn).serve"}, 30 * ms},
		// An allocation by a gc worker: the store's.
		stackSample{[]string{"runtime.mallocgc", "github.com/xfs3/xfs3/gc.(*worker).run"}, 10 * ms},
		// A store function inlined into s3api: one location, the store's.
		stackSample{[]string{"github.com/xfs3/xfs3/store.objectPath|github.com/xfs3/xfs3/s3api.(*Server).getObject"}, 5 * ms},
		// The runtime's own collector: the runtime's; a sample with no
		// stack, and an allocation's assist in the edge: the edge's.
		stackSample{[]string{"runtime.gcDrain", "runtime.gcBgMarkWorker"}, 15 * ms},
		stackSample{nil, 5 * ms},
		stackSample{[]string{"runtime.gcAssistAlloc", "runtime.mallocgc", "github.com/xfs3/xfs3/s3api.newRequestIDs"}, 7 * ms},
		// An upload's body read and signature check, pulled by the
		// store's writer: the edge's; the store's MD5 of the same bytes:
		// the store's.
		stackSample{[]string{"syscall.read", "net/http.(*body).Read", "github.com/xfs3/xfs3/s3api/sigv4.(*ChunkedReader).Read",
			"github.com/xfs3/xfs3/store.readFull", "github.com/xfs3/xfs3/store.(*store).writeBody"}, 11 * ms},
		stackSample{[]string{"crypto/md5.block", "github.com/xfs3/xfs3/store.(*store).writeBody", "github.com/xfs3/xfs3/s3api.(*server).putObject"}, 9 * ms},
	)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil { // gzip'd, as pprof serves it
		t.Fatal(err)
	}
	parsed, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	s, err := splitProfile(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if want := (cpuSplit{store: 64 * ms, edge: 53 * ms, runtime: 15 * ms}); s != want {
		t.Errorf("split %+v, want %+v", s, want)
	}
	if got := s.storeShare(); math.Abs(got-64.0/132) > 1e-12 {
		t.Errorf("store share %v", got)
	}
	if (cpuSplit{}).storeShare() != 0 {
		t.Error("an empty split has a store share")
	}

	heap := syntheticCPUProfile(stackSample{[]string{"main.f"}, ms})
	heap.SampleType = []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}
	if _, err := splitProfile(heap); err == nil {
		t.Error("a heap profile was split as a CPU profile")
	}
}

// TestSplitRealProfile splits a profile the runtime took of this test
// spinning: all of it is the edge's, and none is lost.
func TestSplitRealProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("CPU profiling is taken: %v", err)
	}
	// 300 ms of CPU, however long the machine takes to give it.
	_, _, err := spinCPU(300 * time.Millisecond)
	pprof.StopCPUProfile()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("the process's CPU time: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	s, err := splitProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	for _, smp := range p.Sample {
		sum += time.Duration(smp.Value[1])
	}
	if s.edge < 50*time.Millisecond || s.total() != sum {
		t.Errorf("split %+v of a profile with %v in %d samples", s, sum, len(p.Sample))
	}
}

// spinCPU burns CPU until getrusage has counted d of it (wall time says
// nothing on a loaded machine), within 20 s, and returns the readings
// before and after.
func spinCPU(d time.Duration) (before, after time.Duration, err error) {
	if before, err = selfCPU(); err != nil {
		return 0, 0, err
	}
	after = before
	for deadline := time.Now().Add(20 * time.Second); after-before < d; {
		if time.Now().After(deadline) {
			return before, after, fmt.Errorf("getrusage counted %v of CPU in 20 s of spinning", after-before)
		}
		spinUntil(time.Now().Add(10 * time.Millisecond))
		if after, err = selfCPU(); err != nil {
			return before, after, err
		}
	}
	return before, after, nil
}

// spinUntil burns CPU until t.
func spinUntil(t time.Time) (n int) {
	for time.Now().Before(t) {
		for i := range 10000 {
			n += i * i
		}
	}
	return n
}

func TestParseProcStat(t *testing.T) {
	tail := " S 1 2 3 4 5 6 7 8 9 10 1234 56 12 13 20 0 8 0 100 1000 10"
	for _, tc := range []struct {
		stat string
		want int64
	}{
		{"4242 (xfs3)" + tail, 1234 + 56},
		{"4242 (a b) c)" + tail, 1234 + 56}, // a command with spaces and ')'
		{"7 (x) R 1 2 3 4 5 6 7 8 9 10 0 0", 0},
	} {
		got, err := parseProcStat([]byte(tc.stat))
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.stat, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "4242 xfs3 S 1 2", "1 (x) S 1 2 3", "1 (x) R 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if got := ticksDuration(250, 100); got != 2500*time.Millisecond {
		t.Errorf("250 ticks at 100 Hz = %v", got)
	}
}

func TestProcessCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// Spin until getrusage has counted 200 ms of CPU (wall time says
	// nothing on a loaded machine), then /proc must agree with it: both
	// count the whole process, each to a clock tick.
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self0, self1, err := spinCPU(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	after, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self2, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	// /proc was read between the two getrusage readings; three ticks of
	// slack each way.
	if d := after - before; d < self1-self0-30*time.Millisecond || d > self2-self0+30*time.Millisecond {
		t.Errorf("/proc says %v where getrusage says %v to %v", d, self1-self0, self2-self0)
	}
	if _, err := processCPU(1 << 30); err == nil {
		t.Error("a process that cannot exist has a CPU time")
	}
}

// url0 is an endpoint for outputs that never reach it.
var url0 = url.URL{Scheme: "http", Host: "127.0.0.1:1"}

// TestBenchCPUTable: the CPU columns follow the others, "-" where a
// phase could not be measured or split, and the split scales the
// measured time.
func TestBenchCPUTable(t *testing.T) {
	st := phaseStats{ops: 100, elapsed: time.Second, lat: []time.Duration{time.Millisecond}, cpu: &phaseCPU{
		server: 20 * time.Millisecond, generator: 5 * time.Millisecond,
		split: cpuSplit{store: 30 * time.Millisecond, edge: 6 * time.Millisecond, runtime: 4 * time.Millisecond}, profiled: time.Second,
	}}
	short := st
	short.cpu = &phaseCPU{server: 3 * time.Millisecond, generator: time.Millisecond}
	for _, tc := range []struct {
		name  string
		o     benchOptions
		extra int
		want  [][]string
	}{
		{"split", benchOptions{serverPID: 1, serverProfile: &url0}, 5, [][]string{{"200", "30.0", "150", "20.0", "50.0"}, {"30.0", "-", "-", "-", "10.0"}}},
		{"no split", benchOptions{serverPID: 1}, 2, [][]string{{"200", "50.0"}, {"30.0", "10.0"}}},
	} {
		var buf bytes.Buffer
		e := &env{stdout: bufio.NewWriter(&buf), stderr: &buf}
		tc.o.endpoint, tc.o.duration = &url0, time.Second
		out := newBenchOutput(e, tc.o)
		out.header("b")
		out.phase("PUT", 4096, 1, st)
		out.phase("DELETE", 4096, 1, short)
		rows, cpu := benchRowsCPU(t, buf.String(), tc.extra)
		if len(rows) != 2 || fmt.Sprint(cpu) != fmt.Sprint(tc.want) {
			t.Errorf("%s: CPU cells %v, want %v\n%s", tc.name, cpu, tc.want, buf.String())
		}
		head := "errors  srv-µs/op"
		if tc.extra == 5 {
			head += " edge-µs/op store-µs/op rt-µs/op  gen-µs/op\n"
		}
		if !strings.Contains(buf.String(), head) {
			t.Errorf("%s: no header %q:\n%s", tc.name, head, buf.String())
		}
	}
}

// TestBenchFakeCPU runs every phase with --server-pid (this process,
// which serves the fake S3) and --server-profile (a listener serving a
// fixed profile, three quarters store, after saying once that it is
// busy, as pprof does while the last profile ends).
func TestBenchFakeCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--server-pid reads /proc")
	}
	_, s3url := newFakeS3(t, false)
	fixed := syntheticCPUProfile(
		stackSample{[]string{"github.com/xfs3/xfs3/store.(*Store).PutObject", "net/http.(*conn).serve"}, 30 * time.Millisecond},
		stackSample{[]string{"net/http.(*conn).serve"}, 6 * time.Millisecond},
		stackSample{[]string{"runtime.bgsweep"}, 4 * time.Millisecond},
	)
	var profiles, busy atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "profiles") })
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		if busy.Add(1) == 1 {
			http.Error(w, "Could not enable CPU profiling: cpu profiling already in use", http.StatusInternalServerError)
			return
		}
		secs, err := strconv.Atoi(r.URL.Query().Get("seconds"))
		if err != nil || secs < 1 {
			http.Error(w, "bad seconds", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(time.Duration(secs) * time.Second):
		case <-r.Context().Done():
			return
		}
		profiles.Add(1)
		fixed.Write(w)
	})
	debug := httptest.NewServer(mux)
	defer debug.Close()

	r := runCLI(t, "bench", "--endpoint", s3url, "--access-key", "k", "--secret-key", "secret",
		"--duration", "1300ms", "--sizes", "1KiB", "--concurrency", "1", "--big", "0", "--json",
		"--server-pid", strconv.Itoa(os.Getpid()), "--server-profile", debug.URL)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("status %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if len(rep.Phases) != len(benchOps) {
		t.Fatalf("%d phases", len(rep.Phases))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	for _, p := range rep.Phases {
		c := p.phaseCPURow
		if p.Ops == 0 || c.ServerCPUSeconds == nil || c.GenCPUSeconds == nil || c.ServerCPUUsPerOp == nil || c.GenCPUUsPerOp == nil {
			t.Errorf("%s: %d ops, CPU %+v", p.Op, p.Ops, c)
			continue
		}
		if *c.ServerCPUSeconds < 0 || *c.GenCPUSeconds < 0 ||
			!near(*c.ServerCPUUsPerOp, *c.ServerCPUSeconds*1e6/float64(p.Ops)) || !near(*c.GenCPUUsPerOp, *c.GenCPUSeconds*1e6/float64(p.Ops)) {
			t.Errorf("%s: %d ops, server %v s = %v µs/op, generator %v s = %v µs/op",
				p.Op, p.Ops, *c.ServerCPUSeconds, *c.ServerCPUUsPerOp, *c.GenCPUSeconds, *c.GenCPUUsPerOp)
		}
		if p.Op == "DELETE" && c.ProfiledSeconds == nil {
			// It ends after its keys, maybe before a profile's second.
			if c.StoreShare != nil || c.StoreCPUUsPerOp != nil {
				t.Errorf("DELETE split without a profile: %+v", c)
			}
			continue
		}
		if c.ProfiledSeconds == nil || c.StoreShare == nil || c.EdgeShare == nil || c.RuntimeShare == nil ||
			c.StoreCPUUsPerOp == nil || c.EdgeCPUUsPerOp == nil || c.RuntimeCPUUsPerOp == nil {
			t.Errorf("%s: no split: %+v", p.Op, c)
			continue
		}
		// A phase of known length gets one profile of a second; DELETE,
		// which lasts as long as its keys, one a second it ran (more
		// than one on a slow machine).
		wantProfiled := *c.ProfiledSeconds == 1 || p.Op == "DELETE" && *c.ProfiledSeconds >= 1 && *c.ProfiledSeconds == math.Trunc(*c.ProfiledSeconds)
		if !wantProfiled || !near(*c.StoreShare, 0.75) || !near(*c.RuntimeShare, 0.1) || !near(*c.StoreShare+*c.EdgeShare+*c.RuntimeShare, 1) ||
			!near(*c.StoreCPUUsPerOp, 0.75**c.ServerCPUUsPerOp) || !near(*c.StoreCPUUsPerOp+*c.EdgeCPUUsPerOp+*c.RuntimeCPUUsPerOp, *c.ServerCPUUsPerOp) {
			t.Errorf("%s: profiled %v s, shares %v + %v + %v, µs/op store %v + edge %v + runtime %v of %v",
				p.Op, *c.ProfiledSeconds, *c.StoreShare, *c.EdgeShare, *c.RuntimeShare, *c.StoreCPUUsPerOp, *c.EdgeCPUUsPerOp, *c.RuntimeCPUUsPerOp, *c.ServerCPUUsPerOp)
		}
	}
	// This process did the PUTs on both sides: it cannot have been idle.
	if put := rep.Phases[0]; put.ServerCPUSeconds == nil || *put.ServerCPUSeconds <= 0 || *put.GenCPUSeconds <= 0 {
		t.Errorf("PUT: no CPU measured: %+v", put.phaseCPURow)
	}
	if n := profiles.Load(); n < int32(len(benchOps)-1) {
		t.Errorf("%d profiles served, want one per phase of known length at least", n)
	}
}

// TestBenchCPUSetupErrors: a process or profiling listener that is not
// there stops the run before it starts, in one line.
func TestBenchCPUSetupErrors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--server-pid reads /proc")
	}
	_, s3url := newFakeS3(t, false)
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	pid := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--server-pid", strconv.Itoa(1 << 30)}, "xfs3: bench: --server-pid 1073741824: "},
		{[]string{"--server-pid", pid, "--server-profile", notFound.URL}, "404 Not Found (is the server started with --debug-listen?)"},
	} {
		args := append([]string{"bench", "--endpoint", s3url, "--access-key", "k", "--secret-key", "secret", "--ops", "1"}, tc.args...)
		r := runCLI(t, args...)
		wantCLIFailure(t, r, exitError, tc.want)
		if strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("want one line, got %q", r.stderr)
		}
	}
}
