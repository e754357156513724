// Package busytest keeps every CPU of the machine busy for tests that
// check claw's answers under load: a busy machine may make claw slower,
// never wrong. Only tests import it; deptest keeps it out of the binary.
package busytest

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Spin starts n threads that spin until stop is called, raising
// GOMAXPROCS so that they do not starve the test's own goroutines of Go
// threads (the kernel's scheduler, not Go's, then shares the CPUs, as
// with other processes' load). n = 16 × runtime.NumCPU() gives a load
// average of about 20 on two cores, as while the test suite runs.
func Spin(n int) (stop func()) {
	prev := runtime.GOMAXPROCS(n + runtime.NumCPU())
	var done atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for !done.Load() {
			}
		}()
	}
	return func() {
		done.Store(true)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
	}
}
