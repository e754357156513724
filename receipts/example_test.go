package receipts_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/receipts"
)

// A receipt line is {"body":…,"kid":…,"sig":…}; the signature covers the
// exact bytes of body, and the next receipt's prev is the entry hash.
func ExampleParseLine() {
	body := []byte(`{"v":1,"log":"claw/h/1","seq":1,"ts":"2026-11-22T02:31:00.123456Z","type":"estop","estop":{"active":true},"prev":"` + receipts.GenesisPrev + `"}`)
	seed := make([]byte, ed25519.SeedSize)
	s, _ := receipts.NewSigner(ed25519.NewKeyFromSeed(seed))
	sig, _ := s.Sign(receipts.SignedMessage(body))
	line := receipts.EncodeLine(body, s.KeyID(), sig)

	l, err := receipts.ParseLine(line)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Decoded.Seq, l.Decoded.Type, l.KID)
	fmt.Println("next prev:", receipts.EntryHash(l.Body))
	// Output:
	// 1 estop 339e2ff917630507b6a423b5ce084e28
	// next prev: sha256:d9383832b64c6290506aed4981bbd4e9ced39b9789eab3cf6cd148ad76c0e3bc
}

// Open a log, record a decision before an action runs and its outcome
// after; Close writes a signed checkpoint.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "receipts")
	defer os.RemoveAll(dir)
	k, _ := receipts.GenerateKey(receipts.Ed25519)
	s, _ := receipts.NewSigner(k)
	clock := func() time.Time { return time.Date(2026, 11, 22, 2, 31, 0, 0, time.UTC) }
	l, err := receipts.Open(filepath.Join(dir, "receipts"), s, receipts.Options{LogID: "claw/example/1", Now: clock})
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
