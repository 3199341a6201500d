package oracle

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// umlFilterProbeEnv makes this test binary, started through the launcher,
// run TestUMLSeccompFilter's probe instead of the tests.
const umlFilterProbeEnv = "XFS3_ORACLE_UML_FILTER_PROBE"

// TestUMLSeccompFilter starts this test binary through the launcher (as
// startUML starts linux.uml) and has it trace a child: under the filter,
// PTRACE_GETREGSET of NT_X86_XSTATE fails with ENODEV, which is what
// turns UML to its FXSAVE path, while the same request for the general
// registers and PTRACE_GETFPREGS still work. As a control, the same
// probe outside the filter gets the XSAVE state on a host that has it.
func TestUMLSeccompFilter(t *testing.T) {
	if !umlNeedsFilter {
		t.Skip("the filter is for x86-64 hosts")
	}
	if os.Getenv(umlFilterProbeEnv) != "" {
		t.Skip("the probe runs in TestUMLSeccompFilterProbe")
	}
	if cpuinfo, err := os.ReadFile("/proc/cpuinfo"); err == nil && strings.Contains(string(cpuinfo), " xsave ") {
		if got, want := probeRegsets(t), "xstate: ok; prstatus: ok; fpregs: ok"; got != want {
			t.Errorf("without the filter: %s, want %s", got, want)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestUMLSeccompFilterProbe$", "-test.v")
	cmd.Env = append(os.Environ(), umlLaunchEnv+"="+self, umlFilterProbeEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "under the filter: xstate: no such device; prstatus: ok; fpregs: ok") {
		t.Fatalf("probe under the filter: %v\n%s", err, out)
	}
}

// TestUMLSeccompFilterProbe is the probe of TestUMLSeccompFilter; it does
// nothing unless started by it.
func TestUMLSeccompFilterProbe(t *testing.T) {
	if os.Getenv(umlFilterProbeEnv) == "" {
		t.Skip("runs only under TestUMLSeccompFilter")
	}
	if s, _ := os.ReadFile("/proc/self/status"); !strings.Contains(string(s), "Seccomp:\t2") {
		t.Fatalf("no seccomp filter on the probe:\n%s", s)
	}
	t.Logf("under the filter: %s", probeRegsets(t))
}

// probeRegsets traces a child stopped at its exec and reports how three
// register requests went: GETREGSET of the XSAVE state and of the
// general registers, and GETFPREGS ("ok" or the error).
func probeRegsets(t *testing.T) string {
	t.Helper()
	// Every ptrace request must come from the thread that attached.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	child := exec.Command("/bin/sh", "-c", "exit 0")
	child.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	}()
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(child.Process.Pid, &ws, 0, nil); err != nil || !ws.Stopped() {
		t.Fatalf("the traced child did not stop at exec: %v, %v", err, ws)
	}
	pid := uintptr(child.Process.Pid)
	buf := make([]byte, 64<<10)
	result := func(e syscall.Errno) string {
		if e == 0 {
			return "ok"
		}
		return e.Error()
	}
	getRegset := func(note uintptr) string {
		iov := syscall.Iovec{Base: &buf[0], Len: uint64(len(buf))}
		_, _, e := syscall.Syscall6(syscall.SYS_PTRACE, ptraceGetRegset, pid, note, uintptr(unsafe.Pointer(&iov)), 0, 0)
		return result(e)
	}
	const ntPRStatus, ptraceGetFPRegs = 1, 14
	xstate, prstatus := getRegset(ntX86XState), getRegset(ntPRStatus)
	_, _, e := syscall.Syscall6(syscall.SYS_PTRACE, ptraceGetFPRegs, pid, 0, uintptr(unsafe.Pointer(&buf[0])), 0, 0)
	return "xstate: " + xstate + "; prstatus: " + prstatus + "; fpregs: " + result(e)
}
