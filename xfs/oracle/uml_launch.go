package oracle

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// umlLaunchEnv, when set in a process's environment, makes that process
// (any test binary that links this package) the launcher of user-mode
// Linux: before main it installs umlSeccompFilter and executes the kernel
// named by the variable with the process's own arguments. startUML starts
// the kernel this way.
//
// Why: linux.uml 6.1 saves and restores its guest processes' FPU state
// with PTRACE_GETREGSET/SETREGSET(NT_X86_XSTATE) when the first
// GETREGSET at boot succeeds. Its buffer has a size fixed when it was
// built, and the host kernel refuses a SETREGSET of any other size than
// its own XSAVE area with EFAULT. On a host with AVX-512 and AMX (several
// KiB of XSAVE state) the first return to guest user space fails
// ("userspace - ptrace set fp regs failed, errno = 14") and init dies
// with SIGSEGV: the kernel panics before any script runs. When that
// first GETREGSET fails, UML falls back to PTRACE_GETFPREGS/SETFPREGS
// (the 512-byte FXSAVE area), which every x86-64 host accepts. The
// filter makes exactly that request fail with ENODEV, as on a host
// without XSAVE; nothing else is touched.
//
// What the guest loses: UML then switches only the x87 and SSE state of
// its tasks, and guest programs that use wider vector registers go
// wrong. Seen on an AMX host: mount and xfs_quota printed their formats
// ("%s", "%llu") unexpanded and a read-only mount failed with EINVAL;
// masking AVX-512 from glibc alone cured both. So init tells the guest's
// glibc, through GLIBC_TUNABLES (umlGlibcTunables), to treat AVX and
// everything past it as absent; its SSE routines are right. The guest's
// programs are Debian's, built for baseline x86-64: glibc's ifuncs are
// where they would pick wider registers.
const umlLaunchEnv = "XFS3_ORACLE_UML_LAUNCH"

// umlGlibcTunables masks the vector extensions whose state the guest's
// tasks do not keep (glibc 2.36 names; unknown names are ignored).
const umlGlibcTunables = "glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-FMA4,-AVX512F,-AVX512CD,-AVX512BW,-AVX512DQ,-AVX512VL,-AVX512ER,-AVX512PF"

// umlNeedsFilter: the filter concerns x86-64 hosts only.
const umlNeedsFilter = runtime.GOARCH == "amd64"

func init() {
	if bin, ok := os.LookupEnv(umlLaunchEnv); ok {
		launchUML(bin)
	}
}

// launchUML replaces the process with the kernel bin, under the filter.
// It never returns. It runs during package initialisation, on the main
// thread, to which the runtime keeps the main goroutine locked until
// main starts: a seccomp filter and no_new_privs belong to the thread
// that installs them, and that is the thread that calls execve.
func launchUML(bin string) {
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "xfs3 oracle: launching %s: %s: %v\n", bin, what, err)
		os.Exit(127)
	}
	if err := os.Unsetenv(umlLaunchEnv); err != nil {
		fail("unsetenv", err)
	}
	if err := installSeccomp(umlSeccompFilter()); err != nil {
		fail("seccomp", err)
	}
	args := append([]string{bin}, os.Args[1:]...)
	fail("execve", syscall.Exec(bin, args, os.Environ()))
}

// bpfInsn is a classic BPF instruction (struct sock_filter).
type bpfInsn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// Classic BPF and seccomp constants (linux/filter.h, linux/seccomp.h,
// linux/audit.h, linux/elf.h) and x86-64 numbers.
const (
	bpfLdAbsW  = 0x20 // BPF_LD|BPF_W|BPF_ABS: A = 32-bit word at k
	bpfJeqK    = 0x15 // BPF_JMP|BPF_JEQ|BPF_K: A == k ? jt : jf
	bpfRetK    = 0x06 // BPF_RET|BPF_K: return k
	seccompAll = 0x7fff0000
	seccompErr = 0x00050000 // | errno

	auditArchX8664  = 0xc000003e
	sysPtraceAMD64  = 101
	sysSeccompAMD64 = 317
	ptraceGetRegset = 0x4204
	ntX86XState     = 0x202

	prSetNoNewPrivs       = 38
	seccompSetModeFilter  = 1
	seccompDataNr         = 0  // offsetof(struct seccomp_data, nr)
	seccompDataArch       = 4  // offsetof(struct seccomp_data, arch)
	seccompDataArg0       = 16 // args[0], low word (little-endian)
	seccompDataArg2       = 32 // args[2], low word
	seccompDataHighOffset = 4  // from an argument's low word to its high one
)

// umlSeccompFilter returns a program that answers ENODEV to an x86-64
// ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, ...) and allows every other
// system call.
func umlSeccompFilter() []bpfInsn {
	// Each test falls through when it matches and otherwise jumps to
	// the final "allow"; jf counts the instructions skipped.
	checks := []struct{ off, want uint32 }{
		{seccompDataArch, auditArchX8664},
		{seccompDataNr, sysPtraceAMD64},
		{seccompDataArg0, ptraceGetRegset},
		{seccompDataArg0 + seccompDataHighOffset, 0},
		{seccompDataArg2, ntX86XState},
		{seccompDataArg2 + seccompDataHighOffset, 0},
	}
	var prog []bpfInsn
	for i, c := range checks {
		toAllow := uint8(2*(len(checks)-i-1) + 1) // past the later checks and the deny
		prog = append(prog,
			bpfInsn{code: bpfLdAbsW, k: c.off},
			bpfInsn{code: bpfJeqK, jf: toAllow, k: c.want})
	}
	return append(prog,
		bpfInsn{code: bpfRetK, k: seccompErr | uint32(syscall.ENODEV)},
		bpfInsn{code: bpfRetK, k: seccompAll})
}

// installSeccomp attaches prog to the calling thread (which must stay the
// same OS thread until execve) with no_new_privs, so that it needs no
// privilege. Only x86-64 needs and has the filter; elsewhere it is a no-op.
func installSeccomp(prog []bpfInsn) error {
	if !umlNeedsFilter {
		return nil
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", e)
	}
	fprog := struct { // struct sock_fprog
		len    uint16
		filter *bpfInsn
	}{uint16(len(prog)), &prog[0]}
	if _, _, e := syscall.RawSyscall(sysSeccompAMD64, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
	}
	return nil
}
