package gate

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time the whole process has used: a decision
// evaluates on a warm goroutine (onWarmStack), on another thread than the
// caller's, so the caller's thread clock misses it.
func processCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
