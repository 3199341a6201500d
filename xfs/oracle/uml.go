package oracle

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// UMLConfig describes one boot of the user-mode Linux kernel (see the
// package doc for the boot line and its quirks). The zero value is ready
// to use.
type UMLConfig struct {
	// MemoryMiB is the guest's memory (UML's mem= option); 0 means 256.
	// The memory is a sparse file in /dev/shm (or $TMPDIR): only the
	// pages the guest touches cost anything.
	MemoryMiB int
	// Timeout bounds the whole run, from starting the kernel to its
	// power-off; 0 means 2 minutes. It is shortened to end before the
	// test's own deadline. On expiry every process of the run is killed
	// and the test fails with the tail of the console.
	Timeout time.Duration
	// ReadOnly attaches the image read-only (ubd0r=): the guest can
	// mount it with -o ro (and norecovery if its log is dirty).
	ReadOnly bool
}

// UMLResult is what one run of a script inside user-mode Linux left.
type UMLResult struct {
	// Output is the script's standard output and standard error,
	// interleaved in the order they were written.
	Output string
	// Status is the script's exit status.
	Status int
	// Console is everything the kernel printed: the boot log and the
	// kernel messages of the run (XFS mount notices, quotacheck, errors).
	Console string
	// Elapsed is the wall time from starting the kernel to its exit.
	Elapsed time.Duration
}

// Defaults of UMLConfig.
const (
	umlDefaultMemoryMiB = 256
	umlDefaultTimeout   = 2 * time.Minute
	// umlDeadlineMargin is kept free before the test's deadline, so
	// that the harness, not the test binary's panic, reports a timeout.
	umlDeadlineMargin = 10 * time.Second
	// umlConsoleTail is how many console lines a failure shows.
	umlConsoleTail = 40
)

// UML boots the quota-enabled user-mode Linux kernel with img attached as
// /dev/ubda, runs script inside as root (see UMLConfig.Run), and returns
// the script's output. The test fails, showing the output and the tail of
// the console, unless the script exits 0.
func UML(t testing.TB, img, script string) string {
	t.Helper()
	return UMLConfig{}.Output(t, img, script)
}

// Output is like Run but fails the test unless the script exits 0, and
// returns only the script's output.
func (c UMLConfig) Output(t testing.TB, img, script string) string {
	t.Helper()
	r := c.Run(t, img, script)
	if r.Status != 0 {
		t.Fatalf("script in user-mode Linux exited with status %d\noutput:\n%s\nconsole tail:\n%s",
			r.Status, r.Output, lastLines(r.Console, umlConsoleTail))
	}
	return r.Output
}

// Run boots user-mode Linux with the image file img as its only block
// device and runs script with "/bin/sh -e" as root inside. The guest's
// root file system is the host's, through hostfs, so host tools (xfsprogs)
// are there under the same paths. The script starts in an empty scratch
// directory and finds in its environment:
//
//	DEV   /dev/ubda, the image
//	MNT   an empty directory to mount DEV on
//	WORK  the scratch directory (also the current directory and HOME)
//
// with PATH set, LC_ALL=C, TZ=UTC and GLIBC_TUNABLES (umlGlibcTunables),
// /proc and /sys mounted and devtmpfs on /dev. Its standard input is
// /dev/null. After the script, the harness unmounts MNT if the script
// left it mounted, syncs and powers the kernel off. The script's exit
// status and output come back through files written on hostfs, not from
// the console.
//
// Run fails the test (with the console's tail) when the harness itself
// fails: the kernel does not start, times out, crashes, or ends without
// the script's status, or MNT cannot be unmounted. A script that exits
// non-zero is not a failure of Run: check UMLResult.Status. No process of
// the run outlives Run.
func (c UMLConfig) Run(t testing.TB, img, script string) UMLResult {
	t.Helper()
	Require(t, ToolUML)
	timeout := c.timeout()
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			if left := time.Until(dl) - umlDeadlineMargin; left < timeout {
				timeout = max(left, time.Second)
			}
		}
	}
	dir, err := os.MkdirTemp("", "xfs3-uml-")
	if err != nil {
		t.Fatalf("uml: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	r, err := c.run(dir, img, script, timeout)
	if err != nil {
		t.Fatalf("uml: %v\noutput:\n%s\nconsole tail:\n%s", err, r.Output, lastLines(r.Console, umlConsoleTail))
	}
	return r
}

func (c UMLConfig) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return umlDefaultTimeout
}

func (c UMLConfig) memoryMiB() int {
	if c.MemoryMiB > 0 {
		return c.MemoryMiB
	}
	return umlDefaultMemoryMiB
}

// umlPaths are the files of one run, all under one directory that the
// host and the guest both see (through hostfs) under the same path.
type umlPaths struct {
	dir     string
	image   string // symlink to the caller's image: a path safe for ubd0=
	init    string // the guest's init (written by writeUMLInit)
	script  string // the caller's script
	output  string // the script's stdout and stderr
	status  string // written by init once the script ended
	console string // the kernel's console (stdout and stderr of linux.uml)
	umlDir  string // UML's uml_dir: its pid file and mconsole socket
	mnt     string // $MNT
	work    string // $WORK
}

func newUMLPaths(dir string) umlPaths {
	j := func(name string) string { return filepath.Join(dir, name) }
	return umlPaths{
		dir: dir, image: j("ubda"), init: j("init"), script: j("script"),
		output: j("output"), status: j("status"), console: j("console"),
		umlDir: j("uml"), mnt: j("mnt"), work: j("work"),
	}
}

// run does the work of Run in dir. It returns what it could collect even
// with an error.
func (c UMLConfig) run(dir, img, script string, timeout time.Duration) (UMLResult, error) {
	var r UMLResult
	p := newUMLPaths(dir)
	// The kernel command line splits on white space, and ubd0= takes ','
	// and ':' as separators: the run's own paths must avoid them (the
	// image is reached through a symlink, so its path may hold anything).
	if strings.ContainsAny(dir, " \t\n,:\"'\\") {
		return r, fmt.Errorf("temporary directory %q cannot appear on a kernel command line; set TMPDIR to a plain path", dir)
	}
	abs, err := filepath.Abs(img)
	if err != nil {
		return r, err
	}
	if st, err := os.Stat(abs); err != nil {
		return r, err
	} else if !st.Mode().IsRegular() {
		return r, fmt.Errorf("%s is not a regular file", img)
	}
	for _, d := range []string{p.umlDir, p.mnt, p.work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return r, err
		}
	}
	if err := os.Symlink(abs, p.image); err != nil {
		return r, err
	}
	if err := os.WriteFile(p.script, []byte(script), 0o644); err != nil {
		return r, err
	}
	if err := os.WriteFile(p.init, []byte(umlInit(p)), 0o755); err != nil {
		return r, err
	}

	ubd := "ubd0="
	if c.ReadOnly {
		ubd = "ubd0r="
	}
	args := []string{
		ubd + p.image,
		"root=/dev/root", "rootfstype=hostfs", "rootflags=/", "rw",
		"mem=" + strconv.Itoa(c.memoryMiB()) + "M",
		"umid=xfs3", "uml_dir=" + p.umlDir,
		"con=null", "con0=fd:0,fd:1",
		"pty.legacy_count=0",
		"init=" + p.init,
	}
	exit, err := startUML(args, p.console, timeout)
	r.Elapsed = exit.elapsed
	exitErr := exit.err
	if b, rerr := os.ReadFile(p.console); rerr == nil {
		r.Console = string(b)
	}
	if b, rerr := os.ReadFile(p.output); rerr == nil {
		r.Output = string(b)
	}
	if err != nil {
		return r, err
	}
	status, serr := readUMLStatus(p.status)
	switch {
	case exitErr != nil && serr != nil:
		return r, fmt.Errorf("linux.uml ended (%v) before the script finished", exitErr)
	case serr != nil:
		return r, fmt.Errorf("the kernel powered off before the script finished: %v", serr)
	case exitErr != nil:
		return r, fmt.Errorf("linux.uml ended with %v after the script (status %d); a clean power-off exits 0", exitErr, status.script)
	case status.umount != "":
		return r, fmt.Errorf("the script (status %d) left %s mounted and it could not be unmounted: %s", status.script, p.mnt, status.umount)
	}
	r.Status = status.script
	return r, nil
}

// umlExit is how a kernel run ended.
type umlExit struct {
	elapsed time.Duration // from start to exit
	err     error         // linux.uml's exit error: nil for a clean power-off
}

// startUML runs linux.uml with args, its console going to the file
// console, and waits for it to exit or for timeout. The error is non-nil
// when the kernel could not be run or timed out.
//
// UML forks helper processes (I/O threads, one host process per guest
// address space) that do not die with the kernel's main process. So the
// kernel runs in its own process group and, as root, as the first process
// of a new PID namespace, whose end takes every helper with it; Pdeathsig
// kills it if the test binary dies first. Outside a PID namespace the
// group is killed after the kernel exits.
func startUML(args []string, console string, timeout time.Duration) (umlExit, error) {
	bin, err := lookTool(ToolUML)
	if err != nil {
		return umlExit{}, err
	}
	out, err := os.Create(console)
	if err != nil {
		return umlExit{}, err
	}
	defer out.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return umlExit{}, err
	}
	defer null.Close()
	self, err := os.Executable()
	if err != nil {
		return umlExit{}, err
	}
	newCmd := func(flags uintptr) *exec.Cmd {
		// This binary, as the launcher, becomes bin (see umlLaunchEnv).
		cmd := exec.Command(self, args...)
		cmd.Env = append(os.Environ(), umlLaunchEnv+"="+bin)
		// Stdin, stdout and stderr are files, never pipes: the helpers
		// inherit them, and Wait would block on a pipe they hold open.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = null, out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: flags}
		return cmd
	}

	type started struct {
		pid    int
		newPID bool
		err    error
	}
	startc := make(chan started, 1)
	waitc := make(chan error, 1)
	begin := time.Now()
	go func() {
		// Pdeathsig fires when the thread that started the child exits,
		// not the process: keep this thread until the kernel has ended.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cmd, newPID := newCmd(syscall.CLONE_NEWPID), true
		err := cmd.Start()
		if err != nil {
			// Not root, or no namespaces here: a process group only.
			cmd, newPID = newCmd(0), false
			err = cmd.Start()
		}
		if err != nil {
			startc <- started{err: err}
			return
		}
		startc <- started{pid: cmd.Process.Pid, newPID: newPID}
		waitc <- cmd.Wait()
	}()
	s := <-startc
	if s.err != nil {
		return umlExit{}, s.err
	}
	// The group's ID stays reserved while any member lives, so killing
	// it after the leader was reaped cannot reach another process group
	// unless the whole group is gone (then it is a harmless ESRCH, short
	// of a PID wrap-around within microseconds).
	killGroup := func() { _ = syscall.Kill(-s.pid, syscall.SIGKILL) }

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	poll := time.NewTicker(umlPollEvery)
	defer poll.Stop()
	var poweredOff time.Time
	for {
		select {
		case werr := <-waitc:
			e := umlExit{elapsed: time.Since(begin), err: werr}
			if !s.newPID {
				killGroup()
			}
			return e, nil
		case <-poll.C:
			// Now and then the kernel's main process lingers after the
			// guest has powered off (seen once in CI: two minutes, then
			// killed, with the script's status already written). A run
			// whose console ends in the power-off message is over: past
			// a grace period it is killed and counts as a clean exit.
			if poweredOff.IsZero() {
				if consoleSays(console, umlPowerOff) {
					poweredOff = time.Now()
				}
				continue
			}
			if time.Since(poweredOff) < umlPowerOffGrace {
				continue
			}
			killGroup()
			<-waitc
			return umlExit{elapsed: poweredOff.Sub(begin)}, nil
		case <-timer.C:
			killGroup()
			werr := <-waitc
			e := umlExit{elapsed: time.Since(begin), err: werr}
			if !s.newPID {
				killGroup()
			}
			return e, fmt.Errorf("timed out after %v; killed", timeout.Round(time.Millisecond))
		}
	}
}

// The power-off watch of startUML.
const (
	umlPowerOff      = "reboot: Power down"
	umlPollEvery     = 200 * time.Millisecond
	umlPowerOffGrace = 5 * time.Second
)

// consoleSays reports whether the console file holds msg.
func consoleSays(console, msg string) bool {
	b, err := os.ReadFile(console)
	return err == nil && strings.Contains(string(b), msg)
}

// umlStatus is what init wrote once the script ended.
type umlStatus struct {
	script int    // the script's exit status
	umount string // why MNT could not be unmounted, or ""
}

// readUMLStatus reads the status file: "status N", then "umount-failed
// MSG" if the harness could not unmount MNT.
func readUMLStatus(path string) (umlStatus, error) {
	var s umlStatus
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return s, errors.New("no status file")
		}
		return s, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	n, ok := strings.CutPrefix(lines[0], "status ")
	if !ok {
		return s, fmt.Errorf("bad status file %q", b)
	}
	if s.script, err = strconv.Atoi(n); err != nil {
		return s, fmt.Errorf("bad status file %q", b)
	}
	for _, l := range lines[1:] {
		if msg, ok := strings.CutPrefix(l, "umount-failed "); ok {
			s.umount = msg
		}
	}
	return s, nil
}

// umlInit returns the guest's init: a shell script that sets up the
// environment, runs the caller's script, records its status on hostfs and
// powers the kernel off.
func umlInit(p umlPaths) string {
	q := shellQuote
	return `#!/bin/sh
# init of a user-mode Linux run by the xfs3 oracle package (UMLConfig.Run)
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
LC_ALL=C
TZ=UTC
# Keep glibc's string and memory routines to SSE (see umlLaunchEnv).
GLIBC_TUNABLES=` + umlGlibcTunables + `
DEV=/dev/ubda
MNT=` + q(p.mnt) + `
WORK=` + q(p.work) + `
HOME=$WORK
export PATH LC_ALL TZ GLIBC_TUNABLES DEV MNT WORK HOME
mount -t proc proc /proc
mount -t sysfs sysfs /sys
[ -b "$DEV" ] || mount -t devtmpfs devtmpfs /dev
cd "$WORK" && /bin/sh -e ` + q(p.script) + ` </dev/null >` + q(p.output) + ` 2>&1
echo "status $?" >` + q(p.status) + `
if mountpoint -q "$MNT"; then
	msg=$(umount "$MNT" 2>&1) || echo "umount-failed $msg" | head -n 1 >>` + q(p.status) + `
fi
sync
# sysrq powers off at once (asynchronously: init must not exit first, or
# the kernel panics with "Attempted to kill init").
echo o >/proc/sysrq-trigger
sleep 60
`
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
