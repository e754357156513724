package idlegc

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// forced is how many collections runtime.GC has run in this process.
func forced() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var sink []byte

// makeGarbage allocates n bytes that are unreachable at once.
func makeGarbage(n int) {
	for i := 0; i < n; i += 64 << 10 {
		sink = make([]byte, 64<<10)
	}
	sink = nil
}

// withoutPacing turns Go's own collections off for the test, so that a
// collection it sees is the collector's.
func withoutPacing(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

// waitForced waits (boundedly) for more than n forced collections.
func waitForced(t *testing.T, n uint64) bool {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if forced() > n {
			return true
		}
	}
	return false
}

// stillNone waits d and fails with why when a collection came after the
// n-th.
func stillNone(t *testing.T, n uint64, d time.Duration, why string) {
	t.Helper()
	time.Sleep(d)
	if forced() != n {
		t.Fatal(why)
	}
}

// endCollects ends c's last request and fails unless a collection after
// the n-th follows.
func endCollects(t *testing.T, c *Collector, n uint64) {
	t.Helper()
	c.End()
	if !waitForced(t, n) {
		t.Fatal("no collection after the last request ended")
	}
}

func TestCollectsWhenIdle(t *testing.T) {
	withoutPacing(t)
	c := New(time.Millisecond, 1<<20)
	n := forced()
	c.Begin()
	makeGarbage(8 << 20)
	if g := c.Garbage(); g < 4<<20 {
		t.Fatalf("Garbage() = %d after 8 MiB of garbage", g)
	}
	endCollects(t, c, n)
	if g := c.Garbage(); g >= 4<<20 {
		t.Errorf("Garbage() = %d after the collection", g)
	}
}

func TestNoCollectionInFlight(t *testing.T) {
	withoutPacing(t)
	c := New(time.Millisecond, 1<<20)
	n := forced()
	c.Begin()
	c.Begin()
	makeGarbage(8 << 20)
	c.End() // one still in flight
	stillNone(t, n, 50*time.Millisecond, "collected while a request was in flight")
	endCollects(t, c, n)
}

func TestBeginCancelsTheWait(t *testing.T) {
	withoutPacing(t)
	c := New(30*time.Millisecond, 1<<20)
	n := forced()
	makeGarbage(8 << 20)
	c.Begin()
	c.End()
	c.Begin() // before the idle time is over
	stillNone(t, n, 100*time.Millisecond, "collected although a request began within the idle time")
	endCollects(t, c, n)
}

func TestLittleGarbageIsLeft(t *testing.T) {
	withoutPacing(t)
	c := New(time.Millisecond, 64<<20)
	n := forced()
	c.Begin()
	makeGarbage(1 << 20)
	c.End()
	stillNone(t, n, 50*time.Millisecond, "collected 1 MiB of garbage below a 64 MiB threshold")
}

func TestAdaptiveThreshold(t *testing.T) {
	c := New(time.Millisecond, 0)
	_, threshold := c.read()
	if threshold < MinGarbage {
		t.Fatalf("threshold %d below MinGarbage", threshold)
	}
	// A live heap of 64 MiB gives Go's pacing about 64 MiB of headroom
	// at GOGC=100: half of it is worth a collection.
	old := debug.SetGCPercent(100)
	live := make([][]byte, 1024)
	for i := range live {
		live[i] = make([]byte, 64<<10)
	}
	runtime.GC()
	if _, threshold := c.read(); threshold < 24<<20 || threshold > 40<<20 {
		t.Errorf("threshold %d MiB with 64 MiB live, want about 32", threshold>>20)
	}
	runtime.KeepAlive(live)
	debug.SetGCPercent(old)
	// With Go's pacing off, the headroom is unbounded and so is the
	// threshold: an idle collection never comes of it.
	withoutPacing(t)
	if _, threshold := c.read(); threshold < 1<<40 {
		t.Fatalf("threshold %d with the collector off", threshold)
	}
}
