package gate

import (
	"context"
	"math"
	"runtime/debug"
	"testing"
	"time"
)

// gcSettings reads the collector's GOGC and memory limit.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// holdGCState runs the test from the default collector settings and no
// pause, with restores only when the test calls restoreGC, and puts it
// all back afterwards.
func holdGCState(t *testing.T) {
	t.Helper()
	percent, limit := gcSettings()
	delay := gcResumeDelay
	gcResumeDelay = time.Hour // the test calls restoreGC itself
	gc.ends++                 // and the restores due from before do nothing
	gc.pauses, gc.held = 0, false
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		gcResumeDelay = delay
		gc.pauses, gc.held = 0, false
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

func wantGC(t *testing.T, step string, percent int, limit int64) {
	t.Helper()
	p, l := gcSettings()
	if p != percent || (limit != 0 && l != limit) {
		t.Fatalf("%s: GOGC %d, memory limit %d; want GOGC %d, limit %d", step, p, l, percent, limit)
	}
}

// TestPauseGC: a pause holds the collector off with a bounded heap;
// pauses nest; the settings come back only once the last pause ended
// and no new one began; a one-shot process keeps it off after a pause.
func TestPauseGC(t *testing.T) {
	holdGCState(t)
	r1 := pauseGC()
	_, l := gcSettings()
	if h := heapBytes(); l < h || l > h+pauseHeadroom {
		t.Fatalf("memory limit %d while paused, want between the heap (%d) and %d more", l, h, pauseHeadroom)
	}
	wantGC(t, "paused", -1, 0)
	r2 := pauseGC()
	r1()
	r1() // a second call ends nothing
	restoreGC(gc.ends)
	wantGC(t, "one of two pauses ended", -1, 0)
	r2()
	end := gc.ends
	r3 := pauseGC() // began before the restore due after r2
	restoreGC(end)
	wantGC(t, "a pause began since", -1, 0)
	r3()
	_, l = gcSettings()
	if h := heapBytes(); l < h || l > h+pauseHeadroom {
		t.Fatalf("memory limit %d once the pauses ended, want between the heap (%d) and %d more", l, h, pauseHeadroom)
	}
	restoreGC(end)
	wantGC(t, "a restore due before the last end", -1, 0)
	restoreGC(gc.ends)
	wantGC(t, "every pause ended", 100, math.MaxInt64)

	r := pauseGC()
	OneShotGC()
	wantGC(t, "one shot while paused", -1, 0)
	r()
	restoreGC(gc.ends)
	wantGC(t, "one shot after the pause", -1, oneShotLimit)
}

// TestCompilePausesGC: compiling holds the collector off, and a
// prefetch holds it from its start; the settings come back after.
func TestCompilePausesGC(t *testing.T) {
	holdGCState(t)
	if _, err := compile(context.Background(), Options{Policy: testPolicy(), Home: "/home/u"}); err != nil {
		t.Fatal(err)
	}
	wantGC(t, "compiled, the resume not yet due", -1, 0)
	restoreGC(gc.ends)
	wantGC(t, "compiled", 100, math.MaxInt64)

	prefetch.started = false // as in a new process
	t.Cleanup(func() { prefetch.started = false })
	Prefetch()
	wantGC(t, "prefetching", -1, 0)
	restoreGC(gc.ends)
	wantGC(t, "prefetched, not yet compiled", -1, 0)
	if _, err := compile(context.Background(), Options{Policy: testPolicy(), Home: "/home/u"}); err != nil {
		t.Fatal(err)
	}
	restoreGC(gc.ends)
	wantGC(t, "the prefetch compiled", 100, math.MaxInt64)
}
