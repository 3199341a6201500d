package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// The HTTP delete benchmark drives `xfs3 serve` binaries, possibly built
// from other commits, with raw signed requests: PUT many 4 KiB objects
// spread over prefixes, then DELETE them all from some number of clients.
// Every run gets a fresh server on a fresh volume; the sides (binaries,
// and each gc mode of a binary that has --gc-mode) take turns, so a change
// in the machine's load falls on all of them.

const (
	deleteBenchObjectSize = 4 << 10
	deleteBenchPrefixes   = 100
	deleteBenchPutClients = 32
	deleteBenchBucket     = "delbench"
	// spaceBackTimeout bounds the wait for a server to report the deleted
	// objects' blocks free again.
	spaceBackTimeout = 5 * time.Minute
)

// deleteBenchSide is one server configuration the benchmark compares.
type deleteBenchSide struct {
	label  string // "old", "new/percpu", ...
	bin    string
	gcMode string // "" for a binary without --gc-mode
}

// deleteBenchConfig is what the environment asks of the benchmark.
type deleteBenchConfig struct {
	binaries []namedBinary
	gcModes  []string
	clients  []int
	objects  int
	rounds   int
	// serverCPUs, when set, are the CPUs each server is confined to; the
	// clients (this process) then run on the others.
	serverCPUs []int
	loadGen    loadGen
}

// namedBinary is one LABEL=PATH of XFS3_BENCH_BINARIES.
type namedBinary struct{ label, path string }

// deleteBenchConfigFrom reads the benchmark's settings through getenv;
// self is the binary of this checkout, the default.
func deleteBenchConfigFrom(getenv func(string) string, self string) (deleteBenchConfig, error) {
	c := deleteBenchConfig{binaries: []namedBinary{{"this", self}}}
	var err error
	if spec := getenv("XFS3_BENCH_BINARIES"); spec != "" {
		if c.binaries, err = parseNamedBinaries(spec); err != nil {
			return c, fmt.Errorf("XFS3_BENCH_BINARIES: %w", err)
		}
	}
	c.gcModes = []string{"percpu", "sync", "sweep"}
	if s := getenv("XFS3_BENCH_GC_MODES"); s != "" {
		c.gcModes = strings.Split(s, ",")
	}
	if c.clients, err = positiveInts(getenv("XFS3_BENCH_CLIENTS"), []int{1, 2, 8, 32}); err != nil {
		return c, fmt.Errorf("XFS3_BENCH_CLIENTS: %w", err)
	}
	objects, err := positiveInts(getenv("XFS3_BENCH_OBJECTS"), []int{20000})
	if err != nil || len(objects) != 1 {
		return c, fmt.Errorf("XFS3_BENCH_OBJECTS: want one positive count (%v)", err)
	}
	rounds, err := positiveInts(getenv("XFS3_BENCH_ROUNDS"), []int{2})
	if err != nil || len(rounds) != 1 {
		return c, fmt.Errorf("XFS3_BENCH_ROUNDS: want one positive count (%v)", err)
	}
	c.objects, c.rounds = objects[0], rounds[0]
	if s := getenv("XFS3_BENCH_SERVER_CPUS"); s != "" {
		if c.serverCPUs, err = parseCPUList(s); err != nil {
			return c, fmt.Errorf("XFS3_BENCH_SERVER_CPUS: %w", err)
		}
	}
	if c.loadGen, err = parseLoadGen(getenv("XFS3_BENCH_LOADGEN")); err != nil {
		return c, fmt.Errorf("XFS3_BENCH_LOADGEN: %w", err)
	}
	return c, nil
}

// parseNamedBinaries parses "old=PATH,new=PATH": labels distinct and not
// empty, paths not empty.
func parseNamedBinaries(spec string) ([]namedBinary, error) {
	var out []namedBinary
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		label, path, ok := strings.Cut(item, "=")
		switch {
		case !ok || label == "" || path == "":
			return nil, fmt.Errorf("%q is not LABEL=PATH", item)
		case strings.Contains(label, "/"):
			return nil, fmt.Errorf("label %q contains a slash", label)
		case seen[label]:
			return nil, fmt.Errorf("label %q given twice", label)
		}
		seen[label] = true
		out = append(out, namedBinary{label, path})
	}
	return out, nil
}

// positiveInts parses a comma-separated list of positive integers, or
// answers def for an empty one.
func positiveInts(s string, def []int) ([]int, error) {
	if s == "" {
		return def, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// deleteBenchSides expands binaries into sides: one per gc mode for a
// binary whose serve usage mentions --gc-mode, one for any other.
func deleteBenchSides(binaries []namedBinary, modes []string) ([]deleteBenchSide, error) {
	var sides []deleteBenchSide
	for _, nb := range binaries {
		usage, err := exec.Command(nb.path, "serve", "-h").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%s serve -h: %v\n%s", nb.path, err, usage)
		}
		if !bytes.Contains(usage, []byte("--gc-mode")) {
			sides = append(sides, deleteBenchSide{label: nb.label, bin: nb.path})
			continue
		}
		for _, m := range modes {
			sides = append(sides, deleteBenchSide{label: nb.label + "/" + m, bin: nb.path, gcMode: m})
		}
	}
	return sides, nil
}

// deleteRun is the outcome of one side's run at one client count.
type deleteRun struct {
	side     string
	clients  int
	objects  int
	putRate  float64 // PUT/s with deleteBenchPutClients clients
	rate     float64 // DELETE/s
	p50, p99 time.Duration
	// backlog is the gc's pending count when the last DELETE was answered
	// and spaceBack how long until the server reported every deleted
	// object's blocks free (its statfs waits for the gc queues); both -1
	// for a server without the info document.
	backlog   int64
	spaceBack time.Duration
	// cpuPerDelete is the server's CPU time (user and system) from the
	// first DELETE until the space was back (the gc's deferred work
	// included) divided by the deletes, -1 where /proc does not say:
	// less disturbed by other processes than the rate.
	cpuPerDelete time.Duration
	// logPerDelete is the growth of the server's log counters from just
	// before the deletes to after the space came back (the gc's own
	// transactions included), per DELETE; nil for a server without
	// metrics.
	logPerDelete map[string]float64
	load         string // /proc/loadavg when the deletes ended
	// clientCPUPerDelete is this process's CPU time (the clients: the
	// loopback socket, and with the nethttp generator request signing
	// and net/http) per DELETE, -1 where /proc does not say. The clients
	// share the machine's cores with the server, so they bound the rate
	// any server can reach here.
	clientCPUPerDelete time.Duration
	// noop is a second pass of the same DELETEs, of keys now gone: each
	// answers 204 having changed nothing (no transaction, no log force),
	// so its rate is the ceiling that HTTP, authentication, routing, a
	// lookup and the clients set on this machine for any DELETE.
	noopRate         float64
	noopCPUPerDelete time.Duration
}

// BenchmarkHTTPParallelDeletes measures S3 DELETE throughput through the
// real binary on loopback: per round, per client count, each side in
// turn starts on a fresh volume, takes XFS3_BENCH_OBJECTS (default
// 20,000) 4 KiB PUTs over 100 prefixes from 32 clients, then DELETEs them
// all from that many clients, in an order that rotates from round to
// round (roundOrder). It prints a line per run and, at the end,
// each side's median DELETE/s and its ratio to the first side's.
//
//	XFS3_BENCH_BINARIES=old=/path/xfs3-old,new=/path/xfs3-new \
//	  go test -run '^$' -bench HTTPParallelDeletes -benchtime 1x -timeout 2h ./integration/
//
// XFS3_BENCH_BINARIES defaults to this checkout's binary; a binary with
// --gc-mode runs once per XFS3_BENCH_GC_MODES (default percpu,sync,sweep).
// XFS3_BENCH_CLIENTS (default 1,2,8,32) and XFS3_BENCH_ROUNDS (default 2)
// shape the schedule. XFS3_BENCH_SERVER_CPUS (a CPU list such as 1 or
// 2-3) confines every server to those CPUs and the clients to the rest,
// so that the clients' work does not come out of the server's share of
// a small machine. XFS3_BENCH_LOADGEN says how the timed DELETEs are
// sent: presigned (the default: signed and serialised before the clock
// starts, then one write and one read each on kept-alive connections)
// or nethttp (signed as they go, through net/http), see loadGen. Each run prints the rate, p50 and p99, the server's
// CPU per DELETE, and for servers that have them the gc backlog when the
// deletes ended, the time until the info document showed the space
// back, and log commits, writes and flushes per DELETE; then the clients'
// CPU per DELETE, and the rate of a second pass of the same DELETEs (the
// keys are gone, so nothing changes): the ceiling that HTTP, SigV4, the
// lookup and the clients on the same cores set for any DELETE, which the
// summary gives beside each side's median. Servers get only
// flags every version knows, the durability spelled out (on-ack, the
// default of all of them), and --gc-mode where it exists.
func BenchmarkHTTPParallelDeletes(b *testing.B) {
	cfg, err := deleteBenchConfigFrom(os.Getenv, binary)
	if err != nil {
		b.Fatal(err)
	}
	sides, err := deleteBenchSides(cfg.binaries, cfg.gcModes)
	if err != nil {
		b.Fatal(err)
	}
	if len(cfg.serverCPUs) > 0 {
		clientCPUs, err := splitCPUs(cfg.serverCPUs)
		if err != nil {
			b.Fatalf("XFS3_BENCH_SERVER_CPUS: %v", err)
		}
		if _, err := exec.LookPath("taskset"); err != nil {
			b.Fatalf("XFS3_BENCH_SERVER_CPUS needs taskset (util-linux): %v", err)
		}
		undo, err := pinSelf(clientCPUs)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := undo(); err != nil {
				b.Error(err)
			}
		})
		fmt.Printf("servers on CPUs %v, clients on CPUs %v\n", cfg.serverCPUs, clientCPUs)
	}
	var runs []deleteRun
	for range b.N {
		for round := range cfg.rounds {
			for _, clients := range cfg.clients {
				for _, i := range roundOrder(len(sides), round) {
					r := runHTTPDeletes(b, sides[i], cfg.serverCPUs, cfg.loadGen, clients, cfg.objects)
					fmt.Printf("round %d %s\n", round+1, r)
					runs = append(runs, r)
				}
			}
		}
	}
	fmt.Print(deleteBenchSummary(runs, sides, cfg.clients))
}

// roundOrder is the order n sides run in round r: each round starts one
// side later, so that no side always runs first. On the machines here
// the place in a round was worth as much as 20% of a side's DELETE/s
// (2026-12-05: three builds, five rounds in each of two opposite fixed
// orders, the last side ahead both times).
func roundOrder(n, r int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (i + r) % n
	}
	return order
}

// TestHTTPParallelDeletesSmoke runs the benchmark's driver small on this
// checkout's binary: every DELETE answers 204, nothing is listed after,
// the server reports the space back, each DELETE took a log commit at
// least, and the bucket can be deleted after (four keys a prefix, deleted
// by 8 clients at once: no prefix directory is left behind).
func TestHTTPParallelDeletesSmoke(t *testing.T) {
	side := deleteBenchSide{label: "this/percpu", bin: binary, gcMode: "percpu"}
	r := runHTTPDeletes(t, side, nil, loadPresigned, 8, 4*deleteBenchPrefixes)
	if r.rate <= 0 || r.p50 <= 0 || r.p99 < r.p50 || r.spaceBack < 0 || r.backlog < 0 || r.cpuPerDelete < 0 || r.logPerDelete["commits"] < 1 {
		t.Errorf("implausible run: %s", r)
	}
	t.Log(r)
}

// TestDeleteBenchSummary: the summary gives each side's medians over its
// rounds, rate and server CPU, as ratios to the first side's.
func TestDeleteBenchSummary(t *testing.T) {
	run := func(side string, rate float64, cpu time.Duration) deleteRun {
		return deleteRun{side: side, clients: 8, rate: rate, cpuPerDelete: cpu, noopRate: 2 * rate}
	}
	runs := []deleteRun{
		run("old", 1000, 600*time.Microsecond), run("new", 2500, 290*time.Microsecond),
		run("old", 1200, 500*time.Microsecond), run("new", 3000, 250*time.Microsecond),
		run("old", 900, 550*time.Microsecond), run("new", 1800, 300*time.Microsecond),
	}
	sides := []deleteBenchSide{{label: "old"}, {label: "new"}}
	got := deleteBenchSummary(runs, sides, []int{8})
	for _, want := range []string{
		"old             1000/s  x1.00  (runs: [900 1000 1200])  server CPU/DELETE  550µs  x1.00  no-op DELETE    2000/s  x2.00",
		"new             2500/s  x2.50  (runs: [1800 2500 3000])  server CPU/DELETE  290µs  x0.53",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	runs[0].cpuPerDelete, runs[2].cpuPerDelete, runs[4].cpuPerDelete = -1, -1, -1
	if got := deleteBenchSummary(runs, sides, []int{8}); strings.Count(got, "server CPU/DELETE unknown") != 2 {
		t.Errorf("without the first side's CPU every CPU ratio is unknown:\n%s", got)
	}
}

// TestDeleteBenchConfig: the benchmark's environment is read as
// documented and bad settings are refused.
func TestDeleteBenchConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := deleteBenchConfigFrom(env(), "/self")
	if err != nil || !slices.Equal(c.binaries, []namedBinary{{"this", "/self"}}) || !slices.Equal(c.clients, []int{1, 2, 8, 32}) ||
		c.objects != 20000 || c.rounds != 2 || !slices.Equal(c.gcModes, []string{"percpu", "sync", "sweep"}) || c.loadGen != loadPresigned {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	c, err = deleteBenchConfigFrom(env("XFS3_BENCH_BINARIES", "old=/a/x=y,new=/b", "XFS3_BENCH_CLIENTS", "8, 32",
		"XFS3_BENCH_OBJECTS", "100000", "XFS3_BENCH_ROUNDS", "3", "XFS3_BENCH_GC_MODES", "sync", "XFS3_BENCH_SERVER_CPUS", "1", "XFS3_BENCH_LOADGEN", "nethttp"), "/self")
	if err != nil || !slices.Equal(c.binaries, []namedBinary{{"old", "/a/x=y"}, {"new", "/b"}}) || !slices.Equal(c.clients, []int{8, 32}) ||
		c.objects != 100000 || c.rounds != 3 || !slices.Equal(c.gcModes, []string{"sync"}) || !slices.Equal(c.serverCPUs, []int{1}) || c.loadGen != loadNetHTTP {
		t.Errorf("set: %+v, %v", c, err)
	}
	for _, bad := range [][]string{
		{"XFS3_BENCH_BINARIES", "old"}, {"XFS3_BENCH_BINARIES", "=/a"}, {"XFS3_BENCH_BINARIES", "old="},
		{"XFS3_BENCH_BINARIES", "a=/x,a=/y"}, {"XFS3_BENCH_BINARIES", "a/b=/x"}, {"XFS3_BENCH_BINARIES", "a=/x,"},
		{"XFS3_BENCH_CLIENTS", "0"}, {"XFS3_BENCH_CLIENTS", "8,x"}, {"XFS3_BENCH_OBJECTS", "-1"},
		{"XFS3_BENCH_OBJECTS", "1,2"}, {"XFS3_BENCH_ROUNDS", "two"}, {"XFS3_BENCH_SERVER_CPUS", "1-"}, {"XFS3_BENCH_LOADGEN", "curl"},
	} {
		if _, err := deleteBenchConfigFrom(env(bad...), "/self"); err == nil {
			t.Errorf("%s=%q accepted", bad[0], bad[1])
		}
	}
	if cpu, err := processCPU(os.Getpid()); err != nil || cpu < 0 {
		t.Errorf("processCPU of the test: %v, %v", cpu, err)
	}
}

// runHTTPDeletes is one run: a fresh server of side (on serverCPUs if
// any), objects PUT, then all DELETEd by clients clients sent by lg. It
// fails tb on any unexpected answer.
func runHTTPDeletes(tb testing.TB, side deleteBenchSide, serverCPUs []int, lg loadGen, clients, objects int) deleteRun {
	tb.Helper()
	dir, err := os.MkdirTemp("", "xfs3-delbench-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	flags := []string{"--durability", "on-ack"}
	if side.gcMode != "" {
		flags = append(flags, "--gc-mode", side.gcMode)
	}
	volMiB := max(1024, objects*4*deleteBenchObjectSize>>20)
	s := startPinnedBinaryOn(tb, serverCPUs, side.bin, filepath.Join(dir, "volume.xfs"), fmt.Sprintf("%dM", volMiB), flags...)
	c := newBenchClient(s.URL, max(clients, deleteBenchPutClients))
	defer c.http.CloseIdleConnections()
	if code, body, err := c.do("PUT", "/"+deleteBenchBucket, nil); err != nil || code != http.StatusOK {
		tb.Fatalf("%s: create bucket: %d %v %s", side.label, code, err, body)
	}
	run := deleteRun{side: side.label, clients: clients, objects: objects, backlog: -1, spaceBack: -1}

	data := bytes.Repeat([]byte{'d'}, deleteBenchObjectSize)
	start := time.Now()
	if _, err := c.parallel(deleteBenchPutClients, objects, "PUT", data, http.StatusOK); err != nil {
		tb.Fatalf("%s: PUT phase: %v", side.label, err)
	}
	run.putRate = float64(objects) / time.Since(start).Seconds()
	beforeDeletes, hasInfo := c.info(tb)

	send, err := c.prepare(lg, clients, objects, "DELETE", http.StatusNoContent)
	if err != nil {
		tb.Fatalf("%s: preparing the DELETEs: %v", side.label, err)
	}
	logBefore := c.logCounters(tb)
	cpuBefore, cpuErr := processCPU(s.cmd.Process.Pid)
	clientBefore, clientErr := processCPU(os.Getpid())
	start = time.Now()
	lat, err := send()
	if err != nil {
		tb.Fatalf("%s: DELETE phase: %v", side.label, err)
	}
	deletesEnd := time.Now()
	run.rate = float64(objects) / deletesEnd.Sub(start).Seconds()
	run.load = oracle.LoadAverage()
	run.clientCPUPerDelete = -1
	if clientAfter, err := processCPU(os.Getpid()); err == nil && clientErr == nil {
		run.clientCPUPerDelete = (clientAfter - clientBefore) / time.Duration(objects)
	}
	slices.Sort(lat)
	run.p50, run.p99 = lat[(len(lat)-1)*50/100], lat[(len(lat)-1)*99/100]
	if hasInfo {
		run.backlog, run.spaceBack = c.waitSpaceBack(tb, deletesEnd, beforeDeletes.Volume.FreeBytes+uint64(objects)*deleteBenchObjectSize)
	}
	run.cpuPerDelete = -1
	if cpuAfter, err := processCPU(s.cmd.Process.Pid); err == nil && cpuErr == nil {
		run.cpuPerDelete = (cpuAfter - cpuBefore) / time.Duration(objects)
	}
	if logAfter := c.logCounters(tb); logBefore != nil && logAfter != nil {
		run.logPerDelete = map[string]float64{}
		for name, v := range logAfter {
			run.logPerDelete[name] = (v - logBefore[name]) / float64(objects)
		}
	}
	if code, body, err := c.do("GET", "/"+deleteBenchBucket+"?list-type=2&max-keys=1", nil); err != nil || code != http.StatusOK || bytes.Contains(body, []byte("<Contents>")) {
		tb.Fatalf("%s: listing after the deletes: %d %v %s", side.label, code, err, body)
	}
	run.noopRate, run.noopCPUPerDelete = noopDeletes(tb, c, s, side, lg, clients, objects)
	// Every prefix directory went with its last key: a directory left
	// behind would keep the bucket from being deleted.
	if code, body, err := c.do("DELETE", "/"+deleteBenchBucket, nil); err != nil || code != http.StatusNoContent {
		tb.Fatalf("%s: deleting the emptied bucket: %d %v %s", side.label, code, err, body)
	}
	s.stop(tb)
	return run
}

// noopDeletes DELETEs the benchmark's keys again, now that none exists,
// and answers the rate and the server's CPU per DELETE (-1 if unknown).
func noopDeletes(tb testing.TB, c *benchClient, s *server, side deleteBenchSide, lg loadGen, clients, objects int) (float64, time.Duration) {
	tb.Helper()
	send, err := c.prepare(lg, clients, objects, "DELETE", http.StatusNoContent)
	if err != nil {
		tb.Fatalf("%s: preparing the DELETEs of missing keys: %v", side.label, err)
	}
	before, beforeErr := processCPU(s.cmd.Process.Pid)
	start := time.Now()
	if _, err := send(); err != nil {
		tb.Fatalf("%s: DELETEs of missing keys: %v", side.label, err)
	}
	rate := float64(objects) / time.Since(start).Seconds()
	after, err := processCPU(s.cmd.Process.Pid)
	if err != nil || beforeErr != nil {
		return rate, -1
	}
	return rate, (after - before) / time.Duration(objects)
}

func (r deleteRun) String() string {
	space := "space back: not reported"
	if r.spaceBack >= 0 {
		space = fmt.Sprintf("gc backlog %d, space back after %s", r.backlog, r.spaceBack.Round(time.Millisecond))
	}
	cpu := "unknown"
	if r.cpuPerDelete >= 0 {
		cpu = r.cpuPerDelete.Round(time.Microsecond).String()
	}
	logs := ""
	if r.logPerDelete != nil {
		logs = fmt.Sprintf("  log/DELETE: %.2f commits, %.2f writes, %.2f flushes",
			r.logPerDelete["commits"], r.logPerDelete["writes"], r.logPerDelete["flushes"])
	}
	return fmt.Sprintf("%-12s clients=%-2d objects=%d  DELETE %7.0f/s  p50 %6s  p99 %7s  server CPU/DELETE %s  client CPU/DELETE %s  (PUT %5.0f/s)  %s%s  no-op DELETE %7.0f/s at %s server CPU  load %s",
		r.side, r.clients, r.objects, r.rate, r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), cpu,
		r.clientCPUPerDelete.Round(time.Microsecond), r.putRate, space, logs, r.noopRate, r.noopCPUPerDelete.Round(time.Microsecond), r.load)
}

// deleteBenchSummary is each side's median DELETE/s per client count over
// the rounds and its ratio to the first side's median, and the same of
// the server's CPU per DELETE, which the machine's noise moves less.
func deleteBenchSummary(runs []deleteRun, sides []deleteBenchSide, clients []int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "median DELETE/s over rounds (ratio to %s):\n", sides[0].label)
	for _, n := range clients {
		base, baseCPU := 0.0, 0.0
		for i, side := range sides {
			var rates, noops, cpus []float64
			for _, r := range runs {
				if r.side == side.label && r.clients == n {
					rates = append(rates, r.rate)
					noops = append(noops, r.noopRate)
					if r.cpuPerDelete >= 0 {
						cpus = append(cpus, float64(r.cpuPerDelete.Microseconds()))
					}
				}
			}
			med, noop, cpu := median(rates), median(noops), median(cpus)
			if i == 0 {
				base, baseCPU = med, cpu
			}
			cpuText := "server CPU/DELETE unknown"
			if cpu > 0 && baseCPU > 0 {
				cpuText = fmt.Sprintf("server CPU/DELETE %4.0fµs  x%.2f", cpu, cpu/baseCPU)
			}
			fmt.Fprintf(&sb, "  clients=%-2d %-12s %7.0f/s  x%.2f  (runs: %.0f)  %s  no-op DELETE %7.0f/s  x%.2f\n",
				n, side.label, med, med/base, rates, cpuText, noop, noop/base)
		}
	}
	fmt.Fprintf(&sb, "load average at the end: %s\n", oracle.LoadAverage())
	return sb.String()
}

// median of xs (0 for none); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// processCPU is the user and system CPU time process pid has used, from
// /proc/PID/stat (utime and stime, the 14th and 15th fields, in clock
// ticks: 100 a second on Linux whatever the kernel's HZ).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: the fields go on after the last ')'.
	end := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[end+1:]))
	if end < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q has too few fields", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	const tick = 10 * time.Millisecond
	return time.Duration(utime+stime) * tick, nil
}

// benchClient sends SigV4-signed requests over kept-alive connections; it
// returns errors instead of failing a test, so its workers may run in
// goroutines.
type benchClient struct {
	url  string
	http *http.Client
}

// benchRequestTimeout ends a request the server never answers, so that a
// server that hangs fails the run instead of holding it until the test
// binary's timeout.
const benchRequestTimeout = 2 * time.Minute

func newBenchClient(url string, conns int) *benchClient {
	return &benchClient{url: url, http: &http.Client{Timeout: benchRequestTimeout, Transport: &http.Transport{
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
	}}}
}

// signed answers a request signed as it is, body and all.
func (c *benchClient) signed(method, pathQuery string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(method, c.url+pathQuery, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	return signer.SignV4(*req, accessKey, secretKey, "", region), nil
}

// do sends one signed request and reads the whole answer.
func (c *benchClient) do(method, pathQuery string, body []byte) (int, []byte, error) {
	req, err := c.signed(method, pathQuery, body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// deleteBenchKey is object i's key: prefixes take turns, so consecutive
// keys land in different directories.
func deleteBenchKey(i int) string {
	return fmt.Sprintf("/%s/p%02d/o%07d", deleteBenchBucket, i%deleteBenchPrefixes, i)
}

// parallel sends method for objects 0..n-1 from workers clients through
// net/http, signing each as it goes (see fanOut).
func (c *benchClient) parallel(workers, n int, method string, body []byte, want int) ([]time.Duration, error) {
	send := func(i int) (int, []byte, error) { return c.do(method, deleteBenchKey(i), body) }
	return fanOut(workers, n, want, func() (requestSender, func()) { return send, func() {} })
}

// A requestSender sends request i and answers its status and body.
type requestSender func(i int) (code int, body []byte, err error)

// fanOut sends requests 0..n-1 from workers goroutines, each sending
// through what start gives it (and calling the stop it gives when done)
// and taking the next request as it finishes one. It answers every
// request's latency; the first request not answered want (or not sent)
// stops it.
func fanOut(workers, n, want int, start func() (requestSender, func())) ([]time.Duration, error) {
	var next atomic.Int64
	var mu sync.Mutex
	var firstErr error
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			send, stop := start()
			defer stop()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t := time.Now()
				code, b, err := send(i)
				lat[i] = time.Since(t)
				if err == nil && code != want {
					err = fmt.Errorf("request %d (%s): %d %s", i, deleteBenchKey(i), code, b)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					next.Store(int64(n)) // the others stop after their request
					return
				}
			}
		}()
	}
	wg.Wait()
	return lat, firstErr
}

// benchInfo is what the benchmark reads of GET /minio/admin/v3/xfs3/info.
type benchInfo struct {
	Volume struct {
		FreeBytes uint64 `json:"free_bytes"`
	} `json:"volume"`
	GC struct {
		Pending uint64 `json:"pending"`
	} `json:"gc"`
}

// info reads the server's info document; ok is false for a server
// without one (a build before it existed answers 501 or 404).
func (c *benchClient) info(tb testing.TB) (in benchInfo, ok bool) {
	tb.Helper()
	code, body, err := c.do("GET", "/minio/admin/v3/xfs3/info", nil)
	switch {
	case err != nil:
		tb.Fatalf("info: %v", err)
	case code == http.StatusNotImplemented || code == http.StatusNotFound:
		return in, false
	case code != http.StatusOK:
		tb.Fatalf("info: %d %s", code, body)
	}
	if err := json.Unmarshal(body, &in); err != nil {
		tb.Fatalf("info: %v: %s", err, body)
	}
	return in, true
}

// logCounters reads the log's counters (xfs3_log_NAME_total, by NAME)
// from the server's metrics, or answers nil for a server without them.
// A scrape drains the gc queues, as a statfs does.
func (c *benchClient) logCounters(tb testing.TB) map[string]float64 {
	tb.Helper()
	code, body, err := c.do("GET", "/minio/metrics/v3", nil)
	switch {
	case err != nil:
		tb.Fatalf("metrics: %v", err)
	case code == http.StatusNotFound:
		return nil
	case code != http.StatusOK:
		tb.Fatalf("metrics: %d %s", code, body)
	}
	counters := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		series, value, ok := strings.Cut(line, " ")
		name, found := strings.CutPrefix(series, "xfs3_log_")
		if !ok || !found || !strings.HasSuffix(name, "_total") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			tb.Fatalf("metrics: %q: %v", line, err)
		}
		counters[strings.TrimSuffix(name, "_total")] = v
	}
	for _, name := range []string{"commits", "writes", "flushes"} {
		if _, ok := counters[name]; !ok {
			tb.Fatalf("metrics: no xfs3_log_%s_total in\n%s", name, body)
		}
	}
	return counters
}

// waitSpaceBack asks for the info document until its free bytes reach
// wantFree, and answers the gc backlog of the first answer and the time
// from since to the answer that shows the space.
func (c *benchClient) waitSpaceBack(tb testing.TB, since time.Time, wantFree uint64) (int64, time.Duration) {
	tb.Helper()
	backlog := int64(-1)
	for {
		in, _ := c.info(tb)
		if backlog < 0 {
			backlog = int64(in.GC.Pending)
		}
		if in.Volume.FreeBytes >= wantFree {
			return backlog, time.Since(since)
		}
		if time.Since(since) > spaceBackTimeout {
			tb.Fatalf("the deleted objects' space is not free after %s", spaceBackTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRoundOrder: over as many rounds as sides, every side runs once in
// every place.
func TestRoundOrder(t *testing.T) {
	const n = 3
	seen := make([][n]int, n) // seen[side][place]
	for r := range n {
		order := roundOrder(n, r)
		if len(order) != n {
			t.Fatalf("round %d: order %v", r, order)
		}
		for place, side := range order {
			seen[side][place]++
		}
	}
	for side, places := range seen {
		if places != [n]int{1, 1, 1} {
			t.Errorf("side %d ran in places %v over %d rounds", side, places, n)
		}
	}
}
