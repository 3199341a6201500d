package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xfs3/xfs3/xfs/oracle"
	"golang.org/x/sys/unix"
)

// A benchmark's clients run in this process, on the same cores as the
// server it drives unless told otherwise: on a small machine they then
// take a share of the CPU that the server under test would have, and cap
// the rate that any server can show. Pinning the server to some CPUs and
// this process to the others measures the server alone.

// parseCPUList parses a Linux CPU list such as "1", "0,2" or "2-3".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err := strconv.Atoi(lo)
		last := first
		if err == nil && isRange {
			last, err = strconv.Atoi(hi)
		}
		if err != nil || first < 0 || last < first {
			return nil, fmt.Errorf("%q is not a CPU list (like 1 or 0,2 or 2-3)", s)
		}
		for c := first; c <= last; c++ {
			if !slices.Contains(cpus, c) {
				cpus = append(cpus, c)
			}
		}
	}
	slices.Sort(cpus)
	return cpus, nil
}

// cpuListString is the CPU list's text, as taskset takes it.
func cpuListString(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// cpuSetOf is the set of cpus.
func cpuSetOf(cpus []int) unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return set
}

// cpusOf lists the CPUs in set.
func cpusOf(set unix.CPUSet) []int {
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// pinSelf restricts every thread of this process to cpus and sets
// GOMAXPROCS to their number; undo puts back the mask, and GOMAXPROCS as
// it was. It goes back to the runtime's default (the environment's value,
// or one that follows the CPUs the process may use) when that is the old
// value, and is set explicitly otherwise (go test -cpu). Threads the runtime
// starts later inherit the mask of the thread that starts them, so the
// threads are walked until a walk finds every one pinned already.
func pinSelf(cpus []int) (undo func() error, err error) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	procs := runtime.GOMAXPROCS(0)
	if err := pinThreads(cpuSetOf(cpus)); err != nil {
		return nil, err
	}
	runtime.GOMAXPROCS(len(cpus))
	return func() error {
		err := pinThreads(before)
		restoreGOMAXPROCS(procs)
		return err
	}, nil
}

// restoreGOMAXPROCS sets GOMAXPROCS back to procs: as the runtime's
// default when that is procs, so that it keeps following the CPUs the
// process may use, and explicitly otherwise.
func restoreGOMAXPROCS(procs int) {
	runtime.SetDefaultGOMAXPROCS()
	if runtime.GOMAXPROCS(0) != procs {
		runtime.GOMAXPROCS(procs)
	}
}

func pinThreads(set unix.CPUSet) error {
	for walk := 0; walk < 100; walk++ {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		changed := false
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			var cur unix.CPUSet
			if err := unix.SchedGetaffinity(tid, &cur); err != nil {
				continue // the thread has exited
			}
			if cur == set {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("sched_setaffinity of thread %d to CPUs %v: %w", tid, cpusOf(set), err)
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return fmt.Errorf("the threads of this process kept changing while pinning them to CPUs %v", cpusOf(set))
}

// splitCPUs checks that the server's CPUs are among the ones this
// process may use and answers the rest, for the clients.
func splitCPUs(server []int) (clients []int, err error) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	for _, c := range server {
		if !allowed.IsSet(c) {
			return nil, fmt.Errorf("CPU %d is not among the CPUs this process may use (%v)", c, cpusOf(allowed))
		}
		allowed.Clear(c)
	}
	if allowed.Count() == 0 {
		return nil, fmt.Errorf("no CPU is left for the clients beside the server's %v", server)
	}
	return cpusOf(allowed), nil
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{"1": {1}, "0,2": {0, 2}, "2-3": {2, 3}, "3,0-1,1": {0, 1, 3}} {
		if got, err := parseCPUList(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got, _ := parseCPUList(in); cpuListString(got) != cpuListString(want) {
			t.Errorf("cpuListString of %q: %q", in, cpuListString(got))
		}
	}
	for _, bad := range []string{"", "a", "-1", "3-1", "1,", "1-"} {
		if got, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) = %v, accepted", bad, got)
		}
	}
}

// TestPinSelf: every thread of the process ends on the CPUs asked for,
// GOMAXPROCS follows, and undo puts both back, a GOMAXPROCS set
// explicitly (as go test -cpu does) included.
func TestPinSelf(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	last := cpusOf(before)[before.Count()-1]
	if _, err := splitCPUs([]int{last + 1}); err == nil {
		t.Errorf("a CPU outside the process's mask was accepted for the server")
	}
	if _, err := splitCPUs(cpusOf(before)); err == nil {
		t.Errorf("every CPU was given to the server, none left for the clients")
	}
	undo, err := pinSelf([]int{last})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		var cur unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &cur); err == nil && !slices.Equal(cpusOf(cur), []int{last}) {
			t.Errorf("thread %d runs on CPUs %v after pinning to %d", tid, cpusOf(cur), last)
		}
	}
	if runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("GOMAXPROCS %d after pinning to one CPU", runtime.GOMAXPROCS(0))
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != before || runtime.GOMAXPROCS(0) != procs {
		t.Errorf("after undo: CPUs %v (want %v), GOMAXPROCS %d (want %d), %v", cpusOf(after), cpusOf(before), runtime.GOMAXPROCS(0), procs, err)
	}

	explicit := procs + 1
	runtime.GOMAXPROCS(explicit)
	defer restoreGOMAXPROCS(procs)
	if undo, err = pinSelf([]int{last}); err != nil {
		t.Fatal(err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != explicit {
		t.Errorf("after undo: GOMAXPROCS %d, want the %d set explicitly before pinning", got, explicit)
	}
}

// TestPinnedServer: a server started on a CPU list runs on those CPUs
// only, under its own process ID (taskset execs it, so the benchmark's
// CPU accounting of that PID is the server's), and serves.
func TestPinnedServer(t *testing.T) {
	oracle.Require(t, "taskset")
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	all := cpusOf(allowed)
	want := all[len(all)-1:]
	s := startPinnedBinaryOn(t, want, binary, filepath.Join(t.TempDir(), "volume.xfs"), "1G")
	pid := s.cmd.Process.Pid
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &got); err != nil || !slices.Equal(cpusOf(got), want) {
		t.Errorf("server runs on CPUs %v (%v), want %v", cpusOf(got), err, want)
	}
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(comm)) != filepath.Base(binary) {
		t.Errorf("process %d is %q (%v), not the server", pid, comm, err)
	}
	c := newBenchClient(s.URL, 1)
	defer c.http.CloseIdleConnections()
	if code, body, err := c.do("PUT", "/pinned", nil); err != nil || code != http.StatusOK {
		t.Errorf("create bucket on the pinned server: %d %v %s", code, err, body)
	}
	s.stop(t)
}
