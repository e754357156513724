package gate

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Compiling the policies allocates some 20 MB, most of it live until the
// compile ends (the parsed modules, then the compiled ones). Collecting
// while it grows marks the same live heap again and again: with Go's
// default pacing, six collections in a `claw tool run`, which is a fifth
// faster without them. So while the policies are parsed and compiled
// (pauseGC) the collector runs only once the heap has grown by
// pauseGrowth since its last collection, and for gcResumeDelay after,
// also once it has grown by pauseHeadroom: a command that runs one action
// is over by then without a collection, and a process that lives on (the
// daemon, the REPL, a long `claw exec`) collects as before from then on.
// A process that makes one decision and exits holds it back for good
// (OneShotGC).

// pauseGrowth is how much the heap may grow past what was live at the
// last collection while a pause lasts, set as the GOGC that gives it
// and set again after each collection (see retune): the compile of the built-in policies needs no
// collection under it, and a far larger user policy set collects a few
// times. A memory limit instead would make the collector run without end
// once what is live passed it.
const pauseGrowth = 128 << 20

// pauseHeadroom bounds the heap's growth in the gcResumeDelay after a
// pause, over what it is when the pause ends: a process that decides at
// once (a table of dry runs) makes garbage fast, and nothing it keeps
// grows that much.
const pauseHeadroom = 64 << 20

// gcResumeDelay is how long after the last pause ends the collector's
// settings come back.
var gcResumeDelay = 500 * time.Millisecond

// gc is the collector's state as pauseGC and OneShotGC left it.
var gc struct {
	mu      sync.Mutex
	pauses  int    // pauses not yet ended
	ends    uint64 // times the last pause ended: a restore due is the latest's
	held    bool   // the collector is held off by a pause, ended or not
	oneShot bool   // held for good (OneShotGC)
	armed   bool   // a collection will call retune
	percent int    // GOGC to restore
	limit   int64  // memory limit to restore
}

// pauseGC holds the collector back (see pauseGrowth) until
// gcResumeDelay after the returned resume is called (once; later calls
// do nothing), with the heap bounded by pauseHeadroom over what it is at
// that call. Pauses nest: the collector's settings come back after the
// last one ends.
func pauseGC() (resume func()) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if !gc.held {
		gc.percent = debug.SetGCPercent(-1) // read, and set by retune
		gc.limit = debug.SetMemoryLimit(-1) // a negative limit only reads it
		gc.held = true
		retune()
	} else if gc.pauses == 0 {
		debug.SetMemoryLimit(gc.limit) // a compile in the window after one
	}
	gc.pauses++
	var once sync.Once
	return func() {
		once.Do(func() {
			gc.mu.Lock()
			defer gc.mu.Unlock()
			if gc.pauses--; gc.pauses == 0 && !gc.oneShot {
				debug.SetMemoryLimit(min(gc.limit, heapBytes()+pauseHeadroom))
				gc.ends++
				end := gc.ends
				time.AfterFunc(gcResumeDelay, func() { restoreGC(end) })
			}
		})
	}
}

// retune sets GOGC for a pause from what the last collection left live
// (see pausePercent), unless the collector was off or set higher, and
// has itself run again after the next collection while the pause
// holds, so that the heap grows by pauseGrowth past what is live however
// much that becomes. gc.mu is held.
func retune() {
	p := pausePercent()
	if gc.percent < 0 || gc.percent > p {
		p = gc.percent
	}
	debug.SetGCPercent(p)
	if gc.armed {
		return
	}
	gc.armed = true
	// a finalizer runs once a collection found its object unreachable
	runtime.SetFinalizer(&gcTick{}, func(*gcTick) {
		gc.mu.Lock()
		defer gc.mu.Unlock()
		gc.armed = false
		if gc.held {
			retune()
		}
	})
}

// gcTick is the object whose finalizer tells retune that a collection
// ran; it holds a pointer so that it is not one of the tiny objects the
// runtime packs together (and may never finalize).
type gcTick struct{ _ *byte }

// restoreGC puts the collector's settings back, unless a pause began
// since the end-th end of the last pause.
func restoreGC(end uint64) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.pauses == 0 && gc.ends == end && gc.held && !gc.oneShot {
		debug.SetMemoryLimit(gc.limit)
		debug.SetGCPercent(gc.percent)
		gc.held = false
	}
}

// OneShotGC holds the collector back for good, as a pause does (see
// pauseGrowth), in a process that makes one decision and exits (claw gate
// test, a hook call decided in process): what it allocates is mostly the
// compiled policies, live until the decision, and collecting would only
// cost time. A pause under way, or its window, ends in this.
func OneShotGC() {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.oneShot = true
	if !gc.held {
		gc.percent = debug.SetGCPercent(-1) // read, and set by retune
		gc.limit = debug.SetMemoryLimit(-1)
		gc.held = true
	} else if gc.pauses == 0 {
		debug.SetMemoryLimit(gc.limit) // no window's bound
	}
	retune()
}

// heapBytes is the memory the Go runtime holds now, as the memory limit
// counts it (everything mapped, less what was returned to the system).
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// pausePercent is the GOGC under which the heap grows by about
// pauseGrowth past what the last collection left live.
func pausePercent() int {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	var live uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	return percentFor(live)
}

// percentFor is the GOGC that lets a heap of live bytes grow by
// pauseGrowth (live counted as at least 4 MB, Go's smallest goal, which
// is what it starts from), and never less than Go's default.
func percentFor(live uint64) int {
	return int(max(100, 100*pauseGrowth/max(live, 4<<20)))
}
