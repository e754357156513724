package serve

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A panic in the evaluation is raised in the caller, as if the
// evaluation had run on the caller's goroutine.
func TestOnWarmStackPanicReachesCaller(t *testing.T) {
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the evaluation's panic", p)
		}
	}()
	onWarmStack(func() { panic("boom") })
	t.Fatal("onWarmStack returned after a panic")
}

// Concurrent callers each get their own job run exactly once, before
// onWarmStack returns, and later calls reuse the goroutines left idle.
func TestOnWarmStackRunsEachJobOnce(t *testing.T) {
	var runs atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				ran := false
				onWarmStack(func() { ran = true; runs.Add(1) })
				if !ran {
					t.Error("onWarmStack returned before its job ran")
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := runs.Load(); got != 64*50 {
		t.Fatalf("%d jobs ran, want %d", got, 64*50)
	}
	// An idle warm goroutine takes the next job instead of a new one.
	onWarmStack(func() {})
	select {
	case warmJobs <- func() {}:
	case <-time.After(5 * time.Second):
		t.Fatal("no warm goroutine is waiting for work after a decision")
	}
}
