package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

// Open a log, record a decision before an action runs and its outcome
// after; Close writes a signed checkpoint.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "receipts")
	defer os.RemoveAll(dir)
	k, _ := receipts.GenerateKey(receipts.Ed25519)
	s, _ := receipts.NewSigner(k)
	clock := func() time.Time { return time.Date(2026, 11, 22, 2, 31, 0, 0, time.UTC) }
	l, err := store.Open(filepath.Join(dir, "receipts"), s, store.Options{LogID: "claw/example/1", Now: clock})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	ref := receipts.Ref{ActionID: "a1", Channel: "cli"}
	e, err := l.Decision(ctx, ref, receipts.Action{Tool: "shell", Summary: "go test ./..."}, receipts.Decision{Result: "allow", Risk: "low"})
	if err != nil {
		return // the action must not run
	}
	fmt.Println("decision durable at seq", e.Seq)
	exit := 0
	e, _ = l.Outcome(ctx, ref, receipts.Outcome{Status: "ok", Exit: &exit, MS: 840})
	fmt.Println("outcome at seq", e.Seq)
	l.Close()
	cp, _ := receipts.LatestCheckpoint(filepath.Join(dir, "receipts"))
	fmt.Println(strings.SplitN(string(cp), "\n", 3)[:2])
	// Output:
	// decision durable at seq 1
	// outcome at seq 2
	// [claw/example/1 2]
}
