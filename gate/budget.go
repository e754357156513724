package gate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// wallFactor bounds a decision's wall-clock time at this many times its
// CPU budget, and maxWall at most (or the budget, when that is more): far
// beyond any scheduling delay of a loaded machine, it only stops an
// evaluation that is not being run at all.
const (
	wallFactor = 40
	maxWall    = 2 * time.Minute
)

// wallBound is the wall-clock bound of a decision with this CPU budget.
func wallBound(budget time.Duration) time.Duration {
	return min(wallFactor*budget, max(maxWall, budget))
}

// errWallClock is the cause of a decision that outlived its wall-clock
// bound.
var errWallClock = errors.New("the decision took too long on the clock")

// workBudget returns a context that is cancelled once the calling
// goroutine has used budget of CPU time, or after wall on the wall clock,
// whichever comes first. The evaluation is bounded by
// the work it does, not by the time a busy machine keeps it waiting for a
// CPU: compiling, garbage collection in other threads and scheduling
// delays do not count. The caller must call the returned function when
// the evaluation is done; until then the goroutine stays on its thread.
// Where a thread's CPU time cannot be read, budget is a wall-clock bound.
func workBudget(ctx context.Context, budget, wall time.Duration) (context.Context, func()) {
	ctx, cancelWall := context.WithTimeoutCause(ctx, wall, errWallClock)
	ctx, cancel := context.WithCancelCause(ctx)
	runtime.LockOSThread()
	used, ok := threadCPUClock()
	if !ok {
		runtime.UnlockOSThread()
		ctx, cancelT := context.WithTimeoutCause(ctx, budget, overBudget(budget))
		return ctx, func() { cancelT(); cancel(nil); cancelWall() }
	}
	// The thread's CPU time cannot grow faster than the clock, so the
	// first look is due after budget, and each later one after what is
	// left of it: a decision that ends in time is never looked at.
	var (
		mu      sync.Mutex
		t       *time.Timer
		stopped bool
	)
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if left := budget - used(); left > 0 {
			t.Reset(left)
			return
		}
		cancel(overBudget(budget))
	}
	mu.Lock()
	t = time.AfterFunc(budget, check)
	mu.Unlock()
	return ctx, func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
		runtime.UnlockOSThread()
		cancel(nil)
		cancelWall()
	}
}

func overBudget(budget time.Duration) error {
	return fmt.Errorf("the decision used more than %v of CPU time", budget)
}
