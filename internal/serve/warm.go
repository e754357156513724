package serve

import "time"

// A policy evaluation recurses deeply: its goroutine's stack grows from
// Go's 8 KiB start to hundreds of KiB, copied at every doubling. The
// server runs each request on a fresh goroutine, so a hook call or a dry
// run answered here paid that copying every time, about a tenth of the
// daemon's CPU per hook call. onWarmStack runs the answer on a goroutine
// kept from an earlier one, whose stack has already grown. Nothing else
// is kept: the goroutine holds no data between calls. (A long-lived
// caller, such as the agent's loop, already decides on a grown stack;
// handing its decisions to another goroutine only added two wake-ups.)

// warmIdle is how long an idle warm goroutine waits for the next
// evaluation before it exits.
const warmIdle = 30 * time.Second

var warmJobs = make(chan func())

// onWarmStack runs f on a warm goroutine and returns when f has; a panic
// in f is raised again in the caller, as if f had run there.
func onWarmStack(f func()) {
	done := make(chan any, 1)
	GoWarm(func() {
		defer func() { done <- recover() }()
		f()
	})
	if p := <-done; p != nil {
		panic(p)
	}
}

// GoWarm starts f on a warm goroutine, or on a new one when none is
// idle, and returns. f must recover its own panics, as with a go
// statement.
func GoWarm(f func()) {
	select {
	case warmJobs <- f:
	default:
		go warmLoop(f)
	}
}

// warmLoop runs job, then the jobs it is handed, until it has waited
// warmIdle for one.
func warmLoop(job func()) {
	job()
	t := time.NewTimer(warmIdle)
	defer t.Stop()
	for {
		select {
		case j := <-warmJobs:
			j()
			t.Reset(warmIdle)
		case <-t.C:
			return
		}
	}
}
