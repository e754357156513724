package gate

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Compiling the policies allocates some 20 MB, most of it live until the
// compile ends (the parsed modules, then the compiled ones). Collecting
// while it grows marks the same live heap again and again: with Go's
// default pacing, six collections in a `claw exec`, a fifth of its time.
// So the collector is held off while the policies are parsed and
// compiled and for gcResumeDelay after (pauseGC), with the heap allowed
// to grow by pauseHeadroom in each: a command that runs one action is over by
// then without a collection, and a process that lives on (the daemon,
// the REPL, a long `claw exec`) collects as before from then on. A
// process that makes one decision and exits keeps it off (OneShotGC).

// pauseHeadroom bounds the heap's growth while the collector is held
// off, from the start of a pause and again from its end (a process that
// decides at once, such as a table of dry runs, makes garbage fast):
// past it the collector runs anyway.
const pauseHeadroom = 64 << 20

// oneShotLimit bounds the heap of a process that makes one decision.
const oneShotLimit = 256 << 20

// gcResumeDelay is how long after the last pause ends the collector's
// settings come back.
var gcResumeDelay = 500 * time.Millisecond

// gc is the collector's state as pauseGC and OneShotGC left it.
var gc struct {
	mu      sync.Mutex
	pauses  int    // pauses not yet ended
	ends    uint64 // times the last pause ended: a restore due is the latest's
	held    bool   // the collector is held off by a pause, ended or not
	percent int    // GOGC to restore
	limit   int64  // memory limit to restore
}

// pauseGC holds the collector off, with the heap allowed to grow by
// pauseHeadroom, until gcResumeDelay after the returned resume is called
// (once; later calls do nothing). Pauses nest: the collector's settings
// come back after the last one ends.
func pauseGC() (resume func()) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if !gc.held {
		gc.percent = debug.SetGCPercent(-1)
		gc.limit = debug.SetMemoryLimit(-1) // a negative limit only reads it
		debug.SetMemoryLimit(min(gc.limit, heapBytes()+pauseHeadroom))
		gc.held = true
	}
	gc.pauses++
	var once sync.Once
	return func() {
		once.Do(func() {
			gc.mu.Lock()
			defer gc.mu.Unlock()
			if gc.pauses--; gc.pauses == 0 {
				debug.SetMemoryLimit(min(gc.limit, heapBytes()+pauseHeadroom))
				gc.ends++
				end := gc.ends
				time.AfterFunc(gcResumeDelay, func() { restoreGC(end) })
			}
		})
	}
}

// restoreGC puts the collector's settings back, unless a pause began
// since the end-th end of the last pause.
func restoreGC(end uint64) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.pauses == 0 && gc.ends == end && gc.held {
		debug.SetMemoryLimit(gc.limit)
		debug.SetGCPercent(gc.percent)
		gc.held = false
	}
}

// OneShotGC turns the collector off for good, up to a heap of
// oneShotLimit, in a process that makes one decision and exits (claw
// gate test, a hook call decided in process): what it allocates is
// mostly the compiled policies, live until the decision, and collecting
// would only cost time. A pause under way ends in these settings.
func OneShotGC() {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.percent, gc.limit = -1, oneShotLimit
	if !gc.held {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(oneShotLimit)
	}
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
