package integration

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/xfs/mkfs"
	"github.com/xfs3/xfs3/xfs/oracle"
)

// BenchmarkHTTPEdgeCPU measures what a request costs a server, through the
// real binary on loopback: each side in turn (the order rotating from
// round to round) serves a fresh 8 GiB volume, and this checkout's `xfs3
// bench` drives it with 4 KiB objects at each client count, reading the
// server's CPU per operation from /proc and, for servers with a profiling
// listener, its split into edge, store and runtime. It prints every run's
// table and, at the end, each side's medians and their ratios to the
// first side's.
//
//	XFS3_BENCH_BINARIES=before=/path/xfs3-old,after=/path/xfs3-new \
//	  go test -run '^$' -bench HTTPEdgeCPU -benchtime 1x -timeout 2h ./integration/
//
// XFS3_BENCH_BINARIES defaults to this checkout's binary; servers log as
// by default (a console line per request). XFS3_BENCH_CLIENTS (default
// 1,8,32), XFS3_BENCH_ROUNDS (default 3) and XFS3_BENCH_PHASE (default 4s)
// shape the schedule. XFS3_BENCH_WITHIN1S=1 adds each binary again with
// --durability within-1s. XFS3_BENCH_PROFILES=0 profiles no side (for a
// fair CPU comparison with a build that has no profiling listener; the
// profiles cost the profiled side a little CPU). XFS3_BENCH_PEER=/path/versitygw adds versitygw's
// posix backend on a kernel XFS loop mount of a fresh volume of the same
// size (it never syncs and logs no requests), the peer issue 50 names.
func BenchmarkHTTPEdgeCPU(b *testing.B) {
	cfg, err := edgeBenchConfigFrom(os.Getenv, binary)
	if err != nil {
		b.Fatal(err)
	}
	var runs []edgeRun
	for range b.N {
		for round := range cfg.rounds {
			for _, i := range roundOrder(len(cfg.sides), round) {
				side := cfg.sides[i]
				rep := runEdgeBench(b, side, cfg)
				for _, p := range rep.Phases {
					runs = append(runs, edgeRun{side: side.label, phase: p})
				}
			}
		}
	}
	fmt.Print(edgeBenchSummary(runs, cfg.sides))
}

// edgeSide is one server of the comparison.
type edgeSide struct {
	label string
	bin   string   // xfs3, or versitygw when peer
	flags []string // serve flags beyond the volume and address
	peer  bool
}

type edgeBenchConfig struct {
	sides   []edgeSide
	clients []int
	rounds  int
	phase   time.Duration
	// noProfiles: no side is profiled, so that every side's CPU is
	// measured alike against a build without the profiling listener.
	noProfiles bool
}

func edgeBenchConfigFrom(getenv func(string) string, self string) (edgeBenchConfig, error) {
	c := edgeBenchConfig{phase: 4 * time.Second}
	binaries := []namedBinary{{"this", self}}
	var err error
	if spec := getenv("XFS3_BENCH_BINARIES"); spec != "" {
		if binaries, err = parseNamedBinaries(spec); err != nil {
			return c, fmt.Errorf("XFS3_BENCH_BINARIES: %w", err)
		}
	}
	for _, nb := range binaries {
		c.sides = append(c.sides, edgeSide{label: nb.label, bin: nb.path})
	}
	c.noProfiles = getenv("XFS3_BENCH_PROFILES") == "0"
	if getenv("XFS3_BENCH_WITHIN1S") == "1" {
		for _, nb := range binaries {
			c.sides = append(c.sides, edgeSide{label: nb.label + "/within-1s", bin: nb.path, flags: []string{"--durability", "within-1s"}})
		}
	}
	if peer := getenv("XFS3_BENCH_PEER"); peer != "" {
		c.sides = append(c.sides, edgeSide{label: "versitygw", bin: peer, peer: true})
	}
	if c.clients, err = positiveInts(getenv("XFS3_BENCH_CLIENTS"), []int{1, 8, 32}); err != nil {
		return c, fmt.Errorf("XFS3_BENCH_CLIENTS: %w", err)
	}
	rounds, err := positiveInts(getenv("XFS3_BENCH_ROUNDS"), []int{3})
	if err != nil || len(rounds) != 1 {
		return c, fmt.Errorf("XFS3_BENCH_ROUNDS: want one positive count (%v)", err)
	}
	c.rounds = rounds[0]
	if s := getenv("XFS3_BENCH_PHASE"); s != "" {
		if c.phase, err = time.ParseDuration(s); err != nil || c.phase < time.Second {
			return c, fmt.Errorf("XFS3_BENCH_PHASE: want a duration of a second or more, not %q", s)
		}
	}
	return c, nil
}

// edgeReport is the part of `xfs3 bench --json` the summary reads.
type edgeReport struct {
	Phases []edgePhase `json:"phases"`
}

type edgePhase struct {
	Op          string   `json:"op"`
	Concurrency int      `json:"concurrency"`
	OpsPerSec   float64  `json:"ops_per_s"`
	Errors      int64    `json:"errors"`
	Server      *float64 `json:"server_cpu_us_per_op"`
	Edge        *float64 `json:"edge_cpu_us_per_op"`
	Store       *float64 `json:"store_cpu_us_per_op"`
	Runtime     *float64 `json:"runtime_cpu_us_per_op"`
}

// edgeRun is one phase of one side's run.
type edgeRun struct {
	side  string
	phase edgePhase
}

// runEdgeBench starts side on a fresh volume, runs `xfs3 bench` against
// it and stops it.
func runEdgeBench(tb testing.TB, side edgeSide, cfg edgeBenchConfig) edgeReport {
	tb.Helper()
	dir := tb.TempDir()
	const size = "8G"
	var s *server
	var profile string
	switch {
	case side.peer:
		s = startPeer(tb, side.bin, dir)
	default:
		flags := side.flags
		if !cfg.noProfiles && servesProfiles(tb, side.bin) {
			addr := freeLoopbackAddr(tb)
			flags = append(slices.Clip(flags), "--debug-listen", addr)
			profile = "http://" + addr
		}
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--volume", filepath.Join(dir, "volume.xfs"), "--size", size}, flags...)
		cmd := exec.Command(side.bin, args...)
		cmd.Env = binaryEnv()
		s = startCommand(tb, filepath.Join(dir, "volume.xfs"), cmd)
	}
	var conc []string
	for _, c := range cfg.clients {
		conc = append(conc, fmt.Sprint(c))
	}
	args := []string{"bench", "--endpoint", s.URL, "--sizes", "4KiB", "--concurrency", strings.Join(conc, ","),
		"--duration", cfg.phase.String(), "--big", "0", "--json", "--server-pid", fmt.Sprint(s.cmd.Process.Pid)}
	if profile != "" {
		args = append(args, "--server-profile", profile)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = binaryEnv()
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s: xfs3 bench: %v\n%s", side.label, err, out)
	}
	var rep edgeReport
	if err := json.Unmarshal(out, &rep); err != nil {
		tb.Fatalf("%s: bench output: %v\n%s", side.label, err, out)
	}
	for _, p := range rep.Phases {
		fmt.Printf("%-14s %-6s c%-3d %9.0f ops/s  srv %s  edge %s  store %s  rt %s µs/op\n", side.label, p.Op, p.Concurrency,
			p.OpsPerSec, edgeUs(p.Server), edgeUs(p.Edge), edgeUs(p.Store), edgeUs(p.Runtime))
		if p.Errors > 0 {
			tb.Errorf("%s: %s c%d: %d errors", side.label, p.Op, p.Concurrency, p.Errors)
		}
	}
	if side.peer {
		s.cmd.Process.Kill()
		<-s.done
	} else {
		s.stop(tb)
	}
	return rep
}

// servesProfiles reports whether the xfs3 binary at bin knows
// --debug-listen (builds before it do not).
func servesProfiles(tb testing.TB, bin string) bool {
	out, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	return strings.Contains(string(out), "--debug-listen")
}

// startPeer formats a volume, mounts it with the kernel and serves it with
// versitygw's posix backend (the test servers' credentials).
func startPeer(tb testing.TB, bin, dir string) *server {
	tb.Helper()
	oracle.Require(tb, oracle.ToolMount)
	img := filepath.Join(dir, "peer.xfs")
	if _, err := mkfs.Format(img, mkfs.Options{Size: 8 << 30}); err != nil {
		tb.Fatal(err)
	}
	root := filepath.Join(oracle.Mount(tb, img, false), "gw")
	if err := os.Mkdir(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	addr := freeLoopbackAddr(tb)
	cmd := exec.Command(bin, "--access", accessKey, "--secret", secretKey, "--port", addr, "posix", root)
	s := &server{URL: "http://" + addr, Host: addr, logs: &lockedBuffer{}, done: make(chan error, 1), cmd: cmd}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	tb.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.done
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return s
		}
		if time.Now().After(deadline) {
			tb.Fatalf("versitygw did not listen on %s in 30 s:\n%s", addr, s.logs.tail(4<<10))
		}
	}
}

func edgeUs(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", *v)
}

// edgeBenchSummary gives, per phase and client count, each side's medians
// over its rounds: ops/s and µs of server CPU per operation (whole, edge,
// store, runtime), with the ratios of ops/s, server CPU and edge CPU to
// the first side's.
func edgeBenchSummary(runs []edgeRun, sides []edgeSide) string {
	type key struct {
		side, op string
		conc     int
	}
	by := map[key][]edgePhase{}
	var ops []string
	var concs []int
	for _, r := range runs {
		k := key{r.side, r.phase.Op, r.phase.Concurrency}
		by[k] = append(by[k], r.phase)
		if !slices.Contains(ops, r.phase.Op) {
			ops = append(ops, r.phase.Op)
		}
		if !slices.Contains(concs, r.phase.Concurrency) {
			concs = append(concs, r.phase.Concurrency)
		}
	}
	med := func(ps []edgePhase, f func(edgePhase) *float64) (float64, bool) {
		var xs []float64
		for _, p := range ps {
			if v := f(p); v != nil {
				xs = append(xs, *v)
			}
		}
		if len(xs) == 0 {
			return 0, false
		}
		return median(xs), true
	}
	rate := func(p edgePhase) *float64 { return &p.OpsPerSec }
	srv := func(p edgePhase) *float64 { return p.Server }
	edge := func(p edgePhase) *float64 { return p.Edge }
	cell := func(v float64, ok bool) string {
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%.0f", v)
	}
	ratio := func(a float64, aok bool, b float64, bok bool) string {
		if !aok || !bok || b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nmedians (µs of server CPU per operation); ratios to %s\n", sides[0].label)
	fmt.Fprintf(&sb, "%-14s %-6s %4s %9s %7s %7s %7s %5s %7s %7s %7s\n", "side", "op", "conc", "ops/s", "srv", "edge", "store", "rt", "ops×", "srv×", "edge×")
	for _, op := range ops {
		for _, c := range concs {
			first := by[key{sides[0].label, op, c}]
			r0, r0ok := med(first, rate)
			s0, s0ok := med(first, srv)
			e0, e0ok := med(first, edge)
			for _, side := range sides {
				ps := by[key{side.label, op, c}]
				if len(ps) == 0 {
					continue
				}
				r, rok := med(ps, rate)
				sv, sok := med(ps, srv)
				e, eok := med(ps, edge)
				st, stok := med(ps, func(p edgePhase) *float64 { return p.Store })
				rt, rtok := med(ps, func(p edgePhase) *float64 { return p.Runtime })
				fmt.Fprintf(&sb, "%-14s %-6s %4d %9s %7s %7s %7s %5s %7s %7s %7s\n", side.label, op, c,
					cell(r, rok), cell(sv, sok), cell(e, eok), cell(st, stok), cell(rt, rtok),
					ratio(r, rok, r0, r0ok), ratio(sv, sok, s0, s0ok), ratio(e, eok, e0, e0ok))
			}
		}
	}
	return sb.String()
}

// TestEdgeBenchConfig: the sides and schedule the environment asks for.
func TestEdgeBenchConfig(t *testing.T) {
	env := map[string]string{
		"XFS3_BENCH_BINARIES": "old=/a,new=/b", "XFS3_BENCH_WITHIN1S": "1", "XFS3_BENCH_PEER": "/v",
		"XFS3_BENCH_CLIENTS": "8", "XFS3_BENCH_ROUNDS": "2", "XFS3_BENCH_PHASE": "2s", "XFS3_BENCH_PROFILES": "0",
	}
	c, err := edgeBenchConfigFrom(func(k string) string { return env[k] }, "/self")
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, s := range c.sides {
		labels = append(labels, s.label)
	}
	if want := []string{"old", "new", "old/within-1s", "new/within-1s", "versitygw"}; !slices.Equal(labels, want) ||
		!slices.Equal(c.clients, []int{8}) || c.rounds != 2 || c.phase != 2*time.Second || !c.sides[4].peer ||
		!slices.Equal(c.sides[3].flags, []string{"--durability", "within-1s"}) || !c.noProfiles {
		t.Fatalf("config %+v", c)
	}
	if c, err := edgeBenchConfigFrom(func(string) string { return "" }, "/self"); err != nil || len(c.sides) != 1 ||
		c.sides[0].bin != "/self" || c.noProfiles || c.rounds != 3 || c.phase != 4*time.Second || !slices.Equal(c.clients, []int{1, 8, 32}) {
		t.Fatalf("defaults %+v, %v", c, err)
	}
	for _, bad := range []map[string]string{{"XFS3_BENCH_PHASE": "10ms"}, {"XFS3_BENCH_ROUNDS": "1,2"}, {"XFS3_BENCH_BINARIES": "x"}} {
		if _, err := edgeBenchConfigFrom(func(k string) string { return bad[k] }, "/self"); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestEdgeBenchSummary: medians per side and their ratios to the first
// side's, "-" where a side has no split.
func TestEdgeBenchSummary(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	phase := func(rate, srv float64, edge *float64) edgePhase {
		return edgePhase{Op: "GET", Concurrency: 8, OpsPerSec: rate, Server: f(srv), Edge: edge, Store: f(srv / 4), Runtime: f(1)}
	}
	runs := []edgeRun{
		{"old", phase(1000, 200, f(150))}, {"old", phase(3000, 100, f(50))}, {"old", phase(2000, 150, f(100))},
		{"new", phase(4000, 75, f(50))}, {"new", phase(4000, 75, nil)},
	}
	got := edgeBenchSummary(runs, []edgeSide{{label: "old"}, {label: "new"}})
	for _, want := range []string{
		"old            GET       8      2000     150     100      38     1    1.00    1.00    1.00",
		"new            GET       8      4000      75      50      19     1    2.00    0.50    0.50",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}
