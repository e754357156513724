package gate

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkDecideAfterIdle measures a decision made after the process
// did nothing with the policies for a while, as every decision of an
// agent is (its model thinks for seconds between tool calls), beside
// the same decision back to back. The gap is spent spinning on the
// clock, not sleeping, so the core stays busy and awake: what the gap
// costs is what the machine evicted from the caches meanwhile, not a
// CPU waking up.
//
// Its anchor runs the same way first, in a loop of its own: 16,384
// dependent loads at random over a 4 MB table (no OPA, no allocation),
// each after the same gap. It tells how much of the difference is the
// machine's: on a machine whose caches survive the gap, the anchor's p50
// does not move with it.
//
//	go test -run '^$' -bench DecideAfterIdle -benchtime 40x ./gate
func BenchmarkDecideAfterIdle(b *testing.B) {
	eng, c := benchEngine(b)
	ctx := context.Background()
	table := chaseTable(1 << 20)
	for _, a := range []Action{
		{Tool: "time", Args: map[string]any{}},
		{Tool: "shell", Args: map[string]any{"command": "ls -la"}},
	} {
		for _, gap := range []time.Duration{0, 2 * time.Millisecond, 20 * time.Millisecond, 200 * time.Millisecond} {
			b.Run(benchName(a)+"/gap="+gap.String(), func(b *testing.B) {
				var decide, anchor []time.Duration
				for range b.N {
					spin(gap)
					t0 := time.Now()
					chase(table, 1<<14)
					anchor = append(anchor, time.Since(t0))
				}
				for range b.N {
					spin(gap)
					t0 := time.Now()
					if _, err := eng.Decide(ctx, a, c); err != nil {
						b.Fatal(err)
					}
					decide = append(decide, time.Since(t0))
				}
				reportQuantiles(b, decide, "")
				reportQuantiles(b, anchor, "anchor-")
			})
		}
	}
}

// spin keeps the calling thread busy for d.
func spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

// chaseTable is one random cycle through n slots: each slot holds the
// index of the next, so every load depends on the one before.
func chaseTable(n int) []int32 {
	order := rand.Perm(n)
	t := make([]int32, n)
	for i, s := range order {
		t[s] = int32(order[(i+1)%n])
	}
	return t
}

var chaseSink int32

func chase(t []int32, steps int) {
	i := int32(0)
	for range steps {
		i = t[i]
	}
	chaseSink = i
}
