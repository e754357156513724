package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestBudgetCountsWorkNotWaiting: time the evaluating goroutine spends
// off the CPU (here asleep; on a busy machine, waiting for a CPU) does not
// use up its budget, and CPU time does.
func TestBudgetCountsWorkNotWaiting(t *testing.T) {
	if _, ok := threadCPUClock(); !ok {
		t.Skip("no per-thread CPU clock here: the budget is a wall-clock bound")
	}
	// The wall-clock bound is far away: however busy the machine, the
	// spinning below reaches the CPU budget first.
	const budget = 20 * time.Millisecond
	ctx, done := workBudget(context.Background(), budget, 10*time.Minute)
	time.Sleep(5 * budget)
	if err := ctx.Err(); err != nil {
		t.Fatalf("asleep for 5 budgets, the context ended: %v", context.Cause(ctx))
	}
	for ctx.Err() == nil {
	}
	cause := context.Cause(ctx)
	done()
	if cause == nil || errors.Is(cause, errWallClock) || !strings.Contains(cause.Error(), "CPU time") {
		t.Fatalf("spinning on the CPU: cause %v, want the CPU budget", cause)
	}
}

// TestBudgetWallClockBound: an evaluation that does not run at all is
// still stopped, at its wall-clock bound.
func TestBudgetWallClockBound(t *testing.T) {
	const budget = time.Millisecond
	ctx, done := workBudget(context.Background(), budget, wallBound(budget))
	defer done()
	<-ctx.Done()
	if c := context.Cause(ctx); !errors.Is(c, errWallClock) {
		if _, ok := threadCPUClock(); ok {
			t.Fatalf("cause %v, want the wall-clock bound", c)
		}
	}
}

func TestWallBound(t *testing.T) {
	for budget, want := range map[time.Duration]time.Duration{
		time.Millisecond:       40 * time.Millisecond,
		250 * time.Millisecond: 10 * time.Second,
		time.Minute:            2 * time.Minute,
		5 * time.Minute:        5 * time.Minute,
	} {
		if got := wallBound(budget); got != want {
			t.Errorf("wallBound(%v) = %v, want %v", budget, got, want)
		}
	}
}
