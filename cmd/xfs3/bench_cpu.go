package main

// CPU per operation (--server-pid, --server-profile). Around each phase:
//
//	before             the phase                          after
//	/proc/PID/stat     ─────── runPhase ───────────────   /proc/PID/stat   → server CPU
//	getrusage(self)                                       getrusage(self)  → generator CPU
//	                   GET /debug/pprof/profile?seconds=N                  → store/edge shares
//
// The server's CPU time is exact (to the clock tick) over the whole
// phase; the profiles taken meanwhile only say how it divides between
// the store and the edge, and that share scales the measured time.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// phaseCPU is the CPU a phase cost, measured with --server-pid.
type phaseCPU struct {
	server    time.Duration // the server process's user and system time
	generator time.Duration // this process's: the load generator
	serverErr error         // the server's CPU time could not be read

	// split divides the CPU of the profiles taken during the phase,
	// which covered profiled of its wall time (zero: none finished,
	// the phase was too short, or --server-profile is not given).
	split      cpuSplit
	profiled   time.Duration
	profileErr error
}

// cpuSplit is CPU time divided between the store, the edge and the Go
// runtime's own goroutines.
type cpuSplit struct {
	store, edge, runtime time.Duration
}

func (s cpuSplit) total() time.Duration { return s.store + s.edge + s.runtime }

// share is d's part of the total, 0 when there is none.
func (s cpuSplit) share(d time.Duration) float64 {
	if s.total() <= 0 {
		return 0
	}
	return float64(d) / float64(s.total())
}

func (s cpuSplit) storeShare() float64 { return s.share(s.store) }

// The store side of a profile: these packages, everything below them
// but store/checksum, and their background workers (inode gc, trim,
// lifecycle, scrub, the XFS log's writer). store/checksum computes the
// checksums a client asks of an upload as s3api reads it: the edge's,
// with net/http, s3api and the request log's writer (this command's).
const (
	storePkg  = "github.com/xfs3/xfs3/store"
	gcPkg     = "github.com/xfs3/xfs3/gc"
	enginePkg = "github.com/xfs3/xfs3/xfs"
)

// isStoreFunc reports whether the function named fn, as profiles name
// them ("github.com/xfs3/xfs3/store.(*Store).Put.func1"), is the store's.
func isStoreFunc(fn string) bool {
	pkg := funcPackage(fn)
	under := func(root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }
	return under(storePkg) && pkg != storePkg+"/checksum" || under(gcPkg) || under(enginePkg)
}

// funcPackage is the import path of the function named fn: up to the
// first dot after the last slash, type arguments ("F[...]", which may
// hold paths of their own) left out.
func funcPackage(fn string) string {
	if i := strings.IndexByte(fn, '['); i >= 0 {
		fn = fn[:i]
	}
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

// splitProfile divides a CPU profile's time by who asked for the work a
// sample caught: the innermost function of this module on its stack
// (inlined ones included) decides, the store's when it is in package
// store, gc, xfs or below xfs, the edge's otherwise. So an upload's body
// read and its signature check are the edge's even though the store's
// writer pulls them, and the MD5 the store takes of the same bytes is
// the store's. A sample with no function of this module is the
// runtime's when every frame is the Go runtime's own (the collector's
// background workers, the sweeper, the scheduler looking for work),
// which serve store and edge alike, and the edge's otherwise (net/http
// reading a request, a sample without a stack).
func splitProfile(p *profile.Profile) (cpuSplit, error) {
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	if vi < 0 {
		return cpuSplit{}, errors.New("not a CPU profile: no cpu/nanoseconds values")
	}
	var s cpuSplit
	for _, smp := range p.Sample {
		if vi >= len(smp.Value) {
			return cpuSplit{}, fmt.Errorf("a sample has %d values, want %d", len(smp.Value), len(p.SampleType))
		}
		d := time.Duration(smp.Value[vi])
		store, ours := sampleInStore(smp)
		switch {
		case store:
			s.store += d
		case !ours && sampleInRuntime(smp):
			s.runtime += d
		default:
			s.edge += d
		}
	}
	return s, nil
}

// sampleInStore reports whether the innermost function of this module
// on the sample's stack is the store's; the bool is false when there is
// none.
func sampleInStore(smp *profile.Sample) (store, found bool) {
	for _, loc := range smp.Location { // innermost first
		for _, ln := range loc.Line { // inlined: innermost first
			if ln.Function != nil && strings.HasPrefix(ln.Function.Name, modulePrefix) {
				return isStoreFunc(ln.Function.Name), true
			}
		}
	}
	return false, false
}

// modulePrefix starts the names of this module's functions.
const modulePrefix = "github.com/xfs3/xfs3/"

// sampleInRuntime reports whether every frame of the sample's stack is
// in the Go runtime; an allocation's assist to the collector, inside an
// edge or store frame, stays with that frame.
func sampleInRuntime(smp *profile.Sample) bool {
	if len(smp.Location) == 0 {
		return false
	}
	for _, loc := range smp.Location {
		for _, ln := range loc.Line {
			if ln.Function == nil {
				return false
			}
			switch pkg := funcPackage(ln.Function.Name); {
			case pkg == "runtime", strings.HasPrefix(pkg, "runtime/"), strings.HasPrefix(pkg, "internal/runtime/"),
				pkg == "gcWriteBarrier", pkg == "aeshashbody", pkg == "memeqbody":
			default:
				return false
			}
		}
	}
	return true
}

// parseProcStat returns utime + stime, fields 14 and 15 of
// /proc/PID/stat, in clock ticks. Field 2, the command in parentheses,
// may itself hold spaces and parentheses, so fields are counted from the
// last ')'.
func parseProcStat(data []byte) (int64, error) {
	s := string(data)
	paren := strings.LastIndexByte(s, ')')
	if paren < 0 {
		return 0, errors.New("stat: no command field")
	}
	f := strings.Fields(s[paren+1:]) // f[0] is field 3, the state
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, fmt.Errorf("stat: %d fields, want %d or more", len(f)+2, stime+3)
	}
	u, err := strconv.ParseInt(f[utime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat: utime: %w", err)
	}
	st, err := strconv.ParseInt(f[stime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat: stime: %w", err)
	}
	return u + st, nil
}

// ticksDuration converts clock ticks at hz a second to a duration.
func ticksDuration(ticks, hz int64) time.Duration {
	return time.Duration(ticks) * time.Second / time.Duration(hz)
}

// measuredPhase is runPhase with, under --server-pid, the CPU the server
// and this process spent meanwhile and, under --server-profile, its
// split between store and edge.
func (b *bencher) measuredPhase(ctx context.Context, clients int, lim phaseLimit, op opFunc) phaseStats {
	if b.o.serverPID == 0 {
		return runPhase(ctx, clients, lim, op)
	}
	cpu := &phaseCPU{}
	srv0, err0 := processCPU(b.o.serverPID)
	gen0, _ := selfCPU() // checked in setup
	var prof *profiler
	if b.o.serverProfile != nil {
		prof = b.startProfiler(ctx, lim)
	}
	st := runPhase(ctx, clients, lim, op)
	srv1, err1 := processCPU(b.o.serverPID)
	gen1, _ := selfCPU()
	if prof != nil {
		cpu.split, cpu.profiled, cpu.profileErr = prof.stop()
	}
	cpu.serverErr = cmp.Or(err0, err1)
	if cpu.serverErr == nil {
		cpu.server = max(srv1-srv0, 0)
	}
	cpu.generator = max(gen1-gen0, 0)
	st.cpu = cpu
	return st
}

// profileMargin is what a profile leaves of a phase of known length,
// so that it ends inside the phase: the request's way there and back.
const profileMargin = 250 * time.Millisecond

// profileOverrun bounds the wait, after a phase of known length, for its
// profile: one late by more than that is given up.
const profileOverrun = 5 * time.Second

// profileBusyTries bounds the retries while the server is still ending
// the previous phase's profile, which it does only once it notices that
// request was given up.
const profileBusyTries = 40

// profiler takes CPU profiles of the server while a phase runs.
type profiler struct {
	cancel context.CancelFunc
	done   chan struct{}
	sized  bool // the profile was sized to the phase's known length
	// Written by the profiling goroutine, read after done is closed.
	split    cpuSplit
	profiled time.Duration
	err      error
}

// startProfiler profiles the server while a phase limited by lim runs.
// A phase of known length gets one profile of its whole seconds less
// profileMargin, which ends inside it; one that ends after a count of
// operations (DELETE, --ops) gets back-to-back 1-second profiles, and
// the one under way when it ends is dropped, so no profile reaches past
// the phase.
func (b *bencher) startProfiler(ctx context.Context, lim phaseLimit) *profiler {
	pctx, cancel := context.WithCancel(ctx)
	p := &profiler{cancel: cancel, done: make(chan struct{}), sized: lim.ops <= 0}
	var end time.Time
	if p.sized {
		end = time.Now().Add(lim.d)
	}
	go func() {
		defer close(p.done)
		busy := 0
		for {
			secs := 1
			if !end.IsZero() {
				secs = int((time.Until(end) - profileMargin) / time.Second)
			}
			if secs < 1 {
				return
			}
			prof, err := fetchProfile(pctx, b.o.serverProfile, secs)
			switch {
			case pctx.Err() != nil:
				return // the phase ended during this one
			case errors.Is(err, errProfilerBusy) && busy < profileBusyTries:
				busy++
				time.Sleep(25 * time.Millisecond)
				continue
			case err != nil:
				p.err = err
				return
			}
			s, err := splitProfile(prof)
			if err != nil {
				p.err = err
				return
			}
			p.split.store += s.store
			p.split.edge += s.edge
			p.split.runtime += s.runtime
			p.profiled += time.Duration(secs) * time.Second
		}
	}()
	return p
}

// stop returns what the profiles found once the phase has ended. A
// profile sized to the phase is waited for, should its answer come late;
// one of a phase that ended after a count is given up.
func (p *profiler) stop() (cpuSplit, time.Duration, error) {
	if p.sized {
		select {
		case <-p.done:
		case <-time.After(profileOverrun):
		}
	}
	p.cancel()
	<-p.done
	return p.split, p.profiled, p.err
}

// errProfilerBusy is the server's answer while another CPU profile runs.
var errProfilerBusy = errors.New("the server is taking another CPU profile")

// profileClient fetches profiles; a request lasts as long as its
// context, which the profile's length bounds.
var profileClient = &http.Client{}

// fetchProfile takes a CPU profile of secs seconds from the debug
// listener at base.
func fetchProfile(ctx context.Context, base *url.URL, secs int) (*profile.Profile, error) {
	u := base.JoinPath("/debug/pprof/profile")
	u.RawQuery = "seconds=" + strconv.Itoa(secs)
	resp, err := getURL(ctx, u.String())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode == http.StatusInternalServerError && strings.Contains(string(msg), "already in use") {
			return nil, errProfilerBusy
		}
		return nil, fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(msg)))
	}
	p, err := profile.Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return p, nil
}

func getURL(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return profileClient.Do(req)
}

// setupCPU checks, before anything is measured, that the server's CPU
// time can be read and its profiles fetched.
func (b *bencher) setupCPU(ctx context.Context) error {
	if b.o.serverPID == 0 {
		return nil
	}
	if _, err := processCPU(b.o.serverPID); err != nil {
		return fmt.Errorf("--server-pid %d: %w", b.o.serverPID, err)
	}
	if _, err := selfCPU(); err != nil {
		return fmt.Errorf("CPU time of this process: %w", err)
	}
	if b.o.serverProfile == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.o.setupTimeout)
	defer cancel()
	u := b.o.serverProfile.JoinPath("/debug/pprof/").String()
	resp, err := getURL(ctx, u)
	if err != nil {
		return fmt.Errorf("--server-profile: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("--server-profile: %s: %s (is the server started with --debug-listen?)", u, resp.Status)
	}
	return nil
}

// failures counts what could not be measured, for the exit status: the
// server's CPU time or its split (nil: nothing was asked).
func (c *phaseCPU) failures() int64 {
	if c == nil {
		return 0
	}
	var n int64
	if c.serverErr != nil {
		n++
	}
	if c.profileErr != nil {
		n++
	}
	return n
}
