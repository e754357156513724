package gate

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcSettings reads the collector's GOGC and memory limit.
func gcSettings() (percent int, limit int64) {
	gc.mu.Lock() // retune sets GOGC with it held
	defer gc.mu.Unlock()
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
	gc.pauses, gc.held, gc.oneShot = 0, false, false
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	runtime.GC() // what is live now sets the GOGC of a pause
	t.Cleanup(func() {
		gcResumeDelay = delay
		gc.pauses, gc.held, gc.oneShot = 0, false, false
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

// wantGC fails the test unless GOGC is percent and the memory limit is
// limit; a limit of 0 asks for a window's: at most pauseHeadroom over
// the heap.
func wantGC(t *testing.T, step string, percent int, limit int64) {
	t.Helper()
	p, l := gcSettings()
	if p != percent {
		t.Fatalf("%s: GOGC %d, want %d", step, p, percent)
	}
	if limit == 0 {
		if h := heapBytes(); l < h || l > h+pauseHeadroom {
			t.Fatalf("%s: memory limit %d, want between the heap (%d) and %d more", step, l, h, pauseHeadroom)
		}
	} else if l != limit {
		t.Fatalf("%s: memory limit %d, want %d", step, l, limit)
	}
}

// TestPauseGC: a pause holds the collector back, with no memory limit
// (a limit below what is live would collect without end); pauses nest;
// the window after the last one bounds the heap; the settings come back
// only once that window ends with no pause begun since; a one-shot
// process keeps it held back for good; a GOGC that is off or higher
// stays.
func TestPauseGC(t *testing.T) {
	holdGCState(t)
	const none = math.MaxInt64
	paused := pausePercent()
	r1 := pauseGC()
	wantGC(t, "paused", paused, none)
	r2 := pauseGC()
	r1()
	r1() // a second call ends nothing
	restoreGC(gc.ends)
	wantGC(t, "one of two pauses ended", paused, none)
	r2()
	wantGC(t, "the window after the last pause", paused, 0)
	end := gc.ends
	r3 := pauseGC() // began before the restore due after r2
	wantGC(t, "a pause in the window", paused, none)
	restoreGC(end)
	wantGC(t, "a pause began since", paused, none)
	r3()
	restoreGC(end)
	wantGC(t, "a restore due before the last end", paused, 0)
	restoreGC(gc.ends)
	wantGC(t, "every pause ended", 100, none)

	for _, user := range []int{paused + 1000, -1} { // higher, and off
		debug.SetGCPercent(user)
		r := pauseGC()
		wantGC(t, "the user's GOGC, paused", user, none)
		r()
		restoreGC(gc.ends)
		wantGC(t, "the user's GOGC, restored", user, none)
	}
	debug.SetGCPercent(100)

	r := pauseGC()
	OneShotGC()
	wantGC(t, "one shot while paused", paused, none)
	r()
	wantGC(t, "one shot, the pause ended", paused, none)
	restoreGC(gc.ends)
	wantGC(t, "one shot after the pause", paused, none)
	r = pauseGC()
	r()
	restoreGC(gc.ends)
	wantGC(t, "one shot, a pause after", paused, none)
	gc.oneShot = false
}

// TestCompilePausesGC: compiling holds the collector back, and a
// prefetch holds it from its start; the settings come back after.
func TestCompilePausesGC(t *testing.T) {
	holdGCState(t)
	paused := pausePercent()
	if _, err := compile(context.Background(), Options{Policy: testPolicy(), Home: "/home/u"}); err != nil {
		t.Fatal(err)
	}
	wantGC(t, "compiled, the restore not yet due", paused, 0)
	restoreGC(gc.ends)
	wantGC(t, "compiled", 100, math.MaxInt64)

	runtime.GC()
	paused = pausePercent()
	prefetch.started = false // as in a new process
	t.Cleanup(func() { prefetch.started = false })
	Prefetch()
	wantGC(t, "prefetching", paused, math.MaxInt64)
	restoreGC(gc.ends)
	wantGC(t, "prefetched, not yet compiled", paused, math.MaxInt64)
	if _, err := compile(context.Background(), Options{Policy: testPolicy(), Home: "/home/u"}); err != nil {
		t.Fatal(err)
	}
	restoreGC(gc.ends)
	wantGC(t, "the prefetch compiled", 100, math.MaxInt64)
}

// TestPercentFor: a pause lets the heap grow by pauseGrowth past what is
// live, whatever that is, and never collects more often than Go would.
func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 3200},       // before the first collection: Go's 4 MB
		{4 << 20, 3200}, // 4 MB + 128 MB
		{64 << 20, 200}, // 64 MB + 128 MB
		{128 << 20, 100},
		{1 << 30, 100}, // Go's default, not less
	} {
		if got := percentFor(c.live); got != c.want {
			t.Errorf("percentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestPauseRetunes: after a collection during a pause, GOGC is set
// again from what is live then, so that the heap may grow by about
// pauseGrowth past it, not by the same factor as before.
func TestPauseRetunes(t *testing.T) {
	holdGCState(t)
	r := pauseGC()
	defer func() { r(); restoreGC(gc.ends) }()
	before, _ := gcSettings()
	keep := make([]*[1 << 20]byte, 96) // 96 MB live
	for i := range keep {
		keep[i] = new([1 << 20]byte)
	}
	runtime.GC()
	// the finalizer that retunes runs on its own goroutine, after the
	// collection: wait for it, bounded
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, _ := gcSettings()
		if p != before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %d 10 s after a collection with 96 MB live", p)
		}
		time.Sleep(time.Millisecond)
	}
	p, _ := gcSettings()
	if want := pausePercent(); p != want || p >= before {
		t.Fatalf("GOGC %d after the collection (%d before), want %d", p, before, want)
	}
	runtime.KeepAlive(keep)
}
