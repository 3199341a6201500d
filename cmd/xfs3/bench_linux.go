package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// fadviseDontNeed drops f's clean pages from the page cache.
func fadviseDontNeed(f *os.File) error {
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// processCPU is the user and system time process pid has used, all its
// threads' added up, exited ones' too: fields 14 and 15 of
// /proc/PID/stat, counted in clock ticks.
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := parseProcStat(data)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/%w", pid, err)
	}
	return ticksDuration(ticks, clockTicks()), nil
}

// selfCPU is the user and system time this process has used.
func selfCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// atClkTck is AT_CLKTCK of <elf.h>: the auxiliary vector's entry that
// sysconf(_SC_CLK_TCK) reads.
const atClkTck = 17

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times, as
// the kernel hands it to every process; 100 (its value on every
// architecture Go runs on) when the vector cannot be read.
var clockTicks = sync.OnceValue(func() int64 {
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atClkTck && kv[1] > 0 {
				return int64(kv[1])
			}
		}
	}
	return 100
})
