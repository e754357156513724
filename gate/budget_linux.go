package gate

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUClock returns a function that reports the CPU time the calling
// OS thread has used since this call. The caller must stay locked to the
// thread; the function may be called from any goroutine.
func threadCPUClock() (func() time.Duration, bool) {
	// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) of the kernel's
	// posix-timers.h: the thread's scheduler clock, readable by any thread
	// of the process.
	id := int32(^unix.Gettid()<<3 | 6)
	read := func() (time.Duration, bool) {
		var ts unix.Timespec
		if err := unix.ClockGettime(id, &ts); err != nil {
			return 0, false
		}
		return time.Duration(ts.Nano()), true
	}
	start, ok := read()
	if !ok {
		return nil, false
	}
	return func() time.Duration {
		now, ok := read()
		if !ok {
			// The thread is gone: nothing is evaluating any more.
			return 1<<63 - 1
		}
		return now - start
	}, true
}
