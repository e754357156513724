package agent

import (
	"context"
	"testing"
	"time"
)

// benchScript answers every message with one file_list, then text.
const benchScript = `
turns:
  - step: 1
    tool_calls: [{name: file_list, arguments: {path: .}}]
default:
  reply: listed
`

// BenchmarkTurn is the anchor: one turn (a tool call and a reply) on the
// mock model, as claw agent -m takes it.
func BenchmarkTurn(b *testing.B) {
	a := autoAgent(b, benchScript, &counting{})
	ctx := context.Background()
	conv := ""
	for b.Loop() {
		res, err := a.Turn(ctx, TurnRequest{Conversation: conv, Message: "list"})
		if err != nil {
			b.Fatal(err)
		}
		conv = res.Conversation
	}
}

// BenchmarkAutonomousTurn is one turn of an autonomous run, the same turn
// with the run's bookkeeping (its goroutine, the emergency-stop poll, the
// state machine, the wait of a nanosecond).
func BenchmarkAutonomousTurn(b *testing.B) {
	a := autoAgent(b, benchScript, &counting{})
	iv := Intervals{Engaged: time.Nanosecond, Working: time.Nanosecond, Foraging: time.Nanosecond, Resting: time.Nanosecond}
	b.ResetTimer()
	res := a.RunAutonomous(context.Background(), Autonomous{Intervals: iv, MaxTurns: b.N, MaxToolCalls: b.N + 1}, RunRequest{Task: "list"})
	if res.Turns != b.N {
		b.Fatalf("%d turns, want %d (%s)", res.Turns, b.N, res.Stop)
	}
}
