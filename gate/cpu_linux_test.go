package gate

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time the whole process has used: the deciding
// thread's and the garbage collector's, which a decision's allocations
// cause.
func processCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
