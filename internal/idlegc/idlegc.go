// Package idlegc collects a long-lived process's garbage while it is
// idle, so that the requests it answers seldom pay for a collection.
//
// A decision allocates about 100 KB, most of it the policy evaluator's;
// with Go's default pacing a daemon collects every few dozen decisions,
// during one of them, and that decision's time is the tail of all of
// them. Requests from agents come with idle time between them (an agent
// calls a tool, then waits for its model), and a collection in that
// time costs no request anything. A Collector counts the requests in
// flight; once none has been for Idle, and the garbage is more than half
// of what Go's pacing lets the heap grow by before it collects (at least
// 4 MB), it collects: at most about twice as often as Go would, never in
// a request of its making. Go's own pacing stays on as the backstop: a
// process that is never idle collects as it did.
package idlegc

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Defaults for a daemon answering agents' hook calls and dry runs.
const (
	// DefaultIdle is how long no request may have been in flight before
	// a collection: longer than the gap between the calls of one burst
	// (a hook's client starting is about 6 ms), shorter than an agent's
	// wait for its model.
	DefaultIdle = 10 * time.Millisecond
	// MinGarbage is the least garbage worth a collection: about forty
	// decisions' worth.
	MinGarbage = 4 << 20
)

// Collector collects when the requests it is told about leave the
// process idle. The zero value is not usable; use New.
type Collector struct {
	idle    time.Duration
	garbage uint64 // 0: half of the heap's headroom, at least MinGarbage

	mu       sync.Mutex
	inFlight int
	timer    *time.Timer
	gen      uint64 // bumped at every Begin, so a stale timer does nothing

	samples [3]metrics.Sample
}

// New returns a collector that collects after idle without requests
// when more than garbage bytes are unreachable since the last
// collection. A zero idle is DefaultIdle; a zero garbage is half of the
// heap's headroom (what Go's pacing lets it grow by), at least
// MinGarbage.
func New(idle time.Duration, garbage uint64) *Collector {
	if idle <= 0 {
		idle = DefaultIdle
	}
	c := &Collector{idle: idle, garbage: garbage}
	c.samples[0].Name = "/memory/classes/heap/objects:bytes"
	c.samples[1].Name = "/gc/heap/live:bytes"
	c.samples[2].Name = "/gc/heap/goal:bytes"
	return c
}

// Begin notes a request in flight; its End must follow.
func (c *Collector) Begin() {
	c.mu.Lock()
	c.inFlight++
	c.gen++
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
}

// End notes the end of a request begun with Begin. When it was the last
// in flight, a collection may follow after the idle time.
func (c *Collector) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight--; c.inFlight > 0 {
		return
	}
	gen := c.gen
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(c.idle, func() { c.fire(gen) })
}

// fire collects when no request began since the timer was set and the
// garbage is worth it. A request that begins during the collection runs
// beside it, as it would beside one Go started.
func (c *Collector) fire(gen uint64) {
	c.mu.Lock()
	stale := gen != c.gen || c.inFlight > 0
	c.mu.Unlock()
	if !stale {
		c.Idle()
	}
}

// Idle does what the collector does once the process has been idle: it
// collects when the garbage is worth it, and reports whether it did.
func (c *Collector) Idle() bool {
	if garbage, threshold := c.read(); garbage < threshold {
		return false
	}
	runtime.GC()
	return true
}

// Garbage is how many bytes of heap objects the last collection did not
// find live: what was allocated since, less what is still reachable of
// it, which a collection now would not free either (an estimate from
// above).
func (c *Collector) Garbage() uint64 {
	garbage, _ := c.read()
	return garbage
}

// read returns the garbage and the least garbage worth a collection.
func (c *Collector) read() (garbage, threshold uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	metrics.Read(c.samples[:])
	for _, s := range c.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return 0, 1 // a runtime without these metrics: Go's pacing alone
		}
	}
	objects, live, goal := c.samples[0].Value.Uint64(), c.samples[1].Value.Uint64(), c.samples[2].Value.Uint64()
	if objects > live {
		garbage = objects - live
	}
	threshold = c.garbage
	if threshold == 0 {
		threshold = MinGarbage
		if goal > live && (goal-live)/2 > threshold {
			threshold = (goal - live) / 2
		}
	}
	return garbage, threshold
}

// std is the process's collector: collections are the process's, so one
// count of requests in flight serves every entry that answers them.
var std = New(0, 0)

// Begin notes a request in flight in the process's collector.
func Begin() { std.Begin() }

// End notes its end.
func End() { std.End() }

// InFlight is how many requests the process's collector counts now.
func InFlight() int {
	std.mu.Lock()
	defer std.mu.Unlock()
	return std.inFlight
}
